// SPDX-License-Identifier: Apache-2.0
// verbs/verbs_map.cc - see verbs_map.h; docs/verbs.md has the tables.
#include "verbs/verbs_map.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace softndk::verbs {

namespace {

uint32_t clamp_u32(uint64_t v, uint64_t cap) {
  if (v > cap) v = cap;
  return static_cast<uint32_t>(v);
}
uint32_t pos(int v) { return v > 0 ? static_cast<uint32_t>(v) : 0u; }

constexpr ULONG kSendFlags = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                             NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT | NDK_OP_FLAG_INLINE |
                             NDK_OP_FLAG_DEFER;
constexpr ULONG kWriteFlags =
    NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER;
constexpr ULONG kReadFlags = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                             NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE | NDK_OP_FLAG_DEFER;
constexpr ULONG kInvalidateFlags =
    NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_DEFER;

}  // namespace

Transport transport_of(ibv_transport_type t, uint8_t link_layer) {
  switch (t) {
    case IBV_TRANSPORT_IWARP:
      return Transport::kIwarp;
    case IBV_TRANSPORT_IB:
      return link_layer == IBV_LINK_LAYER_ETHERNET ? Transport::kRoce : Transport::kInfiniBand;
    default:
      return Transport::kUnknown;
  }
}

const char* transport_name(Transport t) {
  switch (t) {
    case Transport::kIwarp:
      return "iwarp";
    case Transport::kRoce:
      return "roce";
    case Transport::kInfiniBand:
      return "infiniband";
    default:
      return "unknown";
  }
}

PrivateDataLimits private_data_limits(Transport t) {
  switch (t) {
    case Transport::kRoce:
    case Transport::kInfiniBand:
      return {56, 148};
    case Transport::kIwarp:
      return {251, 251};
    default:
      return {0, 0};
  }
}

NDK_ADAPTER_INFO adapter_info(const ibv_device_attr_ex& dev, const ibv_port_attr& port,
                              const DeviceFacts& facts, NDK_VERSION version,
                              uint32_t large_request_threshold) {
  const ibv_device_attr& a = dev.orig_attr;
  NDK_ADAPTER_INFO i{};
  i.Version = version;
  i.VendorId = a.vendor_id;
  i.DeviceId = a.vendor_part_id;
  i.MaxRegistrationSize = static_cast<SIZE_T>(a.max_mr_size);
  FrStrategy fr = choose_fr_strategy(dev, facts, false);
  i.MaxWindowSize = fr == FrStrategy::kType2Window ? static_cast<SIZE_T>(a.max_mr_size) : 0;
  // A fast-register region is a window over one LAM's MR: as many pages as
  // one registration may hold, capped at the software backend's 65536.
  i.FRMRPageCount =
      fr == FrStrategy::kType2Window ? clamp_u32(a.max_mr_size / NDK_PAGE_SIZE, 65536) : 0;
  i.MaxInitiatorRequestSge = clamp_u32(pos(a.max_sge), kMaxSge);
  i.MaxReceiveRequestSge = clamp_u32(pos(a.max_sge), kMaxSge);
  // Devices that report no separate read limit take reads like other requests.
  i.MaxReadRequestSge = clamp_u32(a.max_sge_rd > 0 ? pos(a.max_sge_rd) : pos(a.max_sge), kMaxSge);
  i.MaxTransferLength = clamp_u32(port.max_msg_sz, 1u << 30);
  i.MaxInlineDataSize = facts.max_inline;
  i.MaxInboundReadLimit = pos(a.max_qp_rd_atom);
  i.MaxOutboundReadLimit = pos(a.max_qp_init_rd_atom);
  i.MaxReceiveQueueDepth = pos(a.max_qp_wr);
  i.MaxInitiatorQueueDepth = pos(a.max_qp_wr) / kWqesPerRequest;
  i.MaxSrqDepth = a.max_srq > 0 ? pos(a.max_srq_wr) : 0;
  i.MaxCqDepth = pos(a.max_cqe);
  i.LargeRequestThreshold = large_request_threshold;
  PrivateDataLimits pd = private_data_limits(facts.transport);
  i.MaxCallerData = pd.caller;
  i.MaxCalleeData = pd.callee;
  ULONG f = NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED;
  // iWARP places a Read Response like a tagged Write: the sink must be
  // registered for it (NDK_MR_FLAG_RDMA_READ_SINK -> remote write).
  if (facts.transport != Transport::kIwarp) f |= NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED;
  if (dev.cq_mod_caps.max_cq_count > 0 && dev.cq_mod_caps.max_cq_period > 0)
    f |= NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED;
  if (facts.cq_resize) f |= NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED;
  if (fr == FrStrategy::kType2Window) f |= NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED;
  i.AdapterFlags = f;
  switch (facts.transport) {
    case Transport::kIwarp:
      i.RdmaTechnology = NdkiWarp;
      break;
    case Transport::kRoce:
      i.RdmaTechnology = NdkRoCEv2;
      break;
    case Transport::kInfiniBand:
      i.RdmaTechnology = NdkInfiniBand;
      break;
    default:
      i.RdmaTechnology = NdkUndefined;
  }
  return i;
}

