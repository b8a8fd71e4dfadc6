// SPDX-License-Identifier: Apache-2.0
// session.h - a small C++ layer over the NDKPI C ABI for the tools.
//
// It turns the asynchronous NDK calls (create/request/close may complete
// inline or later through a callback) into blocking calls with a timeout,
// owns each object (RAII, closed in reverse order of creation), and gives
// the two ways of waiting for completions that perftest has: busy-polling
// NdkGetCqResults (which is also what drives receive progress for the
// polling thread, docs/datapath.md) and event mode (NdkArmCq + the CQ
// notification callback + a condition variable).
//
// Errors are thrown as ToolError with a one-line cause; the tools print it
// and exit non-zero. Every wait is bounded. A callback that may still come
// after a wait gave up finds its state alive: such state is leaked on
// purpose (the process is about to exit with an error anyway).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ndkapp/net_util.h"
#include "softndk/softndk.h"

namespace softndk::tools {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline Deadline deadline_in(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

struct ToolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A wait for the peer timed out on a connection whose peer accepted it and
// then never sent a single byte (SoftNdkQueryPeerActivity; the text says so
// and names the likely cause). The tools exit with their own code for it
// (ndk-nvme 8, ndkping and ndkperf 4).
struct PeerSilentError : ToolError {
  using ToolError::ToolError;
};

// ---------------------------------------------------------------------------
// Adapter

struct AdapterOptions {
  std::string name = "127.0.0.1";  // interface name or one of its addresses
  int crc = -1;                    // -1: library default, 0: only if the peer asks, 1: require
  unsigned mpa_revision = 0;       // 0: library default (2)
  double timeout_s = 10;           // bound of every create/request/close wait
  // How long a graceful disconnect waits for the peer's FIN before the
  // library resets the socket (DisconnectTimeoutMs); 0: library default (5 s).
  // Closing the adapter waits for it, so a dead peer costs this much on exit.
  double disconnect_timeout_s = 0;
  // SOFTNDK_OPEN_PARAMETERS.Flags (softndk.h SOFTNDK_OPEN_FLAG_*), e.g.
  // SOFTNDK_OPEN_FLAG_FR_REGISTER: the verbs backend's degraded fast
  // register on a device without type-2 windows (siw; docs/verbs.md).
  ULONG open_flags = 0;
};

class Adapter {
 public:
  explicit Adapter(const AdapterOptions& opt);
  ~Adapter();
  Adapter(const Adapter&) = delete;
  Adapter& operator=(const Adapter&) = delete;

  NDK_ADAPTER* get() const { return adapter_; }
  const NDK_ADAPTER_INFO& info() const { return info_; }
  double timeout() const { return timeout_s_; }
  // After a fatal error (the peer went, a request failed): the teardown
  // that follows - the disconnect and every close of this adapter's
  // objects - waits at most `seconds` from now in all, instead of up to
  // timeout() per object. A close cut short leaks its object (its late
  // callback stays safe); the process is about to exit anyway. Thread-safe.
  void limit_teardown(double seconds);
  // The bound of one close or disconnect wait: timeout(), or what is left
  // of the teardown limit (at least 10 ms, so a completion that is already
  // there is still taken).
  double close_timeout() const;

 private:
  NDK_ADAPTER* adapter_ = nullptr;
  NDK_ADAPTER_INFO info_{};
  double timeout_s_;
  std::atomic<Clock::rep> teardown_end_{0};  // 0: no limit
};

// Waits for an NDK call that may pend. `returned` is what the call returned;
// the pending object was passed as its completion context. Throws on timeout.
class Pending {
 public:
  Pending();
  ~Pending();
  static void on_request(PVOID ctx, NTSTATUS status);
  static void on_create(PVOID ctx, NTSTATUS status, NDK_OBJECT_HEADER* obj);
  static void on_close(PVOID ctx);
  // Returns the final status (and the created object for creates). On a
  // timeout the Pending is leaked (a late callback stays safe) and
  // STATUS_IO_TIMEOUT is returned.
  static NTSTATUS finish(Pending* p, NTSTATUS returned, double timeout_s,
                         NDK_OBJECT_HEADER** obj = nullptr);
  // A new Pending, or nullptr when memory is exhausted: for the closing
  // paths, which run in destructors and must not throw.
  static Pending* try_make() noexcept;
  // Without waiting: STATUS_PENDING while the call runs, else its final
  // status. The Pending stays the caller's (delete it only once done).
  static NTSTATUS peek(Pending* p);

 private:
  struct Impl;
  Impl* impl_;
};

// Closes any NDK object through its close function; true if the close
// finished within the timeout.
bool close_object(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_OBJECT close, double timeout_s);

// ---------------------------------------------------------------------------
// Protection domain, completion queue, memory

class Pd {
 public:
  explicit Pd(Adapter& a);
  ~Pd();
  NDK_PD* get() const { return pd_; }

 private:
  Adapter& a_;
  NDK_PD* pd_ = nullptr;
};

class Cq {
 public:
  Cq(Adapter& a, ULONG depth);
  ~Cq();
  NDK_CQ* get() const { return cq_; }
  ULONG poll(NDK_RESULT* results, ULONG n) {
    return cq_->Dispatch->NdkGetCqResults(cq_, results, n);
  }
  // At least one result, or 0 when the deadline passes. Busy: spins on
  // NdkGetCqResults. Events: arms the CQ (ANY), re-polls, then sleeps until
  // the notification callback. Throws if the CQ reports overrun or failure.
  // After interrupt(), returns 0 as soon as the CQ is empty.
  // `arm`: the NdkArmCq type (SOLICITED: a waiter that wants only the
  // peer's solicited Sends, or errors, is not woken by its own Send
  // completions).
  ULONG wait(NDK_RESULT* results, ULONG n, bool events, Deadline deadline,
             ULONG arm = NDK_CQ_NOTIFY_ANY);
  // Sleeping on the CQ's notification without taking its results, for a
  // caller that polls the CQ itself (smbd's transport once long idle):
  // arm() arms the CQ and returns a ticket; the caller polls once more (a
  // completion may have come before the arm), then wait_notified() sleeps
  // until a notification after that arm, interrupt(), or the deadline.
  // True when notified or interrupted.
  uint64_t arm(ULONG type = NDK_CQ_NOTIFY_ANY);
  bool wait_notified(uint64_t ticket, Deadline deadline);
  // Makes every wait, current and later, return once the CQ is empty:
  // for an event that ends the CQ's use (the peer disconnected), so the
  // waiter reacts at once instead of at its deadline. Thread-safe, and
  // safe from a provider callback.
  void interrupt();

 private:
  struct Notify;
  static void on_notify(PVOID ctx, NTSTATUS status);
  Adapter& a_;
  NDK_CQ* cq_ = nullptr;
  Notify* notify_;
};

// A page-aligned buffer registered as one memory region.
class Buffer {
 public:
  // shared: the memory comes from SoftNdkAllocateSharedMemory (a same-host
  // peer maps it and copies with memcpy instead of process_vm_readv).
  Buffer(Adapter& a, Pd& pd, size_t length, ULONG mr_flags, bool shared = false);
  ~Buffer();
  uint8_t* data() const { return data_; }
  size_t size() const { return length_; }
  uint64_t va() const { return reinterpret_cast<uint64_t>(data_); }
  UINT32 local_token() const { return ltoken_; }
  UINT32 remote_token() const { return rtoken_; }
  NDK_SGE sge(size_t offset, size_t length) const;

 private:
  Adapter& a_;
  NDK_MR* mr_ = nullptr;
  bool registered_ = false;
  bool shared_ = false;
  uint8_t* data_ = nullptr;
  size_t length_;
  MDL mdl_{};
  UINT32 ltoken_ = 0, rtoken_ = 0;
};

// ---------------------------------------------------------------------------
// Queue pair

struct QpConfig {
  ULONG receive_depth = 64;
  ULONG initiator_depth = 128;
  ULONG inline_size = 0;
  ULONG initiator_sge = 1;  // SGEs per Send/Write (ndk-nvme: capsule + in-capsule data)
};

class Qp {
 public:
  Qp(Adapter& a, Pd& pd, Cq& receive_cq, Cq& initiator_cq, void* context, const QpConfig& cfg);
  ~Qp();
  NDK_QP* get() const { return qp_; }

  NTSTATUS send(void* ctx, const NDK_SGE* sgl, ULONG n, ULONG flags) {
    return qp_->Dispatch->NdkSend(qp_, ctx, sgl, n, flags);
  }
  NTSTATUS receive(void* ctx, const NDK_SGE* sgl, ULONG n) {
    return qp_->Dispatch->NdkReceive(qp_, ctx, sgl, n);
  }
  NTSTATUS write(void* ctx, const NDK_SGE* sgl, ULONG n, uint64_t raddr, UINT32 rtoken,
                 ULONG flags) {
    return qp_->Dispatch->NdkWrite(qp_, ctx, sgl, n, raddr, rtoken, flags);
  }
  NTSTATUS read(void* ctx, const NDK_SGE* sgl, ULONG n, uint64_t raddr, UINT32 rtoken,
                ULONG flags) {
    return qp_->Dispatch->NdkRead(qp_, ctx, sgl, n, raddr, rtoken, flags);
  }

 private:
  Adapter& a_;
  NDK_QP* qp_ = nullptr;
};

// ---------------------------------------------------------------------------
// Connections

class Connection {
 public:
  // Passive side: takes ownership of a connector from a connect event.
  Connection(Adapter& a, NDK_CONNECTOR* connector);
  ~Connection();  // disconnects if still connected (bounded), then closes

  // Active side. On success returns the connection and the responder's
  // private data. A refusal throws ToolError; if the responder put private
  // data in its reject and the library returns it, it is in *reject_data.
  static std::unique_ptr<Connection> connect(Adapter& a, Qp& qp, const SockAddr& local,
                                             const SockAddr& peer, ULONG ird, ULONG ord,
                                             const std::vector<uint8_t>& pdata,
                                             std::vector<uint8_t>* peer_pdata,
                                             std::vector<uint8_t>* reject_data);

  // Passive side, before accept/reject: the initiator's private data and
  // read limits.
  std::vector<uint8_t> peer_data(ULONG* ird = nullptr, ULONG* ord = nullptr);
  void accept(Qp& qp, ULONG ird, ULONG ord, const std::vector<uint8_t>& pdata);
  // The same without waiting, for a server that runs several handshakes on
  // one thread: accept_start() sends the MPA Reply; accept_status() is
  // STATUS_PENDING until the accept completed (with peer-to-peer MPA, once
  // the peer's RTR came), then its final status. Bounded by the adapter's
  // timeout (ConnectTimeoutMs).
  void accept_start(Qp& qp, ULONG ird, ULONG ord, const std::vector<uint8_t>& pdata);
  NTSTATUS accept_status();
  // The peer finished its handshake: the accept completed and the peer's
  // first FPDU arrived (the RTR, or with no peer-to-peer MPA its first
  // message; `qp` is the accepted QP). On the verbs backend: the accept
  // completed (the device's CM ends the handshake). For HandshakeGate's servers.
  bool handshake_done(Qp& qp);
  // Ends the connection without a graceful disconnect (closing it resets
  // it): for a peer dropped in its handshake, whose FIN would only be
  // waited for in vain.
  void abandon() { disconnected_ = true; }
  void reject(const std::vector<uint8_t>& pdata);

  bool peer_disconnected() const;
  // From now on the disconnect event also interrupts `cq` (Cq::interrupt),
  // so a thread waiting for completions wakes when the peer goes. Call
  // before accept/connect completes; `cq` must outlive the connection's
  // events (declare the connection after the CQ's owner).
  void interrupt_on_disconnect(Cq& cq);
  // Waits up to `seconds` for the disconnect event; true once it came. A
  // broken connection flushes its requests before the event says why.
  bool wait_disconnected(double seconds) const;
  // Why the connection ended, when not by a clean disconnect: "sent a
  // Terminate: LLP layer, MPA CRC error (0x00020002)", "the peer sent a
  // Terminate: ...", "connection reset (STATUS_CONNECTION_RESET)". Empty
  // when nothing abnormal is known (no Terminate either way, and the
  // disconnect event, if any, reported a graceful close).
  std::string end_cause() const;
  // Graceful disconnect, bounded by the adapter timeout; errors ignored (the
  // peer may have gone first).
  void disconnect();
  // Negotiated MPA parameters (false if the library cannot tell).
  bool info(SOFTNDK_CONNECTION_INFO& out) const;
  // The socket's TCP state (false once the connection is gone).
  bool tcp_info(SOFTNDK_TCP_INFO& out) const;
  // Which path its data takes (false once the connection is gone).
  bool path_info(SOFTNDK_PATH_INFO& out) const;
  // The path the data takes, for a tool's header: "samehost (ring)",
  // "samehost", "tcp (disabled)", "tcp (no peer)", with " (mapped)" once
  // shared memory was copied from a mapping. While the library still looks
  // for a same-host peer it waits (up to `settle_seconds`) for the answer;
  // past that "probing (no answer within N s)". "" if the library cannot tell.
  std::string path_text(double settle_seconds = 2.0) const;
  SockAddr peer_address() const;
  NDK_CONNECTOR* get() const { return conn_; }
  // The peer accepted this connection and has not sent one byte since,
  // although we sent it a message (silent_peer_text names it); "" otherwise.
  std::string silence() const;

 private:
  struct Events;
  static void on_disconnect(PVOID ctx, ULONG reason);
  Adapter& a_;
  NDK_CONNECTOR* conn_ = nullptr;
  Events* events_;
  bool connected_ = false;
  Pending* accepting_ = nullptr;  // accept_start()'s request until it completed
  std::vector<uint8_t> accept_pdata_;
  bool disconnected_ = false;
};

// `what` followed by ": " and the connection's end_cause() when it has one
// (`c` may be null).
std::string with_end_cause(const std::string& what, const Connection* c);
// Throws PeerSilentError("<what>: <the diagnosis>") if c's peer is silent.
void throw_if_silent(const std::string& what, const Connection* c);

class Listener {
 public:
  Listener(Adapter& a, const SockAddr& address);
  ~Listener() { release(); }
  uint16_t port() const { return port_; }
  // The next incoming connection request, or nullptr at the deadline or
  // after cancel().
  std::unique_ptr<Connection> next(Deadline deadline);
  // Wakes next() for good (another thread gave up); thread-safe.
  void cancel();

 private:
  // Closes unclaimed connectors, then the listener (also on a failed
  // construction, which has no destructor run).
  void release();
  struct Queue;
  static void on_connect(PVOID ctx, NDK_CONNECTOR* connector);
  Adapter& a_;
  NDK_LISTENER* listener_ = nullptr;
  Queue* queue_;
  uint16_t port_ = 0;
};

}  // namespace softndk::tools
