// SPDX-License-Identifier: Apache-2.0
// path_test.cc - SoftNdkQueryConnectionPath and SOFTNDK_SAMEHOST through the
// public C ABI (docs/samehost.md): two adapter instances on lo, each opened
// with its own SOFTNDK_SAMEHOST, connected by NdkConnect/NdkAccept.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "ends.h"
#include "util/samehost_env.h"

namespace connector_test {
namespace {

using softndk_test::SamehostEnv;

class PathTest : public EndsTest {
 protected:
  NDK_ADAPTER* open_with(const char* samehost) {
    SamehostEnv env(samehost);
    return open();
  }
  // The path once the rendezvous has decided (it gives up after 2 s).
  static SOFTNDK_PATH_INFO settled(NDK_CONNECTOR* c) {
    SOFTNDK_PATH_INFO p{};
    auto deadline = std::chrono::steady_clock::now() + 4s;
    do {
      p = SOFTNDK_PATH_INFO{};
      p.Size = sizeof p;
      EXPECT_EQ(SoftNdkQueryConnectionPath(c, &p), STATUS_SUCCESS);
      if (p.Path != SOFTNDK_PATH_PROBING) break;
      std::this_thread::sleep_for(1ms);
    } while (std::chrono::steady_clock::now() < deadline);
    return p;
  }
  static bool adapter_samehost(NDK_ADAPTER* a) {
    alignas(SOFTNDK_ADAPTER_ATTR) unsigned char buf[offsetof(SOFTNDK_ADAPTER_ATTR, Ports)] = {};
    SOFTNDK_REQUEST req{};
    NTSTATUS st =
        SoftNdkQueryAdapter(a, sizeof buf, reinterpret_cast<SOFTNDK_ADAPTER_ATTR*>(buf), &req);
    EXPECT_TRUE(st == STATUS_SUCCESS || st == STATUS_BUFFER_OVERFLOW);
    return (reinterpret_cast<SOFTNDK_ADAPTER_ATTR*>(buf)->Flags & SOFTNDK_ADAPTER_SAMEHOST) != 0;
  }
  // A 32 KiB Write from a into b (large enough for the fast path), then a
  // Send behind it: the Write's bytes are in place when the Send arrives.
  void big_write(End& a, End& b) {
    for (size_t i = 0; i < 32768; ++i) a.mem[i] = static_cast<uint8_t>(i * 7 + 1);
    NDK_SGE w = a.sge(0, 32768);
    ASSERT_EQ(
        a.qp->Dispatch->NdkWrite(a.qp, nullptr, &w, 1,
                                 reinterpret_cast<uintptr_t>(b.mem.data()) + 32768, b.token, 0),
        STATUS_SUCCESS);
    NDK_SGE r = b.sge(0, 16), s = a.sge(40000, 16);
    ASSERT_EQ(b.qp->Dispatch->NdkReceive(b.qp, nullptr, &r, 1), STATUS_SUCCESS);
    ASSERT_EQ(a.qp->Dispatch->NdkSend(a.qp, nullptr, &s, 1, 0), STATUS_SUCCESS);
    auto x = poll(a.cq, 2), y = poll(b.cq, 1);
    ASSERT_EQ(x.size(), 2u);
    ASSERT_EQ(y.size(), 1u);
    for (auto& e : x) EXPECT_EQ(e.Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(a.mem.data(), b.mem.data() + 32768, 32768), 0);
  }
};

TEST_F(PathTest, SameHostPeersReportTheFastPath) {
  NDK_ADAPTER* pa = open_with("on");
  NDK_ADAPTER* pb = open_with("on");
  EXPECT_TRUE(adapter_samehost(pa));
  End c, s;
  make(c, pa, pa);
  make(s, pb, pb);
  c.conn = connector(pa);
  NDK_CONNECTOR* idle = connector(pa);
  SOFTNDK_PATH_INFO p{};
  p.Size = sizeof p;
  EXPECT_EQ(SoftNdkQueryConnectionPath(idle, &p), STATUS_CONNECTION_INVALID);
  EXPECT_EQ(close_object(idle), STATUS_SUCCESS);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(pb, in, &port);
  establish(c, s, in, port);
  SOFTNDK_PATH_INFO pc = settled(c.conn), ps = settled(s.conn);
  EXPECT_EQ(pc.Path, static_cast<ULONG>(SOFTNDK_PATH_SAMEHOST));
  EXPECT_EQ(ps.Path, static_cast<ULONG>(SOFTNDK_PATH_SAMEHOST));
  EXPECT_EQ(pc.Reason, static_cast<ULONG>(SOFTNDK_PATH_REASON_NONE));
  EXPECT_EQ(pc.PeerPid, static_cast<ULONG>(::getpid()));
  EXPECT_TRUE(pc.PullFromPeer && pc.PeerPulls);
  EXPECT_STREQ(SoftNdkPathName(pc.Path), "samehost");
  big_write(c, s);
  ps = settled(s.conn);
  pc = settled(c.conn);
  EXPECT_EQ(ps.PulledOctets, 32768u);
  EXPECT_EQ(ps.PulledMessages, 1u);
  EXPECT_EQ(pc.DescriptorsSent, 1u);
  SOFTNDK_PATH_INFO small{};
  small.Size = SOFTNDK_PATH_INFO_V1_SIZE - 1;
  EXPECT_EQ(SoftNdkQueryConnectionPath(c.conn, &small), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(small.Path, 0u);
  // A caller built before the Mapped/Cma fields: its bytes only.
  SOFTNDK_PATH_INFO old;
  std::memset(&old, 0xEE, sizeof old);
  old.Size = SOFTNDK_PATH_INFO_V1_SIZE;
  EXPECT_EQ(SoftNdkQueryConnectionPath(c.conn, &old), STATUS_SUCCESS);
  EXPECT_EQ(old.Path, static_cast<ULONG>(SOFTNDK_PATH_SAMEHOST));
  EXPECT_EQ(old.DescriptorsSent, 1u);
  EXPECT_EQ(old.MappedOctets, 0xEEEEEEEEEEEEEEEEull);  // not written
  EXPECT_EQ(SoftNdkQueryConnectionPath(c.conn, nullptr), STATUS_INVALID_PARAMETER);
  close_end(c);
  close_end(s);
  EXPECT_EQ(close_object(l), STATUS_SUCCESS);
}

TEST_F(PathTest, SwitchedOffSideKeepsTcpAndSaysWhy) {
  NDK_ADAPTER* pa = open_with("on");
  NDK_ADAPTER* pb = open_with("off");
  EXPECT_FALSE(adapter_samehost(pb));
  End c, s;
  make(c, pa, pa);
  make(s, pb, pb);
  c.conn = connector(pa);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(pb, in, &port);
  establish(c, s, in, port);
  big_write(c, s);  // works while the initiator still probes
  SOFTNDK_PATH_INFO pc = settled(c.conn), ps = settled(s.conn);
  EXPECT_EQ(pc.Path, static_cast<ULONG>(SOFTNDK_PATH_TCP));
  EXPECT_EQ(pc.Reason, static_cast<ULONG>(SOFTNDK_PATH_REASON_NO_PEER));
  EXPECT_EQ(ps.Path, static_cast<ULONG>(SOFTNDK_PATH_TCP));
  EXPECT_EQ(ps.Reason, static_cast<ULONG>(SOFTNDK_PATH_REASON_DISABLED));
  EXPECT_STREQ(SoftNdkPathReasonName(ps.Reason), "disabled");
  EXPECT_EQ(ps.PulledOctets + pc.PulledOctets + pc.DescriptorsSent, 0u);
  big_write(c, s);
  close_end(c);
  close_end(s);
  EXPECT_EQ(close_object(l), STATUS_SUCCESS);
}

// The fast path is on unless SOFTNDK_SAMEHOST says "off" or "0"; unset or
// empty is the default (docs/samehost.md).
TEST_F(PathTest, OnUnlessSwitchedOff) {
  SamehostEnv env("on");
  ::unsetenv("SOFTNDK_SAMEHOST");
  EXPECT_TRUE(adapter_samehost(open()));
  for (const char* v : {"", "on", "1"}) {
    ::setenv("SOFTNDK_SAMEHOST", v, 1);
    EXPECT_TRUE(adapter_samehost(open())) << '"' << v << '"';
  }
  for (const char* v : {"off", "0"}) {
    ::setenv("SOFTNDK_SAMEHOST", v, 1);
    EXPECT_FALSE(adapter_samehost(open())) << v;
  }
}

TEST_F(PathTest, UnknownSettingFailsTheOpen) {
  SamehostEnv env("maybe");
  NDK_ADAPTER* a = nullptr;
  EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, nullptr, &a), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(a, nullptr);
  EXPECT_EQ(SoftNdkPathName(7), nullptr);
  EXPECT_EQ(SoftNdkPathReasonName(99), nullptr);
}

}  // namespace
}  // namespace connector_test