const char* fr_strategy_name(FrStrategy s) {
  switch (s) {
    case FrStrategy::kType2Window:
      return "type2-window";
    case FrStrategy::kRegisterPerFastRegister:
      return "register-per-fast-register";
    default:
      return "unsupported";
  }
}

FrStrategy choose_fr_strategy(const ibv_device_attr_ex& dev, const DeviceFacts& facts,
                              bool degraded_opt_in) {
  const uint64_t caps = dev.orig_attr.device_cap_flags;
  const bool type2 =
      (caps & (IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_MEM_WINDOW_TYPE_2A)) != 0 &&
      dev.orig_attr.max_mw > 0 && facts.mw_type2;
  if (type2) return FrStrategy::kType2Window;
  if (degraded_opt_in) return FrStrategy::kRegisterPerFastRegister;
  return FrStrategy::kUnsupported;
}

NTSTATUS plan_window_bind(const NDK_LOGICAL_ADDRESS* pages, uint32_t page_count, uint32_t fbo,
                          uint64_t length, uint64_t base_va, uint64_t arena_addr,
                          uint64_t arena_len, bool zero_based_ok, FrBind* out) {
  if (pages == nullptr || page_count == 0 || length == 0 || fbo >= NDK_PAGE_SIZE)
    return STATUS_INVALID_PARAMETER;
  if (static_cast<uint64_t>(fbo) + length > uint64_t{page_count} * NDK_PAGE_SIZE)
    return STATUS_INVALID_PARAMETER;
  const uint64_t first = static_cast<uint64_t>(pages[0].QuadPart);
  if (first % NDK_PAGE_SIZE != 0) return STATUS_INVALID_PARAMETER;
  // A window covers one virtually contiguous range of its MR.
  for (uint32_t k = 1; k < page_count; ++k) {
    if (static_cast<uint64_t>(pages[k].QuadPart) != first + uint64_t{k} * NDK_PAGE_SIZE)
      return STATUS_INVALID_PARAMETER;
  }
  const uint64_t addr = first + fbo;
  if (addr < arena_addr || addr - arena_addr > arena_len ||
      length > arena_len - (addr - arena_addr))
    return STATUS_INVALID_PARAMETER;
  FrBind b;
  b.addr = addr;
  b.length = length;
  if (base_va == addr) {
    b.zero_based = false;
  } else if (base_va == 0 && zero_based_ok) {
    b.zero_based = true;
  } else {
    // The peer would address the region at BaseVirtualAddress, which a
    // window over process memory cannot offer.
    return STATUS_NOT_SUPPORTED;
  }
  *out = b;
  return STATUS_SUCCESS;
}

bool srq_can_resize(const ibv_device_attr_ex& dev) {
  return dev.orig_attr.max_srq > 0 && (dev.orig_attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE) != 0;
}

NTSTATUS srq_resize_status(int rc) {
  switch (rc) {
    case 0:
      return STATUS_SUCCESS;
    case EOPNOTSUPP:
    case ENOSYS:
      return STATUS_NOT_SUPPORTED;
    case ENOMEM:
    case ENOSPC:
      return STATUS_INSUFFICIENT_RESOURCES;
    default:  // EINVAL: below what it holds or its limit, above the device's
      return STATUS_INVALID_PARAMETER;
  }
}

