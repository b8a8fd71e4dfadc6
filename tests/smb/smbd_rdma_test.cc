// SPDX-License-Identifier: Apache-2.0
// The RDMA channel softndk <-> softndk: the client fast-registers pool
// slots and sends their descriptors; the server RDMA Reads the "WRITE"
// data from one and RDMA Writes the "READ" data into the other, then
// replies with or without Send with Invalidate; the client checks the
// invalidated token (or invalidates locally) and the bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <future>

#include "rdma_channel.h"

namespace {

namespace tools = softndk::tools;
using smbd::Transport;
using smbd::TransportConfig;

tools::SockAddr addr(uint16_t port) {
  tools::SockAddr s;
  std::string err;
  EXPECT_TRUE(tools::resolve("127.0.0.1", port, s, err)) << err;
  return s;
}

tools::AdapterOptions adapter_options() {
  tools::AdapterOptions o;
  o.name = "127.0.0.1";
  o.disconnect_timeout_s = 1;
  return o;
}

// Request: flags(1: reply with invalidate, 2: name the wrong token) len(4)
// nsrc(1), the source's descriptors, then the sink's.
struct Request {
  uint8_t flags;
  uint32_t len;
  std::vector<smbd::BufferDescriptor> src, sink;
};

std::vector<uint8_t> encode(const Request& r) {
  std::vector<uint8_t> m(6);
  m[0] = r.flags;
  std::memcpy(&m[1], &r.len, 4);
  m[5] = uint8_t(r.src.size());
  smbd::append_buffer_descriptors(r.src, &m);
  smbd::append_buffer_descriptors(r.sink, &m);
  return m;
}

// The server: for each request, read the source, xor it with 0x5A, write it
// to the sink, reply "done" (with Send with Invalidate of the sink's token
// if asked). Returns "" or the error. `posted`: as ndk-smbd serves a READ,
// the Writes are posted and not waited for (two staging buffers), the
// reply follows at once, their completions come through the transport's
// completion handler while the next request is awaited.
std::string serve(Transport& t, bool posted = false) {
  smbd::RdmaMover mover(t, 8u << 20, posted ? 2 : 1);
  std::vector<uint8_t> m;
  try {
    while (t.receive(&m, tools::deadline_in(20))) {
      if (posted) mover.acquire();
      if (m.size() < 6) return "bad request size";
      uint32_t len;
      std::memcpy(&len, &m[1], 4);
      const size_t nsrc = m[5];
      std::vector<smbd::BufferDescriptor> d;
      auto e = smbd::parse_buffer_descriptors(std::span(m).subspan(6), 16, &d);
      if (e != smbd::Error::kNone) return smbd::error_name(e);
      if (nsrc == 0 || nsrc >= d.size()) return "bad descriptor split";
      mover.read_from(std::span(d).first(nsrc), len);
      for (uint32_t i = 0; i < len; ++i) mover.data()[i] ^= 0x5A;
      if (posted)
        mover.post_write_to(std::span(d).subspan(nsrc), len);
      else
        mover.write_to(std::span(d).subspan(nsrc), len);
      const std::vector<uint8_t> reply = {'d', 'o', 'n', 'e'};
      // flag 2: invalidate the source's token instead (a valid token, but
      // not the one of the buffer the reply is about). Otherwise the sink's
      // first descriptor's, as an SMB2 server does.
      uint32_t tok = (m[0] & 2) ? d[0].token : d[nsrc].token;
      t.send(reply, (m[0] & 1) ? &tok : nullptr);
    }
  } catch (const smbd::TransportError& e) {
    if (!t.ended() || t.end_reason().find("disconnected") == std::string::npos) return e.what();
  }
  if (mover.max_reads_seen_in_flight() > t.max_reads_in_flight())
    return "too many RDMA Reads in flight";
  if (t.stats().unclaimed_completions)
    return std::to_string(t.stats().unclaimed_completions) + " completion(s) unclaimed";
  if (mover.staging_registered() > (posted ? 2u : 1u)) return "more staging buffers than allowed";
  return "";
}

struct Fixture : ::testing::Test {
  // What the server thread runs on its transport.
  virtual std::string serve_on(Transport& t) { return serve(t); }
  tools::Adapter sa{adapter_options()}, ca{adapter_options()};
  tools::Listener listener{sa, addr(0)};
  std::future<std::string> server;
  std::unique_ptr<Transport> c;
  void SetUp() override {
    TransportConfig cfg;
    server = std::async(std::launch::async, [this, cfg]() -> std::string {
      try {
        auto in = listener.next(tools::deadline_in(10));
        if (!in) return "no connection";
        auto t = Transport::accept(sa, std::move(in), cfg);
        return serve_on(*t);
      } catch (const std::exception& e) {
        return e.what();
      }
    });
    c = Transport::connect(ca, addr(0), addr(listener.port()), cfg);
  }
  std::string finish() {
    c->disconnect();
    return server.get();
  }
};

void one_io(Transport& c, smbd::BufferPool& pool, uint32_t len, bool invalidate, uint8_t seed) {
  for (uint32_t i = 0; i < len; ++i) pool.data(0)[i] = uint8_t(i * 13 + seed);
  std::memset(pool.data(1), 0, len);
  Request r{uint8_t(invalidate ? 1 : 0), len, pool.expose(0, len, false),
            pool.expose(1, len, true)};
  c.send(encode(r));
  std::vector<uint8_t> reply;
  uint32_t invalidated = 0;
  ASSERT_TRUE(c.receive(&reply, tools::deadline_in(20), &invalidated));
  ASSERT_EQ(reply.size(), 4u);
  if (invalidate)
    EXPECT_EQ(invalidated, r.sink[0].token);
  else
    EXPECT_EQ(invalidated, 0u);
  pool.release(1, invalidated);
  pool.release(0, 0);
  EXPECT_FALSE(pool.exposed(0));
  EXPECT_FALSE(pool.exposed(1));
  for (uint32_t i = 0; i < len; ++i)
    if (pool.data(1)[i] != uint8_t((i * 13 + seed) ^ 0x5A)) FAIL() << "byte " << i << " of " << len;
}

TEST_F(Fixture, ReadWriteWithAndWithoutInvalidate) {
  // One MR per 4 MiB slot (more than FRMRPageCount's 1 MiB; softndk's
  // engine takes it), so one descriptor per buffer.
  smbd::BufferPool pool(*c, 2, 4u << 20, 4u << 20);
  one_io(*c, pool, 1, true, 1);
  one_io(*c, pool, 4096, false, 2);
  one_io(*c, pool, (3u << 20) + 123, true, 3);  // several RDMA operations per descriptor
  one_io(*c, pool, 4u << 20, false, 4);
  one_io(*c, pool, 777, true, 5);  // slots reused after remote and local invalidation
  EXPECT_EQ(pool.remote_invalidations(), 3u);
  EXPECT_EQ(pool.local_invalidations(), 2u + 5u);
  EXPECT_EQ(finish(), "");
}

TEST_F(Fixture, WrongInvalidatedTokenIsRefused) {
  smbd::BufferPool pool(*c, 2, 1u << 16);
  Request r{3, 100, pool.expose(0, 100, false), pool.expose(1, 100, true)};
  c->send(encode(r));
  std::vector<uint8_t> reply;
  uint32_t invalidated = 0;
  ASSERT_TRUE(c->receive(&reply, tools::deadline_in(20), &invalidated));
  EXPECT_EQ(invalidated, r.src[0].token);
  EXPECT_THROW(pool.release(1, invalidated), smbd::TransportError);
  EXPECT_TRUE(pool.exposed(1));  // still exposed: the client must invalidate it itself
  pool.release(1, 0);
  pool.release(0, invalidated);
  EXPECT_EQ(finish(), "");
}

// A slot larger than the adapter's FRMRPageCount pages is several MRs: an
// I/O over it hands the peer a list of descriptors, which the server's
// RDMA Reads and Writes walk in order. The reply invalidates the sink's
// first descriptor; the pool invalidates the rest itself, and reuses them.
TEST_F(Fixture, IoSpanningSeveralRegistrationsSendsADescriptorList) {
  smbd::BufferPool pool(*c, 2, 4u << 20);
  const uint32_t frmr = c->adapter().info().FRMRPageCount;
  ASSERT_GT(frmr, 0u);
  ASSERT_EQ(pool.mr_size(), std::min<uint32_t>(4u << 20, frmr * NDK_PAGE_SIZE));
  const uint32_t len = (3u << 20) + 123;
  const size_t pieces = (len + pool.mr_size() - 1) / pool.mr_size();
  ASSERT_GE(pieces, 2u) << "FRMRPageCount " << frmr << " covers the whole I/O";
  for (uint32_t i = 0; i < len; ++i) pool.data(0)[i] = uint8_t(i * 29 + 7);
  std::memset(pool.data(1), 0, len);
  Request r{1, len, pool.expose(0, len, false), pool.expose(1, len, true)};
  ASSERT_EQ(r.src.size(), pieces);
  ASSERT_EQ(r.sink.size(), pieces);
  uint64_t covered = 0;
  for (size_t k = 0; k < pieces; ++k) {
    EXPECT_EQ(r.sink[k].offset, reinterpret_cast<uint64_t>(pool.data(1)) + covered);
    covered += r.sink[k].length;
    if (k) {
      EXPECT_NE(r.sink[k].token, r.sink[k - 1].token);
    }
  }
  EXPECT_EQ(covered, len);
  c->send(encode(r));
  std::vector<uint8_t> reply;
  uint32_t invalidated = 0;
  ASSERT_TRUE(c->receive(&reply, tools::deadline_in(20), &invalidated));
  EXPECT_EQ(invalidated, r.sink[0].token);
  pool.release(1, invalidated);
  pool.release(0, 0);
  EXPECT_EQ(pool.remote_invalidations(), 1u);
  EXPECT_EQ(pool.local_invalidations(), 2 * pieces - 1);
  for (uint32_t i = 0; i < len; ++i)
    if (pool.data(1)[i] != uint8_t((i * 29 + 7) ^ 0x5A)) FAIL() << "byte " << i;
  // Reused after release, with a shorter I/O: fewer descriptors.
  Request again{0, 5000, pool.expose(0, 5000, false), pool.expose(1, 5000, true)};
  EXPECT_EQ(again.src.size(), 1u);
  c->send(encode(again));
  ASSERT_TRUE(c->receive(&reply, tools::deadline_in(20), &invalidated));
  EXPECT_EQ(invalidated, 0u);
  pool.release(1, 0);
  pool.release(0, 0);
  EXPECT_EQ(finish(), "");
}

TEST_F(Fixture, ExposeRefusesReuseBeforeRelease) {
  smbd::BufferPool pool(*c, 1, 8192);
  pool.expose(0, 8192, true);
  EXPECT_THROW(pool.expose(0, 10, true), smbd::TransportError);
  EXPECT_THROW(pool.expose(0, 8193, true), smbd::TransportError);
  pool.release(0, 0);
  EXPECT_NO_THROW(pool.expose(0, 10, true));
  pool.release(0, 0);
  EXPECT_EQ(finish(), "");
}

struct PostedWrites : Fixture {
  std::string serve_on(Transport& t) override { return serve(t, true); }
};

// Several requests outstanding at once against a server that does not wait
// for its Writes: each reply arrives after its sink's bytes (RDMAP
// ordering), the server reuses its two staging buffers only after their
// Writes completed (every completion claimed by the mover's handler,
// checked in serve()), and the replies come in request order.
TEST_F(PostedWrites, PipelinedRequestsEachSeeTheirBytesBeforeTheReply) {
  constexpr unsigned kOutstanding = 4, kRounds = 3;
  const uint32_t len = 256u << 10;  // above the same-host path's descriptor threshold
  smbd::BufferPool pool(*c, 2 * kOutstanding, len, len);
  for (unsigned round = 0; round < kRounds; ++round) {
    std::vector<Request> sent;
    for (unsigned k = 0; k < kOutstanding; ++k) {
      const uint8_t seed = uint8_t(round * 16 + k);
      for (uint32_t i = 0; i < len; ++i) pool.data(2 * k)[i] = uint8_t(i * 7 + seed);
      std::memset(pool.data(2 * k + 1), 0, len);
      sent.push_back(
          {uint8_t(k & 1), len, pool.expose(2 * k, len, false), pool.expose(2 * k + 1, len, true)});
      c->send(encode(sent.back()));
    }
    for (unsigned k = 0; k < kOutstanding; ++k) {
      std::vector<uint8_t> reply;
      uint32_t invalidated = 0;
      ASSERT_TRUE(c->receive(&reply, tools::deadline_in(20), &invalidated)) << "reply " << k;
      ASSERT_EQ(reply.size(), 4u);
      // Replies in order: the k-th names the k-th request's sink (or none).
      EXPECT_EQ(invalidated, (k & 1) ? sent[k].sink[0].token : 0u);
      const uint8_t seed = uint8_t(round * 16 + k);
      for (uint32_t i = 0; i < len; ++i)
        if (pool.data(2 * k + 1)[i] != uint8_t((i * 7 + seed) ^ 0x5A))
          FAIL() << "request " << k << " round " << round << ": byte " << i
                 << " not there when its reply came";
      pool.release(2 * k + 1, invalidated);
      pool.release(2 * k, 0);
    }
  }
  EXPECT_EQ(finish(), "");
}

// The transport's completion handler: a completion of a request the
// transport does not own that comes while its owner waits in receive() goes
// to the registered handler; with none registered it is counted, not lost
// silently. A second handler is refused.
struct Handler : Fixture {
  static bool count_mine(void* arg, const NDK_RESULT_EX& r) {
    auto* h = static_cast<std::pair<void*, unsigned>*>(arg);
    if (r.RequestContext != h->first) return false;
    ++h->second;
    return true;
  }
  std::string serve_on(Transport& t) override {
    tools::Buffer src(t.adapter(), t.pd(), 65536, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    std::memset(src.data(), 0x33, 65536);
    int marker = 0;
    std::pair<void*, unsigned> mine{&marker, 0};
    std::vector<uint8_t> m;
    try {
      for (int step = 0; step < 2; ++step) {
        if (!t.receive(&m, tools::deadline_in(20))) return "no request";
        std::vector<smbd::BufferDescriptor> d;
        if (smbd::parse_buffer_descriptors(m, 1, &d) != smbd::Error::kNone) return "bad descriptor";
        if (step == 1) t.set_completion_handler(&Handler::count_mine, &mine);
        NDK_SGE sge = src.sge(0, d[0].length);
        NDK_QP* qp = t.qp().get();
        if (qp->Dispatch->NdkWrite(qp, &marker, &sge, 1, d[0].offset, d[0].token, 0) !=
            STATUS_SUCCESS)
          return "NdkWrite refused";
        const std::vector<uint8_t> reply = {'o', 'k'};
        t.send(reply);
        // The Write's completion comes while we wait for a request that the
        // client sends only later (it waits for a "go" below): bounded.
        const auto until = tools::deadline_in(20);
        auto seen = [&] { return step == 0 ? t.stats().unclaimed_completions : mine.second; };
        while (seen() == 0 && tools::Clock::now() < until)
          if (t.receive(&m, tools::deadline_in(0.01))) return "unexpected request";
        if (seen() != 1) return "step " + std::to_string(step) + ": completion not seen";
        t.send(std::vector<uint8_t>{'g', 'o'});
      }
      if (mine.second != 1 || t.stats().unclaimed_completions != 1)
        return "the handler's completion was also counted as unclaimed";
      try {
        t.set_completion_handler(&Handler::count_mine, &marker);
        return "a second handler was accepted";
      } catch (const smbd::TransportError&) {
      }
      t.set_completion_handler(nullptr, nullptr);
      t.set_completion_handler(&Handler::count_mine, &marker);  // free again
      t.set_completion_handler(nullptr, nullptr);
      if (t.receive(&m, tools::deadline_in(20))) return "unexpected request at the end";
    } catch (const smbd::TransportError& e) {
      if (!t.ended() || t.end_reason().find("disconnected") == std::string::npos) return e.what();
    }
    return "";
  }
};

TEST_F(Handler, CompletionsNotOwnedGoToTheHandlerOrAreCounted) {
  smbd::BufferPool pool(*c, 1, 65536, 65536);
  for (int step = 0; step < 2; ++step) {
    std::memset(pool.data(0), 0, 65536);
    std::vector<uint8_t> req;
    smbd::append_buffer_descriptors(pool.expose(0, 65536, true), &req);
    c->send(req);
    std::vector<uint8_t> reply;
    ASSERT_TRUE(c->receive(&reply, tools::deadline_in(20)));
    EXPECT_EQ(reply, (std::vector<uint8_t>{'o', 'k'}));
    for (uint32_t i = 0; i < 65536; ++i)
      if (pool.data(0)[i] != 0x33) FAIL() << "step " << step << " byte " << i;
    ASSERT_TRUE(c->receive(&reply, tools::deadline_in(30)));  // the server saw its completion
    EXPECT_EQ(reply, (std::vector<uint8_t>{'g', 'o'}));
    pool.release(0, 0);
  }
  EXPECT_EQ(finish(), "");
}

}  // namespace
