// SPDX-License-Identifier: Apache-2.0
// raw_peer.h - a hand-driven iWARP initiator for data-path tests that need
// a peer doing what softndk itself never sends: a Send with Invalidate of
// STag 0, or half a message and then silence. The TCP + MPA connection
// comes from the engine (DpTest::connect_raw); afterwards the test writes
// FPDUs built with the wire codec and reads back what the stream under test
// sends (its Terminate).
#pragma once

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>
#include <future>
#include <optional>
#include <span>

#include "ddp/fpdu_builder.h"
#include "ddp/stream_parser.h"
#include "dp_fixture.h"
#include "rdmap/rdmap_codec.h"
#include "rdmap/terminate.h"

namespace dptest {

namespace wire = softndk::wire;

class RawPeer : public tcp::ConnectionHandler {
 public:
  explicit RawPeer(std::weak_ptr<tcp::Connection> c) : conn_(std::move(c)) {}

  // Takes over `c` (an initiator from DpTest::connect_raw) on its reactor,
  // with whatever arrived before.
  static std::shared_ptr<RawPeer> attach(const std::shared_ptr<tcp::Connection>& c) {
    auto h = std::make_shared<RawPeer>(c);
    auto done = std::make_shared<std::promise<void>>();
    c->reactor().post([c, h, done] {
      {
        std::lock_guard lk(h->mu_);
        h->buf_ = c->take_leftover();
      }
      c->attach(h);
      done->set_value();
    });
    EXPECT_EQ(done->get_future().wait_for(5s), std::future_status::ready);
    return h;
  }