uint32_t srq_qp_cq_entries(uint32_t sq_wqes, uint32_t srq_depth) {
  return std::max<uint32_t>(sq_wqes, 1) + std::max<uint32_t>(srq_depth, 1) + 1;
}

NTSTATUS mr_access(ULONG flags, Transport t, unsigned* access) {
  constexpr ULONG kKnown = NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                           NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK;
  if (flags & ~kKnown) return STATUS_INVALID_PARAMETER;
  unsigned a = 0;
  if (flags & NDK_MR_FLAG_ALLOW_LOCAL_WRITE) a |= IBV_ACCESS_LOCAL_WRITE;
  if (flags & NDK_MR_FLAG_ALLOW_REMOTE_READ) a |= IBV_ACCESS_REMOTE_READ;
  // NDK_MR_FLAG_ALLOW_REMOTE_WRITE (0x5) carries the local-write bit.
  if ((flags & NDK_MR_FLAG_ALLOW_REMOTE_WRITE) == NDK_MR_FLAG_ALLOW_REMOTE_WRITE)
    a |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
  if (flags & NDK_MR_FLAG_RDMA_READ_SINK) {
    a |= IBV_ACCESS_LOCAL_WRITE;
    if (t == Transport::kIwarp) a |= IBV_ACCESS_REMOTE_WRITE;
  }
  *access = a;
  return STATUS_SUCCESS;
}

unsigned window_access(ULONG flags, Transport t) {
  unsigned a = 0;
  if (flags & NDK_OP_FLAG_ALLOW_LOCAL_WRITE) a |= IBV_ACCESS_LOCAL_WRITE;
  if (flags & NDK_OP_FLAG_ALLOW_REMOTE_READ) a |= IBV_ACCESS_REMOTE_READ;
  if ((flags & NDK_OP_FLAG_ALLOW_REMOTE_WRITE) == NDK_OP_FLAG_ALLOW_REMOTE_WRITE)
    a |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
  if (flags & NDK_OP_FLAG_RDMA_READ_SINK) {
    a |= IBV_ACCESS_LOCAL_WRITE;
    if (t == Transport::kIwarp) a |= IBV_ACCESS_REMOTE_WRITE;
  }
  return a;
}

ULONG allowed_flags(SendOp op) {
  switch (op) {
    case SendOp::kSend:
    case SendOp::kSendAndInvalidate:
      return kSendFlags;
    case SendOp::kWrite:
      return kWriteFlags;
    case SendOp::kRead:
      return kReadFlags;
    case SendOp::kInvalidate:
      return kInvalidateFlags;
  }
  return 0;
}

