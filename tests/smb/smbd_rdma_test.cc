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
// source descriptor, sink descriptor.
struct Request {
  uint8_t flags;
  uint32_t len;
  smbd::BufferDescriptor src, sink;
};

std::vector<uint8_t> encode(const Request& r) {
  std::vector<uint8_t> m(5);
  m[0] = r.flags;
  std::memcpy(&m[1], &r.len, 4);
  smbd::BufferDescriptor both[2] = {r.src, r.sink};
  smbd::append_buffer_descriptors(both, &m);
  return m;
}

// The server: for each request, read the source, xor it with 0x5A, write it
// to the sink, reply "done" (with Send with Invalidate of the sink's token
// if asked). Returns "" or the error.
std::string serve(Transport& t) {
  smbd::RdmaMover mover(t, 8u << 20);
  std::vector<uint8_t> m;
  try {
    while (t.receive(&m, tools::deadline_in(20))) {
      if (m.size() != 5 + 32) return "bad request size";
      uint32_t len;
      std::memcpy(&len, &m[1], 4);
      std::vector<smbd::BufferDescriptor> d;
      auto e = smbd::parse_buffer_descriptors(std::span(m).subspan(5), 2, &d);
      if (e != smbd::Error::kNone) return smbd::error_name(e);
      mover.read_from(std::span(d).first(1), len);
      for (uint32_t i = 0; i < len; ++i) mover.data()[i] ^= 0x5A;
      mover.write_to(std::span(d).subspan(1), len);
      const std::vector<uint8_t> reply = {'d', 'o', 'n', 'e'};
      // flag 2: invalidate the source's token instead (a valid token, but
      // not the one of the buffer the reply is about).
      uint32_t tok = (m[0] & 2) ? d[0].token : d[1].token;
      t.send(reply, (m[0] & 1) ? &tok : nullptr);
    }
  } catch (const smbd::TransportError& e) {
    if (!t.ended() || t.end_reason().find("disconnected") == std::string::npos) return e.what();
  }
  if (mover.max_reads_seen_in_flight() > t.max_reads_in_flight())
    return "too many RDMA Reads in flight";
  return "";
}

struct Fixture : ::testing::Test {
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
        return serve(*t);
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
    EXPECT_EQ(invalidated, r.sink.token);
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
  smbd::BufferPool pool(*c, 2, 4u << 20);
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
  EXPECT_EQ(invalidated, r.src.token);
  EXPECT_THROW(pool.release(1, invalidated), smbd::TransportError);
  EXPECT_TRUE(pool.exposed(1));  // still exposed: the client must invalidate it itself
  pool.release(1, 0);
  pool.release(0, invalidated);
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

}  // namespace
