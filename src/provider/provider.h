// SPDX-License-Identifier: Apache-2.0
// provider/provider.h - the provider interface: the one seam between the NDK
// object model (src/ndk) and a data-path engine.
//
// Above this line (src/ndk, never an engine): handles and their kinds, the
// lifetime and close rules (antecedents, pending closes, quarantine), the
// validation of every call against NDK_ADAPTER_INFO and the object's own
// limits, the SQ/RQ/SRQ rings of posted requests, completion delivery (CQ
// rings, arming, notifications, moderation), the connector state machine
// (which call is legal when, request completions, disconnect events), the
// endpoint reservations of NDKPI 6.1, adapter control and the C shim.
//
// Below it (an engine, e.g. the software iWARP engine in src/rdmap over the
// transports in src/transport): moving the bytes. Establishing a connection
// (iWARP: TCP + MPA; verbs: rdma_cm), starting a QP's data path on it,
// executing the posted requests the object model hands down in posting
// order, placing inbound data after checking the STag, and reporting each
// request's completion back up.
//
// Two directions, both abstract classes (a verbs backend implements the
// "down" ones exactly like the software engine does):
//   down (ndk -> engine): Provider (one per adapter instance), Listener,
//     IncomingConnection, ActiveConnect, Connection, QpEngine;
//   up (engine -> ndk): QpHost (a QP's queues, counters and CQs),
//     ProgressSource registration, MemoryObject (an MR/MW a local work
//     request names).
// Value types shared by both sides live next to this file:
//   provider/work_request.h  the queued form of posted requests
//   provider/stag_table.h    the STag table (owned by the object model,
//                            handed to the engine through QpHost::stags())
//   provider/counters.h      SOFTNDK_COUNTERS, per QP and per adapter
//
// The engine is chosen when an adapter opens: ndk/provider_list.cc holds
// the probe list (like UCX's transports: each entry's probe() says whether
// it can serve the interface, the first that can is opened).
//
// Threading: every engine callback (connect results, incoming requests,
// peer close, disconnect completion) runs on an engine thread with no
// object-model lock held, never inside the call that started it. QpHost
// calls may come from any thread (engine threads and consumer threads that
// poll a CQ); QpEngine calls come from consumer threads (posts, flush) and
// the object model's teardown.
//
// What interface version 2 added for a backend that drives a device
// (the verbs backend, issue 30; the software engine keeps the defaults and
// behaves exactly as under version 1):
//   - memory registration below the line: Provider::registers_memory()
//     true means NdkRegisterMr/NdkDeregisterMr go to register_memory() /
//     deregister_memory() (on a backend thread, completing through the NDK
//     request callback) and the tokens the consumer gets are the device's
//     keys; the object model's StagTable then holds no checked entries for
//     those MRs. Fast-register MRs and memory windows: version 3 (below);
//   - receives: QpHost::set_receive_notice() registers an engine that posts
//     receives to a device as they are posted: every NdkReceive then calls
//     QpEngine::rq_posted() after queueing it (no call, no lock otherwise);
//   - QP creation before connect: ConnectArgs::qp and accept()'s qp name
//     the QP the connection will carry (QpHost::shape() its queue sizes),
//     so a device QP exists, with the receives already posted, before the
//     peer can send (rdma_connect / rdma_accept);
//   - completions: the engine polls its own device CQ (completion channel
//     on its thread; polling by consumers through ProgressSource) and
//     reports each request through sq_complete()/complete_receive(); the
//     NDK CQ ring, arming, notifications and moderation stay above;
//   - the adapter's limits: Provider::adapter_info() lowers or replaces
//     NDK_ADAPTER_INFO (from the device), describe() names the device.
// docs/architecture.md, "The provider interface", says the same.
//
// Interface versions (keep in step with kInterfaceVersion):
//   1  first version (issue 26): the software iWARP engine behind it.
//      (Address became util::SockAddr, the same layout with helpers, right
//      after the first commit.)
//   2  issue 30: memory registration, receive notices, the QP at connect
//      and accept time, adapter limits and device description (above).
//   3  issue 30: device memory windows (fast-register MRs and NdkCreateMw
//      as the device's type-2 windows, NdkBuildLAM as a registered arena,
//      MemoryObject::device_handle()) and device SRQs (SrqHost/SrqEngine,
//      QpHost::srq_engine()). The software engine keeps the defaults
//      (device_windows() and device_srq() false) and behaves as before.
//   4  issue 30: inline notification delivery (ProviderConfig's
//      begin_inline_notify/end_inline_notify): a backend's own completion
//      thread delivers the NDK CQ notifications that its completions make
//      due, instead of waking the CQ's reactor. The software engine does not
//      use it.
//   5  NDK_RESULT_EX.ProviderErrorCode: sq_complete() and complete_receive()
//      take the backend's own error code for a failed request (the verbs
//      backend: the work completion's status and vendor error), which the
//      consumer sees next to the NTSTATUS. 0 (the default) where the
//      backend has none; the software engine passes none.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "provider/counters.h"
#include "provider/stag_table.h"
#include "provider/work_request.h"
#include "softndk/softndk.h"
#include "util/sockaddr.h"