NTSTATUS build_send(const SendRequest& req, const QpLimits& lim, SendWqes* out) {
  // Everything but the SGE array, which is written up to the count the
  // WQE names (the device reads no further): no 256-byte clear per post.
  out->wr[0] = ibv_send_wr{};
  out->wr[1] = ibv_send_wr{};
  out->count = 0;
  out->deferred = false;
  out->signaled = true;
  out->coalesce_inline = false;
  out->length = 0;
  if (req.flags & ~allowed_flags(req.op)) return STATUS_INVALID_PARAMETER;
  if (req.nsge > 0 && req.sgl == nullptr) return STATUS_INVALID_PARAMETER;
  const bool is_inline = (req.flags & NDK_OP_FLAG_INLINE) != 0;
  const uint32_t max_sge = req.op == SendOp::kRead ? lim.read_sge : lim.send_sge;
  if (req.op == SendOp::kInvalidate ? req.nsge != 0 : (!is_inline && req.nsge > max_sge))
    return STATUS_INVALID_PARAMETER;
  // Inline data is copied by the device at post time, so its SGL may be
  // longer than the QP's SGE limit only up to what one request can carry.
  if (req.nsge > kMaxSge) return STATUS_INVALID_PARAMETER;
  uint64_t total = 0;
  for (uint32_t k = 0; k < req.nsge; ++k) total += req.sgl[k].Length;
  if (total > lim.max_transfer) return STATUS_INVALID_PARAMETER;
  if (is_inline && total > lim.max_inline) return STATUS_INVALID_PARAMETER;
  const bool wants_inv =
      req.op == SendOp::kInvalidate ||
      (req.op == SendOp::kRead && (req.flags & NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE) != 0);
  if (wants_inv && !lim.local_inv) return STATUS_NOT_SUPPORTED;

  for (uint32_t k = 0; k < req.nsge; ++k) {
    out->sge[k].addr = static_cast<uint64_t>(req.sgl[k].LogicalAddress.QuadPart);
    out->sge[k].length = req.sgl[k].Length;
    // INLINE: NDKPI 2.3 lets the token be garbage; the device copies the
    // bytes and never looks at lkey.
    out->sge[k].lkey = is_inline ? 0 : req.sgl[k].MemoryRegionToken;
  }
  out->length = total;
  uint32_t nsge = req.nsge;
  if (is_inline && nsge > lim.send_sge) {
    out->coalesce_inline = true;
    out->sge[0] = ibv_sge{0, static_cast<uint32_t>(total), 0};
    nsge = 1;
  }
  out->deferred = (req.flags & NDK_OP_FLAG_DEFER) != 0;
  // A silent Read is signaled all the same: siw completes the WQEs after a
  // Read as they are sent, before the Read's response has landed (the Read
  // waits in its ORQ), so a later CQE does not prove the Read done, and the
  // backend retires unsignaled records on a later CQE (poll_locked). Found
  // by ndk-nvmet over kernel siw (interop verbs nvmet_siw: a WRITE's data
  // taken before its Read Response landed).
  out->signaled = (req.flags & NDK_OP_FLAG_SILENT_SUCCESS) == 0 || req.op == SendOp::kRead;

  unsigned send_flags = 0;
  if (out->signaled) send_flags |= IBV_SEND_SIGNALED;
  if (req.flags & NDK_OP_FLAG_READ_FENCE) send_flags |= IBV_SEND_FENCE;
  if (req.flags & NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT) send_flags |= IBV_SEND_SOLICITED;
  if (is_inline) send_flags |= IBV_SEND_INLINE;

  ibv_send_wr& w = out->wr[0];
  w.wr_id = req.wr_id;
  w.sg_list = nsge > 0 ? out->sge : nullptr;
  w.num_sge = static_cast<int>(nsge);
  w.send_flags = send_flags;
  switch (req.op) {
    case SendOp::kSend:
      w.opcode = IBV_WR_SEND;
      break;
    case SendOp::kSendAndInvalidate:
      w.opcode = IBV_WR_SEND_WITH_INV;
      w.invalidate_rkey = req.remote_token;
      // libsiw (rdma-core 44) takes the STag to invalidate from
      // wr.rdma.rkey, not from invalidate_rkey: without this the peer gets
      // a garbage STag and fails the receive (REM_INV_REQ_ERR; found in the
      // interop guest). Other providers ignore wr.rdma for Sends.
      w.wr.rdma.rkey = req.remote_token;
      break;
    case SendOp::kWrite:
      w.opcode = IBV_WR_RDMA_WRITE;
      w.wr.rdma.remote_addr = req.remote_addr;
      w.wr.rdma.rkey = req.remote_token;
      break;
    case SendOp::kRead:
      w.opcode = IBV_WR_RDMA_READ;
      w.wr.rdma.remote_addr = req.remote_addr;
      w.wr.rdma.rkey = req.remote_token;
      break;
    case SendOp::kInvalidate:
      w.opcode = IBV_WR_LOCAL_INV;
      w.invalidate_rkey = req.local_token;
      if (lim.fence_local_ops) w.send_flags |= IBV_SEND_FENCE;
      break;
  }
  out->count = 1;
  if (req.op == SendOp::kRead && (req.flags & NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE)) {
    // Verbs has no Read-with-local-invalidate: a Read, then a LOCAL_INV of
    // the sink's token fenced behind it (IBV_SEND_FENCE waits for the
    // Read's response). The NDK request completes once, with the second
    // WQE: the Read goes unsignaled (its errors still complete, and the
    // backend reports them against the same record), the LOCAL_INV
    // carries the request's signaled state and wr_id.
    ibv_send_wr& inv = out->wr[1];
    inv.wr_id = req.wr_id;
    inv.opcode = IBV_WR_LOCAL_INV;
    inv.invalidate_rkey = req.local_token;
    inv.send_flags =
        IBV_SEND_FENCE | (out->signaled ? static_cast<unsigned>(IBV_SEND_SIGNALED) : 0u);
    w.send_flags &= ~static_cast<unsigned>(IBV_SEND_SIGNALED);
    w.next = &inv;
    out->count = 2;
  }
  return STATUS_SUCCESS;
}

