// SPDX-License-Identifier: Apache-2.0
// netns_test.cc - connect outcomes that need real routing, between network
// namespaces the test creates: no route -> NETWORK_UNREACHABLE, nobody at
// the address on the link -> HOST_UNREACHABLE, a link that drops every
// packet -> IO_TIMEOUT, plus a positive control across the veth.
#include "util/netns.h"

#include <gtest/gtest.h>

#include "conn_test_util.h"
#include "tcp/status.h"
#include "transport/tcp/connector.h"
#include "transport/tcp/listener.h"

namespace softndk::tcp::test {
namespace {

namespace ns = softndk::test::netns;

// Two namespaces joined by a veth: a is 10.N.0.1/24, b is 10.N.0.2/24 (or
// has no address, for a link where nobody answers).
struct Linked {
  ns::NetNs a, b;
  ns::Veth v{a, b};
  bool up(int n, bool b_addr = true) {
    const std::string net = "10." + std::to_string(n) + ".0.";
    return a.ok() && b.ok() && v.ok() && v.addr_a(net + "1/24") &&
           (!b_addr || v.addr_b(net + "2/24"));
  }
};

class NetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ns::available()) GTEST_SKIP() << "needs root/CAP_NET_ADMIN, ip and tc";
    settings_.connect_timeout = 8000ms;
  }

  // Starts a connect from inside `from` (the socket is created there) and
  // waits for the result.
  ConnectResult connect_from(const ns::NetNs& from, const SockAddr& dst, const SockAddr& src = {}) {
    Slot<ConnectResult> done;
    NTSTATUS st = STATUS_INTERNAL_ERROR;
    EXPECT_TRUE(from.run([&] {
      ConnectArgs a;
      a.src = src;
      a.dst = dst;
      st = ActiveConnect::start(engine_.pick(), settings_, a,
                                [&done](ConnectResult r) { done.set(std::move(r)); });
    }));
    if (st != STATUS_PENDING) {
      ConnectResult r;
      r.status = st;
      return r;
    }
    auto r = done.wait(15000ms);
    EXPECT_TRUE(r.has_value());
    return r ? std::move(*r) : ConnectResult{};
  }

  Engine engine_{1};
  ConnSettings settings_;
};

TEST_F(NetnsTest, NoRouteIsNetworkUnreachable) {
  ns::NetNs a;  // only lo, no routes at all
  ASSERT_TRUE(a.ok());
  auto r = connect_from(a, *SockAddr::parse("10.255.0.1", 4791));
  EXPECT_EQ(r.status, STATUS_NETWORK_UNREACHABLE) << status_name(r.status);
}

// A socket bound to 127.0.0.1 cannot leave the host: the kernel refuses the
// connect() itself (EINVAL from the route lookup, no packet sent). That is
// an unreachable network to the caller, not a bad parameter.
TEST_F(NetnsTest, LoopbackSourceToOutsideHostIsNetworkUnreachable) {
  Linked net;
  ASSERT_TRUE(net.up(204));
  auto& [a, b, v] = net;
  auto r = connect_from(a, *SockAddr::parse("10.204.0.2", 4791), *SockAddr::parse("127.0.0.1", 0));
  EXPECT_EQ(r.status, STATUS_NETWORK_UNREACHABLE) << status_name(r.status);
}

TEST_F(NetnsTest, NobodyOnTheLinkIsHostUnreachable) {
  Linked net;
  ASSERT_TRUE(net.up(201, false));
  auto& [a, b, v] = net;
  // 10.201.0.2 is on the subnet but nobody has it: ARP fails (~3 s).
  auto t0 = std::chrono::steady_clock::now();
  auto r = connect_from(a, *SockAddr::parse("10.201.0.2", 4791));
  EXPECT_EQ(r.status, STATUS_HOST_UNREACHABLE) << status_name(r.status);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 8000ms);
}

