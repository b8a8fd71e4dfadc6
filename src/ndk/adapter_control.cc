// SPDX-License-Identifier: Apache-2.0
// adapter_control.cc - the IRP-style adapter-control interface (softndk.h §2).
//
// Queued requests (fatal-event, port-event) live in per-adapter FIFOs; each
// is removed under ctl_mu_ by exactly one of: the event, a cancel, the
// adapter close. Events complete requests on the engine; cancel and close
// complete them inline (the header promises "before this returns"), never
// with a lock held.
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "ndk/adapter.h"
#include "ndk/port_caps.h"
#include "ndk/qp.h"

namespace softndk::ndk {

namespace {
void complete_inline(SOFTNDK_REQUEST* r, NTSTATUS status, ULONG_PTR info) {
  r->Status = status;
  r->Information = info;
  r->ProviderReserved[0] = nullptr;
  if (r->Completion != nullptr) r->Completion(r);
}

NTSTATUS finish_inline(SOFTNDK_REQUEST* r, NTSTATUS status, ULONG_PTR info) {
  if (r != nullptr) {
    r->Status = status;
    r->Information = info;
  }
  return status;
}
}  // namespace

void Adapter::complete_request_async(SOFTNDK_REQUEST* req, NTSTATUS status, ULONG_PTR info) {
  ctl_inflight_.fetch_add(1);
  post([this, req, status, info] {
    complete_inline(req, status, info);
    ctl_inflight_.fetch_sub(1);
  });
}

void Adapter::cancel_all_requests() {
  std::deque<SOFTNDK_REQUEST*> all;
  {
    std::lock_guard lk(ctl_mu_);
    all.swap(fatal_reqs_);
    for (auto* r : port_reqs_) all.push_back(r);
    port_reqs_.clear();
  }
  for (SOFTNDK_REQUEST* r : all) complete_inline(r, STATUS_CANCELLED, 0);
}

NTSTATUS Adapter::get_fatal_event(SOFTNDK_REQUEST* req) {
  if (req == nullptr || req->Completion == nullptr) return STATUS_INVALID_PARAMETER;
  {
    std::lock_guard lk(ctl_mu_);
    if (!fatal_.load()) {
      req->Status = STATUS_PENDING;
      req->Information = 0;
      req->ProviderReserved[0] = this;
      fatal_reqs_.push_back(req);
      return STATUS_PENDING;
    }
  }
  return finish_inline(req, STATUS_SUCCESS, 0);  // already failed: done inline
}

NTSTATUS Adapter::get_port_event(UCHAR port, SOFTNDK_REQUEST* req) {
  if (req == nullptr || req->Completion == nullptr) return STATUS_INVALID_PARAMETER;
  if (port != SOFTNDK_PORT_NUMBER) return finish_inline(req, STATUS_INVALID_PARAMETER, 0);
  std::lock_guard lk(ctl_mu_);
  if (fatal_.load()) return finish_inline(req, STATUS_FILE_FORCED_CLOSED, 0);
  req->Status = STATUS_PENDING;
  req->Information = 0;
  req->ProviderReserved[0] = this;
  port_reqs_.push_back(req);
  return STATUS_PENDING;
}

NTSTATUS Adapter::cancel_request(SOFTNDK_REQUEST* req) {
  if (req == nullptr) return STATUS_INVALID_PARAMETER;
  bool found = false;
  {
    std::lock_guard lk(ctl_mu_);
    for (auto* q : {&fatal_reqs_, &port_reqs_}) {
      for (auto it = q->begin(); it != q->end(); ++it) {
        if (*it == req) {
          q->erase(it);
          found = true;
          break;
        }
      }
      if (found) break;
    }
  }
  if (!found) return STATUS_INVALID_PARAMETER;
  complete_inline(req, STATUS_CANCELLED, 0);
  return STATUS_SUCCESS;
}

void Adapter::on_net_event(NetEvent ev) {
  ULONG_PTR code = SOFTNDK_PORT_EVENT_ADDRESS_CHANGE;
  if (ev == NetEvent::kLinkUp) {
    port_state_.store(SoftNdkPortStateActive);
    code = SOFTNDK_PORT_EVENT_ACTIVE;
  } else if (ev == NetEvent::kLinkDown) {
    port_state_.store(SoftNdkPortStateDown);
    code = SOFTNDK_PORT_EVENT_DOWN;
  }
  SOFTNDK_REQUEST* req = nullptr;
  {
    std::lock_guard lk(ctl_mu_);
    if (port_reqs_.empty()) return;  // nobody asked: the event is not kept
    req = port_reqs_.front();
    port_reqs_.pop_front();
  }
  complete_request_async(req, STATUS_SUCCESS, code);
}

void Adapter::fill_port_attr(std::vector<unsigned char>* buf) {
  size_t n = dev_.addrs.size();
  size_t size = offsetof(SOFTNDK_PORT_ATTR, Addresses) + n * sizeof(sockaddr_storage);
  if (size < sizeof(SOFTNDK_PORT_ATTR)) size = sizeof(SOFTNDK_PORT_ATTR);
  size_t at = buf->size();
  buf->resize(at + size);
  auto* p = reinterpret_cast<SOFTNDK_PORT_ATTR*>(buf->data() + at);
  p->Size = static_cast<ULONG>(size);
  p->PortNumber = SOFTNDK_PORT_NUMBER;
  p->State = port_state_.load();
  p->Mtu = dev_.mtu;
  p->LinkSpeedMbps = dev_.speed_mbps;
  p->IfIndex = dev_.ifindex;
  std::strncpy(p->IfName, dev_.name.c_str(), SOFTNDK_IFNAME_SIZE - 1);
  p->Capabilities = PortCaps::held(dev_.ifindex);
  p->AddressCount = static_cast<ULONG>(n);
  for (size_t i = 0; i < n; ++i) p->Addresses[i] = dev_.addrs[i];
}

NTSTATUS Adapter::query_adapter(SIZE_T size, SOFTNDK_ADAPTER_ATTR* attr, SOFTNDK_REQUEST* req) {
  if (req == nullptr) return STATUS_INVALID_PARAMETER;
  if (size < sizeof(ULONG)) return finish_inline(req, STATUS_BUFFER_TOO_SMALL, 0);
  if (attr == nullptr) return finish_inline(req, STATUS_INVALID_PARAMETER, 0);
  std::vector<unsigned char> buf(offsetof(SOFTNDK_ADAPTER_ATTR, Ports));
  fill_port_attr(&buf);
  auto* a = reinterpret_cast<SOFTNDK_ADAPTER_ATTR*>(buf.data());
  a->Size = static_cast<ULONG>(buf.size());
  a->PortCount = 1;
  a->Info = info_;
  a->Flags = PortCaps::held_by(dev_.ifindex, this) | (samehost_ ? SOFTNDK_ADAPTER_SAMEHOST : 0u);
  a->MpaFlags = params_.MpaFlags;
  size_t n = size < buf.size() ? size : buf.size();
  std::memcpy(attr, buf.data(), n);
  return finish_inline(req, n < buf.size() ? STATUS_BUFFER_OVERFLOW : STATUS_SUCCESS, n);
}

NTSTATUS Adapter::query_port(UCHAR port, SIZE_T size, SOFTNDK_PORT_ATTR* attr,
                             SOFTNDK_REQUEST* req) {
  if (req == nullptr) return STATUS_INVALID_PARAMETER;
  if (port != SOFTNDK_PORT_NUMBER) return finish_inline(req, STATUS_INVALID_PARAMETER, 0);
  if (size < sizeof(ULONG)) return finish_inline(req, STATUS_BUFFER_TOO_SMALL, 0);
  if (attr == nullptr) return finish_inline(req, STATUS_INVALID_PARAMETER, 0);
  std::vector<unsigned char> buf;
  fill_port_attr(&buf);
  size_t n = size < buf.size() ? size : buf.size();
  std::memcpy(attr, buf.data(), n);
  return finish_inline(req, n < buf.size() ? STATUS_BUFFER_OVERFLOW : STATUS_SUCCESS, n);
}

NTSTATUS Adapter::modify_adapter(ULONG flags, const SOFTNDK_MODIFY_ADAPTER* m,
                                 SOFTNDK_REQUEST* req) {
  constexpr ULONG kKnown = SOFTNDK_MODIFY_ADAPTER_COUNTERS_RESET | SOFTNDK_MODIFY_ADAPTER_TRACE;
  if (flags == 0 || (flags & ~kKnown)) return finish_inline(req, STATUS_INVALID_PARAMETER, 0);
  if ((flags & SOFTNDK_MODIFY_ADAPTER_TRACE) && m == nullptr)
    return finish_inline(req, STATUS_INVALID_PARAMETER, 0);
  if (flags & SOFTNDK_MODIFY_ADAPTER_TRACE) {
    // Opened first: a path that cannot be written changes nothing.
    std::shared_ptr<util::PcapFile> f;
    if (m->TracePath != nullptr) {
      f = util::PcapFile::create(m->TracePath);
      if (f == nullptr) return finish_inline(req, trace_open_status(errno), 0);
    }
    {
      std::lock_guard lk(trace_mu_);
      trace_ = f;
    }
    // Connections already running switch now; new ones pick the file up
    // when their data path starts (trace_file()).
    std::vector<Object*> objs = snapshot_live();
    for (Object* o : objs) {
      if (o->type() != NdkObjectTypeQp) continue;
      if (auto t = static_cast<Qp*>(o)->transport()) t->set_trace(QpTransport::kTraceAdapter, f);
    }
    for (Object* o : objs) o->release();
  }
  if (flags & SOFTNDK_MODIFY_ADAPTER_COUNTERS_RESET) reset_counters();
  return finish_inline(req, STATUS_SUCCESS, 0);
}

NTSTATUS Adapter::modify_port(UCHAR port, ULONG flags, const SOFTNDK_MODIFY_PORT* m,
                              SOFTNDK_REQUEST* req) {
  constexpr ULONG kKnown = SOFTNDK_MODIFY_PORT_SET_CAPS | SOFTNDK_MODIFY_PORT_CLEAR_CAPS;
  if (port != SOFTNDK_PORT_NUMBER || m == nullptr || flags == 0 || (flags & ~kKnown))
    return finish_inline(req, STATUS_INVALID_PARAMETER, 0);
  ULONG set = (flags & SOFTNDK_MODIFY_PORT_SET_CAPS) ? m->SetCapabilities : 0;
  ULONG clear = (flags & SOFTNDK_MODIFY_PORT_CLEAR_CAPS) ? m->ClearCapabilities : 0;
  if ((set | clear) & ~SOFTNDK_PORT_CAP_EXCLUSIVE_MASK)
    return finish_inline(req, STATUS_INVALID_PARAMETER, 0);
  if (set != 0 && !PortCaps::acquire(dev_.ifindex, this, set))
    return finish_inline(req, STATUS_FILE_LOCK_CONFLICT, 0);
  if (clear != 0) PortCaps::release(dev_.ifindex, this, clear & ~set);
  return finish_inline(req, STATUS_SUCCESS, 0);
}

NTSTATUS Adapter::inject_fault(const SOFTNDK_FAULT* f) {
  if (f == nullptr) return STATUS_INVALID_PARAMETER;
  switch (fault_type(*f)) {
    case SoftNdkFaultFailNthRegistration:
      if (f->Count == 0) return STATUS_INVALID_PARAMETER;
      fail_registration_in_.store(f->Count);
      return STATUS_SUCCESS;
    case SoftNdkFaultFatalAdapterError:
      raise_fatal();
      return STATUS_SUCCESS;
    default:
      return STATUS_INVALID_PARAMETER;  // connection faults: SoftNdkInjectConnectionFault
  }
}

NTSTATUS Adapter::close_async(SOFTNDK_REQUEST* req) {
  if (req == nullptr) return STATUS_INVALID_PARAMETER;
  if (live_objects() != 0) return finish_inline(req, STATUS_DEVICE_BUSY, 0);
  cancel_all_requests();
  bool on_engine = false;
  for (unsigned i = 0; i < engine_->size(); ++i) on_engine |= engine_->at(i).on_thread();
  if (!on_engine) {
    req->Status = STATUS_SUCCESS;
    req->Information = 0;
    close_blocking();  // nothing left to wait for but the engine's last tasks
    return STATUS_SUCCESS;
  }
  // From a callback: the engine cannot join itself, so a helper thread
  // finishes the close and completes the request.
  if (req->Completion == nullptr) return finish_inline(req, STATUS_INVALID_PARAMETER, 0);
  req->Status = STATUS_PENDING;
  std::thread([this, req] {
    close_blocking();
    complete_inline(req, STATUS_SUCCESS, 0);
  }).detach();
  return STATUS_PENDING;
}

}  // namespace softndk::ndk
