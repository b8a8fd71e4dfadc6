// SPDX-License-Identifier: Apache-2.0
// irql_test.cc - the NDK side of the IRQL emulation: provider callbacks run
// at DISPATCH_LEVEL, and calls above a function's documented IRQL are
// reported (each rule provoked by a deliberately wrong consumer snippet,
// wrong_consumer.c).
#include <arpa/inet.h>
#include <softndk/softndk.h>

#include <atomic>

#include "kit_fixture.h"
#include "wrong_consumer.h"

namespace wdknet {
namespace {

using NdkIrql = KitTest;

struct Probe : WRONG_IRQL_PROBE {
  Probe() {
    Irql = 0xff;
    Calls = 0;
    KeInitializeEvent(&Done, NotificationEvent, FALSE);
  }
  // The event orders the callback's writes before the test's reads.
  bool wait() {
    LARGE_INTEGER timeout;
    timeout.QuadPart = -10000LL * 5000;
    return KeWaitForSingleObject(&Done, Executive, KernelMode, FALSE, &timeout) == STATUS_SUCCESS;
  }
};

// A request's completion, waited for at PASSIVE_LEVEL.
struct Request {
  std::atomic<NTSTATUS> status{STATUS_PENDING};
  static void done(PVOID ctx, NTSTATUS st) { static_cast<Request*>(ctx)->status = st; }
  NTSTATUS finish(NTSTATUS st) {
    if (st != STATUS_PENDING) return st;
    eventually([&] { return status.load() != STATUS_PENDING; }, 10000);
    return status.load();
  }
};

sockaddr_in loopback(USHORT port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// A create completion that also keeps the object it was handed.
struct Created : Probe {
  std::atomic<NDK_OBJECT_HEADER*> obj{nullptr};
  static void done(PVOID ctx, NTSTATUS st, NDK_OBJECT_HEADER* o) {
    static_cast<Created*>(ctx)->obj = o;
    ProbeCreateCompletion(ctx, st, o);
  }
};

TEST_F(NdkIrql, CreateAndCloseCompletionsRunAtDispatch) {
  NDK_ADAPTER* a = open_lo(SOFTNDK_OPEN_FLAG_ASYNC_CREATE | SOFTNDK_OPEN_FLAG_ASYNC_CLOSE);
  ASSERT_NE(a, nullptr);
  Created pd_created, cq_created;
  NDK_PD* pd = nullptr;
  NDK_CQ* cq = nullptr;
  ASSERT_EQ(a->Dispatch->NdkCreatePd(a, Created::done, &pd_created, &pd), STATUS_PENDING);
  ASSERT_EQ(
      a->Dispatch->NdkCreateCq(a, 8, nullptr, nullptr, nullptr, Created::done, &cq_created, &cq),
      STATUS_PENDING);
  ASSERT_TRUE(pd_created.wait() && cq_created.wait());
  EXPECT_EQ(pd_created.Irql, DISPATCH_LEVEL);
  EXPECT_EQ(cq_created.Irql, DISPATCH_LEVEL);
  pd = reinterpret_cast<NDK_PD*>(pd_created.obj.load());
  cq = reinterpret_cast<NDK_CQ*>(cq_created.obj.load());
  ASSERT_TRUE(pd != nullptr && cq != nullptr);

  // An object handed over in a completion goes through the kit too: its
  // calls are checked.
  WrongArmCqAtHighLevel(cq);
  EXPECT_EQ(reports(SoftNdkWdkRuleIrqlTooHigh), 1u);

  Probe cq_closed, pd_closed;
  ASSERT_EQ(cq->Dispatch->NdkCloseCq(&cq->Header, ProbeCloseCompletion, &cq_closed),
            STATUS_PENDING);
  ASSERT_EQ(pd->Dispatch->NdkClosePd(&pd->Header, ProbeCloseCompletion, &pd_closed),
            STATUS_PENDING);
  ASSERT_TRUE(cq_closed.wait() && pd_closed.wait());
  EXPECT_EQ(cq_closed.Irql, DISPATCH_LEVEL);
  EXPECT_EQ(pd_closed.Irql, DISPATCH_LEVEL);
  EXPECT_EQ(KeGetCurrentIrql(), PASSIVE_LEVEL);  // the test thread never moved
}

TEST_F(NdkIrql, CqNotificationRunsAtDispatch) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  Probe notified;
  NDK_CQ* cq = make_cq(a, ProbeCqNotification, &notified);
  NDK_PD* pd = make_pd(a);
  NDK_QP* qp = make_qp(pd, cq);
  ASSERT_TRUE(cq && pd && qp);
  UCHAR buf[64];
  UINT32 token = 0;
  pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(pd, &token);
  NDK_SGE sge{};
  sge.VirtualAddress = buf;
  sge.Length = sizeof buf;
  sge.MemoryRegionToken = token;
  ASSERT_EQ(qp->Dispatch->NdkReceive(qp, buf, &sge, 1), STATUS_SUCCESS);
  cq->Dispatch->NdkArmCq(cq, NDK_CQ_NOTIFY_ANY);
  qp->Dispatch->NdkFlush(qp);  // the receive completes (flushed) and notifies
  ASSERT_TRUE(notified.wait());
  EXPECT_EQ(notified.Irql, DISPATCH_LEVEL);
  NDK_RESULT r{};
  EXPECT_EQ(cq->Dispatch->NdkGetCqResults(cq, &r, 1), 1u);
  EXPECT_EQ(r.RequestContext, buf);
  close(qp);
  close(pd);
  close(cq);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
}

TEST_F(NdkIrql, ConnectAndDisconnectEventsAndRequestCompletionsRunAtDispatch) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  NDK_CQ* cq = make_cq(a);
  NDK_PD* pd = make_pd(a);
  NDK_QP* server_qp = make_qp(pd, cq);
  NDK_QP* client_qp = make_qp(pd, cq);
  ASSERT_TRUE(cq && pd && server_qp && client_qp);