TEST_F(NetnsTest, SilentLinkIsIoTimeout) {
  Linked net;
  ASSERT_TRUE(net.up(202));
  auto& [a, b, v] = net;
  // 10.202.0.9 resolves (permanent neighbour) to a MAC nobody has: the SYN
  // reaches b's end and is dropped there, never answered; our deadline
  // decides. (tc netem loss 100% would do too where sch_netem exists.)
  ASSERT_TRUE(v.silent_peer_a("10.202.0.9"));
  settings_.connect_timeout = 700ms;
  auto t0 = std::chrono::steady_clock::now();
  auto r = connect_from(a, *SockAddr::parse("10.202.0.9", 4791));
  auto dt = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.status, STATUS_IO_TIMEOUT) << status_name(r.status);
  EXPECT_GE(dt, 600ms);
  EXPECT_LT(dt, 3000ms);
}

TEST_F(NetnsTest, ConnectAcrossVethWorks) {
  Linked net;
  ASSERT_TRUE(net.up(203));
  auto& [a, b, v] = net;
  std::shared_ptr<Listener> l;
  Slot<NTSTATUS> accepted;
  ASSERT_TRUE(b.run([&] {
    ASSERT_EQ(Listener::create(
                  engine_, settings_, *SockAddr::parse("10.203.0.2", 0), 8,
                  [&](std::shared_ptr<PendingConnection> p) {
                    p->accept(2, 2, {}, [&](NTSTATUS s, std::shared_ptr<Connection> c) {
                      accepted.set(s);
                      if (c) c->abort();
                    });
                  },
                  &l),
              STATUS_SUCCESS);
  }));
  auto r = connect_from(a, l->local());
  EXPECT_EQ(r.status, STATUS_SUCCESS) << status_name(r.status);
  EXPECT_EQ(accepted.wait().value_or(-1), STATUS_SUCCESS);
  if (r.connection) r.connection->abort();
  l->close();
}

// TCP congestion control per connection (ConnSettings::congestion). The
// namespace's default is set to reno, which no rule picks, so every outcome
// below is visible whatever this machine's own default is.
class CongestionTest : public NetnsTest {
 protected:
  // Connects from `from` to a listener in `to` at `ip` and returns the
  // algorithm of each end's socket.
  std::pair<std::string, std::string> algorithms(const ns::NetNs& from, const ns::NetNs& to,
                                                 const std::string& ip) {
    std::shared_ptr<Listener> l;
    Slot<std::string> server;
    EXPECT_TRUE(to.run([&] {
      ASSERT_EQ(Listener::create(
                    engine_, settings_, *SockAddr::parse(ip, 0), 8,
                    [&](std::shared_ptr<PendingConnection> p) {
                      p->accept(2, 2, {}, [&](NTSTATUS, std::shared_ptr<Connection> c) {
                        server.set(c ? congestion_of(c->fd()) : "none");
                        if (c) c->abort();
                      });
                    },
                    &l),
                STATUS_SUCCESS);
    }));
    if (!l) return {};
    auto r = connect_from(from, l->local());
    EXPECT_EQ(r.status, STATUS_SUCCESS) << status_name(r.status);
    std::string client = r.connection ? congestion_of(r.connection->fd()) : "none";
    std::string srv = server.wait().value_or("timeout");
    if (r.connection) r.connection->abort();
    l->close();
    return {client, srv};
  }
  static bool default_to_reno(const ns::NetNs& n) {
    return ns::sh(n.exec("sysctl -qw net.ipv4.tcp_congestion_control=reno")) == 0;
  }
};

TEST_F(CongestionTest, HostLocalConnectionsAvoidThePacingDefault) {
  ns::NetNs a;
  ASSERT_TRUE(a.ok());
  if (!default_to_reno(a)) GTEST_SKIP() << "no per-namespace congestion default";
  if (!congestion_allowed(kLocalCongestion)) GTEST_SKIP() << kLocalCongestion << " not allowed";
  // Automatic: loopback gets kLocalCongestion on both ends.
  auto [c, s] = algorithms(a, a, "127.0.0.1");
  EXPECT_EQ(c, kLocalCongestion);
  EXPECT_EQ(s, kLocalCongestion);
  // "system": the namespace's default stays.
  settings_.congestion = "system";
  std::tie(c, s) = algorithms(a, a, "127.0.0.1");
  EXPECT_EQ(c, "reno");
  EXPECT_EQ(s, "reno");
}

