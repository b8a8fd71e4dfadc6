// SPDX-License-Identifier: Apache-2.0
// The two transports' byte paths (src/transport/byte_path.h) through the
// interface the protocol engine uses: the socket path over a real socket
// pair, the ring path over a real shared-memory ring with that socket
// underneath. The stream-level behaviour (the switch, Terminates, peer
// death) is in ring_test.cc and peer_death_test.cc.
#include "transport/byte_path.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "transport/samehost/ring_path.h"
#include "transport/samehost/shm_ring.h"
#include "transport/tcp/socket_path.h"

namespace {

using softndk::samehost::kRingDataSize;
using softndk::samehost::RingPath;
using softndk::samehost::ShmRing;
using softndk::tcp::SocketPath;
using softndk::transport::BytePath;
using softndk::transport::kBroken;

// A socket pair standing in for the connection (ours: fds[0]), and one
// ring direction: the writer's ring and the reader's mapping of it.
struct Paths {
  int fds[2] = {-1, -1};
  SocketPath sock;
  std::atomic<bool> polled{true};  // no doorbells unless a test turns it off
  std::shared_ptr<RingPath> writer, reader;

  Paths() {
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    sock.set_fd(fds[0]);
    std::shared_ptr<ShmRing> prod = ShmRing::create();
    EXPECT_NE(prod, nullptr);
    std::shared_ptr<ShmRing> cons =
        ShmRing::attach(::dup(prod->memfd()), ::dup(prod->data_efd()), ::dup(prod->space_efd()));
    EXPECT_NE(cons, nullptr);
    writer = RingPath::writer(prod, polled);
    reader = RingPath::reader(cons, sock, polled);
  }
  ~Paths() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
};

bool readable_within(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, ms) == 1 && (p.revents & POLLIN) != 0;
}

TEST(BytePath, SocketPathMovesIovecsAndSaysWhenItWasEmptied) {
  Paths p;
  SocketPath peer;  // the other end of the connection
  peer.set_fd(p.fds[1]);
  BytePath& out_path = p.sock;
  BytePath& in_path = peer;
  char a[] = "hello ", b[] = "world";
  iovec out[2] = {{a, 6}, {b, 5}};
  ASSERT_EQ(out_path.send(out, 2), 11);
  ASSERT_GT(in_path.peek(), 0);
  char x[4], y[64];
  iovec in[2] = {{x, sizeof x}, {y, sizeof y}};
  bool drained = false;
  ASSERT_EQ(in_path.recv(in, 2, &drained), 11);
  EXPECT_TRUE(drained);  // asked for 68, got 11: the socket was emptied
  EXPECT_EQ(std::string(x, 4) + std::string(y, 7), "hello world");
  errno = 0;
  EXPECT_EQ(in_path.recv(in, 2, &drained), -1);
  EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK);
  // The socket's readiness is its own (EPOLLIN/EPOLLOUT): no doorbell.
  EXPECT_EQ(in_path.doorbell_fd(), -1);
  EXPECT_FALSE(out_path.wakes_writer());
  p.sock.shutdown_write();
  EXPECT_EQ(in_path.recv(in, 1, &drained), 0);  // EOF
}

