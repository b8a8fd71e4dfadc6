// SPDX-License-Identifier: Apache-2.0
// endpoint_test.cc - shared endpoints (address checks, ports), connectors and
// listeners as objects.
#include <arpa/inet.h>

#include <cstring>

#include "ndk_fixture.h"

namespace ndktest {
namespace {

using Endpoint = NdkTest;

// 127.0.0.1 stands for the suite's address (SOFTNDK_TEST_IP, ndk_fixture.h).
sockaddr_in v4(const char* ip, uint16_t port) {
  if (std::strcmp(ip, "127.0.0.1") == 0) ip = test_ip();
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_port = htons(port);
  inet_pton(AF_INET, ip, &s.sin_addr);
  return s;
}

NTSTATUS create_se(NDK_ADAPTER* a, const sockaddr_in& s, NDK_SHARED_ENDPOINT** out) {
  return a->Dispatch->NdkCreateSharedEndpoint(a, reinterpret_cast<const SOCKADDR*>(&s), sizeof s,
                                              nullptr, nullptr, out);
}

TEST_F(Endpoint, EphemeralPortAndLocalAddress) {
  NDK_SHARED_ENDPOINT* se = nullptr;
  ASSERT_EQ(create_se(a_, v4("127.0.0.1", 0), &se), STATUS_SUCCESS);
  sockaddr_in got{};
  ULONG len = 4;
  EXPECT_EQ(se->Dispatch->NdkGetLocalAddress(se, reinterpret_cast<SOCKADDR*>(&got), &len),
            STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, sizeof(sockaddr_in));
  ASSERT_EQ(se->Dispatch->NdkGetLocalAddress(se, reinterpret_cast<SOCKADDR*>(&got), &len),
            STATUS_SUCCESS);
  EXPECT_NE(got.sin_port, 0);
  EXPECT_EQ(got.sin_addr.s_addr, v4("127.0.0.1", 0).sin_addr.s_addr);  // the suite's address
}

TEST_F(Endpoint, AddressInUseIsSharingViolation) {
  NDK_SHARED_ENDPOINT* se = nullptr;
  ASSERT_EQ(create_se(a_, v4("127.0.0.1", 0), &se), STATUS_SUCCESS);
  sockaddr_in got{};
  ULONG len = sizeof got;
  ASSERT_EQ(se->Dispatch->NdkGetLocalAddress(se, reinterpret_cast<SOCKADDR*>(&got), &len),
            STATUS_SUCCESS);
  NDK_SHARED_ENDPOINT* se2 = nullptr;
  EXPECT_EQ(create_se(a_, got, &se2), STATUS_SHARING_VIOLATION);
  // Free again once closed.
  ASSERT_EQ(close(se), STATUS_SUCCESS);
  EXPECT_EQ(create_se(a_, got, &se2), STATUS_SUCCESS);
}

TEST_F(Endpoint, ForeignAddressIsInvalidAddress) {
  NDK_SHARED_ENDPOINT* se = nullptr;
  EXPECT_EQ(create_se(a_, v4("192.0.2.1", 0), &se), STATUS_INVALID_ADDRESS);
  EXPECT_EQ(create_se(a_, v4("127.0.0.2", 0), &se), STATUS_INVALID_ADDRESS);
}

TEST_F(Endpoint, BadSockaddrIsInvalidParameter) {
  NDK_SHARED_ENDPOINT* se = nullptr;
  auto s = v4("127.0.0.1", 0);
  EXPECT_EQ(a_->Dispatch->NdkCreateSharedEndpoint(a_, reinterpret_cast<SOCKADDR*>(&s), 4, nullptr,
                                                  nullptr, &se),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(a_->Dispatch->NdkCreateSharedEndpoint(a_, nullptr, 16, nullptr, nullptr, &se),
            STATUS_INVALID_PARAMETER);
  s.sin_family = AF_UNIX;
  EXPECT_EQ(create_se(a_, s, &se), STATUS_INVALID_PARAMETER);
}

TEST_F(Endpoint, IdleConnectorAndListenerObjects) {
  NDK_CONNECTOR* c = nullptr;
  ASSERT_EQ(a_->Dispatch->NdkCreateConnector(a_, nullptr, nullptr, &c), STATUS_SUCCESS);
  EXPECT_EQ(c->Dispatch->NdkDisconnect(c, nullptr, nullptr), STATUS_CONNECTION_INVALID);
  NDK_LISTENER* l = nullptr;
  EXPECT_EQ(a_->Dispatch->NdkCreateListener(a_, nullptr, nullptr, nullptr, nullptr, &l),
            STATUS_INVALID_PARAMETER);  // a listener needs its connect-event callback
  ASSERT_EQ(a_->Dispatch->NdkCreateListener(
                a_, [](PVOID, NDK_CONNECTOR*) {}, nullptr, nullptr, nullptr, &l),
            STATUS_SUCCESS);
  l->Dispatch->NdkControlConnectEvents(l, TRUE);
  EXPECT_EQ(close(l), STATUS_SUCCESS);
  EXPECT_EQ(close(c), STATUS_SUCCESS);
}

TEST_F(Endpoint, ConnectorCap) {
  auto pp = params();
  pp.MaxConnectorCount = 1;
  SoftNdkCloseAdapter(a_);
  ASSERT_EQ(SoftNdkOpenAdapter(test_adapter(), kVersion, &pp, &a_), STATUS_SUCCESS);
  NDK_CONNECTOR* c = nullptr;
  ASSERT_EQ(a_->Dispatch->NdkCreateConnector(a_, nullptr, nullptr, &c), STATUS_SUCCESS);
  EXPECT_EQ(a_->Dispatch->NdkCreateConnector(a_, nullptr, nullptr, &c),
            STATUS_INSUFFICIENT_RESOURCES);
}

}  // namespace
}  // namespace ndktest
