// SPDX-License-Identifier: Apache-2.0
// fi_baseline.cc - libfabric tcp provider baselines: RDMA write/read/send
// bandwidth with a window of outstanding operations, write and send
// ping-pong latency, write message rate. Connection setup runs on the
// calling thread (connect and accept are asynchronous, driven through the two
// event queues); the timed phase runs the two ends on two threads. The ends
// share nothing but this process: addresses and keys are handed over in
// memory (perftest's out-of-band exchange), and "the client is done" is an
// atomic flag rather than a message, so it costs the timed phase nothing.
#include "fabric/fi_baseline.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace softndk::baseline {

const char* fi_test_name(FiTest t) {
  switch (t) {
    case FiTest::WriteBw:
      return "fi_write_bw";
    case FiTest::ReadBw:
      return "fi_read_bw";
    case FiTest::SendBw:
      return "fi_send_bw";
    case FiTest::WriteLat:
      return "fi_write_lat";
    case FiTest::SendLat:
      return "fi_send_lat";
    case FiTest::WriteRate:
      return "fi_write_rate";
  }
  return "?";
}

bool fi_test_from_name(const std::string& s, FiTest& out) {
  for (FiTest t : {FiTest::WriteBw, FiTest::ReadBw, FiTest::SendBw, FiTest::WriteLat,
                   FiTest::SendLat, FiTest::WriteRate}) {
    if (s == fi_test_name(t) + 3) {
      out = t;
      return true;
    }
  }
  return false;
}