NTSTATUS build_bind(const BindRequest& req, Transport t, ibv_send_wr* out) {
  *out = ibv_send_wr{};
  constexpr ULONG kAllowed = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                             NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ |
                             NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_RDMA_READ_SINK |
                             NDK_OP_FLAG_DEFER;
  if (req.flags & ~kAllowed) return STATUS_INVALID_PARAMETER;
  if (req.mw == nullptr || req.mr == nullptr || req.length == 0) return STATUS_INVALID_PARAMETER;
  const auto base = reinterpret_cast<uintptr_t>(req.mr->addr);
  if (!sge_in_arena(req.addr, req.length, base, req.mr->length)) return STATUS_INVALID_PARAMETER;
  out->wr_id = req.wr_id;
  out->opcode = IBV_WR_BIND_MW;
  out->send_flags = IBV_SEND_SIGNALED;
  if ((req.flags & NDK_OP_FLAG_READ_FENCE) || req.fence) out->send_flags |= IBV_SEND_FENCE;
  out->bind_mw.mw = req.mw;
  out->bind_mw.rkey = req.rkey;
  out->bind_mw.bind_info.mr = req.mr;
  out->bind_mw.bind_info.addr = req.addr;
  out->bind_mw.bind_info.length = req.length;
  out->bind_mw.bind_info.mw_access_flags = window_access(req.flags, t);
  if (req.zero_based) out->bind_mw.bind_info.mw_access_flags |= IBV_ACCESS_ZERO_BASED;
  return STATUS_SUCCESS;
}

void WindowStates::freed(uint32_t rkey) {
  auto it = live_.find(rkey);
  if (it == live_.end()) return;
  if (--it->second == 0) {
    live_.erase(it);
    bound_.erase(rkey);
  }
}

void WindowStates::bound(uint32_t rkey) {
  if (is_window(rkey)) bound_.insert(rkey);
}

WindowStates::Invalidate WindowStates::invalidate(uint32_t rkey) {
  if (!is_window(rkey)) return Invalidate::kNotAWindow;
  return bound_.erase(rkey) != 0 ? Invalidate::kPost : Invalidate::kRefuse;
}

bool sge_in_arena(uint64_t addr, uint64_t length, uint64_t arena_addr, uint64_t arena_len) {
  return addr >= arena_addr && length <= arena_len && addr - arena_addr <= arena_len - length;
}

NTSTATUS build_recv(const NDK_SGE* sgl, uint32_t nsge, const QpLimits& lim, uint64_t wr_id,
                    RecvWqe* out) {
  *out = RecvWqe{};
  if (nsge > lim.recv_sge || nsge > kMaxSge) return STATUS_INVALID_PARAMETER;
  if (nsge > 0 && sgl == nullptr) return STATUS_INVALID_PARAMETER;
  uint64_t total = 0;
  for (uint32_t k = 0; k < nsge; ++k) {
    total += sgl[k].Length;
    out->sge[k].addr = static_cast<uint64_t>(sgl[k].LogicalAddress.QuadPart);
    out->sge[k].length = sgl[k].Length;
    out->sge[k].lkey = sgl[k].MemoryRegionToken;
  }
  if (total > lim.max_transfer) return STATUS_INVALID_PARAMETER;
  out->wr.wr_id = wr_id;
  out->wr.sg_list = nsge > 0 ? out->sge : nullptr;
  out->wr.num_sge = static_cast<int>(nsge);
  out->capacity = total;
  return STATUS_SUCCESS;
}

