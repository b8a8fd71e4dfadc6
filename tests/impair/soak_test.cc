// SPDX-License-Identifier: Apache-2.0
// soak_test.cc - softndk between two namespaces over a lossy, reordering,
// duplicating link with a black hole in the middle, CRC on, for a bounded
// time (SOFTNDK_SOAK_SECONDS, default 10). The client keeps RDMA Writes,
// Reads of what it wrote and Sends in flight; every Read and every Send is
// checked byte for byte, every request must complete exactly once and
// successfully, and every Send is delivered once, in order.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "impair/rdma_peers.h"

namespace softndk::test::impair {
namespace {

using namespace std::chrono_literals;

constexpr size_t kSlots = 8, kSlot = 64 * 1024;  // Write/Read area, both sides
constexpr size_t kRecvs = 64, kMaxSend = 4096;   // server receives
constexpr size_t kWindow = 32;                   // unacknowledged Sends
constexpr size_t kAck = 8;

// The byte at offset i of message `seq`: differs per message and position.
uint8_t pattern_byte(uint64_t seq, size_t i) {
  return static_cast<uint8_t>((seq * 131 + i * 7 + (i >> 8)) & 0xff);
}
void fill(uint8_t* p, size_t n, uint64_t seq) {
  for (size_t i = 0; i < n; ++i) p[i] = pattern_byte(seq, i);
}
bool check(const uint8_t* p, size_t n, uint64_t seq) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != pattern_byte(seq, i)) return false;
  return true;
}

double soak_seconds() {
  if (const char* s = std::getenv("SOFTNDK_SOAK_SECONDS")) {
    double v = std::atof(s);
    if (v > 0 && v <= 600) return v;
  }
  return 10;
}

struct ServerResult {
  uint64_t sends_received = 0;
  uint64_t bytes_verified = 0;
  uint64_t ack_completions = 0;
  bool crc = false;
};

struct ClientResult {
  uint64_t writes = 0, reads = 0, sends = 0, acks = 0;
  uint64_t bytes_verified = 0;
  bool crc = false;
};