TEST_F(CongestionTest, OtherHostsKeepTheDefaultUnlessNamed) {
  Linked net;
  ASSERT_TRUE(net.up(205));
  auto& [a, b, v] = net;
  if (!default_to_reno(a) || !default_to_reno(b)) GTEST_SKIP() << "no per-namespace default";
  // Automatic, across the veth: the system's choice.
  auto [c, s] = algorithms(a, b, "10.205.0.2");
  EXPECT_EQ(c, "reno");
  EXPECT_EQ(s, "reno");
  // A name: on every connection, both ends.
  if (!congestion_allowed(kLocalCongestion)) GTEST_SKIP() << kLocalCongestion << " not allowed";
  settings_.congestion = kLocalCongestion;
  std::tie(c, s) = algorithms(a, b, "10.205.0.2");
  EXPECT_EQ(c, kLocalCongestion);
  EXPECT_EQ(s, kLocalCongestion);
}

TEST(Congestion, PolicyNamesAreCheckedAgainstTheKernel) {
  EXPECT_TRUE(congestion_allowed(""));
  EXPECT_TRUE(congestion_allowed("system"));
  EXPECT_TRUE(congestion_allowed("reno"));  // always built in
  EXPECT_FALSE(congestion_allowed("no-such-algorithm"));
}

TEST(Congestion, HostLocalMeansLoopbackOrOurOwnAddress) {
  EXPECT_TRUE(SockAddr::parse("127.0.0.1", 1)->is_loopback());
  EXPECT_TRUE(SockAddr::parse("127.5.6.7", 1)->is_loopback());
  EXPECT_TRUE(SockAddr::parse("::1", 1)->is_loopback());
  EXPECT_TRUE(SockAddr::parse("::ffff:127.0.0.2", 1)->is_loopback());
  EXPECT_FALSE(SockAddr::parse("10.0.0.1", 1)->is_loopback());
  EXPECT_FALSE(SockAddr::parse("::ffff:10.0.0.1", 1)->is_loopback());
  EXPECT_FALSE(SockAddr::parse("128.0.0.1", 1)->is_loopback());
  EXPECT_TRUE(SockAddr::parse("10.0.0.1", 1)->same_host(*SockAddr::parse("10.0.0.1", 2)));
  EXPECT_FALSE(SockAddr::parse("10.0.0.1", 1)->same_host(*SockAddr::parse("10.0.0.2", 1)));
  EXPECT_FALSE(SockAddr::parse("::1", 1)->same_host(*SockAddr::parse("127.0.0.1", 1)));
}

}  // namespace
}  // namespace softndk::tcp::test

namespace softndk::tcp::test {
namespace {

namespace ns = softndk::test::netns;

// MPA CRC by default where the bytes leave the host (ConnSettings::
// crc_off_host, docs/wire.md). The engine is started inside `a`, so its
// reactors see a's addresses when they decide about an accepted peer, as an
// adapter opened in a namespace does.
class CrcDefaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ns::available()) GTEST_SKIP() << "needs root/CAP_NET_ADMIN, ip and tc";
    settings_.connect_timeout = 8000ms;
    settings_.crc_off_host = true;
    client_ = settings_;
  }
  // The CRC outcome on both ends of a connection from `from` (socket made
  // there, bound to `src` if given, client_ settings) to a listener made in
  // `to` on `ip` (settings_).
  std::pair<bool, bool> crc(Engine& engine, const ns::NetNs& from, const ns::NetNs& to,
                            const std::string& ip, const std::string& src = "") {
    std::shared_ptr<Listener> l;
    Slot<bool> server;
    EXPECT_TRUE(to.run([&] {
      ASSERT_EQ(Listener::create(
                    engine, settings_, *SockAddr::parse(ip, 0), 8,
                    [&](std::shared_ptr<PendingConnection> p) {
                      p->accept(2, 2, {}, [&](NTSTATUS, std::shared_ptr<Connection> c) {
                        server.set(c && c->params().crc);
                        if (c) c->abort();
                      });
                    },
                    &l),
                STATUS_SUCCESS);
    }));
    if (!l) return {};
    Slot<ConnectResult> done;
    EXPECT_TRUE(from.run([&] {
      ConnectArgs a;
      a.dst = l->local();
      if (!src.empty()) a.src = *SockAddr::parse(src, 0);
      EXPECT_EQ(ActiveConnect::start(engine.pick(), client_, a,
                                     [&done](ConnectResult r) { done.set(std::move(r)); }),
                STATUS_PENDING);
    }));
    auto r = done.wait(15000ms);
    EXPECT_TRUE(r && r->status == STATUS_SUCCESS);
    const bool client = r && r->connection && r->connection->params().crc;
    const bool srv = server.wait().value_or(false);
    if (r && r->connection) r->connection->abort();
    l->close();
    return {client, srv};
  }
  ConnSettings settings_;  // the listener's
  ConnSettings client_;    // the initiator's
};