namespace softndk::util {
class PcapFile;
class Engine;
}  // namespace softndk::util

namespace softndk::provider {

inline constexpr uint32_t kInterfaceVersion = 5;

// SOFTNDK_FAULT.Type as the integer a C caller stored: any value may
// arrive, and loading one outside the enumerators as the enum type is
// undefined in C++, so it is read as bytes and compared as an integer.
inline uint32_t fault_type(const SOFTNDK_FAULT& f) {
  static_assert(sizeof f.Type == sizeof(uint32_t));
  uint32_t t;
  std::memcpy(&t, &f.Type, sizeof t);
  return t;
}

// ---------------------------------------------------------------------------
// The QP as the engine sees it (up-calls; implemented by ndk::Qp).
// ---------------------------------------------------------------------------

enum class QpState : uint8_t { kIdle, kConnected, kError, kClosing };

// Sequence number of a direct send that took no SQ ring slot.
inline constexpr uint64_t kDirectNoSlot = ~uint64_t{0};

// Something that can make receive progress when a consumer polls an empty
// CQ (docs/datapath.md "Receive from the polling thread"). Neither call may
// block; both run with no CQ lock held.
class ProgressSource {
 public:
  virtual ~ProgressSource() = default;
  virtual void progress() = 0;
  // The consumer armed the CQ: it is about to wait for a notification
  // rather than poll, so the source must progress on its own again.
  virtual void cq_armed() {}
};

class QpEngine;

// v3. A shared receive queue as a device engine sees it (implemented by
// ndk::Srq): the object model keeps the ring of posted receives, the
// engine moves them to the device SRQ as they are posted and reports the
// device's limit event.
class SrqHost {
 public:
  // The oldest queued receive (no threshold logic: the device's limit
  // replaces the object model's count when an engine is attached).
  virtual bool srq_take(ReceiveRequest* out) = 0;
  // The device reported its limit (IBV_EVENT_SRQ_LIMIT_REACHED): the NDK
  // SRQ notification, once per arming. Any engine thread.
  virtual void srq_limit_reached() = 0;
  // The engine could not post a receive it took (the device refused it):
  // back to the head of the ring, still uncompleted, for the next try.
  virtual void srq_untake(const ReceiveRequest& r) = 0;
  // A receive the engine took has left the device SRQ (completed on a
  // QP): NdkSrqReceive's depth counts the receives the device holds too.
  virtual void srq_done() = 0;