  struct Incoming {
    std::atomic<NDK_CONNECTOR*> connector{nullptr};
    std::atomic<int> irql{-1};
  } incoming;
  NDK_LISTENER* l = nullptr;
  ASSERT_EQ(a->Dispatch->NdkCreateListener(
                a,
                [](PVOID ctx, NDK_CONNECTOR* c) {
                  auto* in = static_cast<Incoming*>(ctx);
                  in->irql = KeGetCurrentIrql();
                  in->connector = c;
                },
                &incoming, nullptr, nullptr, &l),
            STATUS_SUCCESS);
  sockaddr_in any = loopback(0);
  Request listen;
  ASSERT_EQ(listen.finish(l->Dispatch->NdkListen(l, reinterpret_cast<SOCKADDR*>(&any), sizeof any,
                                                 Request::done, &listen)),
            STATUS_SUCCESS);
  sockaddr_in bound{};
  ULONG len = sizeof bound;
  ASSERT_EQ(l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<SOCKADDR*>(&bound), &len),
            STATUS_SUCCESS);

  NDK_CONNECTOR* client = nullptr;
  ASSERT_EQ(a->Dispatch->NdkCreateConnector(a, nullptr, nullptr, &client), STATUS_SUCCESS);
  sockaddr_in src = loopback(0);
  Probe connected;
  NTSTATUS st =
      client->Dispatch->NdkConnect(client, client_qp, reinterpret_cast<SOCKADDR*>(&src), sizeof src,
                                   reinterpret_cast<SOCKADDR*>(&bound), sizeof bound, 1, 1, nullptr,
                                   0, ProbeRequestCompletion, &connected);
  ASSERT_EQ(st, STATUS_PENDING);
  ASSERT_TRUE(eventually([&] { return incoming.connector.load() != nullptr; }));
  EXPECT_EQ(incoming.irql.load(), DISPATCH_LEVEL);
  NDK_CONNECTOR* server = incoming.connector;
  Probe server_disconnected, accepted;
  ASSERT_EQ(server->Dispatch->NdkAccept(server, server_qp, 1, 1, nullptr, 0, ProbeDisconnectEvent,
                                        &server_disconnected, ProbeRequestCompletion, &accepted),
            STATUS_PENDING);
  ASSERT_TRUE(connected.wait());
  EXPECT_EQ(connected.Irql, DISPATCH_LEVEL);
  Probe client_disconnected;
  Request complete;
  ASSERT_EQ(complete.finish(client->Dispatch->NdkCompleteConnect(
                client, ProbeDisconnectEvent, &client_disconnected, Request::done, &complete)),
            STATUS_SUCCESS);
  ASSERT_TRUE(accepted.wait());
  EXPECT_EQ(accepted.Irql, DISPATCH_LEVEL);

