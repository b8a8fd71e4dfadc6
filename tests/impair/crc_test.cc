// SPDX-License-Identifier: Apache-2.0
// crc_test.cc - why MPA CRC matters: a byte flipped on the wire with the TCP
// checksum fixed up (impair/link.h) passes TCP. With CRC32c the receiver
// catches it (Terminate: LLP layer, MPA CRC error), the connection fails
// and the receive never completes successfully; without CRC the damaged
// byte is delivered in a successful receive.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "impair/rdma_peers.h"

namespace softndk::test::impair {
namespace {

using namespace std::chrono_literals;

constexpr size_t kLen = 64 * 1024;
constexpr uint8_t kFill = 0xa5;
constexpr ULONG kCrcTerminate = 0x00020002;  // LLP layer, MPA CRC error

struct Outcome {
  NTSTATUS receive = STATUS_PENDING;  // the server's receive completion
  ULONG bytes = 0;
  size_t damaged = 0;  // bytes in the receive buffer that differ from kFill
  bool server_crc = false, client_crc = false;
  ULONG terminate_sent = 0xffffffff, terminate_received = 0xffffffff;
};

// One Send of kLen bytes of kFill from A to B with exactly one byte of it
// corrupted on the wire. crc: AdapterOptions::crc of both adapters (-1
// library default, 0 SOFTNDK_MPA_CRC_WHEN_ASKED, 1 required).
Outcome send_through_corruption(int net, int crc) {
  Outcome o;
  std::string why;
  auto link = ImpairedLink::create(net, &why, 7);
  if (!link) {
    o.receive = STATUS_NOT_SUPPORTED;
    return o;
  }
  Impairment imp;
  imp.corrupt = 1.0;
  imp.corrupt_max = 1;
  imp.corrupt_value = kFill;
  imp.corrupt_run = 256;  // only the Send's data, never a header
  link->set(imp);
  Slot<bool> listening, received, client_done;
  run_pair(
      *link,
      [&] {
        tools::Adapter a({link->addr_b(), crc, 0, 10});
        tools::Pd pd(a);
        tools::Cq cq(a, 64);
        tools::Qp qp(a, pd, cq, cq, nullptr, {16, 16, 0});
        tools::Buffer buf(a, pd, kLen, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        tools::Listener l(a, sock_addr(link->addr_b(), kPort));
        listening.set(true);
        auto c = l.next(tools::deadline_in(15));
        if (!c) throw tools::ToolError("no connection request");
        NDK_SGE sge = buf.sge(0, kLen);
        ASSERT_EQ(qp.receive(nullptr, &sge, 1), STATUS_SUCCESS);
        c->accept(qp, 4, 4, {});
        NDK_RESULT r{};
        if (cq.wait(&r, 1, false, tools::deadline_in(15)) == 1) {
          o.receive = r.Status;
          o.bytes = r.BytesTransferred;
        }
        o.damaged = static_cast<size_t>(
            std::count_if(buf.data(), buf.data() + kLen, [](uint8_t b) { return b != kFill; }));
        received.set(true);
        // The Terminate goes out as the receive fails; give it time to show
        // (up to 10 s: 2 s was within reach of a busy host under ASan).
        SOFTNDK_CONNECTION_INFO ci{};
        for (int i = 0; i < 500 && c->info(ci) && ci.LastTerminateSent == 0xffffffff &&
                        o.receive != STATUS_SUCCESS;
             ++i)
          std::this_thread::sleep_for(20ms);
        if (c->info(ci)) {
          o.server_crc = ci.Crc;
          o.terminate_sent = ci.LastTerminateSent;
        }
        client_done.wait(20s);
      },
      [&] {
        tools::Adapter a({link->addr_a(), crc, 0, 10});
        tools::Pd pd(a);
        tools::Cq cq(a, 64);
        tools::Qp qp(a, pd, cq, cq, nullptr, {16, 16, 0});
        tools::Buffer buf(a, pd, kLen, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        std::memset(buf.data(), kFill, kLen);
        if (!listening.wait(15s)) throw tools::ToolError("server not listening");
        std::vector<uint8_t> peer, rej;
        auto c =
            tools::Connection::connect(a, qp, sock_addr(link->addr_a(), 0),
                                       sock_addr(link->addr_b(), kPort), 4, 4, {}, &peer, &rej);
        NDK_SGE sge = buf.sge(0, kLen);
        ASSERT_EQ(qp.send(nullptr, &sge, 1, 0), STATUS_SUCCESS);
        NDK_RESULT r{};
        EXPECT_EQ(cq.wait(&r, 1, false, tools::deadline_in(15)), 1u);
        received.wait(20s);
        SOFTNDK_CONNECTION_INFO ci{};
        for (int i = 0; i < 500 && c->info(ci) && ci.LastTerminateReceived == 0xffffffff &&
                        o.receive != STATUS_SUCCESS;
             ++i)
          std::this_thread::sleep_for(20ms);
        if (c->info(ci)) {
          o.client_crc = ci.Crc;
          o.terminate_received = ci.LastTerminateReceived;
        }
        client_done.set(true);
      });
  EXPECT_EQ(link->counters().corrupted, 1u);
  return o;
}

class CrcOverCorruptingLink : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!ImpairedLink::create(1, &why)) GTEST_SKIP() << why;
  }
};

TEST_F(CrcOverCorruptingLink, CrcCatchesWhatTcpLetsThrough) {
  Outcome o = send_through_corruption(191, 1);
  EXPECT_TRUE(o.server_crc);
  EXPECT_TRUE(o.client_crc);
  EXPECT_NE(o.receive, STATUS_SUCCESS) << "a corrupted Send completed successfully";
  EXPECT_NE(o.receive, STATUS_PENDING) << "the receive never completed (no flush)";
  EXPECT_EQ(o.terminate_sent, kCrcTerminate) << std::hex << o.terminate_sent;
  EXPECT_EQ(o.terminate_received, kCrcTerminate) << std::hex << o.terminate_received;
  // The receive buffer itself may hold the flipped byte: payload is placed
  // as it arrives and the FPDU's CRC is checked at its trailer (as siw
  // does). What CRC guarantees is that the completion says so: the
  // consumer never gets those bytes as a successful receive.
}

// The library's default (no CRC flag): the two adapters are on different
// hosts as far as each can tell, so both ask for CRC and the damage is
// caught, with no switch set (docs/wire.md, "CRC by default off-host").
TEST_F(CrcOverCorruptingLink, TheDefaultCatchesItOffHost) {
  Outcome o = send_through_corruption(194, -1);
  EXPECT_TRUE(o.server_crc);
  EXPECT_TRUE(o.client_crc);
  EXPECT_NE(o.receive, STATUS_SUCCESS) << "a corrupted Send completed successfully";
  EXPECT_NE(o.receive, STATUS_PENDING);
  EXPECT_EQ(o.terminate_sent, kCrcTerminate) << std::hex << o.terminate_sent;
}

// Documents the hazard: without CRC (both adapters SOFTNDK_MPA_CRC_WHEN_ASKED,
// the old default) nothing between the two adapters sees the flipped byte;
// the consumer gets it in a successful completion.
TEST_F(CrcOverCorruptingLink, WithoutCrcTheDamageLandsSilently) {
  Outcome o = send_through_corruption(192, 0);
  EXPECT_FALSE(o.server_crc);
  EXPECT_FALSE(o.client_crc);
  EXPECT_EQ(o.receive, STATUS_SUCCESS);
  EXPECT_EQ(o.bytes, kLen);
  EXPECT_EQ(o.damaged, 1u);
  EXPECT_EQ(o.terminate_sent, 0xffffffffu);
}

}  // namespace
}  // namespace softndk::test::impair