 protected:
  ~SrqHost() = default;
};

// v3. The engine side of an SRQ (one per NDK SRQ on a device engine).
class SrqEngine {
 public:
  virtual ~SrqEngine() = default;
  // NdkSrqReceive queued a receive (consumer thread): post what is queued.
  virtual void srq_posted() = 0;
  // NdkModifySrq / NdkCreateSrq with a threshold: arm the device's limit.
  virtual NTSTATUS arm(uint32_t threshold) = 0;
  // NdkModifySrq with a new depth (the object model checked it against
  // MaxSrqDepth and the receives outstanding). STATUS_NOT_SUPPORTED where
  // the device cannot resize an SRQ.
  virtual NTSTATUS resize(uint32_t depth) {
    (void)depth;
    return STATUS_NOT_SUPPORTED;
  }
  // The NDK SRQ closes: no more calls into the host from now on.
  virtual void detach() = 0;
};

// A QP's queues, CQs, counters and settings, for its engine. Posting order
// is kept by the object model: the engine takes requests with sq_start()
// and reports them with sq_complete(); completions reach the CQs in posting
// order whatever order the engine finishes them in.
class QpHost {
 public:
  virtual QpState state() const = 0;
  // Next not-yet-started initiator request (a copy); local_only: only if it
  // is a local operation (FastRegister, Bind, Invalidate).
  virtual bool sq_start(WorkRequest* out, uint64_t* seq, bool local_only = false) = 0;
  // That request is done. False if a flush cancelled it meanwhile.
  // provider_error: NDK_RESULT_EX.ProviderErrorCode of a failure (v5).
  virtual bool sq_complete(uint64_t seq, NTSTATUS status, ULONG bytes, ULONG_PTR type_specific = 0,
                           ULONG provider_error = 0) = 0;
  // The same for the slotless direct send (kDirectNoSlot).
  virtual bool direct_finish(NTSTATUS status, ULONG bytes) = 0;
  // Next receive (from the QP's RQ or its SRQ).
  virtual bool rq_take(ReceiveRequest* out) = 0;
  virtual void complete_receive(const ReceiveRequest& r, NTSTATUS status, ULONG bytes,
                                bool solicited, uint32_t invalidated_stag = 0,
                                ULONG provider_error = 0) = 0;
  // Fatal error: the QP goes to Error and everything queued is flushed.
  virtual void to_error() = 0;
  // The engine side attaches once its data path runs and detaches for good
  // when it stops; posts are refused before and after.
  virtual void attach(std::shared_ptr<QpEngine> e) = 0;
  virtual void detach() = 0;
  // Polling-driven progress on the QP's CQs (both, when they differ).
  virtual void add_progress(std::shared_ptr<ProgressSource> s) = 0;
  virtual void remove_progress(const ProgressSource* s) = 0;

  // Protection: the identity STag entries carry for this QP's PD, and the
  // table to check them in (software engines; a verbs backend ignores it).
  virtual const void* pd_key() const = 0;
  virtual StagTable& stags() = 0;

  // Counters: the QP's own and its adapter's (counters.h explains which
  // the data path bumps).
  virtual Counters& counters() = 0;
  virtual Counters& adapter_counters() = 0;

  // v2. The queue sizes the consumer created the QP with (an engine that
  // creates a device QP sizes it by them) and whether it takes its
  // receives from an SRQ.
  struct Shape {
    uint32_t sq_depth = 0, rq_depth = 0, sq_sge = 0, rq_sge = 0, inline_size = 0;
    bool srq = false;
  };
  virtual Shape shape() const = 0;
  // v2. `e` gets rq_posted() after every receive posted from now on (null
  // stops it); an engine registers before its device QP can receive.
  virtual void set_receive_notice(std::shared_ptr<QpEngine> e) = 0;
  // v2. A receive the engine took (rq_take) but will never use goes back
  // to the front of the QP's queue (call it for the last taken first): a
  // failed connect leaves the QP Idle with its receives, as the software
  // engine does. False if the queue has no room (the engine then completes
  // it STATUS_CANCELLED).
  virtual bool rq_untake(const ReceiveRequest& r) = 0;
  // Wire traces: the QP's (SoftNdkTraceQp) and the adapter's, null if off.
  virtual std::shared_ptr<util::PcapFile> trace_file() = 0;
  virtual std::shared_ptr<util::PcapFile> adapter_trace_file() = 0;
  // v3. The device SRQ the QP takes its receives from (null: none, or a
  // software engine's SRQ).
  virtual std::shared_ptr<SrqEngine> srq_engine() const { return nullptr; }

