// SPDX-License-Identifier: Apache-2.0
// verbs/verbs_map.h - the pure translation between the NDK object model and
// rdma-core's verbs (issue 30): work requests and their flags into
// ibv_send_wr / ibv_recv_wr, ibv_wc into NDK_RESULT_EX, device attributes
// into NDK_ADAPTER_INFO, the fast-register strategy, private-data limits per
// transport and rdma_cm events into connector/listener outcomes.
//
// Nothing here calls into libibverbs or librdmacm: the functions fill and
// read the structures of <infiniband/verbs.h> and <rdma/rdma_cma.h> only,
// so they are unit-tested without an RDMA device (tests/verbs, label
// verbs) and the library that contains them links neither. docs/verbs.md
// is the table these functions implement.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "softndk/ndkpi.h"

namespace softndk::verbs {

// The most SGEs the object model keeps per request (provider/work_request.h
// kMaxSge); a device that offers more is reported with this many.
inline constexpr uint32_t kMaxSge = 16;
// Every NDK initiator request may need two send queue entries (a Read with
// NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE is a Read plus a fenced
// LOCAL_INV), so the QP's send queue is created twice the NDK depth and
// the reported MaxInitiatorQueueDepth is half the device's max_qp_wr.
inline constexpr uint32_t kWqesPerRequest = 2;

// ---------------------------------------------------------------------------
// Transport and device facts
// ---------------------------------------------------------------------------

enum class Transport : uint8_t {
  kUnknown,
  kIwarp,       // IBV_TRANSPORT_IWARP (siw, cxgb4, irdma in iWARP mode)
  kRoce,        // IBV_TRANSPORT_IB over an Ethernet link layer (rxe, mlx5 RoCE, irdma RoCEv2)
  kInfiniBand,  // IBV_TRANSPORT_IB over an InfiniBand link layer
};

Transport transport_of(ibv_transport_type t, uint8_t link_layer);
const char* transport_name(Transport t);

// What the device probe learned beyond ibv_query_device_ex/ibv_query_port
// (facts that only trying tells: the largest inline size a QP accepts,
// whether ibv_resize_cq works) and the name of the kernel driver.
struct DeviceFacts {
  std::string name;    // ibv_get_device_name: "siw0", "rxe0", "mlx5_0"
  std::string driver;  // "siw", "rxe", "mlx5", ... (from the name or sysfs)
  Transport transport = Transport::kUnknown;
  uint32_t max_inline = 0;  // largest max_inline_data a probe QP was created with
  bool cq_resize = false;   // ibv_resize_cq succeeded on a probe CQ
  bool mw_type2 = false;    // a type-2 MW could be allocated on a probe PD
};

// Private data an NDK consumer may pass (MaxCallerData: NdkConnect;
// MaxCalleeData: NdkAccept/NdkReject) over rdma_cm on this transport.
//   IB/RoCE: the CM REQ carries 92 bytes of private data of which rdma_cm's
//     own header takes 36 -> 56; REP 196; REJ 148 (the NDK's MaxCalleeData
//     covers accept and reject, so the smaller, 148).
//   iWARP: MPA private data is at most 512 bytes (RFC 5044), siw caps it
//     at 256 and MPA v2's RFC 6581 IRD/ORD words take 4 of those (252, the
//     software backend's value toward siw); through rdma_cm between two
//     kernel siw endpoints (Linux 6.1) 252 fails both ways - the connect is
//     reset, the accept refused with EINVAL - and 251 works (measured in
//     the interop guest, softndk-verbs-exercise), so 251.
struct PrivateDataLimits {
  uint32_t caller = 0;
  uint32_t callee = 0;
};
PrivateDataLimits private_data_limits(Transport t);

// NDK_ADAPTER_INFO from the device. `version` is what the adapter
// negotiated; `large_request_threshold` is the object model's.
NDK_ADAPTER_INFO adapter_info(const ibv_device_attr_ex& dev, const ibv_port_attr& port,
                              const DeviceFacts& facts, NDK_VERSION version,
                              uint32_t large_request_threshold);

// ---------------------------------------------------------------------------
// Fast register
// ---------------------------------------------------------------------------

enum class FrStrategy : uint8_t {
  // Type-2 memory window bound with IBV_WR_BIND_MW over the MR that
  // NdkBuildLAM registered (the arena), re-bound with the same rkey after
  // every invalidation: the token is stable, as NDKPI requires.
  kType2Window,
  // The named degraded mode (SOFTNDK_OPEN_FLAG_FR_REGISTER): each
  // NdkFastRegister registers the pages with ibv_reg_mr_iova on a backend
  // thread and completes in SQ order; the token changes with every
  // registration and must be read again (NdkGetRemoteTokenFromMr).
  kRegisterPerFastRegister,
  // Neither: NdkInitializeFastRegisterMr fails with STATUS_NOT_SUPPORTED.
  kUnsupported,
};
const char* fr_strategy_name(FrStrategy s);

// Type-2 windows need IBV_DEVICE_MEM_WINDOW_TYPE_2B (or 2A) in the
// device's capability flags and max_mw > 0 (and, when the probe tried,
// a type-2 window that could really be allocated).
FrStrategy choose_fr_strategy(const ibv_device_attr_ex& dev, const DeviceFacts& facts,
                              bool degraded_opt_in);

// One NdkFastRegister as a window bind: the address range to bind inside
// the arena MR. The pages (logical addresses = process VAs in softndk) must
// be contiguous, lie inside [arena_addr, arena_addr + arena_len), and the
// region must be addressed at its own VA (BaseVirtualAddress == page 0 +
// FBO) or zero-based where the device offers zero-based windows.
struct FrBind {
  uint64_t addr = 0;    // first byte (process VA)
  uint64_t length = 0;  // bytes
  bool zero_based = false;
};
NTSTATUS plan_window_bind(const NDK_LOGICAL_ADDRESS* pages, uint32_t page_count, uint32_t fbo,
                          uint64_t length, uint64_t base_va, uint64_t arena_addr,
                          uint64_t arena_len, bool zero_based_ok, FrBind* out);

// NdkModifySrq with a new depth on a device SRQ: ibv_modify_srq with
// IBV_SRQ_MAX_WR, offered where the device says IBV_DEVICE_SRQ_RESIZE
// (rxe, mlx5); siw does not (its modify_srq refuses IB_SRQ_MAX_WR):
// STATUS_NOT_SUPPORTED there, without asking the device.
bool srq_can_resize(const ibv_device_attr_ex& dev);
// ibv_modify_srq's / ibv_resize_cq's result (0 or a positive errno) as
// NdkModifySrq's status.
NTSTATUS srq_resize_status(int rc);
// The CQ of a QP on an SRQ holds its send queue's completions and every
// receive of the SRQ (all may complete on this one QP): the entries it
// needs for an SRQ of `srq_depth` (grown with the SRQ, never shrunk).
uint32_t srq_qp_cq_entries(uint32_t sq_wqes, uint32_t srq_depth);

// One window bind as a WQE: NdkBind (the window over an NDK MR's
// registration) or NdkFastRegister (the FR MR's window over the arena).
// The window keeps its rkey (`rkey` = the window's current one): the token
// the consumer read stays the token. Flags: NDK_OP_FLAG_* of NdkBind /
// NdkFastRegister (others: STATUS_INVALID_PARAMETER); the range must lie
// inside the MR's registration (STATUS_INVALID_PARAMETER); length 0 or a
// missing window/MR: STATUS_INVALID_PARAMETER.
struct BindRequest {
  ibv_mw* mw = nullptr;
  ibv_mr* mr = nullptr;
  uint32_t rkey = 0;
  uint64_t addr = 0, length = 0;
  ULONG flags = 0;
  uint64_t wr_id = 0;
  bool fence = false;       // IBV_SEND_FENCE: QpLimits::fence_local_ops
  bool zero_based = false;  // IBV_ACCESS_ZERO_BASED (FrBind::zero_based)
};
NTSTATUS build_bind(const BindRequest& req, Transport t, ibv_send_wr* out);

// Which of an adapter's type-2 windows are bound, as far as its posts and
// completions tell: a bind makes a window valid; a local invalidate (also
// a Read's local invalidate of its sink) and a peer's reported Send with
// Invalidate make it invalid. NdkInvalidate of a window that is not valid
// completes STATUS_INVALID_PARAMETER without reaching the device, as on
// the software backend (an invalid STag's invalidate fails): Linux 6.1's
// rxe dereferences NULL for a LOCAL_INV of a type-2 window that is not
// bound (a kernel panic; docs/verbs.md). Not thread-safe (the provider
// guards it). A peer's invalidation that completes after the consumer
// posted its own invalidate is not caught: NDK consumers invalidate only
// keys the peer is done with.
class WindowStates {
 public:
  enum class Invalidate : uint8_t {
    kPost,        // bound: post IBV_WR_LOCAL_INV (the window is invalid from here on)
    kRefuse,      // a window of this adapter that is not bound: fail the request
    kNotAWindow,  // not a window rkey of this adapter: the device decides
  };
  void allocated(uint32_t rkey) { ++live_[rkey]; }
  void freed(uint32_t rkey);
  bool is_window(uint32_t rkey) const { return live_.count(rkey) != 0; }
  void bound(uint32_t rkey);
  Invalidate invalidate(uint32_t rkey);
  void peer_invalidated(uint32_t rkey) { bound_.erase(rkey); }

