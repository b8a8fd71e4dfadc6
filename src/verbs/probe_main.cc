// SPDX-License-Identifier: Apache-2.0
// softndk-verbs-probe - what the verbs backend sees on an interface or
// address (issue 30): the RDMA device rdma_cm picks for it, its transport
// and limits as NDK_ADAPTER_INFO, the fast-register strategy, which engine
// SOFTNDK_BACKEND=auto|iwarp-sw|verbs would choose and why, and whether
// each object the backend creates (PD, completion channel, CQ, RC QP,
// SRQ, MR, type-2 MW) can be created there. One JSON object on stdout.
//
//   softndk-verbs-probe NAME_OR_ADDRESS
// Exit: 0 a device serves it and PD/CQ/QP/MR work; 2 no RDMA device;
// 1 the device refused one of those; 64 usage.
#include <cstdio>
#include <string>

#include "verbs/backend_choice.h"
#include "verbs/device_probe.h"
#include "verbs/verbs_map.h"

namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace softndk::verbs;
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: softndk-verbs-probe NAME_OR_ADDRESS\n");
    return 64;
  }
  ProbeResult r = probe_device(argv[1]);
  std::printf("{\n  \"query\": \"%s\",\n  \"interface\": \"%s\",\n  \"address\": \"%s\",\n",
              esc(argv[1]).c_str(), esc(r.ifname).c_str(), esc(r.address).c_str());
  std::printf("  \"device\": \"%s\",\n  \"driver\": \"%s\",\n  \"transport\": \"%s\",\n",
              esc(r.device.name).c_str(), esc(r.device.driver).c_str(),
              transport_name(r.facts.transport));
  const bool found = r.status == STATUS_SUCCESS;
  std::printf("  \"found\": %s,\n  \"error\": \"%s\",\n", found ? "true" : "false",
              esc(r.error).c_str());
  // The choice for each SOFTNDK_BACKEND value, as the verbs backend will
  // make it once it serves adapters (verbs_available: this probe ran).
  std::printf("  \"backend\": {");
  const char* kReq[] = {"auto", "iwarp-sw", "verbs"};
  for (int k = 0; k < 3; ++k) {
    Backend want{};
    std::string source;
    requested_backend(SOFTNDK_BACKEND_DEFAULT, kReq[k], &want, &source);
    // No rdma_cm at all (STATUS_NOT_SUPPORTED): the backend could not run.
    const bool avail = r.status != STATUS_NOT_SUPPORTED;
    BackendChoice c = choose_backend(want, source, r.device, avail, r.error, r.ifname);
    std::printf("%s\n    \"%s\": {\"status\": \"0x%08x\", \"backend\": \"%s\", \"why\": \"%s\"}",
                k ? "," : "", kReq[k], static_cast<unsigned>(c.status),
                c.status == STATUS_SUCCESS ? backend_name(c.backend) : "", esc(c.why).c_str());
  }
  std::printf("\n  },\n");
  bool core_ok = found;
  if (found) {
    NDK_ADAPTER_INFO i = adapter_info(r.attr, r.port, r.facts, NDK_VERSION{2, 1}, 16384);
    std::printf("  \"port\": {\"num\": %u, \"state\": \"%s\", \"max_msg_sz\": %u},\n", r.port_num,
                ibv_port_state_str(r.port.state), r.port.max_msg_sz);
    std::printf(
        "  \"adapter_info\": {\"VendorId\": %u, \"DeviceId\": %u, \"MaxRegistrationSize\": %zu, "
        "\"MaxWindowSize\": %zu, \"FRMRPageCount\": %u, \"MaxInitiatorRequestSge\": %u, "
        "\"MaxReceiveRequestSge\": %u, \"MaxReadRequestSge\": %u, \"MaxTransferLength\": %u, "
        "\"MaxInlineDataSize\": %u, \"MaxInboundReadLimit\": %u, \"MaxOutboundReadLimit\": %u, "
        "\"MaxReceiveQueueDepth\": %u, \"MaxInitiatorQueueDepth\": %u, \"MaxSrqDepth\": %u, "
        "\"MaxCqDepth\": %u, \"MaxCallerData\": %u, \"MaxCalleeData\": %u, "
        "\"AdapterFlags\": %u, \"RdmaTechnology\": %d},\n",
        i.VendorId, i.DeviceId, static_cast<size_t>(i.MaxRegistrationSize),
        static_cast<size_t>(i.MaxWindowSize), i.FRMRPageCount, i.MaxInitiatorRequestSge,
        i.MaxReceiveRequestSge, i.MaxReadRequestSge, i.MaxTransferLength, i.MaxInlineDataSize,
        i.MaxInboundReadLimit, i.MaxOutboundReadLimit, i.MaxReceiveQueueDepth,
        i.MaxInitiatorQueueDepth, i.MaxSrqDepth, i.MaxCqDepth, i.MaxCallerData, i.MaxCalleeData,
        i.AdapterFlags, static_cast<int>(i.RdmaTechnology));
    std::printf("  \"device_cap_flags\": \"0x%08x\", \"max_mw\": %d, \"fw_ver\": \"%s\",\n",
                static_cast<unsigned>(r.attr.orig_attr.device_cap_flags), r.attr.orig_attr.max_mw,
                esc(r.attr.orig_attr.fw_ver).c_str());
    std::printf(
        "  \"fast_register\": {\"default\": \"%s\", \"with_SOFTNDK_OPEN_FLAG_FR_REGISTER\": "
        "\"%s\"},\n",
        fr_strategy_name(choose_fr_strategy(r.attr, r.facts, false)),
        fr_strategy_name(choose_fr_strategy(r.attr, r.facts, true)));
    std::printf("  \"steps\": [");
    for (size_t k = 0; k < r.steps.size(); ++k) {
      const ProbeStep& s = r.steps[k];
      std::printf("%s\n    {\"what\": \"%s\", \"ok\": %s, \"detail\": \"%s\"}", k ? "," : "",
                  s.what.c_str(), s.ok ? "true" : "false", esc(s.detail).c_str());
      // Windows and CQ resize are optional device features; the rest the
      // backend needs.
      if (!s.ok && s.what != "alloc_mw_type2" && s.what != "resize_cq") core_ok = false;
    }
    std::printf("\n  ],\n");
  }
  std::printf("  \"ok\": %s\n}\n", core_ok ? "true" : "false");
  if (!found) return 2;
  return core_ok ? 0 : 1;
}