TEST(BytePath, RingPathCarriesTheSameBytes) {
  Paths p;
  BytePath& w = *p.writer;
  BytePath& r = *p.reader;
  errno = 0;
  EXPECT_EQ(r.peek(), -1);  // empty, polled: no doorbell asked
  EXPECT_EQ(errno, EAGAIN);
  char a[] = "hello ", b[] = "world";
  iovec out[2] = {{a, 6}, {b, 5}};
  ASSERT_EQ(w.send(out, 2), 11);
  ASSERT_GT(r.peek(), 0);
  char x[4], y[64];
  iovec in[2] = {{x, sizeof x}, {y, sizeof y}};
  bool drained = false;
  ASSERT_EQ(r.recv(in, 2, &drained), 11);
  EXPECT_FALSE(drained);  // looking again is free on a ring
  EXPECT_EQ(std::string(x, 4) + std::string(y, 7), "hello world");
  errno = 0;
  EXPECT_EQ(r.recv(in, 2, &drained), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_TRUE(p.writer->drained());
  // Readiness: the reader's data doorbell, the writer's space doorbell.
  EXPECT_EQ(r.doorbell_fd(), p.reader->ring()->data_efd());
  EXPECT_EQ(w.doorbell_fd(), p.writer->ring()->space_efd());
  EXPECT_TRUE(w.wakes_writer());
}

// RingPath::peek() checks the producer index with an empty {nullptr, 0}
// read; the bytes may have arrived between its readable() look and that
// read (CI's UBSan once caught memcpy given the null base). Empty entries
// move nothing, on either side, wherever they sit in the vector.
TEST(BytePath, EmptyNullEntriesMoveNothingAndTouchNothing) {
  Paths p;
  ShmRing& prod = *p.writer->ring();
  ShmRing& cons = *p.reader->ring();
  char a[] = "abc";
  iovec out[3] = {{nullptr, 0}, {a, 3}, {nullptr, 0}};
  ASSERT_EQ(prod.write(out, 3, false), 3);
  iovec none{nullptr, 0};
  EXPECT_EQ(cons.read(&none, 1), 0);  // data waiting, nothing asked
  EXPECT_EQ(cons.readable(), 3u);
  char x[8] = {};
  iovec in[3] = {{nullptr, 0}, {x, 2}, {x + 2, 6}};
  EXPECT_EQ(cons.read(in, 3), 3);
  EXPECT_EQ(std::string(x, 3), "abc");
  EXPECT_GT(prod.write(&none, 1, false), -1);
}

TEST(BytePath, RingPathInEventModeRingsItsDoorbells) {
  Paths p;
  p.polled = false;
  BytePath& w = *p.writer;
  BytePath& r = *p.reader;
  char buf[64];
  iovec in{buf, sizeof buf};
  bool drained = false;
  errno = 0;
  ASSERT_EQ(r.recv(&in, 1, &drained), -1);  // empty: asks for the data doorbell
  ASSERT_EQ(errno, EAGAIN);
  char one = 'z';
  iovec o{&one, 1};
  ASSERT_EQ(w.send(&o, 1), 1);
  ASSERT_TRUE(readable_within(r.doorbell_fd(), 10000)) << "no data doorbell";
  r.doorbell_cleared();
  // A receiver that leaves bytes behind wakes its reader itself.
  ASSERT_EQ(w.send(&o, 1), 1);
  r.rx_leave(false);
  ASSERT_TRUE(readable_within(r.doorbell_fd(), 10000)) << "rx_leave rang nothing";
  r.doorbell_cleared();
  ASSERT_EQ(r.recv(&in, 1, &drained), 2);
  // A full ring: EAGAIN, and the space doorbell once the reader frees room.
  std::vector<uint8_t> big(kRingDataSize);
  iovec bo{big.data(), big.size()};
  ASSERT_EQ(w.send(&bo, 1), static_cast<ssize_t>(kRingDataSize));
  errno = 0;
  ASSERT_EQ(w.send(&o, 1), -1);
  ASSERT_EQ(errno, EAGAIN);
  ASSERT_EQ(r.recv(&in, 1, &drained), 64);
  ASSERT_TRUE(readable_within(w.doorbell_fd(), 10000)) << "no space doorbell";
  w.doorbell_cleared();
}

TEST(BytePath, RingReaderDrainsTheRingBeforeTheSocketsEof) {
  Paths p;
  char a[] = "last";
  iovec o{a, 4};
  ASSERT_EQ(p.writer->send(&o, 1), 4);
  ::shutdown(p.fds[1], SHUT_WR);  // the peer's FIN, after its last ring bytes
  p.reader->socket_readable();
  char buf[16];
  iovec in{buf, sizeof buf};
  bool drained = false;
  ASSERT_EQ(p.reader->recv(&in, 1, &drained), 4);
  EXPECT_EQ(std::string(buf, 4), "last");
  EXPECT_EQ(p.reader->recv(&in, 1, &drained), 0);  // then EOF
}

TEST(BytePath, RingReaderCallsAByteOnTheSocketBroken) {
  Paths p;
  ASSERT_EQ(::write(p.fds[1], "x", 1), 1);
  p.reader->socket_readable();
  char buf[16];
  iovec in{buf, sizeof buf};
  bool drained = false;
  EXPECT_EQ(p.reader->recv(&in, 1, &drained), kBroken);
}

TEST(BytePath, RingReaderCallsACorruptIndexBroken) {
  Paths p;
  // A hostile producer index far beyond the ring's size.
  p.reader->ring()->shared_prod()->store(kRingDataSize * 4);
  char buf[16];
  iovec in{buf, sizeof buf};
  bool drained = false;
  EXPECT_EQ(p.reader->recv(&in, 1, &drained), kBroken);
  EXPECT_EQ(p.reader->peek(), kBroken);
}

TEST(BytePath, RingWriterFailsLikeAResetOnceThePeerIsGone) {
  Paths p;
  p.writer->peer_gone();
  char a = 'a';
  iovec o{&a, 1};
  errno = 0;
  EXPECT_EQ(p.writer->send(&o, 1), -1);
  EXPECT_EQ(errno, EPIPE);
}

}  // namespace