 private:
  std::map<uint32_t, int> live_;  // rkey -> windows with it (type-2 rkeys repeat after free)
  std::set<uint32_t> bound_;
};

// Where a window-backed token is named as a local SGE's token (a Read
// sink that was fast-registered, then read into with local invalidate):
// verbs takes only an MR's lkey in an SGE, so such SGEs carry the lkey of
// the registration (the arena) that holds their bytes. `arena_*`: that
// registration; false if the SGE's bytes are not inside it.
bool sge_in_arena(uint64_t addr, uint64_t length, uint64_t arena_addr, uint64_t arena_len);

// ---------------------------------------------------------------------------
// Access rights
// ---------------------------------------------------------------------------

// NDK_MR_FLAG_* (NdkRegisterMr) -> IBV_ACCESS_*. iWARP writes Read
// Responses into the sink like a tagged Write, so a Read sink needs
// IBV_ACCESS_REMOTE_WRITE there (NDK_MR_FLAG_RDMA_READ_SINK);
// remote write implies local write on every transport.
// Unknown flags: STATUS_INVALID_PARAMETER.
NTSTATUS mr_access(ULONG ndk_mr_flags, Transport t, unsigned* ibv_access);
// NDK_OP_FLAG_ALLOW_* of NdkBind / NdkFastRegister -> IBV_ACCESS_* of the
// window (IBV_ACCESS_MW_BIND is for the MR underneath, never the window).
unsigned window_access(ULONG ndk_op_flags, Transport t);

// ---------------------------------------------------------------------------
// Work requests
// ---------------------------------------------------------------------------

// The limits a QP was created with (after the device adjusted them).
struct QpLimits {
  uint32_t send_sge = 0;
  uint32_t recv_sge = 0;
  uint32_t read_sge = 0;  // device max_sge_rd (siw: 1)
  uint32_t max_inline = 0;
  uint64_t max_transfer = 0;  // NDK_ADAPTER_INFO.MaxTransferLength
  // The provider library posts IBV_WR_LOCAL_INV from user space (rxe,
  // mlx5, irdma; not libsiw, not libcxgb4): the fast-register strategy is
  // kType2Window exactly when this holds.
  bool local_inv = false;
  // Local operations (BIND_MW, LOCAL_INV) wait with IBV_SEND_FENCE until
  // every earlier WQE has completed (local_ops_rerun_on_retry).
  bool fence_local_ops = false;
};

// Whether the device's driver runs a local operation again when it
// retransmits from an earlier request. Linux's rxe (seen on 6.1) does: a
// retry (ACK timeout or NAK) restarts its requester at the oldest WQE not
// yet completed and walks forward, and a BIND_MW or LOCAL_INV there that
// already ran (done, but not yet passed by the completer because a Send
// before it waits for its ACK) runs a second time. The second bind finds
// the window bound and fails (IBV_WC_MW_BIND_ERR, the QP goes to error);
// a second LOCAL_INV of a window already invalidated dereferences NULL in
// the kernel. Fenced, a local operation runs only when everything before it
// has completed, so no retry can start behind it (docs/verbs.md, "rxe runs
// local operations twice"). rxe only: other drivers' fences cost more and
// their local operations are not replayed.
bool local_ops_rerun_on_retry(const DeviceFacts& facts);

// NdkFastRegister with BaseVirtualAddress 0 (NDK allows it when FBO is 0):
// the peer addresses the region from 0, which a type-2 window bound with
// IBV_ACCESS_ZERO_BASED gives. rxe accepts zero-based type-2 binds (Linux
// 5.14 on: rxe_mw.c, rxe_resp.c add the window's address to the peer's);
// mlx5 and irdma refuse zero-based windows, siw and cxgb4 have none.
bool zero_based_windows(const DeviceFacts& facts);

// The request kinds the SQ carries (NDK_OPERATION_TYPE is the result type).
enum class SendOp : uint8_t { kSend, kSendAndInvalidate, kWrite, kRead, kInvalidate };

// One NDK initiator request in the object model's terms.
struct SendRequest {
  SendOp op = SendOp::kSend;
  ULONG flags = 0;  // NDK_OP_FLAG_*
  const NDK_SGE* sgl = nullptr;
  uint32_t nsge = 0;
  uint64_t remote_addr = 0;   // Read/Write
  uint32_t remote_token = 0;  // Read/Write: rkey; SendAndInvalidate: rkey to invalidate
  uint32_t local_token = 0;   // Invalidate, or the Read's local invalidate: the rkey to drop
  uint64_t wr_id = 0;         // the backend's record of this request
};

// Up to two WQEs (a Read with local invalidate is two) and their SGEs.
// `deferred`: NDK_OP_FLAG_DEFER - chain behind the previous deferred
// requests and ring the doorbell (one ibv_post_send for the chain) with
// the next request that is not deferred.
struct SendWqes {
  ibv_send_wr wr[2]{};
  ibv_sge sge[kMaxSge]{};
  uint32_t count = 0;
  bool deferred = false;
  bool signaled = true;  // false: silent success (IBV_SEND_SIGNALED clear)
  // An inline request with more SGEs than the QP takes (NDKPI lets inline
  // SGLs ignore the SGE limit; providers check num_sge even for inline):
  // wr[0] has one SGE of `length` bytes whose addr the backend points at
  // the object model's copy of the data (WorkRequestHead::inline_data).
  bool coalesce_inline = false;
  uint64_t length = 0;  // bytes the request carries (Send/Write/Read)
};

// Validates and translates. Errors (nothing built, no completion), as the
// software backend reports them at post time:
//   flags not allowed for the operation, more SGEs than the QP's limit
//   (reads: read_sge), inline data above max_inline, a transfer above
//   max_transfer, a NULL SGL with nsge > 0: STATUS_INVALID_PARAMETER.
//   NdkInvalidate or a Read with NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE on a
//   device that cannot invalidate from user space (!local_inv; the adapter
//   then reports neither type-2 windows nor
//   NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED): STATUS_NOT_SUPPORTED.
// The WQEs are linked (wr[0].next = &wr[1]); wr[last].next is null.
NTSTATUS build_send(const SendRequest& req, const QpLimits& lim, SendWqes* out);

// Which silent-success requests still get a signaled WQE. NDK_OP_FLAG_
// SILENT_SUCCESS is an unsignaled WQE (build_send), and an RC send queue
// reports nothing for it: the backend retires its record (and the object
// model frees its ring slot) when a later WQE of the queue completes.
// A consumer that posts only silent requests would so fill its NDK send
// queue with requests long done, where the software backend frees each
// slot as its request completes; so every `every`-th WQE of an unbroken
// run of unsignaled ones is signaled anyway (its CQE carries no NDK
// completion: the object model suppresses a silent success). `every` is
// half the NDK queue's depth: at most every - 1 done requests wait for a
// later completion, and the device's own queue (kWqesPerRequest slots per
// NDK request) can never fill with them either.
class SignalPolicy {
 public:
  explicit SignalPolicy(uint32_t ndk_sq_depth = 1)
      : every_(ndk_sq_depth / 2 > 1 ? ndk_sq_depth / 2 : 1) {}
  // The request's WQE is signaled (true) or left unsignaled.
  bool signal(bool silent) {
    if (silent && ++run_ < every_) return false;
    run_ = 0;
    return true;
  }
  uint32_t every() const { return every_; }

