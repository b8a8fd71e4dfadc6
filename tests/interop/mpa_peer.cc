// SPDX-License-Identifier: Apache-2.0
// mpa_peer - the interop suite's MPA-level driver on softndk's connection
// engine (src/tcp + src/mpa + the RTR FPDUs of src/rdmap), below the NDK ABI.
//
// Same command line and JSON as ndk_peer (peer_common.h). It exists so that
// the MPA negotiation variants can be proven against real siw while the NDK
// connector calls are still being wired: it exercises exactly the code that
// NdkConnect/NdkListen will run, plus the RFC 6581 RTR exchange that the
// data path will own (sent and checked byte for byte here).
//
//   mpa_peer connect 127.0.0.1:PORT [--crc] [--p2p write|read|both] [--rev 1]
//                    [--pd-len N] [--hold-ms N]
//   mpa_peer listen 127.0.0.1:PORT [--reject-len N] [--count N] ...
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "peer_common.h"
#include "rdmap/rtr.h"
#include "softndk/softndk.h"
#include "transport/tcp/connection.h"
#include "transport/tcp/connector.h"
#include "transport/tcp/listener.h"

using namespace softndk;
using namespace interop;
using namespace std::chrono_literals;

namespace {

std::string st(NTSTATUS s) {
  const char* n = SoftNdkStatusName(s);
  if (n) return n;
  char b[16];
  std::snprintf(b, sizeof b, "0x%08X", static_cast<unsigned>(s));
  return b;
}

template <typename T>
class Slot {
 public:
  void set(T v) {
    std::lock_guard lk(mu_);
    q_.push_back(std::move(v));
    cv_.notify_all();
  }
  std::optional<T> wait(std::chrono::milliseconds d) {
    std::unique_lock lk(mu_);
    if (!cv_.wait_for(lk, d, [&] { return !q_.empty(); })) return std::nullopt;
    T v = std::move(q_.front());
    q_.pop_front();
    return v;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> q_;
};

// Collects whatever the peer sends once the MPA exchange is done (the RTR,
// siw's zero-length Read Response) - the data path's job in the library.
class Collector : public tcp::ConnectionHandler {
 public:
  explicit Collector(std::weak_ptr<tcp::Connection> c) : conn_(std::move(c)) {}
  void on_readable() override {
    auto c = conn_.lock();
    if (!c) return;
    uint8_t b[4096];
    for (;;) {
      ssize_t n = ::recv(c->fd(), b, sizeof b, 0);
      if (n > 0) {
        std::lock_guard lk(mu_);
        buf_.insert(buf_.end(), b, b + n);
        cv_.notify_all();
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n < 0 && errno == EINTR) continue;
      {
        std::lock_guard lk(mu_);
        eof_ = true;
        cv_.notify_all();
      }
      c->report_peer_closed(n == 0 ? 0 : errno);
      return;
    }
  }
  void add(Bytes b) {
    std::lock_guard lk(mu_);
    buf_.insert(buf_.end(), b.begin(), b.end());
    cv_.notify_all();
  }
  // Waits until `n` bytes arrived (or EOF / timeout); returns what is there.
  Bytes wait_bytes(size_t n, std::chrono::milliseconds d) {
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, d, [&] { return buf_.size() >= n || eof_; });
    return buf_;
  }

