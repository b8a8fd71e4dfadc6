// SPDX-License-Identifier: Apache-2.0
// adapter.cc - opens a softndk adapter from the tools' options and bounds
// the teardown after a fatal error.
#include <algorithm>
#include <atomic>
#include <chrono>

#include "session_internal.h"

namespace softndk::tools {

namespace {

NDK_VERSION kVersion{NDK_VERSION_MAJOR, NDK_VERSION_MINOR};

}  // namespace

Adapter::Adapter(const AdapterOptions& opt) : timeout_s_(opt.timeout_s) {
  SOFTNDK_OPEN_PARAMETERS params{};
  params.Size = sizeof params;
  params.MpaRevision = opt.mpa_revision;
  if (opt.crc >= 0) {
    // A non-zero MpaFlags replaces the default set, so keep the default RTR
    // types. On: require CRC. Off: do not ask for it, not even off-host
    // (a peer that asks still gets it, as RFC 5044 wants).
    params.MpaFlags = SOFTNDK_MPA_RTR_WRITE | SOFTNDK_MPA_RTR_READ;
    params.MpaFlags |= opt.crc == 1 ? SOFTNDK_MPA_CRC_REQUIRED : SOFTNDK_MPA_CRC_WHEN_ASKED;
  }
  params.ConnectTimeoutMs = static_cast<ULONG>(opt.timeout_s * 1000);
  params.Flags |= opt.open_flags;
  if (opt.disconnect_timeout_s > 0)
    params.DisconnectTimeoutMs =
        std::max<ULONG>(1, static_cast<ULONG>(opt.disconnect_timeout_s * 1000));
  NTSTATUS st = SoftNdkOpenAdapter(opt.name.c_str(), kVersion, &params, &adapter_);
  if (st != STATUS_SUCCESS || !adapter_) {
    if (st == STATUS_NO_SUCH_DEVICE)
      throw ToolError("no softndk adapter for '" + opt.name + "' (no such interface or address)");
    throw_status("cannot open adapter '" + opt.name + "'", st);
  }
  ULONG size = sizeof info_;
  st = adapter_->Dispatch->NdkQueryAdapterInfo(adapter_, &info_, &size);
  if (st != STATUS_SUCCESS) {
    SoftNdkCloseAdapter(adapter_);
    adapter_ = nullptr;
    throw_status("NdkQueryAdapterInfo", st);
  }
}

Adapter::~Adapter() {
  if (adapter_) SoftNdkCloseAdapter(adapter_);
}

void Adapter::limit_teardown(double seconds) {
  const Clock::rep end = deadline_in(seconds).time_since_epoch().count();
  Clock::rep cur = teardown_end_.load();
  // Only ever earlier: a second error does not extend the first one's bound.
  while ((cur == 0 || end < cur) && !teardown_end_.compare_exchange_weak(cur, end)) {
  }
}

double Adapter::close_timeout() const {
  const Clock::rep end = teardown_end_.load();
  if (end == 0) return timeout_s_;
  const double left =
      std::chrono::duration<double>(Deadline(Clock::duration(end)) - Clock::now()).count();
  return std::clamp(left, 0.01, timeout_s_);
}
}  // namespace softndk::tools