 private:
  uint32_t every_;
  uint32_t run_ = 0;  // unsignaled WQEs since the last signaled one
};

struct RecvWqe {
  ibv_recv_wr wr{};
  ibv_sge sge[kMaxSge]{};
  uint64_t capacity = 0;
};
// NdkReceive / NdkSrqReceive: too many SGEs, a NULL SGL with nsge > 0 or
// a total above max_transfer: STATUS_INVALID_PARAMETER.
NTSTATUS build_recv(const NDK_SGE* sgl, uint32_t nsge, const QpLimits& lim, uint64_t wr_id,
                    RecvWqe* out);

// The flags each NDK call accepts (the software backend's sets, qp_post.cc).
ULONG allowed_flags(SendOp op);

// ---------------------------------------------------------------------------
// Completions
// ---------------------------------------------------------------------------

// IBV_WC_* -> the NTSTATUS the software backend reports for the same event
// (docs/verbs.md, "Completion status").
NTSTATUS status_of(ibv_wc_status s);

// What the backend recorded when it posted the request that wr_id names:
// ibv_wc.opcode is undefined on error completions, so the NDK type and the
// length come from the record, never from the completion.
struct PostedRecord {
  void* request_context = nullptr;
  NDK_OPERATION_TYPE type = NdkOperationTypeSend;
  uint64_t length = 0;   // initiator: bytes posted; receive: capacity
  bool signaled = true;  // initiator: its last WQE asks for a CQE
};

// NDK_RESULT_EX of one completion. Receives report wc.byte_len; initiator
// requests the posted length on success and 0 on error. A receive with
// IBV_WC_WITH_INV is NdkOperationTypeReceiveAndInvalidate with the
// invalidated rkey in TypeSpecificCompletionOutput (invalidated_rkey_of). ProviderErrorCode is
// 0 on success, else wc.status | (wc.vendor_err & 0xffffff) << 8.
// How the device's provider library fills ibv_wc.wc_flags. rxe (Linux's
// soft RoCE, seen on 6.1 with rdma-core 44) writes the kernel's
// IB_WC_WITH_INVALIDATE (1 << 2) into the user-space CQ ring, which
// libibverbs reads as IBV_WC_IP_CSUM_OK; IBV_WC_WITH_INV is 1 << 3. The
// invalidated rkey is in its right place (softndk-verbs-exercise on rxe0:
// a Send with Invalidate of key K completes with wc_flags 0x5 and K in
// invalidated_rkey). Read as IBV_WC_WITH_INV, such a receive looked like a
// plain one, the consumer invalidated the key again, and Linux 6.1's
// rxe_invalidate_mw of a window already invalidated dereferences NULL
// (docs/verbs.md, "receive of a Send with Invalidate").
enum class WcFlagsAbi : uint8_t {
  kUser,        // IBV_WC_* as libibverbs defines them
  kKernelBits,  // rxe: bit 2 is the kernel's IB_WC_WITH_INVALIDATE
};
WcFlagsAbi wc_flags_abi(const DeviceFacts& facts);
// The rkey a receive completion says the peer's Send with Invalidate
// invalidated; 0 if none (not a successful receive, no invalidation).
uint32_t invalidated_rkey_of(const ibv_wc& wc, WcFlagsAbi abi);

// NDK_RESULT_EX.ProviderErrorCode of a completion: 0 on success, else
// wc.status | (wc.vendor_err & 0xffffff) << 8 (the object model passes it
// through, provider interface v5).
ULONG provider_error_of(const ibv_wc& wc);
NDK_RESULT_EX result_of(const ibv_wc& wc, const PostedRecord& rec, void* qp_context,
                        WcFlagsAbi abi = WcFlagsAbi::kUser);

// ---------------------------------------------------------------------------
// rdma_cm events
// ---------------------------------------------------------------------------

// Where the connector is when an event arrives.
enum class CmPhase : uint8_t {
  kResolvingAddr,   // rdma_resolve_addr issued
  kResolvingRoute,  // rdma_resolve_route issued
  kConnecting,      // rdma_connect issued (initiator)
  kAccepting,       // rdma_accept issued (responder)
  kEstablished,     // connected, NdkCompleteConnect / NdkAccept done
  kDisconnecting,   // NdkDisconnect issued
};

enum class CmAction : uint8_t {
  kNextResolveRoute,  // address resolved: resolve the route
  kNextConnect,       // route resolved: create the QP, rdma_connect
  kIncoming,          // listener: a connect request (NDK connect event)
  kComplete,          // the pending NDK request completes with `status`
  kPeerDisconnected,  // established: the NDK disconnect event
  kDeviceRemoved,     // the RDMA device went away: a fatal adapter error
  kIgnore,            // nothing for the object model
};

struct CmOutcome {
  CmAction action = CmAction::kIgnore;
  NTSTATUS status = STATUS_SUCCESS;
};

// The read limits an rdma_cm connect request or ESTABLISHED event carries,
// from this side's point of view. Which field of rdma_conn_param holds
// which limit is not the same everywhere: the IB CM (RoCE, rxe, mlx5)
// reports REQ and REP values in the receiver's view (initiator_depth = the
// peer's IRD, the reads this side may issue). The iWARP CM does so for a
// connect request, but passes the device's negotiated ird/ord as
// initiator_depth/responder_resources at ESTABLISHED (initiator_depth =
// the peer's ORD there). Seen on siw0 and rxe0 (connector_tests
// ConnTest.ReadLimits*); the kernel's cma.c and siw_cm.c agree.
struct CmReadLimits {
  uint16_t inbound = 0;   // the peer's ORD: reads it may send us (our IRD need)
  uint16_t outbound = 0;  // the peer's IRD: reads we may have in flight (our ORD cap)
};
CmReadLimits cm_read_limits(bool iwarp, bool request, uint8_t initiator_depth,
                            uint8_t responder_resources);
// The effective limit: `want` lowered to what the peer allows, never
// raised (NdkGetConnectionData); a peer's 0 is a real 0 (no reads).
uint16_t effective_read_limit(uint16_t want, uint16_t peer);

// `event_status` is rdma_cm_event.status (negative errno, or for
// REJECTED the transport's reject reason; 0 otherwise).
CmOutcome translate_cm_event(rdma_cm_event_type ev, int event_status, CmPhase phase);

// A negative errno of rdma_cm (event status or a call's failure) as the
// NTSTATUS the software backend's connection layer reports for the same
// socket error; `fallback` for the others.
NTSTATUS status_of_errno(int neg_errno, NTSTATUS fallback);

}  // namespace softndk::verbs