  // A graceful disconnect: the client starts it, the server sees the event
  // and answers with its own.
  Request disconnect, answer;
  NTSTATUS started = client->Dispatch->NdkDisconnect(client, Request::done, &disconnect);
  ASSERT_TRUE(server_disconnected.wait());
  EXPECT_EQ(server_disconnected.Irql, DISPATCH_LEVEL);
  EXPECT_EQ(answer.finish(server->Dispatch->NdkDisconnect(server, Request::done, &answer)),
            STATUS_SUCCESS);
  EXPECT_EQ(disconnect.finish(started), STATUS_SUCCESS);

  close(client);
  close(server);
  close(l);
  close(client_qp);
  close(server_qp);
  close(pd);
  close(cq);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
}

// ---- each rule, one wrong consumer ------------------------------------------

TEST_F(NdkIrql, QueryAdapterInfoUnderASpinLockIsReported) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(WrongQueryAdapterInfoUnderSpinLock(a), STATUS_SUCCESS);  // report and continue
  EXPECT_EQ(reports(SoftNdkWdkRuleIrqlTooHigh), 1u);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 1u);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "NdkQueryAdapterInfo");
}

TEST_F(NdkIrql, ArmCqAboveDispatchIsReported) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  NDK_CQ* cq = make_cq(a);
  ASSERT_NE(cq, nullptr);
  KIRQL old;
  KeRaiseIrql(DISPATCH_LEVEL, &old);
  cq->Dispatch->NdkArmCq(cq, NDK_CQ_NOTIFY_ANY);  // at its maximum: fine
  KeLowerIrql(old);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
  WrongArmCqAtHighLevel(cq);
  EXPECT_EQ(reports(SoftNdkWdkRuleIrqlTooHigh), 1u);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 1u);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "NdkArmCq");
  close(cq);
}

TEST_F(NdkIrql, OpenAdapterAtDispatchIsReported) {
  NDK_ADAPTER* a = nullptr;
  EXPECT_EQ(WrongOpenAdapterAtDispatch(&ndk_, prov_.Client, lo_, &a), STATUS_SUCCESS);
  ASSERT_NE(a, nullptr);
  adapters_.push_back(a);
  EXPECT_EQ(reports(SoftNdkWdkRuleIrqlTooHigh), 1u);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 1u);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "WskOpenNdkAdapter");
}

TEST_F(NdkIrql, CloseAdapterAtApcIsReported) {
  NDK_ADAPTER* a = open_lo(0, false);
  ASSERT_NE(a, nullptr);
  WrongCloseAdapterAtApc(&ndk_, prov_.Client, a);
  EXPECT_EQ(reports(SoftNdkWdkRuleIrqlTooHigh), 1u);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 1u);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "WskCloseNdkAdapter");
}

TEST_F(NdkIrql, PassiveOnlyCallFromACallbackIsReported) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  NDK_CQ* cq = make_cq(a, WrongQueryFromCqCallback, a);
  NDK_PD* pd = make_pd(a);
  NDK_QP* qp = make_qp(pd, cq);
  ASSERT_TRUE(cq && pd && qp);
  UCHAR buf[16];
  UINT32 token = 0;
  pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(pd, &token);
  NDK_SGE sge{};
  sge.VirtualAddress = buf;
  sge.Length = sizeof buf;
  sge.MemoryRegionToken = token;
  ASSERT_EQ(qp->Dispatch->NdkReceive(qp, buf, &sge, 1), STATUS_SUCCESS);
  cq->Dispatch->NdkArmCq(cq, NDK_CQ_NOTIFY_ANY);
  qp->Dispatch->NdkFlush(qp);
  ASSERT_TRUE(eventually([] { return SoftNdkWdkCheckTotal() > 0; }));
  EXPECT_EQ(reports(SoftNdkWdkRuleIrqlTooHigh), 1u);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "NdkQueryAdapterInfo");
  close(qp);
  close(pd);
  close(cq);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 1u);
}

}  // namespace
}  // namespace wdknet