 private:
  std::weak_ptr<tcp::Connection> conn_;
  std::mutex mu_;
  std::condition_variable cv_;
  Bytes buf_;
  bool eof_ = false;
};

std::shared_ptr<Collector> attach_collector(const std::shared_ptr<tcp::Connection>& c) {
  auto h = std::make_shared<Collector>(c);
  Slot<int> done;
  c->reactor().post([c, h, &done] {
    h->add(c->take_leftover());
    c->attach(h);
    done.set(1);
  });
  done.wait(5s);
  return h;
}

bool send_bytes(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd pfd{fd, POLLOUT, 0};
      ::poll(&pfd, 1, 1000);
      continue;
    }
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

tcp::ConnSettings settings_from(const Options& o) {
  tcp::ConnSettings cs;
  if (o.rev) cs.mpa.revision = static_cast<uint8_t>(o.rev);
  cs.mpa.crc_required = o.crc;
  if (!o.p2p.empty() && o.p2p != "none") {
    cs.mpa.peer_to_peer = true;
    cs.mpa.rtr_types = o.p2p == "write"  ? mpa::kRtrWrite
                       : o.p2p == "read" ? mpa::kRtrRead
                                         : mpa::kRtrWrite | mpa::kRtrRead;
  }
  // The engine's initiator hold-off after the MPA Reply (--holdoff-ms): this
  // driver writes its RTR on the bare engine, without the NDK data path's
  // wake-up of a silent peer (docs/compatibility.md note 1).
  cs.initiator_holdoff = std::chrono::milliseconds(o.holdoff_ms);
  return cs;
}

void add_params(Json& j, const mpa::NegotiatedParams& p) {
  j.n("mpa_rev", p.revision)
      .b("crc", p.crc)
      .b("markers", p.markers)
      .b("p2p", p.p2p)
      .s("rtr", rtr_name(p.rtr))
      .n("ird", p.ird)
      .n("ord", p.ord)
      .n("peer_pd_len", static_cast<long long>(p.peer_private_data.size()))
      .s("peer_pd", hex(p.peer_private_data));
}

// Graceful disconnect, bounded.
std::string disconnect(const std::shared_ptr<tcp::Connection>& c) {
  Slot<NTSTATUS> d;
  c->disconnect([&d](NTSTATUS s) { d.set(s); });
  auto r = d.wait(15s);
  return r ? st(*r) : "timeout";
}

// Initiator side of the RTR (RFC 6581, as siw sends it): a zero-length Write
// or Read Request; for a Read, siw's zero-length Read Response must follow.
void initiator_rtr(Json& j, const std::shared_ptr<tcp::Connection>& c) {
  const auto& p = c->params();
  if (!p.p2p) return;
  auto col = attach_collector(c);
  uint8_t out[64];
  size_t n = p.rtr == mpa::kRtrRead ? wire::encode_rtr_read(out, 1, p.crc)
                                    : wire::encode_rtr_write(out, p.crc);
  // MPA_PEER_RTR_DELAY_MS: wait before the RTR (probes siw's handling of an
  // RTR that arrives right behind its own Reply).
  if (const char* d = std::getenv("MPA_PEER_RTR_DELAY_MS")) {
    j.n("rtr_delay_ms", std::atoi(d));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(d)));
  }
  j.s("rtr_sent", hex(out, n));
  bool ok = send_bytes(c->fd(), out, n);
  j.b("rtr_send_ok", ok);
  if (p.rtr == mpa::kRtrRead) {
    uint8_t want[wire::kZeroReadResponseSize];
    wire::encode_zero_read_response(want, 0, 0, p.crc);
    Bytes got = col->wait_bytes(sizeof want, 10s);
    j.s("rtr_response", hex(got));
    j.b("rtr_response_ok",
        got.size() >= sizeof want && std::memcmp(got.data(), want, sizeof want) == 0);
  }
}

// Responder side: the initiator's first FPDU must be the RTR siw sends.
void responder_rtr(Json& j, const std::shared_ptr<tcp::Connection>& c) {
  const auto& p = c->params();
  if (!p.p2p) return;
  auto col = attach_collector(c);
  uint8_t want[64];
  size_t n = p.rtr == mpa::kRtrRead ? wire::encode_rtr_read(want, 1, p.crc)
                                    : wire::encode_rtr_write(want, p.crc);
  Bytes got = col->wait_bytes(n, 10s);
  j.s("rtr_received", hex(got.data(), std::min(got.size(), n)));
  j.b("rtr_ok", got.size() >= n && std::memcmp(got.data(), want, n) == 0);
  if (p.rtr == mpa::kRtrRead) {
    uint8_t rsp[wire::kZeroReadResponseSize];
    size_t m = wire::encode_zero_read_response(rsp, 0, 0, p.crc);
    j.b("rtr_response_sent", send_bytes(c->fd(), rsp, m));
  }
}