 protected:
  ~QpHost() = default;
};

// ---------------------------------------------------------------------------
// The engine side of one QP (down-calls; was ndk::QpTransport).
// ---------------------------------------------------------------------------
class QpEngine {
 public:
  virtual ~QpEngine() = default;
  // New initiator work; `deferred` when NDK_OP_FLAG_DEFER asked to wait for
  // the next non-deferred post (NDKPI 7); `bytes` the payload it carries
  // out (Send/Write length, 0 for the others).
  virtual void sq_posted(bool deferred, uint64_t bytes) = 0;
  // v2: a receive was queued (only for an engine registered with
  // QpHost::set_receive_notice; may run on any consumer thread).
  virtual void rq_posted() {}
  // Direct transmission by the posting thread (docs/datapath.md "Direct
  // sends"): direct_begin() makes the caller the transmitter if it is idle
  // and returns true; the caller then posts and hands the request over with
  // direct_end() - the started request and the caller's SGL holding its
  // inline payload, or a null `wr` if it could not take it first. When
  // nothing else is outstanding the request takes no ring slot: `seq` is
  // then kDirectNoSlot and the engine completes it with
  // QpHost::direct_finish(). Engines without a direct path keep the
  // defaults (posts take the ordinary way).
  virtual bool direct_begin() { return false; }
  virtual void direct_end(const WorkRequestHead* wr, uint64_t seq, const NDK_SGE* sgl, ULONG nsge) {
    (void)wr, (void)seq, (void)sgl, (void)nsge;
  }
  // NdkFlush/QP close/fatal error, before the QP cancels its queued
  // requests: a receive the engine already took (a Send half landed) must
  // complete now, ahead of the later ones (posting order).
  virtual void flushing() {}
  // Queued requests are being cancelled.
  virtual void flushed() = 0;
  // Start (file) or stop (null) writing this connection's wire traffic to a
  // pcap trace; kTraceQp is SoftNdkTraceQp's, kTraceAdapter the adapter's.
  enum TraceSlot { kTraceQp = 0, kTraceAdapter = 1 };
  virtual void set_trace(TraceSlot slot, std::shared_ptr<util::PcapFile> file) = 0;