NTSTATUS status_of(ibv_wc_status s) {
  switch (s) {
    case IBV_WC_SUCCESS:
      return STATUS_SUCCESS;
    case IBV_WC_WR_FLUSH_ERR:
      return STATUS_CANCELLED;  // flushed: NdkFlush, QP close or error
    case IBV_WC_LOC_LEN_ERR:
      return STATUS_BUFFER_OVERFLOW;  // the Send did not fit the receive
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_ACCESS_ERR:
    case IBV_WC_REM_ACCESS_ERR:
      return STATUS_ACCESS_VIOLATION;  // a local or remote token check failed
    case IBV_WC_LOC_QP_OP_ERR:
    case IBV_WC_LOC_EEC_OP_ERR:
    case IBV_WC_MW_BIND_ERR:
      return STATUS_INVALID_PARAMETER;  // a failed local operation (bind, invalidate)
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_INV_RD_REQ_ERR:
      return STATUS_REMOTE_RESOURCES;  // the peer refused the request's kind or size
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_ABORT_ERR:
      return STATUS_CONNECTION_ABORTED;  // the peer ended the connection over it
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
    case IBV_WC_RESP_TIMEOUT_ERR:
      return STATUS_IO_TIMEOUT;  // the transport gave up retrying
    case IBV_WC_BAD_RESP_ERR:
      return STATUS_DATA_ERROR;
    default:
      return STATUS_INTERNAL_ERROR;  // FATAL, GENERAL and the rest
  }
}

bool local_ops_rerun_on_retry(const DeviceFacts& facts) { return facts.driver == "rxe"; }

bool zero_based_windows(const DeviceFacts& facts) { return facts.driver == "rxe"; }

WcFlagsAbi wc_flags_abi(const DeviceFacts& facts) {
  return facts.driver == "rxe" ? WcFlagsAbi::kKernelBits : WcFlagsAbi::kUser;
}

uint32_t invalidated_rkey_of(const ibv_wc& wc, WcFlagsAbi abi) {
  if (wc.status != IBV_WC_SUCCESS) return 0;
  if (wc.wc_flags & IBV_WC_WITH_INV) return wc.invalidated_rkey;
  // rxe's bit 2 (IBV_WC_IP_CSUM_OK to libibverbs): rxe sets no checksum
  // flag on a receive of a Send, so there it means the invalidation.
  constexpr unsigned kKernelWithInvalidate = 1u << 2;
  if (abi == WcFlagsAbi::kKernelBits && (wc.wc_flags & kKernelWithInvalidate) &&
      wc.opcode == IBV_WC_RECV)
    return wc.invalidated_rkey;
  return 0;
}

NDK_RESULT_EX result_of(const ibv_wc& wc, const PostedRecord& rec, void* qp_context,
                        WcFlagsAbi abi) {
  NDK_RESULT_EX r{};
  r.Status = status_of(wc.status);
  r.QPContext = qp_context;
  r.RequestContext = rec.request_context;
  r.Type = rec.type;
  const bool ok = wc.status == IBV_WC_SUCCESS;
  const bool receive = rec.type == NdkOperationTypeReceive;
  if (receive) {
    r.BytesTransferred = ok ? wc.byte_len : 0;
    if (const uint32_t rkey = invalidated_rkey_of(wc, abi); rkey != 0) {
      r.Type = NdkOperationTypeReceiveAndInvalidate;
      r.TypeSpecificCompletionOutput = rkey;
    }
  } else {
    r.BytesTransferred = ok ? static_cast<ULONG>(rec.length) : 0;
  }
  r.ProviderErrorCode = provider_error_of(wc);
  return r;
}

ULONG provider_error_of(const ibv_wc& wc) {
  if (wc.status == IBV_WC_SUCCESS) return 0;
  return (static_cast<ULONG>(wc.status) & 0xffu) | ((wc.vendor_err & 0xffffffu) << 8);
}

NTSTATUS status_of_errno(int e, NTSTATUS fallback) {
  switch (-e) {
    case ECONNREFUSED:
      return STATUS_CONNECTION_REFUSED;
    case ETIMEDOUT:
      return STATUS_IO_TIMEOUT;
    case ENETUNREACH:
      return STATUS_NETWORK_UNREACHABLE;
    case EHOSTUNREACH:
      return STATUS_HOST_UNREACHABLE;
    case ECONNRESET:
      return STATUS_CONNECTION_RESET;
    case ECONNABORTED:
      return STATUS_CONNECTION_ABORTED;
    case ENOMEM:
    case ENOBUFS:
      return STATUS_INSUFFICIENT_RESOURCES;
    case EADDRINUSE:
      return STATUS_SHARING_VIOLATION;
    case EADDRNOTAVAIL:
      return STATUS_INVALID_ADDRESS;
    default:
      return fallback;
  }
}