  // Reactor thread: collects the bytes until EAGAIN or EOF.
  void on_readable() override {
    auto c = conn_.lock();
    if (!c) return;
    uint8_t b[4096];
    for (;;) {
      ssize_t n = ::recv(c->fd(), b, sizeof b, MSG_DONTWAIT);
      if (n > 0) {
        std::lock_guard lk(mu_);
        buf_.insert(buf_.end(), b, b + n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      {
        std::lock_guard lk(mu_);
        eof_ = true;
      }
      c->report_peer_closed(n == 0 ? 0 : errno);
      return;
    }
  }

  // One untagged Send-family segment on QN 0, CRC as negotiated.
  bool send_segment(wire::Opcode op, uint32_t msn, uint32_t mo, bool last,
                    std::span<const uint8_t> payload, uint32_t invalidate_stag = 0) {
    auto c = conn_.lock();
    if (!c) return false;
    auto h = wire::DdpHeader::untagged_hdr(op, last, wire::kQnSend, msn, mo, invalidate_stag);
    std::vector<uint8_t> f(payload.size() + 64);
    size_t n = wire::encode_fpdu(h, {}, payload, c->params().crc, f);
    return n != 0 && send_all(c->fd(), f.data(), n);
  }

  // The Terminate the stream under test sent (layer<<16 | etype<<8 | code),
  // or nullopt if none arrived within t.
  std::optional<uint32_t> wait_terminate(std::chrono::milliseconds t = 5000ms) {
    return wait_for(t, [&] {
      return scan(wire::Opcode::kTerminate, [](const wire::SegmentInfo& seg) {
        auto pr = wire::parse_terminate_payload(seg.body);
        if (!pr.ok) return 0x00FFFFFFu;
        const auto& k = pr.msg.code;
        return static_cast<uint32_t>(k.layer) << 16 | static_cast<uint32_t>(k.etype) << 8 | k.code;
      });
    });
  }

  // Bytes exactly as given (FPDUs the test built, possibly damaged).
  bool send_bytes(std::span<const uint8_t> b) {
    auto c = conn_.lock();
    return c && send_all(c->fd(), b.data(), b.size());
  }

  // The first Read Request the stream under test sent, or nullopt if none
  // arrived within t.
  std::optional<wire::ReadRequestBody> wait_read_request(std::chrono::milliseconds t = 5000ms) {
    return wait_for(t, [&] {
      return scan(wire::Opcode::kReadRequest,
                  [](const wire::SegmentInfo& seg) { return seg.read; });
    });
  }

  // Stops (true) or resumes reading: while paused, what the stream under
  // test sends fills the socket buffers and its sends come back short.
  void pause(bool on) {
    auto c = conn_.lock();
    if (!c) return;
    auto done = std::make_shared<std::promise<void>>();
    c->reactor().post([c, on, done] {
      c->reactor().mute(c->fd(), EPOLLIN, on);
      done->set_value();
    });
    EXPECT_EQ(done->get_future().wait_for(5s), std::future_status::ready);
  }

  size_t received() {
    std::lock_guard lk(mu_);
    return buf_.size();
  }

  // Every whole Send that arrived, in stream order: (MSN, payload). Stops at
  // the first FPDU the parser refuses (`ok` false) or that is not a
  // single-segment Send.
  struct Sends {
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> msgs;
    bool ok = true;
  };
  Sends sends() {
    Sends out;
    auto c = conn_.lock();
    if (!c) return out;
    std::lock_guard lk(mu_);
    wire::StreamParser p(wire::ParserConfig{c->params().crc, false, 0xFFFF, false});
    std::span<const uint8_t> in(buf_);
    for (;;) {
      wire::Event ev = p.next(in);
      switch (ev.kind) {
        case wire::EventKind::kNeedMore:
          return out;
        case wire::EventKind::kError:
          out.ok = false;
          return out;
        case wire::EventKind::kPlacement:
          if (ev.segment->opcode() != wire::Opcode::kSend || !ev.segment->last() ||
              ev.segment->hdr.mo != 0) {
            out.ok = false;
            return out;
          }
          out.msgs.push_back({ev.segment->hdr.msn, {}});
          break;
        case wire::EventKind::kPayload:
          out.msgs.back().second.insert(out.msgs.back().second.end(), ev.data.begin(),
                                        ev.data.end());
          break;
        case wire::EventKind::kSegmentDone:
          break;
      }
    }
  }

  // True once the stream under test closed its side (FIN or reset).
  bool eof() {
    std::lock_guard lk(mu_);
    return eof_;
  }

 private:
  // `f` of the first FPDU of opcode `op` that arrived (while the parser
  // that decoded it lives: a segment's spans point into it), or nullopt.
  template <typename F>
  auto scan(wire::Opcode op, F f)
      -> std::optional<decltype(f(std::declval<const wire::SegmentInfo&>()))> {
    auto c = conn_.lock();
    if (!c) return std::nullopt;
    std::lock_guard lk(mu_);
    wire::StreamParser p(wire::ParserConfig{c->params().crc, false, 0xFFFF, false});
    std::span<const uint8_t> in(buf_);
    for (;;) {
      wire::Event ev = p.next(in);
      if (ev.kind == wire::EventKind::kNeedMore || ev.kind == wire::EventKind::kError)
        return std::nullopt;
      if (ev.kind == wire::EventKind::kPlacement && ev.segment->opcode() == op)
        return f(*ev.segment);
    }
  }

  // Polls `find` (returning an optional) until it has a value or t passed.
  template <typename Find>
  static auto wait_for(std::chrono::milliseconds t, Find find) -> decltype(find()) {
    auto deadline = std::chrono::steady_clock::now() + t;
    for (;;) {
      if (auto v = find()) return v;
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(1ms);
    }
  }

  static bool send_all(int fd, const uint8_t* p, size_t n) {
    while (n > 0) {
      ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
        pollfd pfd{fd, POLLOUT, 0};
        if (::poll(&pfd, 1, 5000) <= 0) return false;
        continue;
      }
      if (k <= 0) return false;
      p += k;
      n -= static_cast<size_t>(k);
    }
    return true;
  }

  std::weak_ptr<tcp::Connection> conn_;
  std::mutex mu_;
  std::vector<uint8_t> buf_;
  bool eof_ = false;
};

}  // namespace dptest