int do_connect(const Options& o) {
  util::Engine engine(1);
  auto dst = tcp::SockAddr::parse(o.host, o.port);
  if (!dst) usage("mpa_peer");
  tcp::ConnectArgs a;
  a.dst = *dst;
  a.ird = static_cast<uint16_t>(o.ird);
  a.ord = static_cast<uint16_t>(o.ord);
  a.private_data = o.pd;
  Slot<tcp::ConnectResult> done;
  auto t0 = Clock::now();
  Json j;
  j.s("driver", "mpa_peer").s("role", "initiator").n("pd_len", static_cast<long long>(o.pd.size()));
  NTSTATUS s = tcp::ActiveConnect::start(engine.pick(), settings_from(o), std::move(a),
                                         [&done](tcp::ConnectResult r) { done.set(std::move(r)); });
  if (s != STATUS_PENDING) {
    j.s("status", st(s)).n("ms", ms_since(t0)).print();
    return 1;
  }
  auto r = done.wait(std::chrono::milliseconds(o.timeout_ms));
  if (!r) {
    j.s("status", "timeout").print();
    return 3;
  }
  j.s("status", st(r->status))
      .n("ms", ms_since(t0))
      .n("holdoff_ms", static_cast<long long>(settings_from(o).initiator_holdoff.count()));
  if (r->status != STATUS_SUCCESS) {
    j.s("mpa_status", mpa::to_string(r->mpa)).s("peer_pd", hex(r->peer_private_data)).print();
    return 1;
  }
  add_params(j, r->connection->params());
  // The guest capture shows the host's source port (slirp keeps it): the
  // suite uses it to find this connection in the capture.
  j.n("local_port", r->connection->local().port());
  initiator_rtr(j, r->connection);
  std::this_thread::sleep_for(std::chrono::milliseconds(o.hold_ms));
  j.s("disconnect", disconnect(r->connection));
  j.print();
  return 0;
}

int do_listen(const Options& o) {
  util::Engine engine(1);
  auto at = tcp::SockAddr::parse(o.host, o.port);
  if (!at) usage("mpa_peer");
  Slot<std::shared_ptr<tcp::PendingConnection>> requests;
  std::shared_ptr<tcp::Listener> l;
  NTSTATUS s = tcp::Listener::create(
      engine, settings_from(o), *at, 16,
      [&requests](std::shared_ptr<tcp::PendingConnection> p) { requests.set(std::move(p)); }, &l);
  if (s != STATUS_SUCCESS) {
    Json().s("driver", "mpa_peer").s("role", "listener").s("status", st(s)).print();
    return 1;
  }
  if (!o.ready_file.empty()) std::fclose(std::fopen(o.ready_file.c_str(), "w"));
  auto deadline = Clock::now() + std::chrono::milliseconds(o.timeout_ms);
  int rc = 0;
  for (unsigned i = 0; i < o.count; ++i) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto p = requests.wait(std::max(left, 1ms));
    if (!p) {
      Json().s("driver", "mpa_peer").s("role", "responder").s("status", "timeout").print();
      return 3;
    }
    auto t0 = Clock::now();
    const auto& q = (*p)->request();
    Json j;
    j.s("driver", "mpa_peer")
        .s("role", "responder")
        .n("req_rev", q.rev)
        .b("req_crc", q.crc)
        .b("req_p2p", q.p2p)
        .n("req_rtr_offered", q.rtr_offered)
        .n("req_ird", q.ird)
        .n("req_ord", q.ord)
        .n("req_pd_len", static_cast<long long>(q.private_data.size()))
        .s("req_pd", hex(q.private_data));
    if (o.reject) {
      NTSTATUS rs = (*p)->reject(o.reject_pd);
      j.s("action", "reject").n("reject_pd_len", static_cast<long long>(o.reject_pd.size()));
      j.s("status", st(rs)).n("ms", ms_since(t0)).print();
      if (rs != STATUS_SUCCESS) rc = 1;
      continue;
    }
    Slot<std::pair<NTSTATUS, std::shared_ptr<tcp::Connection>>> acc;
    NTSTATUS as = (*p)->accept(static_cast<uint16_t>(o.ird), static_cast<uint16_t>(o.ord), o.pd,
                               [&acc](NTSTATUS st, std::shared_ptr<tcp::Connection> c) {
                                 acc.set({st, std::move(c)});
                               });
    j.s("action", "accept");
    if (as != STATUS_PENDING) {
      j.s("status", st(as)).print();
      rc = 1;
      continue;
    }
    auto r = acc.wait(20s);
    j.s("status", r ? st(r->first) : "timeout").n("ms", ms_since(t0));
    if (!r || r->first != STATUS_SUCCESS) {
      j.print();
      rc = 1;
      continue;
    }
    add_params(j, r->second->params());
    responder_rtr(j, r->second);
    std::this_thread::sleep_for(std::chrono::milliseconds(o.hold_ms));
    j.s("disconnect", disconnect(r->second));
    j.print();
  }
  l->close();
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  // Bound the whole run: a hung exchange must fail the case, not the suite.
  std::thread([ms = o.timeout_ms + 20000] {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    std::fprintf(stderr, "mpa_peer: overall timeout\n");
    std::_Exit(3);
  }).detach();
  return o.mode == "connect" ? do_connect(o) : do_listen(o);
}