  // NdkDisconnect, before stop() and the FIN: an engine that owes the peer a
  // last FPDU sends it and calls `go` (on any engine thread, once, within a
  // bound of its own) when the FIN may follow. The software iWARP engine
  // wakes a Linux siw 6.1 responder that never read our RTR, whose close
  // would otherwise crash its kernel (rdmap/stream_wake.cc).
  virtual void before_disconnect(std::function<void()> go) { go(); }
  // Ends the data path for good (NdkDisconnect, connector/QP close): no
  // more I/O, detached from the QP and its CQs. Call before
  // Connection::abort(). May block briefly for a running transmitter.
  virtual void stop() = 0;
  // layer<<16 | etype<<8 | code of the last Terminate, 0xFFFFFFFF if none
  // (SOFTNDK_CONNECTION_INFO; engines without Terminates: always none).
  virtual uint32_t last_terminate_sent() const { return 0xFFFFFFFFu; }
  virtual uint32_t last_terminate_received() const { return 0xFFFFFFFFu; }
  // SoftNdkInjectConnectionFault DropTx / DelayTx / CorruptTx.
  virtual NTSTATUS inject_fault(const SOFTNDK_FAULT& f) {
    (void)f;
    return STATUS_NOT_SUPPORTED;
  }
  // SoftNdkQueryConnectionPath: the whole structure at its full size (the
  // object model copies out what the caller's Size holds).
  virtual void query_path(SOFTNDK_PATH_INFO* out) {
    *out = {};
    out->Path = SOFTNDK_PATH_TCP;
  }
  // SoftNdkQueryPeerActivity's engine half: Established, SentFpdu,
  // PeerSpoke, WakeUpsSent, WakeAfterMs (the object model adds the rest).
  virtual void query_activity(SOFTNDK_PEER_ACTIVITY* out) {
    *out = {};
    out->Established = TRUE;
    out->PeerSpoke = TRUE;  // an engine that cannot tell never calls a peer silent
  }
};

// ---------------------------------------------------------------------------
// Connections (down-calls; the NDK state machine stays in ndk/net_glue.h).
// ---------------------------------------------------------------------------

// An IP address and port (sockaddr_in / sockaddr_in6; util/sockaddr.h).
using Address = util::SockAddr;

// What the two ends agreed on, and the wire facts SOFTNDK_CONNECTION_INFO
// reports (iWARP MPA; a verbs backend reports revision 0 and no CRC).
struct ConnectionFacts {
  uint16_t ird = 0, ord = 0;
  uint8_t revision = 0;  // MPA revision
  bool crc = false, markers = false, p2p = false;
  uint8_t rtr = 0;  // P2P: the RTR type chosen (0 without P2P)
  Address local, peer;
  uint32_t mpa_round_trip_us = 0;  // initiator: Request sent -> Reply parsed
};

// An established connection (initiator: once the peer accepted, before
// NdkCompleteConnect; responder: once the accept completed).
class Connection {
 public:
  virtual ~Connection() = default;
  virtual const ConnectionFacts& facts() const = 0;
  // Private data from the peer's MPA Request (responder) or Reply
  // (initiator), without the MPA v2 IRD/ORD block.
  virtual const std::vector<uint8_t>& peer_private_data() const = 0;
  virtual bool closed() const = 0;
  // Runs `fn` on the connection's own engine thread (where start() must
  // run and where the connection's socket or id is closed).
  virtual void post(std::function<void()> fn) = 0;
  // On the connection's thread: starts the QP's data path on it and
  // attaches it to `qp` (QpHost::attach). The initiator first sends what
  // the peer's accept waits for (iWARP P2P: the RTR). Null if the
  // connection is gone.
  virtual std::shared_ptr<QpEngine> start(QpHost* qp, bool initiator) = 0;
  // Peer closed (STATUS_CONNECTION_DISCONNECTED), reset or failed (other
  // statuses): once, unless disconnect() or abort() came first.
  virtual void on_peer_close(std::function<void(NTSTATUS)> cb) = 0;
  // Graceful disconnect (NDKPI 6.4); cb runs once the peer agreed or the
  // bound ran out (STATUS_IO_TIMEOUT).
  virtual void disconnect(std::function<void(NTSTATUS)> cb) = 0;
  // Abortive close (RST). No callback follows.
  virtual void abort() = 0;
  // SoftNdkQueryConnectionTcpInfo; false if the engine has none.
  virtual bool tcp_info(SOFTNDK_TCP_INFO* out) const = 0;
};

struct ConnectResult {
  NTSTATUS status = STATUS_SUCCESS;
  std::shared_ptr<Connection> connection;  // on success
  // The peer rejected (NdkReject): its private data for NdkGetConnectionData.
  bool rejected = false;
  std::vector<uint8_t> peer_private_data;
  // A failure: how far it got (SOFTNDK_SETUP_*: TCP handshake, before or
  // after the MPA exchange), for SoftNdkQueryPeerActivity.
  ULONG setup_phase = SOFTNDK_SETUP_NONE;
};

// A local address reserved for several outgoing connections
// (NdkCreateSharedEndpoint).
class SharedEndpoint {
 public:
  virtual ~SharedEndpoint() = default;
  virtual Address local() const = 0;
};

struct ConnectArgs {
  Address dst;
  Address src;                             // len 0: any
  std::shared_ptr<SharedEndpoint> shared;  // or null
  // v2: the QP the connection will carry (held by the connector for the
  // connection's life). Engines that create a device QP before connecting
  // take its shape and its queued receives; the software engine ignores it.
  QpHost* qp = nullptr;
  uint16_t ird = 0, ord = 0;  // already capped to the adapter's limits
  std::vector<uint8_t> private_data;
};

// An NdkConnect in flight.
class ActiveConnect {
 public:
  virtual ~ActiveConnect() = default;
  // The result callback then reports STATUS_CANCELLED (or has run already).
  virtual void cancel() = 0;
};

// A connection request shown to the consumer (NDK_FN_CONNECT_EVENT_CALLBACK).
class IncomingConnection {
 public:
  virtual ~IncomingConnection() = default;
  // What the peer asks for (ird/ord proposed, wire facts offered).
  virtual const ConnectionFacts& request() const = 0;
  virtual const std::vector<uint8_t>& private_data() const = 0;
  // STATUS_PENDING and cb later, or a failure now (STATUS_INVALID_PARAMETER:
  // private data too long, the request stays acceptable).
  // `qp`: as ConnectArgs::qp (v2).
  virtual NTSTATUS accept(QpHost* qp, uint16_t ird, uint16_t ord, std::vector<uint8_t> private_data,
                          std::function<void(NTSTATUS, std::shared_ptr<Connection>)> cb) = 0;
  virtual NTSTATUS reject(std::span<const uint8_t> private_data) = 0;
  // The consumer will never answer (connector closed): drop it.
  virtual void abandon() = 0;
};

class Listener {
 public:
  virtual ~Listener() = default;
  virtual Address local() const = 0;
  // NdkPauseListener semantics: requests wait in the backlog meanwhile.
  virtual void pause(bool paused) = 0;
  virtual void close() = 0;
};

// ---------------------------------------------------------------------------
// One adapter instance's engine.
// ---------------------------------------------------------------------------

// What the object model gives an engine when an adapter opens.
struct ProviderConfig {
  SOFTNDK_OPEN_PARAMETERS params{};  // as validated by the object model
  NDK_ADAPTER_INFO info{};           // the limits the object model reports
  util::Engine* engine = nullptr;    // the adapter's event threads (util/reactor.h)
  std::string ifname;                // the Linux interface
  uint32_t mpa_holdoff_ms = 0;       // SOFTNDK_MPA_HOLDOFF_MS
  std::string tcp_congestion;        // SOFTNDK_TCP_CONGESTION
  bool samehost = true;              // SOFTNDK_SAMEHOST
  // First bound of a silent peer's wake-up in ms (docs/compatibility.md
  // note 1): -1 from the MPA round trip, 0 off (SOFTNDK_MPA_HOLDOFF_MS=0,
  // SOFTNDK_SILENT_PEER_WAKE_MS).
  int32_t silent_wake_ms = -1;
  // v4. Inline notification delivery (ndk::Cq::begin_inline_notifications).
  // A thread of the backend's own that reports completions (sq_complete,
  // complete_receive, to_error) with no lock of the object model held may
  // bracket them with begin/end: the CQ notifications they make due are
  // then delivered by end() on that thread instead of on the CQ's reactor.
  // At end() the thread must hold no lock that a consumer's call takes (the
  // callback may post, arm, close, even open a listener): a backend thread
  // that serves requests synchronously (run_sync) runs them inline there.
  // Scopes nest; consumer threads never open one.
  void (*begin_inline_notify)() = nullptr;
  void (*end_inline_notify)() = nullptr;
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual const char* name() const = 0;