namespace {

constexpr int kCqSize = 1024;
constexpr int kEqTimeoutMs = 5000;  // connection setup on loopback: generous
constexpr int kSreadSliceMs = 50;   // blocking waits re-check stop/deadline
// Watchdog: a run may take 2x its cap (warm-up is not capped, and a starved
// machine stretches it) plus this grace before a silent peer is a failure.
constexpr double kWatchdogGraceS = 30.0;
constexpr int kLatRecvs = 4;  // receives kept posted in send ping-pong

std::string fi_err(const char* what, ssize_t rc) {
  return std::string(what) + ": " + fi_strerror(static_cast<int>(-rc));
}

struct InfoDeleter {
  void operator()(fi_info* i) const { fi_freeinfo(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

void close_fid(fid* f) {
  if (f) fi_close(f);
}

// One end: its own fabric, domain, EQ, CQ, endpoint and registered buffer.
// Layout of buf: [0, size) landing/data, [size, 2*size) latency source.
struct Side {
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_eq* eq = nullptr;
  fid_cq* cq = nullptr;
  fid_pep* pep = nullptr;
  fid_ep* ep = nullptr;
  fid_mr* mr = nullptr;
  InfoPtr info;
  std::vector<char> buf;
  size_t inject_size = 0;
  bool virt_addr = false;
  // Filled in by the peer before the timed phase.
  uint64_t peer_addr = 0, peer_key = 0;

  ~Side() {
    close_fid(ep ? &ep->fid : nullptr);
    close_fid(pep ? &pep->fid : nullptr);
    close_fid(mr ? &mr->fid : nullptr);
    close_fid(cq ? &cq->fid : nullptr);
    close_fid(eq ? &eq->fid : nullptr);
    close_fid(domain ? &domain->fid : nullptr);
    close_fid(fabric ? &fabric->fid : nullptr);
  }
  void* desc() const { return fi_mr_desc(mr); }
  uint64_t my_addr() const { return virt_addr ? reinterpret_cast<uint64_t>(buf.data()) : 0; }
};

InfoPtr make_hints(const FiOptions& o) {
  InfoPtr h(fi_allocinfo());
  h->ep_attr->type = FI_EP_MSG;
  h->caps = FI_MSG | FI_RMA;
  h->addr_format = FI_SOCKADDR_IN;
  // The MR modes this code handles; the provider clears those it needs not.
  h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  h->domain_attr->threading = FI_THREAD_DOMAIN;
  h->domain_attr->data_progress = o.auto_progress ? FI_PROGRESS_AUTO : FI_PROGRESS_MANUAL;
  h->fabric_attr->prov_name = strdup(o.provider.c_str());
  return h;
}

// Reads one connection event within timeout_ms: 1 = got one, 0 = none yet,
// -1 = failure (err set).
int eq_try(fid_eq* eq, uint32_t& ev, fi_eq_cm_entry& entry, int timeout_ms, std::string& err) {
  ssize_t rc = fi_eq_sread(eq, &ev, &entry, sizeof entry, timeout_ms, 0);
  if (rc > 0) return 1;
  if (rc == -FI_EAGAIN) return 0;
  if (rc == -FI_EAVAIL) {
    fi_eq_err_entry e{};
    fi_eq_readerr(eq, &e, 0);
    err = std::string("connection event error: ") + fi_strerror(e.err);
  } else {
    err = fi_err("fi_eq_sread", rc);
  }
  return -1;
}

std::string open_common(Side& s, fi_info* info, const FiOptions& o, bool need_fabric) {
  ssize_t rc;
  if (need_fabric && (rc = fi_fabric(info->fabric_attr, &s.fabric, nullptr)))
    return fi_err("fi_fabric", rc);
  fi_eq_attr eqa{};
  eqa.wait_obj = FI_WAIT_UNSPEC;
  if (!s.eq && (rc = fi_eq_open(s.fabric, &eqa, &s.eq, nullptr))) return fi_err("fi_eq_open", rc);
  if (!info->domain_attr) return "provider gave no domain attributes";
  if ((rc = fi_domain(s.fabric, info, &s.domain, nullptr))) return fi_err("fi_domain", rc);
  if (info->domain_attr->mr_mode & FI_MR_ENDPOINT) return "FI_MR_ENDPOINT is not handled";
  fi_cq_attr cqa{};
  cqa.size = kCqSize;
  cqa.format = FI_CQ_FORMAT_MSG;
  cqa.wait_obj = o.mode == Mode::Blocking ? FI_WAIT_UNSPEC : FI_WAIT_NONE;
  if ((rc = fi_cq_open(s.domain, &cqa, &s.cq, nullptr))) return fi_err("fi_cq_open", rc);
  s.buf.assign(2 * o.msg_size, 0);
  static std::atomic<uint64_t> next_key{1};
  if ((rc = fi_mr_reg(s.domain, s.buf.data(), s.buf.size(),
                      FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                      next_key++, 0, &s.mr, nullptr)))
    return fi_err("fi_mr_reg", rc);
  s.virt_addr = info->domain_attr->mr_mode & FI_MR_VIRT_ADDR;
  s.inject_size = info->tx_attr ? info->tx_attr->inject_size : 0;
  if ((rc = fi_endpoint(s.domain, info, &s.ep, nullptr))) return fi_err("fi_endpoint", rc);
  if ((rc = fi_ep_bind(s.ep, &s.cq->fid, FI_TRANSMIT | FI_RECV))) return fi_err("bind cq", rc);
  if ((rc = fi_ep_bind(s.ep, &s.eq->fid, 0))) return fi_err("bind eq", rc);
  if ((rc = fi_enable(s.ep))) return fi_err("fi_enable", rc);
  return {};
}

// Listens, connects and accepts; leaves both endpoints connected.
std::string connect_pair(const FiOptions& o, Side& sv, Side& cl) {
  InfoPtr hints = make_hints(o);
  fi_info* raw = nullptr;
  ssize_t rc = fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "0", FI_SOURCE, hints.get(), &raw);
  if (rc) return fi_err(("fi_getinfo (provider " + o.provider + ", FI_EP_MSG)").c_str(), rc);
  sv.info.reset(raw);
  if ((rc = fi_fabric(sv.info->fabric_attr, &sv.fabric, nullptr))) return fi_err("fi_fabric", rc);
  fi_eq_attr eqa{};
  eqa.wait_obj = FI_WAIT_UNSPEC;
  if ((rc = fi_eq_open(sv.fabric, &eqa, &sv.eq, nullptr))) return fi_err("fi_eq_open", rc);
  if ((rc = fi_passive_ep(sv.fabric, sv.info.get(), &sv.pep, nullptr)))
    return fi_err("fi_passive_ep", rc);
  if ((rc = fi_pep_bind(sv.pep, &sv.eq->fid, 0))) return fi_err("fi_pep_bind", rc);
  if ((rc = fi_listen(sv.pep))) return fi_err("fi_listen", rc);
  sockaddr_in sa{};
  size_t salen = sizeof sa;
  if ((rc = fi_getname(&sv.pep->fid, &sa, &salen))) return fi_err("fi_getname", rc);
  std::string port = std::to_string(ntohs(sa.sin_port));

  rc = fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", port.c_str(), 0, hints.get(), &raw);
  if (rc) return fi_err("fi_getinfo (client)", rc);
  cl.info.reset(raw);
  if (auto e = open_common(cl, cl.info.get(), o, true); !e.empty()) return "client: " + e;
  if ((rc = fi_connect(cl.ep, cl.info->dest_addr, nullptr, 0))) return fi_err("fi_connect", rc);

  // Both ends progress their handshakes only inside their own EQ reads, so
  // poll the two EQs in turn until the server accepted and both connected.
  fi_eq_cm_entry entry{};
  InfoPtr req;
  bool accepted = false, sv_up = false, cl_up = false;
  Clock::time_point give_up = Clock::now() + std::chrono::milliseconds(kEqTimeoutMs);
  while (!(sv_up && cl_up)) {
    if (Clock::now() > give_up) return "timed out connecting over 127.0.0.1";
    uint32_t ev = 0;
    std::string err;
    int k = eq_try(sv.eq, ev, entry, 1, err);
    if (k < 0) return "server: " + err;
    if (k > 0 && ev == FI_CONNREQ && !accepted) {
      req.reset(entry.info);
      if (auto e = open_common(sv, req.get(), o, false); !e.empty()) return "server: " + e;
      if ((rc = fi_accept(sv.ep, nullptr, 0))) return fi_err("fi_accept", rc);
      accepted = true;
    } else if (k > 0 && ev == FI_CONNECTED) {
      sv_up = true;
    } else if (k > 0) {
      return "server: unexpected connection event " + std::to_string(ev);
    }
    k = eq_try(cl.eq, ev, entry, 1, err);
    if (k < 0) return "client: " + err;
    if (k > 0 && ev == FI_CONNECTED)
      cl_up = true;
    else if (k > 0)
      return "client: unexpected connection event " + std::to_string(ev);
  }

  sv.peer_addr = cl.my_addr();
  sv.peer_key = fi_mr_key(cl.mr);
  cl.peer_addr = sv.my_addr();
  cl.peer_key = fi_mr_key(sv.mr);
  return {};
}

// One end's timed-phase loop helpers: completion polling in the run's mode,
// with a watchdog so a stuck peer ends the run instead of hanging it.
struct Driver {
  Side& s;
  Mode mode;
  Clock::time_point deadline;
  std::atomic<bool>& stop;  // the client finished (the server may leave)
  std::string err;
  fi_cq_msg_entry ce[16];

  // Returns completions read (>= 0), or -1 with err set. In blocking mode
  // sleeps up to one slice when `block` is set.
  int poll(bool block) {
    ssize_t n = (mode == Mode::Blocking && block)
                    ? fi_cq_sread(s.cq, ce, 16, nullptr, kSreadSliceMs)
                    : fi_cq_read(s.cq, ce, 16);
    if (n > 0) return static_cast<int>(n);
    if (n == -FI_EAGAIN) {
      if (Clock::now() > deadline) {
        err = "timed out waiting for a completion";
        return -1;
      }
      return 0;
    }
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry e{};
      fi_cq_readerr(s.cq, &e, 0);
      err = std::string("completion error: ") + fi_strerror(e.err) + " (" +
            fi_cq_strerror(s.cq, e.prov_errno, e.err_data, nullptr, 0) + ")";
      return -1;
    }
    err = fi_err("fi_cq_read", n);
    return -1;
  }

  // Posts with retry: -FI_EAGAIN means the queue is full until we progress.
  template <class F>
  bool post(F&& f, const char* what) {
    for (;;) {
      ssize_t rc = f();
      if (rc == 0) return true;
      if (rc != -FI_EAGAIN) {
        err = fi_err(what, rc);
        return false;
      }
      int n = poll(false);
      if (n < 0) return false;
      pending_completions += n;
      for (int i = 0; i < n; ++i) on_completion(ce[i]);
    }
  }
  // Completions reaped inside post() are credited by the caller.
  int pending_completions = 0;
  std::function<void(const fi_cq_msg_entry&)> on_completion = [](const fi_cq_msg_entry&) {};
};

Clock::time_point after(Clock::time_point t, double s) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

// The pieces of the run each thread writes; merged under a mutex.
namespace {
struct Shared {
  std::mutex mu;
  BaselineResult r;
  std::atomic<bool> stop{false};
  Clock::time_point t0, t_end;
  void fail(const std::string& e) {
    std::lock_guard g(mu);
    if (r.error.empty()) r.error = e;
  }
};

// Bandwidth/rate initiator (client): keeps `window` operations outstanding.
void bw_client(const FiOptions& o, Side& s, Shared& sh, Clock::time_point deadline) {
  Driver d{s, o.mode, deadline, sh.stop, {}, {}};
  uint64_t posted = 0, done = 0;
  const uint64_t limit = o.limits.iterations;
  char* buf = s.buf.data();
  memset(buf, o.test == FiTest::ReadBw ? 0 : 'w', o.msg_size);
  sh.t0 = Clock::now();
  Clock::time_point cap =
      o.limits.max_seconds > 0 ? after(sh.t0, o.limits.max_seconds) : Clock::time_point::max();
  bool more = true;
  while (more || done < posted) {
    while (more && posted - done < static_cast<uint64_t>(o.window)) {
      if ((limit && posted >= limit) || Clock::now() >= cap) {
        more = false;
        break;
      }
      bool ok = false;
      switch (o.test) {
        case FiTest::ReadBw:
          ok = d.post(
              [&] {
                return fi_read(s.ep, buf, o.msg_size, s.desc(), 0, s.peer_addr, s.peer_key,
                               nullptr);
              },
              "fi_read");
          break;
        case FiTest::SendBw:
          ok = d.post([&] { return fi_send(s.ep, buf, o.msg_size, s.desc(), 0, nullptr); },
                      "fi_send");
          break;
        default:
          ok = d.post(
              [&] {
                return fi_write(s.ep, buf, o.msg_size, s.desc(), 0, s.peer_addr, s.peer_key,
                                nullptr);
              },
              "fi_write");
      }
      if (!ok) {
        sh.fail("client: " + d.err);
        sh.stop = true;
        return;
      }
      ++posted;
      done += static_cast<uint64_t>(std::exchange(d.pending_completions, 0));
    }
    if (done >= posted) continue;
    int n = d.poll(posted - done >= static_cast<uint64_t>(o.window) || !more);
    if (n < 0) {
      sh.fail("client: " + d.err);
      sh.stop = true;
      return;
    }
    done += static_cast<uint64_t>(n);
  }
  Clock::time_point t = Clock::now();
  {
    std::lock_guard g(sh.mu);
    sh.t_end = std::max(sh.t_end, t);
    sh.r.iters = done;
    sh.r.bytes_sent = posted * o.msg_size;
    // Write/Read: the initiator's completions are the count; Send: the
    // receiver's (set by bw_server).
    if (o.test != FiTest::SendBw) sh.r.bytes = done * o.msg_size;
  }
  sh.stop = true;
  if (o.test == FiTest::ReadBw && (buf[0] != 'r' || buf[o.msg_size - 1] != 'r'))
    sh.fail("read data did not arrive");
}

// Bandwidth/rate target (server): drives progress; for Send, keeps receives
// posted and counts what arrives.
void bw_server(const FiOptions& o, Side& s, Shared& sh, Clock::time_point deadline) {
  Driver d{s, o.mode, deadline, sh.stop, {}, {}};
  char* buf = s.buf.data();
  memset(buf, o.test == FiTest::ReadBw ? 'r' : 0, o.msg_size);
  const bool sends = o.test == FiTest::SendBw;
  uint64_t got = 0, bytes = 0;
  auto post_recv = [&] {
    return d.post([&] { return fi_recv(s.ep, buf, o.msg_size, s.desc(), 0, nullptr); }, "fi_recv");
  };
  // Receives are reposted as they complete; those completed inside post()
  // are counted through on_completion.
  d.on_completion = [&](const fi_cq_msg_entry& e) {
    if (e.flags & FI_RECV) {
      ++got;
      bytes += e.len;
    }
  };
  if (sends)
    for (int i = 0; i < 2 * o.window; ++i)
      if (!post_recv()) {
        sh.fail("server: " + d.err);
        return;
      }
  Clock::time_point last{};
  const bool writes = o.test == FiTest::WriteBw || o.test == FiTest::WriteRate;
  Clock::time_point stop_seen{};
  for (;;) {
    if (sh.stop.load(std::memory_order_acquire)) {
      // For Send, drain until every message the client completed arrived.
      // For Write, a local completion at the client does not mean the data
      // was placed here (progress is manual): keep driving progress until
      // it lands, for at most 2 s.
      if (stop_seen == Clock::time_point{}) stop_seen = Clock::now();
      bool landed = !writes || (buf[0] == 'w' && buf[o.msg_size - 1] == 'w') ||
                    Clock::now() - stop_seen > std::chrono::seconds(2);
      std::lock_guard g(sh.mu);
      if (!sh.r.error.empty()) break;
      if (!sends && landed) break;
      if (sends && got >= sh.r.iters) break;
    }
    int n = d.poll(true);
    if (n < 0) {
      sh.fail("server: " + d.err);
      return;
    }
    uint64_t before = got;
    for (int i = 0; i < n; ++i) d.on_completion(d.ce[i]);
    for (uint64_t i = before; i < got; ++i)
      if (!post_recv()) {
        sh.fail("server: " + d.err);
        return;
      }
    if (got != before) last = Clock::now();
  }
  std::lock_guard g(sh.mu);
  if (sends) {
    sh.r.bytes = bytes;
    sh.t_end = std::max(sh.t_end, last);
  } else if (o.test == FiTest::WriteBw || o.test == FiTest::WriteRate) {
    if (buf[0] != 'w' || buf[o.msg_size - 1] != 'w') sh.r.error = "written data did not land";
  }
}

// Ping-pong end. The client times round trips; the server echoes until the
// client raises stop. Write: poll the landing buffer's last byte for the
// round's marker. Send: wait for a receive completion.
void lat_end(const FiOptions& o, Side& s, Shared& sh, Clock::time_point deadline, bool client,
             std::vector<uint64_t>* rtt) {
  Driver d{s, o.mode, deadline, sh.stop, {}, {}};
  const size_t n = o.msg_size;
  volatile char* landing = s.buf.data();
  char* src = s.buf.data() + n;
  const bool write = o.test == FiTest::WriteLat;
  const bool inject = n <= s.inject_size;
  uint64_t recvs = 0;
  d.on_completion = [&](const fi_cq_msg_entry& e) {
    if (e.flags & FI_RECV) ++recvs;
  };
  auto post_recv = [&] {
    return d.post([&] { return fi_recv(s.ep, s.buf.data(), n, s.desc(), 0, nullptr); }, "fi_recv");
  };
  auto fail = [&] {
    sh.fail(std::string(client ? "client: " : "server: ") + d.err);
    sh.stop = true;
  };
  if (!write)
    for (int i = 0; i < kLatRecvs; ++i)
      if (!post_recv()) return fail();

  // Sends this round's message (inline when it fits, as perftest's -I).
  auto send_one = [&](char marker) {
    memset(src, marker, n);
    if (write)
      return inject
                 ? d.post([&] { return fi_inject_write(s.ep, src, n, 0, s.peer_addr, s.peer_key); },
                          "fi_inject_write")
                 : d.post(
                       [&] {
                         return fi_write(s.ep, src, n, s.desc(), 0, s.peer_addr, s.peer_key,
                                         nullptr);
                       },
                       "fi_write");
    return inject ? d.post([&] { return fi_inject(s.ep, src, n, 0); }, "fi_inject")
                  : d.post([&] { return fi_send(s.ep, src, n, s.desc(), 0, nullptr); }, "fi_send");
  };
  // Waits for the peer's message of this round. Returns false on stop/failure.
  auto wait_one = [&](char marker, uint64_t want_recvs) {
    for (;;) {
      if (write && landing[n - 1] == marker) return true;
      if (!write && recvs >= want_recvs) {
        return post_recv();
      }
      if (!client && sh.stop.load(std::memory_order_relaxed)) return false;
      int k = d.poll(!write);
      if (k < 0) return false;
      for (int i = 0; i < k; ++i) d.on_completion(d.ce[i]);
    }
  };

  const uint64_t warm = o.limits.warmup, limit = o.limits.iterations;
  Clock::time_point cap = Clock::time_point::max(), t = Clock::now();
  uint64_t i = 0, timed = 0;
  for (;; ++i) {
    // Markers cycle 1..250 so a round can never match a stale byte.
    char marker = static_cast<char>(i % 250 + 1);
    if (client) {
      if (i == warm) {
        t = sh.t0 = Clock::now();
        cap = o.limits.max_seconds > 0 ? after(t, o.limits.max_seconds) : cap;
      }
      if (i >= warm && ((limit && timed >= limit) || t >= cap)) break;
      if (!send_one(marker) || !wait_one(marker, i + 1)) return fail();
      if (i >= warm) {
        Clock::time_point t2 = Clock::now();
        rtt->push_back(static_cast<uint64_t>(std::chrono::nanoseconds(t2 - t).count()));
        t = t2;
        ++timed;
      }
    } else {
      if (!wait_one(marker, i + 1)) {
        if (!d.err.empty()) fail();
        break;
      }
      if (!send_one(marker)) return fail();
    }
  }
  if (client) {
    sh.stop = true;
    std::lock_guard g(sh.mu);
    sh.t_end = t;
    sh.r.iters = timed;
    sh.r.bytes_sent = timed * n;
  } else {
    std::lock_guard g(sh.mu);
    sh.r.bytes = i > warm ? (i - warm) * n : 0;
  }
}

}  // namespace

BaselineResult fi_run(const FiOptions& o) {
  Shared sh;
  sh.r.name = fi_test_name(o.test);
  sh.r.mode = mode_name(o.mode);
  sh.r.msg_size = o.msg_size;
  if (o.msg_size == 0) {
    sh.r.error = "message size must be at least 1 byte";
    return sh.r;
  }
  if (o.test == FiTest::WriteLat && o.mode == Mode::Blocking) {
    sh.r.error = "write_lat polls memory and has no event mode (use send_lat)";
    return sh.r;
  }
  if (o.limits.iterations == 0 && o.limits.max_seconds <= 0) {
    sh.r.error = "need an iteration count or a duration";
    return sh.r;
  }
  // Sides are destroyed after the threads (declared first, destroyed last).
  Side sv, cl;
  if (auto e = connect_pair(o, sv, cl); !e.empty()) {
    sh.r.error = "libfabric " + o.provider + " provider: " + e;
    return sh.r;
  }
  Clock::time_point deadline = after(
      Clock::now(), 2 * (o.limits.max_seconds > 0 ? o.limits.max_seconds : 3600) + kWatchdogGraceS);
  const bool lat = o.test == FiTest::WriteLat || o.test == FiTest::SendLat;
  std::vector<uint64_t> rtt;
  if (lat && o.limits.iterations) rtt.reserve(o.limits.iterations);
  std::latch go(2);

  std::thread server([&] {
    ThreadCpu c0 = ThreadCpu::now();
    go.arrive_and_wait();
    if (lat)
      lat_end(o, sv, sh, deadline, false, nullptr);
    else
      bw_server(o, sv, sh, deadline);
    std::lock_guard g(sh.mu);
    add_cpu(sh.r, ThreadCpu::now() - c0, false);
  });
  std::thread client([&] {
    ThreadCpu c0 = ThreadCpu::now();
    go.arrive_and_wait();
    if (lat)
      lat_end(o, cl, sh, deadline, true, &rtt);
    else
      bw_client(o, cl, sh, deadline);
    std::lock_guard g(sh.mu);
    add_cpu(sh.r, ThreadCpu::now() - c0, true);
  });
  client.join();
  server.join();

  BaselineResult r = sh.r;
  if (r.ok() && r.bytes != r.bytes_sent)
    r.error = "target counted " + std::to_string(r.bytes) + " bytes, initiator sent " +
              std::to_string(r.bytes_sent);
  if (r.ok() && r.iters == 0) r.error = "no operations completed";
  if (r.ok()) {
    r.seconds = seconds_between(sh.t0, sh.t_end);
    finish_rates(r);
    if (lat) finish_latency(r, rtt);
  }
  return r;
}

}  // namespace softndk::baseline