CmReadLimits cm_read_limits(bool iwarp, bool request, uint8_t initiator_depth,
                            uint8_t responder_resources) {
  const bool device_view = iwarp && !request;  // iWARP ESTABLISHED: ird, ord
  CmReadLimits r;
  r.inbound = device_view ? initiator_depth : responder_resources;
  r.outbound = device_view ? responder_resources : initiator_depth;
  return r;
}

uint16_t effective_read_limit(uint16_t want, uint16_t peer) { return std::min(want, peer); }

CmOutcome translate_cm_event(rdma_cm_event_type ev, int st, CmPhase phase) {
  const bool pending = phase == CmPhase::kResolvingAddr || phase == CmPhase::kResolvingRoute ||
                       phase == CmPhase::kConnecting || phase == CmPhase::kAccepting;
  switch (ev) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      if (phase == CmPhase::kResolvingAddr) return {CmAction::kNextResolveRoute, STATUS_SUCCESS};
      break;
    case RDMA_CM_EVENT_ADDR_ERROR:
      if (phase == CmPhase::kResolvingAddr)
        return {CmAction::kComplete, status_of_errno(st, STATUS_HOST_UNREACHABLE)};
      break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
      if (phase == CmPhase::kResolvingRoute) return {CmAction::kNextConnect, STATUS_SUCCESS};
      break;
    case RDMA_CM_EVENT_ROUTE_ERROR:
      if (phase == CmPhase::kResolvingRoute)
        return {CmAction::kComplete, status_of_errno(st, STATUS_NETWORK_UNREACHABLE)};
      break;
    case RDMA_CM_EVENT_CONNECT_REQUEST:
      return {CmAction::kIncoming, STATUS_SUCCESS};
    case RDMA_CM_EVENT_ESTABLISHED:
      if (phase == CmPhase::kConnecting || phase == CmPhase::kAccepting)
        return {CmAction::kComplete, STATUS_SUCCESS};
      break;
    case RDMA_CM_EVENT_REJECTED:
      // Nobody listening and an NdkReject look alike to the initiator, as
      // on the software backend (IB: reject reason; iWARP: -ECONNREFUSED).
      if (phase == CmPhase::kConnecting) return {CmAction::kComplete, STATUS_CONNECTION_REFUSED};
      if (phase == CmPhase::kAccepting) return {CmAction::kComplete, STATUS_CONNECTION_ABORTED};
      break;
    case RDMA_CM_EVENT_UNREACHABLE:
      if (pending) return {CmAction::kComplete, status_of_errno(st, STATUS_HOST_UNREACHABLE)};
      break;
    case RDMA_CM_EVENT_CONNECT_ERROR:
      if (phase == CmPhase::kAccepting) return {CmAction::kComplete, STATUS_CONNECTION_ABORTED};
      if (pending) return {CmAction::kComplete, status_of_errno(st, STATUS_CONNECTION_ABORTED)};
      break;
    case RDMA_CM_EVENT_DISCONNECTED:
      if (phase == CmPhase::kEstablished)
        return {CmAction::kPeerDisconnected, STATUS_CONNECTION_DISCONNECTED};
      if (phase == CmPhase::kDisconnecting) return {CmAction::kComplete, STATUS_SUCCESS};
      if (pending) return {CmAction::kComplete, STATUS_CONNECTION_ABORTED};
      break;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
      return {CmAction::kDeviceRemoved, STATUS_INTERNAL_ERROR};
    default:
      break;  // CONNECT_RESPONSE (ids with a QP never see it), TIMEWAIT_EXIT,
              // ADDR_CHANGE (a port event), multicast: nothing to complete
  }
  return {CmAction::kIgnore, STATUS_SUCCESS};
}

}  // namespace softndk::verbs