  // NdkConnect: STATUS_PENDING and `done` later (on an engine thread), or
  // a failure now.
  virtual NTSTATUS connect(ConnectArgs args, std::function<void(ConnectResult)> done,
                           std::shared_ptr<ActiveConnect>* out) = 0;
  // NdkListen: requests arrive through on_request (engine thread).
  virtual NTSTATUS listen(const Address& addr,
                          std::function<void(std::shared_ptr<IncomingConnection>)> on_request,
                          std::shared_ptr<Listener>* out) = 0;
  virtual NTSTATUS create_shared_endpoint(const Address& addr,
                                          std::shared_ptr<SharedEndpoint>* out) = 0;

  // ---- v2 -----------------------------------------------------------------
  // The adapter's limits: the object model fills its own defaults, the
  // engine lowers or replaces them (a device's). Called once, after open.
  virtual void adapter_info(NDK_ADAPTER_INFO* info) const { (void)info; }
  // The device behind the adapter ("siw0 [siw, iWARP]"), empty for none.
  virtual std::string describe() const { return {}; }

  // Memory registration below the line (see the file comment). When
  // registers_memory() is false (the software engine) nothing else here
  // is called and the object model's STags are the tokens.
  struct MemoryKeys {
    uint32_t lkey = 0, rkey = 0;
    uint64_t handle = 0;  // the engine's registration, for deregister_memory()
  };
  virtual bool registers_memory() const { return false; }
  // NdkRegisterMr of [va, va+length) with NDK_MR_FLAG_* `flags` (already
  // validated): STATUS_PENDING and `done` later on an engine thread, or a
  // failure now (no callback then).
  virtual NTSTATUS register_memory(uint64_t va, uint64_t length, ULONG flags,
                                   std::function<void(NTSTATUS, MemoryKeys)> done) {
    (void)va, (void)length, (void)flags, (void)done;
    return STATUS_NOT_SUPPORTED;
  }
  // NdkDeregisterMr or the MR's close: `done` (may be null) runs on an
  // engine thread once the device let go of the pages.
  virtual void deregister_memory(uint64_t handle, std::function<void(NTSTATUS)> done) {
    (void)handle;
    if (done) done(STATUS_SUCCESS);
  }

