// SPDX-License-Identifier: Apache-2.0
// transport/samehost/ring_path.h - the same-host transport's byte path: one
// direction of a stream through a shared-memory ring (shm_ring.h,
// docs/samehost.md section 4), behind transport/byte_path.h.
//
// The ring carries exactly the bytes TCP would have. The connection's TCP
// socket stays underneath: a reader looks at it (through the socket's own
// byte path) only once the reactor saw it readable, which after the switch
// can only be EOF, an error (peer death included), or a protocol error
// (stray bytes). A writer fails like a send to a reset socket once the
// peer process is gone.
//
// Doorbells: unlike a socket, a ring has no level-triggered readiness. In
// event mode the reader asks for the data doorbell when it finds the ring
// empty, the writer for the space doorbell when it finds it full; a busy
// poller (the stream's polled flag) looks again by itself and asks for
// neither, so no side pays a system call per message.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "transport/byte_path.h"
#include "transport/samehost/shm_ring.h"

namespace softndk::samehost {

class RingPath final : public transport::BytePath {
 public:
  // `polled`: the stream's "a consumer busy-polls" flag (it outlives the
  // path's use: the stream owns both). `socket`: the connection's own path,
  // which the reader asks for EOF and errors.
  static std::shared_ptr<RingPath> reader(std::shared_ptr<ShmRing> ring,
                                          transport::BytePath& socket,
                                          const std::atomic<bool>& polled);
  static std::shared_ptr<RingPath> writer(std::shared_ptr<ShmRing> ring,
                                          const std::atomic<bool>& polled);

  // transport::BytePath
  ssize_t recv(const iovec* iov, int niov, bool* drained) override;
  ssize_t peek() override;
  void rx_leave(bool budget_spent) override;
  void socket_readable() override { socket_check_.store(true, std::memory_order_relaxed); }
  ssize_t send(const iovec* iov, int niov) override;
  bool wakes_writer() const override { return true; }
  int doorbell_fd() const override;
  void doorbell_cleared() override;

  // Writer: the peer process has exited; sends fail with EPIPE from now on.
  void peer_gone() { peer_gone_.store(true, std::memory_order_release); }
  // Writer: everything sent has been read by the peer.
  bool drained() const { return ring_->drained(); }
  const std::shared_ptr<ShmRing>& ring() const { return ring_; }

  RingPath(std::shared_ptr<ShmRing> ring, transport::BytePath* socket,
           const std::atomic<bool>& polled);

 private:
  // The ring had nothing: 1 look again, 0 EOF, -1 errno, kBroken.
  ssize_t empty();

  const std::shared_ptr<ShmRing> ring_;
  transport::BytePath* const socket_;  // reader only
  const std::atomic<bool>& polled_;
  // Reader: the reactor saw the socket readable.
  std::atomic<bool> socket_check_{false};
  std::atomic<bool> peer_gone_{false};  // writer
};

}  // namespace softndk::samehost
