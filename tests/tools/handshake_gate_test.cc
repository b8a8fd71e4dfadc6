// SPDX-License-Identifier: Apache-2.0
// handshake_gate_test.cc - ndkapp's HandshakeGate: handshakes and served
// connections counted and capped apart (issue 28 item 4).
#include "ndkapp/handshake_gate.h"

#include <gtest/gtest.h>

#include <vector>

using softndk::tools::HandshakeGate;

TEST(HandshakeGate, HandshakesFillOnlyTheirOwnGroup) {
  HandshakeGate gate({2, 1, "clients", "--max-clients"});
  std::string why;
  auto a = gate.admit(&why);
  auto b = gate.admit(&why);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(gate.admit(&why));
  EXPECT_EQ(why, "already 2 connections in their handshake (--max-handshakes)");
  // A stalled handshake leaves the service slot free: the next one to
  // finish its handshake takes it.
  EXPECT_TRUE(b->serve(&why));
  EXPECT_EQ(gate.handshakes(), 1u);
  EXPECT_EQ(gate.served(), 1u);
  // Every service slot taken: new requests are refused at once...
  EXPECT_FALSE(gate.admit(&why));
  EXPECT_EQ(why, "already serving 1 clients (--max-clients)");
  // ...and one that finishes its handshake now is dropped, holding nothing.
  EXPECT_FALSE(a->serve(&why));
  EXPECT_NE(why.find("dropped after its handshake"), std::string::npos) << why;
  EXPECT_EQ(gate.handshakes(), 0u);
  EXPECT_EQ(gate.served(), 1u);
}

TEST(HandshakeGate, TicketsGiveTheirPlaceBack) {
  HandshakeGate gate({1, 0, "connections", "--max-connections"});
  std::string why;
  {
    auto t = gate.admit(&why);
    ASSERT_TRUE(t);
    EXPECT_FALSE(gate.admit(&why));
  }
  EXPECT_EQ(gate.handshakes(), 0u);
  std::vector<HandshakeGate::Ticket> served;
  for (int i = 0; i < 100; ++i) {  // max_served 0: no cap
    auto t = gate.admit(&why);
    ASSERT_TRUE(t) << why;
    ASSERT_TRUE(t->serve(&why)) << why;
    served.push_back(std::move(*t));
  }
  EXPECT_EQ(gate.served(), 100u);
  served.front().release();
  EXPECT_EQ(gate.served(), 99u);
  served.clear();
  EXPECT_EQ(gate.served(), 0u);
  EXPECT_EQ(gate.handshakes(), 0u);
}

// A ticket that outlives its gate (a worker still running at the server's
// exit) stays safe.
TEST(HandshakeGate, TicketOutlivesGate) {
  std::optional<HandshakeGate::Ticket> t;
  {
    HandshakeGate gate({4, 4, "clients", "--max-clients"});
    t = gate.admit(nullptr);
    ASSERT_TRUE(t);
  }
  std::string why;
  EXPECT_TRUE(t->serve(&why));
  t.reset();
}