  // ---- v3 -----------------------------------------------------------------
  // Memory windows on the device (registers_memory() engines only): when
  // fr_support() is kWindows, NdkInitializeFastRegisterMr and NdkCreateMw
  // allocate a device window (alloc_window) whose rkey is the token for
  // the object's lifetime, NdkBuildLAM registers its range as an arena
  // (register_lam; ReleaseLAM: release_lam) and NdkFastRegister binds the
  // window over the arena in SQ order. kNone: both refused
  // (STATUS_NOT_SUPPORTED). kReregister: the documented degraded mode
  // (SOFTNDK_OPEN_FLAG_FR_REGISTER): no windows, NdkCreateMw refused,
  // NdkFastRegister registers the pages anew and the token changes.
  enum class FrSupport : uint8_t { kObjectModel, kWindows, kReregister, kNone };
  virtual FrSupport fr_support() const { return FrSupport::kObjectModel; }
  struct WindowKeys {
    uint32_t rkey = 0;
    uint64_t handle = 0;
  };
  // Allocates a window (no pages pinned, no waiting: in the caller).
  virtual NTSTATUS alloc_window(WindowKeys* out) {
    (void)out;
    return STATUS_NOT_SUPPORTED;
  }
  virtual void free_window(uint64_t handle) { (void)handle; }
  // NdkBuildLAM: STATUS_PENDING and `done` on an engine thread, or a
  // failure now.
  virtual NTSTATUS register_lam(uint64_t va, uint64_t length, std::function<void(NTSTATUS)> done) {
    (void)va, (void)length, (void)done;
    return STATUS_NOT_SUPPORTED;
  }
  virtual void release_lam(uint64_t va, uint64_t length) { (void)va, (void)length; }

  // SRQs on the device: when device_srq() is true NdkCreateSrq creates one
  // (create_srq, in the caller: no pages pinned beyond the queue) and the
  // QPs created with it take their receives from it.
  virtual bool device_srq() const { return false; }
  virtual NTSTATUS create_srq(SrqHost* host, uint32_t depth, uint32_t max_sge,
                              std::shared_ptr<SrqEngine>* out) {
    (void)host, (void)depth, (void)max_sge, (void)out;
    return STATUS_NOT_SUPPORTED;
  }
};

// One entry of the probe list (ndk/provider_list.cc).
struct ProviderEntry {
  const char* name;
  // Whether this engine can serve the interface (cheap, no side effects).
  bool (*probe)(const ProviderConfig& cfg);
  NTSTATUS (*open)(const ProviderConfig& cfg, std::unique_ptr<Provider>* out);
};

}  // namespace softndk::provider