TEST_F(CrcDefaultTest, OnWhereTheBytesLeaveTheHostOffWhereTheyDoNot) {
  ns::NetNs a, b;
  ns::Veth v(a, b);
  ASSERT_TRUE(a.ok() && b.ok() && v.ok() && v.addr_a("10.206.0.1/24") &&
              v.addr_b("10.206.0.2/24") && v.addr_a("10.206.0.3/24"));
  std::unique_ptr<Engine> ea, eb;
  ASSERT_TRUE(a.run([&] { ea = std::make_unique<Engine>(1); }));
  ASSERT_TRUE(b.run([&] { eb = std::make_unique<Engine>(1); }));
  // Across the veth: both ends ask (C=1 in Request and Reply).
  EXPECT_EQ(crc(*eb, a, b, "10.206.0.2"), std::make_pair(true, true));
  // Loopback, and a's own addresses (to itself, and from one to another):
  // no wire, no CRC.
  EXPECT_EQ(crc(*ea, a, a, "127.0.0.1"), std::make_pair(false, false));
  EXPECT_EQ(crc(*ea, a, a, "10.206.0.1"), std::make_pair(false, false));
  EXPECT_EQ(crc(*ea, a, a, "10.206.0.3", "10.206.0.1"), std::make_pair(false, false));
  // The old rule (crc_off_host off): only when asked.
  settings_.crc_off_host = client_.crc_off_host = false;
  EXPECT_EQ(crc(*eb, a, b, "10.206.0.2"), std::make_pair(false, false));
  // One side asking is enough, either side (RFC 5044: either C).
  client_.crc_off_host = false;
  settings_.crc_off_host = true;
  EXPECT_EQ(crc(*eb, a, b, "10.206.0.2"), std::make_pair(true, true));
  client_.crc_off_host = true;
  settings_.crc_off_host = false;
  EXPECT_EQ(crc(*eb, a, b, "10.206.0.2"), std::make_pair(true, true));
}

TEST(HostLocal, OwnAddressesAreLocal) {
  EXPECT_TRUE(is_local_address(*SockAddr::parse("127.0.0.1", 1)));
  EXPECT_TRUE(is_local_address(*SockAddr::parse("127.9.9.9", 1)));
  EXPECT_TRUE(is_local_address(*SockAddr::parse("::1", 1)));
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never on an interface here.
  EXPECT_FALSE(is_local_address(*SockAddr::parse("192.0.2.77", 1)));
  EXPECT_FALSE(is_local_address(SockAddr{}));
  if (!ns::available()) GTEST_SKIP() << "needs root for the namespace part";
  ns::NetNs a, b;
  ns::Veth v(a, b);
  ASSERT_TRUE(a.ok() && b.ok() && v.ok() && v.addr_a("10.207.0.1/24") && v.addr_b("10.207.0.2/24"));
  bool own = false, mapped = false, other = true;
  ASSERT_TRUE(a.run([&] {
    own = is_local_address(*SockAddr::parse("10.207.0.1", 1));
    mapped = is_local_address(*SockAddr::parse("::ffff:10.207.0.1", 1));
    other = is_local_address(*SockAddr::parse("10.207.0.2", 1));
  }));
  EXPECT_TRUE(own);
  EXPECT_TRUE(mapped);
  EXPECT_FALSE(other);
}

}  // namespace
}  // namespace softndk::tcp::test