TEST(ImpairSoak, RdmaOverALossyReorderingLinkVerifiesEveryByte) {
  std::string why;
  auto link = ImpairedLink::create(193, &why, 2026);
  if (!link) GTEST_SKIP() << why;
  Impairment imp;
  imp.loss = 0.005;
  imp.delay = 200us;
  imp.jitter = 1000us;
  imp.duplicate = 0.005;
  link->set(imp);
  const double seconds = soak_seconds();

  Slot<Target> target;
  Slot<bool> client_finished;
  ServerResult sr;
  ClientResult cr;
  run_pair(
      *link,
      [&] {
        tools::Adapter a({link->addr_b(), 1, 0, 15});
        tools::Pd pd(a);
        tools::Cq cq(a, 1024);
        tools::Qp qp(a, pd, cq, cq, nullptr, {kRecvs, 256, 0});
        tools::Buffer area(a, pd, kSlots * kSlot, kRemoteFlags);
        tools::Buffer recv(a, pd, kRecvs * kMaxSend, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        tools::Buffer acks(a, pd, kRecvs * kAck, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        tools::Listener l(a, sock_addr(link->addr_b(), kPort));
        target.set({area.va(), area.remote_token()});
        auto c = l.next(tools::deadline_in(20));
        if (!c) throw tools::ToolError("no connection request");
        for (uintptr_t i = 0; i < kRecvs; ++i) {
          NDK_SGE sge = recv.sge(i * kMaxSend, kMaxSend);
          ASSERT_EQ(qp.receive(reinterpret_cast<void*>(i), &sge, 1), STATUS_SUCCESS);
        }
        c->accept(qp, 16, 16, {});
        SOFTNDK_CONNECTION_INFO ci{};
        if (c->info(ci)) sr.crc = ci.Crc;
        NDK_RESULT rs[32];
        // Until the client has all its acks, then drain what is left.
        auto idle_since = tools::Clock::now();
        while (!client_finished.wait(0ms) || tools::Clock::now() - idle_since < 200ms) {
          ULONG n = cq.wait(rs, 32, false, tools::deadline_in(0.05));
          if (n) idle_since = tools::Clock::now();
          for (ULONG k = 0; k < n; ++k) {
            ASSERT_EQ(rs[k].Status, STATUS_SUCCESS) << "server completion failed";
            // Contexts: receives 0..kRecvs-1, ack Sends kRecvs.
            const auto i = reinterpret_cast<uintptr_t>(rs[k].RequestContext);
            if (i == kRecvs) {
              ++sr.ack_completions;
              continue;
            }
            ASSERT_LT(i, kRecvs);
            const uint8_t* m = recv.data() + i * kMaxSend;
            ASSERT_GE(rs[k].BytesTransferred, sizeof(uint64_t));
            uint64_t seq;
            std::memcpy(&seq, m, sizeof seq);
            ASSERT_EQ(seq, sr.sends_received) << "Send lost, repeated or out of order";
            const size_t len = rs[k].BytesTransferred - sizeof seq;
            ASSERT_TRUE(check(m + sizeof seq, len, seq)) << "Send " << seq << " damaged";
            sr.bytes_verified += len;
            ++sr.sends_received;
            NDK_SGE sge = recv.sge(i * kMaxSend, kMaxSend);
            ASSERT_EQ(qp.receive(reinterpret_cast<void*>(i), &sge, 1), STATUS_SUCCESS);
            // The ack frees one window slot at the client.
            uint8_t* ack = acks.data() + (seq % kRecvs) * kAck;
            std::memcpy(ack, &seq, sizeof seq);
            NDK_SGE as = acks.sge((seq % kRecvs) * kAck, kAck);
            ASSERT_EQ(qp.send(reinterpret_cast<void*>(kRecvs), &as, 1, 0), STATUS_SUCCESS);
          }
        }
      },
      [&] {
        tools::Adapter a({link->addr_a(), 1, 0, 15});
        tools::Pd pd(a);
        tools::Cq cq(a, 1024);
        tools::Qp qp(a, pd, cq, cq, nullptr, {kRecvs, 256, 0});
        tools::Buffer src(a, pd, kSlots * kSlot, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        tools::Buffer dst(a, pd, kSlots * kSlot, kRemoteFlags);
        tools::Buffer out(a, pd, kWindow * kMaxSend, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        tools::Buffer ackin(a, pd, kRecvs * kAck, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        auto t = target.wait(20s);
        if (!t) throw tools::ToolError("server never listened");
        for (uintptr_t i = 0; i < kRecvs; ++i) {
          NDK_SGE sge = ackin.sge(i * kAck, kAck);
          ASSERT_EQ(qp.receive(reinterpret_cast<void*>(i), &sge, 1), STATUS_SUCCESS);
        }
        std::vector<uint8_t> peer, rej;
        auto c =
            tools::Connection::connect(a, qp, sock_addr(link->addr_a(), 0),
                                       sock_addr(link->addr_b(), kPort), 16, 16, {}, &peer, &rej);
        SOFTNDK_CONNECTION_INFO ci{};
        if (c->info(ci)) cr.crc = ci.Crc;

        // Request ids start at kRecvs (below: receive contexts). done[id]
        // counts completions of each; all must end at exactly 1.
        std::vector<uint8_t> done(kRecvs, 1);
        std::mt19937_64 rng(99);
        uint64_t next_send = 0, acked = 0, batch = 0;
        NDK_RESULT rs[64];
        auto on_results = [&](ULONG n, size_t& pending) {
          for (ULONG k = 0; k < n; ++k) {
            ASSERT_EQ(rs[k].Status, STATUS_SUCCESS) << "client completion failed";
            const auto id = reinterpret_cast<uintptr_t>(rs[k].RequestContext);
            if (id < kRecvs) {  // an ack's receive
              uint64_t seq;
              std::memcpy(&seq, ackin.data() + id * kAck, sizeof seq);
              ASSERT_EQ(seq, acked) << "ack out of order";
              ++acked;
              ++cr.acks;
              NDK_SGE sge = ackin.sge(id * kAck, kAck);
              ASSERT_EQ(qp.receive(reinterpret_cast<void*>(id), &sge, 1), STATUS_SUCCESS);
              continue;
            }
            ASSERT_LT(id, done.size());
            ASSERT_EQ(++done[id], 1) << "request " << id << " completed twice";
            --pending;
          }
        };
        const auto end = tools::deadline_in(seconds);
        bool holed = false;
        while (tools::Clock::now() < end) {
          if (!holed && tools::Clock::now() > end - std::chrono::duration<double>(seconds / 2)) {
            link->black_hole(300ms);  // mid-run: everything stalls, TCP recovers
            holed = true;
          }
          size_t pending = 0;
          size_t lens[kSlots];
          for (size_t i = 0; i < kSlots; ++i) {
            const uint64_t seq = batch * kSlots + i;
            lens[i] = 1 + rng() % kSlot;
            fill(src.data() + i * kSlot, lens[i], seq);
            std::memset(dst.data() + i * kSlot, 0, lens[i]);
            NDK_SGE w = src.sge(i * kSlot, lens[i]);
            done.push_back(0);
            ASSERT_EQ(qp.write(reinterpret_cast<void*>(done.size() - 1), &w, 1, t->va + i * kSlot,
                               t->token, 0),
                      STATUS_SUCCESS);
            // Read it back: the Read Request follows the Write on the
            // stream, so it sees the written bytes.
            NDK_SGE r = dst.sge(i * kSlot, lens[i]);
            done.push_back(0);
            ASSERT_EQ(qp.read(reinterpret_cast<void*>(done.size() - 1), &r, 1, t->va + i * kSlot,
                              t->token, 0),
                      STATUS_SUCCESS);
            pending += 2;
            cr.writes++;
            cr.reads++;
            if (next_send - acked < kWindow) {
              const uint64_t seq_s = next_send++;
              uint8_t* m = out.data() + (seq_s % kWindow) * kMaxSend;
              const size_t len = rng() % (kMaxSend - sizeof seq_s + 1);
              std::memcpy(m, &seq_s, sizeof seq_s);
              fill(m + sizeof seq_s, len, seq_s);
              NDK_SGE s = out.sge((seq_s % kWindow) * kMaxSend, sizeof seq_s + len);
              done.push_back(0);
              ASSERT_EQ(qp.send(reinterpret_cast<void*>(done.size() - 1), &s, 1, 0),
                        STATUS_SUCCESS);
              ++pending;
              ++cr.sends;
            }
          }
          while (pending > 0) {
            ULONG n = cq.wait(rs, 64, false, tools::deadline_in(20));
            ASSERT_GT(n, 0u) << "no completion in 20 s, " << pending << " pending";
            on_results(n, pending);
            if (HasFatalFailure()) return;
          }
          for (size_t i = 0; i < kSlots; ++i) {
            ASSERT_TRUE(check(dst.data() + i * kSlot, lens[i], batch * kSlots + i))
                << "Read back of slot " << i << " in batch " << batch << " differs";
            cr.bytes_verified += lens[i];
          }
          ++batch;
        }
        // Every Send acknowledged.
        size_t none = 0;
        while (acked < next_send) {
          ULONG n = cq.wait(rs, 64, false, tools::deadline_in(20));
          ASSERT_GT(n, 0u) << "acks missing: " << acked << " of " << next_send;
          on_results(n, none);
        }
        for (size_t id = 0; id < done.size(); ++id)
          ASSERT_EQ(done[id], 1) << "request " << id << " never completed";
        client_finished.set(true);
      });
  client_finished.set(true);  // a failed client must not leave the server waiting

  auto lc = link->counters();
  std::printf(
      "soak %.0f s: client %llu writes, %llu reads, %llu sends (%llu bytes read back); server "
      "%llu sends verified (%llu bytes); link: %llu forwarded, %llu dropped, %llu duplicated, "
      "%llu reordered\n",
      seconds, (unsigned long long)cr.writes, (unsigned long long)cr.reads,
      (unsigned long long)cr.sends, (unsigned long long)cr.bytes_verified,
      (unsigned long long)sr.sends_received, (unsigned long long)sr.bytes_verified,
      (unsigned long long)lc.forwarded, (unsigned long long)lc.dropped,
      (unsigned long long)lc.duplicated, (unsigned long long)lc.reordered);
  EXPECT_TRUE(cr.crc);
  EXPECT_TRUE(sr.crc);
  EXPECT_GT(cr.writes, 0u);
  EXPECT_EQ(sr.sends_received, cr.sends);
  EXPECT_EQ(cr.acks, cr.sends);
  EXPECT_EQ(sr.ack_completions, cr.sends);
  // The link really was bad.
  EXPECT_GT(lc.dropped, 0u);
  EXPECT_GT(lc.duplicated, 0u);
  EXPECT_GT(lc.reordered, 0u);
}

}  // namespace
}  // namespace softndk::test::impair
