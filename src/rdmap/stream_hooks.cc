// SPDX-License-Identifier: Apache-2.0
// rdmap/stream_hooks.cc - the stream's observability and fault hooks: pcap
// taps on the bytes that cross the socket (wire_tap.h) and the transmit
// fault queue (tx_faults.h). docs/observability.md describes both.
//
// The data path reaches this file only behind tx_hooked_ / rx_hooked_
// (one predictable branch per send or receive when nothing is on): the
// transmitter calls emit_hooked() instead of emit_sendmsg() and
// tx_hook_pass() at the start of each run; the receiver calls tap_rx()
// after each recv.
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "rdmap/stream.h"
#include "rdmap/tx_faults.h"
#include "rdmap/wire_tap.h"

namespace softndk::rdmap {

ssize_t emit_sendmsg(int fd, const msghdr* m);  // stream_tx.cc

namespace {
constexpr std::chrono::milliseconds kRetryBlocked{1};  // socket full while bytes are held
constexpr ULONG kMaxDelayMs = 60000;
}  // namespace

// ---- traces ---------------------------------------------------------------------

void Stream::attach_taps_locked() {
  std::shared_ptr<util::PcapFile> files[2] = {qp_->trace_file(), qp_->adapter_trace_file()};
  for (int i = 0; i < 2; ++i)
    if (files[i] != nullptr)
      taps_[i] = std::make_unique<WireTap>(std::move(files[i]), *conn_, sent_rtr_, true);
  update_hooked_locked();
}

void Stream::set_trace(TraceSlot slot, std::shared_ptr<util::PcapFile> file) {
  std::unique_ptr<WireTap> old;  // closed after the locks are released
  std::lock_guard tl(tx_mu_);
  std::lock_guard rl(rx_mu_);
  auto& tap = taps_[slot];
  if (tap != nullptr && file != nullptr && tap->file() == file.get()) return;  // begin() took it
  old = std::move(tap);
  // Before begin() (fd_ < 0) the stream takes the file from the QP or the
  // adapter itself; after stop() nothing more crosses the socket.
  if (file != nullptr && fd_ >= 0 && !stopped_.load())
    tap = std::make_unique<WireTap>(std::move(file), *conn_, sent_rtr_, false);
  update_hooked_locked();
}

void Stream::update_hooked_locked() {
  rx_hooked_ = taps_[0] != nullptr || taps_[1] != nullptr;
  update_tx_hooked();
}

void Stream::update_tx_hooked() {
  tx_hooked_ =
      taps_[0] != nullptr || taps_[1] != nullptr || (faults_ != nullptr && !faults_->idle());
  // Hooked before the stream moved to the same-host ring: it stays on TCP
  // for good, so the trace or the faults see real bytes on the wire.
  if (tx_hooked_ && tx_ring_ == nullptr) tx_ring_settled_ = true;
}

void Stream::tap_tx(const iovec* iov, int niov, size_t n, bool boundary) {
  for (auto& t : taps_)
    if (t != nullptr) t->tx(iov, niov, n, boundary);
}

void Stream::tap_rx(const iovec* iov, int niov, size_t n, bool boundary) {
  for (auto& t : taps_)
    if (t != nullptr) t->rx(iov, niov, n, boundary);
}

void Stream::tap_rx_staged(const uint8_t* p, size_t n) {
  for (auto& t : taps_)
    if (t != nullptr) t->rx_staged(p, n);
}

// ---- transmit ---------------------------------------------------------------------

ssize_t Stream::emit_hooked(msghdr* m) {
  // The first sendmsg of a batch starts at an FPDU boundary (batches hold
  // whole FPDUs); later ones continue a partly sent batch.
  const bool boundary = b_->sent == 0;
  TxFaults* f = faults_.get();
  if (f == nullptr || !(f->active || (boundary && f->armed()))) {
    ssize_t n = emit_sendmsg(fd_, m);
    if (n > 0) {
      provider::count_qp(qc_.rdma_out_octets, static_cast<uint64_t>(n));
      tap_tx(m->msg_iov, static_cast<int>(m->msg_iovlen), static_cast<size_t>(n), boundary);
    }
    return n;
  }
  // Through the fault queue: every byte is taken (as TCP would have).
  f->active = true;
  size_t n = 0;
  for (size_t i = 0; i < m->msg_iovlen; ++i) {
    const auto* p = static_cast<const uint8_t*>(m->msg_iov[i].iov_base);
    f->in.insert(f->in.end(), p, p + m->msg_iov[i].iov_len);
    n += m->msg_iov[i].iov_len;
  }
  f->split(TxFaults::Clock::now());
  fault_flush();
  return static_cast<ssize_t>(n);
}

bool Stream::tx_through_faults() const {
  // emit_hooked() hands a batch to the fault queue when this holds at the
  // batch's first byte; nothing changes it between build_batch() and then.
  return faults_ != nullptr && (faults_->active || faults_->armed());
}

void Stream::tx_hook_pass() {
  if (stopped_.load(std::memory_order_relaxed) || fd_ < 0) return;
  if (faults_ != nullptr && faults_->active) fault_flush();
}

void Stream::fault_flush() {
  TxFaults& f = *faults_;
  while (!f.out.empty()) {
    TxFaults::Held& h = f.out.front();
    auto now = TxFaults::Clock::now();
    std::chrono::milliseconds wait{0};
    if (h.due > now) wait = std::chrono::ceil<std::chrono::milliseconds>(h.due - now);
    if (wait.count() == 0) {
      iovec v{h.bytes.data() + h.off, h.bytes.size() - h.off};
      msghdr m{};
      m.msg_iov = &v;
      m.msg_iovlen = 1;
      ssize_t n = emit_sendmsg(fd_, &m);
      if (n > 0) {
        // Counted here, when the bytes reach the socket: a dropped FPDU
        // never does, a held one only when it is released.
        provider::count_qp(qc_.rdma_out_octets, static_cast<uint64_t>(n));
        tap_tx(&v, 1, static_cast<size_t>(n), h.off == 0);
        h.off += static_cast<size_t>(n);
        if (h.off == h.bytes.size()) {
          if (h.frame) provider::count_qp(qc_.rdma_out_frames);
          f.out.pop_front();
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        fail(STATUS_CONNECTION_RESET, n == 0 ? EPIPE : errno);
        tx_done_ = true;
        f.out.clear();
        break;
      }
      wait = kRetryBlocked;  // socket full: the held bytes are retried shortly
    }
    // A reactor timer kicks the transmitter when the head is due; the head
    // stays the head until it is sent, so one timer at a time suffices.
    if (!fault_timer_.exchange(true)) {
      std::weak_ptr<Stream> w = weak_from_this();
      conn_->reactor().after(wait, [w] {
        if (auto s = w.lock()) {
          s->fault_timer_.store(false);
          s->kick_tx();
        }
      });
    }
    return;
  }
  if (f.shutdown_after) {
    f.shutdown_after = false;
    ::shutdown(fd_, SHUT_WR);
  }
  if (f.idle()) {
    f.active = false;
    update_tx_hooked();
  }
}

void Stream::tx_shutdown() {
  if (tx_hooked_ && faults_ != nullptr && !faults_->out.empty()) {
    faults_->shutdown_after = true;  // FIN behind the held FPDUs
    return;
  }
  ::shutdown(fd_, SHUT_WR);
}

NTSTATUS Stream::inject_fault(const SOFTNDK_FAULT& f) {
  const uint32_t count = f.Count == 0 ? 1 : f.Count;
  const uint32_t type = provider::fault_type(f);
  if (type == SoftNdkFaultDelayTx && (f.DelayMs == 0 || f.DelayMs > kMaxDelayMs))
    return STATUS_INVALID_PARAMETER;
  faults_used_.store(true, std::memory_order_relaxed);  // no wake-ups (stream_wake.cc)
  std::lock_guard lk(tx_mu_);
  if (stopped_.load() || tx_done_ || fd_ < 0) return STATUS_CONNECTION_INVALID;
  // The stream left TCP for the same-host ring: there is no wire to fault
  // (docs/samehost.md; turn the fast path off to inject faults).
  if (tx_ring_ != nullptr) return STATUS_NOT_SUPPORTED;
  // A side with faults sends real bytes on TCP: this direction never moves
  // to the ring now (docs/samehost.md).
  tx_ring_settled_ = true;
  if (faults_ == nullptr) faults_ = std::make_unique<TxFaults>();
  switch (type) {
    case SoftNdkFaultDropTx:
      faults_->drop += count;
      break;
    case SoftNdkFaultCorruptTx:
      faults_->corrupt += count;
      break;
    case SoftNdkFaultDelayTx:
      faults_->delay += count;
      faults_->delay_ms = std::chrono::milliseconds(f.DelayMs);
      break;
    default:
      return STATUS_INVALID_PARAMETER;
  }
  update_tx_hooked();
  return STATUS_SUCCESS;
}

}  // namespace softndk::rdmap
