// SPDX-License-Identifier: Apache-2.0
// lifetime_test.cc - NDKPI §10: create/close protocol, antecedents, bad handles.
#include <vector>

#include "ndk_fixture.h"

namespace ndktest {
namespace {

using Lifetime = NdkTest;

TEST_F(Lifetime, SyncCreateCloseEveryKind) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq();
  NDK_QP* q = qp(p, c);
  NDK_MR* m = mr(p);
  NDK_MW* w = nullptr;
  ASSERT_EQ(p->Dispatch->NdkCreateMw(p, nullptr, nullptr, &w), STATUS_SUCCESS);
  NDK_SRQ* s = nullptr;
  ASSERT_EQ(p->Dispatch->NdkCreateSrq(p, 16, 2, 0, nullptr, nullptr, nullptr, nullptr, nullptr, &s),
            STATUS_SUCCESS);
  NDK_CONNECTOR* conn = nullptr;
  ASSERT_EQ(a_->Dispatch->NdkCreateConnector(a_, nullptr, nullptr, &conn), STATUS_SUCCESS);
  NDK_LISTENER* l = nullptr;
  ASSERT_EQ(a_->Dispatch->NdkCreateListener(
                a_, [](PVOID, NDK_CONNECTOR*) {}, nullptr, nullptr, nullptr, &l),
            STATUS_SUCCESS);
  EXPECT_EQ(q->Header.ObjectType, NdkObjectTypeQp);
  EXPECT_EQ(s->Header.ObjectType, NdkObjectTypeSrq);
  EXPECT_EQ(adapter()->live_objects(), 8u);
  // Successors first: every close is synchronous.
  EXPECT_EQ(q->Dispatch->NdkCloseQp(&q->Header, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(s->Dispatch->NdkCloseSrq(&s->Header, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(w->Dispatch->NdkCloseMw(&w->Header, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(m->Dispatch->NdkCloseMr(&m->Header, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(p->Dispatch->NdkClosePd(&p->Header, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(c->Dispatch->NdkCloseCq(&c->Header, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(conn->Dispatch->NdkCloseConnector(&conn->Header, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(l->Dispatch->NdkCloseListener(&l->Header, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(adapter()->live_objects(), 0u);
}

TEST_F(Lifetime, SyncCreateNeedsOutPointer) {
  EXPECT_EQ(a_->Dispatch->NdkCreatePd(a_, nullptr, nullptr, nullptr), STATUS_INVALID_PARAMETER);
}

TEST_F(Lifetime, AsyncCreatePendsAndCompletesOnEngine) {
  open(SOFTNDK_OPEN_FLAG_ASYNC_CREATE);
  Waiter w;
  NDK_PD* out = nullptr;
  ASSERT_EQ(a_->Dispatch->NdkCreatePd(a_, &Waiter::create_cb, &w, &out), STATUS_PENDING);
  EXPECT_EQ(out, nullptr);  // the out pointer is not written on the async path
  ASSERT_TRUE(w.wait());
  EXPECT_EQ(w.status(), STATUS_SUCCESS);
  ASSERT_NE(w.object(), nullptr);
  EXPECT_EQ(w.object()->ObjectType, NdkObjectTypePd);
  auto* p = reinterpret_cast<NDK_PD*>(w.object());
  // The object is usable.
  NDK_MR* m = nullptr;
  Waiter w2;
  ASSERT_EQ(p->Dispatch->NdkCreateMr(p, FALSE, &Waiter::create_cb, &w2, &m), STATUS_PENDING);
  ASSERT_TRUE(w2.wait());
  EXPECT_EQ(w2.object()->ObjectType, NdkObjectTypeMr);
  EXPECT_EQ(w2.calls(), 1);
}

TEST_F(Lifetime, AsyncCreateNeedsCompletion) {
  open(SOFTNDK_OPEN_FLAG_ASYNC_CREATE);
  NDK_PD* out = nullptr;
  EXPECT_EQ(a_->Dispatch->NdkCreatePd(a_, nullptr, nullptr, &out), STATUS_INVALID_PARAMETER);
}

TEST_F(Lifetime, AsyncCreateValidationFailsInline) {
  open(SOFTNDK_OPEN_FLAG_ASYNC_CREATE);
  Waiter w;
  NDK_CQ* c = nullptr;
  EXPECT_EQ(a_->Dispatch->NdkCreateCq(a_, 0, nullptr, nullptr, nullptr, &Waiter::create_cb, &w, &c),
            STATUS_INVALID_PARAMETER);
  EXPECT_FALSE(w.wait(std::chrono::milliseconds(50)));  // no callback after an inline failure
}

TEST_F(Lifetime, AsyncClosePendsAndCompletes) {
  open(SOFTNDK_OPEN_FLAG_ASYNC_CLOSE);
  NDK_PD* p = pd();
  Waiter w;
  ASSERT_EQ(p->Dispatch->NdkClosePd(&p->Header, &Waiter::close_cb, &w), STATUS_PENDING);
  ASSERT_TRUE(w.wait());
  EXPECT_EQ(w.calls(), 1);
  EXPECT_TRUE(eventually([&] { return adapter()->live_objects() == 0; }));
}

TEST_F(Lifetime, AntecedentClosedFirstPendsUntilSuccessorClosed) {
  NDK_PD* p = pd();
  NDK_MR* m = mr(p);
  Waiter pdw;
  ASSERT_EQ(p->Dispatch->NdkClosePd(&p->Header, &Waiter::close_cb, &pdw), STATUS_PENDING);
  EXPECT_FALSE(pdw.wait(std::chrono::milliseconds(50)));
  // The MR's close completes (sync) and only then the PD's.
  EXPECT_EQ(m->Dispatch->NdkCloseMr(&m->Header, nullptr, nullptr), STATUS_SUCCESS);
  ASSERT_TRUE(pdw.wait());
  EXPECT_EQ(pdw.calls(), 1);
}

struct OrderProbe {
  std::atomic<int> successor_in_cb{0};
  std::atomic<bool> antecedent_done_while_successor_cb{false};
  std::atomic<int> antecedent_done{0};
};

TEST_F(Lifetime, AntecedentCompletesOnlyAfterSuccessorCallbackReturned) {
  open(SOFTNDK_OPEN_FLAG_ASYNC_CLOSE);
  NDK_PD* p = pd();
  NDK_CQ* c = cq();
  NDK_QP* q = qp(p, c);
  static OrderProbe probe;
  probe.successor_in_cb = 0;
  probe.antecedent_done = 0;
  probe.antecedent_done_while_successor_cb = false;
  auto cq_done = [](PVOID) {
    if (probe.successor_in_cb.load()) probe.antecedent_done_while_successor_cb = true;
    probe.antecedent_done++;
  };
  auto qp_done = [](PVOID) {
    probe.successor_in_cb = 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    probe.successor_in_cb = 0;
  };
  ASSERT_EQ(c->Dispatch->NdkCloseCq(&c->Header, cq_done, nullptr), STATUS_PENDING);
  ASSERT_EQ(q->Dispatch->NdkCloseQp(&q->Header, qp_done, nullptr), STATUS_PENDING);
  ASSERT_TRUE(eventually([] { return probe.antecedent_done.load() == 1; }));
  EXPECT_FALSE(probe.antecedent_done_while_successor_cb);
  EXPECT_EQ(close(p), STATUS_SUCCESS);
}

TEST_F(Lifetime, DoubleCloseIsReported) {
  NDK_PD* p = pd();
  EXPECT_EQ(p->Dispatch->NdkClosePd(&p->Header, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(p->Dispatch->NdkClosePd(&p->Header, nullptr, nullptr), STATUS_FILE_CLOSED);
}

TEST_F(Lifetime, DoubleCloseWhilePendingIsReported) {
  NDK_PD* p = pd();
  NDK_MR* m = mr(p);
  Waiter w;
  ASSERT_EQ(p->Dispatch->NdkClosePd(&p->Header, &Waiter::close_cb, &w), STATUS_PENDING);
  EXPECT_EQ(p->Dispatch->NdkClosePd(&p->Header, nullptr, nullptr), STATUS_FILE_CLOSED);
  EXPECT_EQ(close(m), STATUS_SUCCESS);
  ASSERT_TRUE(w.wait());
  EXPECT_EQ(w.calls(), 1);
}

// NDK_OBJECT_HEADER / NDK_<OBJECT>: the provider zeroes NdkReserved at
// creation and never touches it until the close; it sets Dispatch and never
// reads it again (the consumer may overwrite both). Every call here goes
// through a saved copy of the table while the objects' own Dispatch and
// NdkReserved hold garbage.
TEST_F(Lifetime, ReservedBlockAndDispatchBelongToTheConsumer) {
  const auto scribble = [](NDK_OBJECT_HEADER* h, uintptr_t tag) {
    for (auto& r : h->NdkReserved.rf) EXPECT_EQ(r, nullptr) << "not zeroed at creation";
    for (uintptr_t i = 0; i < 4; ++i) h->NdkReserved.rf[i] = reinterpret_cast<PVOID>(tag + i);
  };
  const auto intact = [](const NDK_OBJECT_HEADER* h, uintptr_t tag) {
    for (uintptr_t i = 0; i < 4; ++i)
      if (h->NdkReserved.rf[i] != reinterpret_cast<PVOID>(tag + i)) return false;
    return true;
  };
  const NDK_ADAPTER_DISPATCH* ad = a_->Dispatch;
  scribble(&a_->Header, 0xA0);
  a_->Dispatch = nullptr;
  NDK_PD* p = nullptr;
  NDK_CQ* c = nullptr;
  ASSERT_EQ(ad->NdkCreatePd(a_, nullptr, nullptr, &p), STATUS_SUCCESS);
  ASSERT_EQ(ad->NdkCreateCq(a_, 16, nullptr, nullptr, nullptr, nullptr, nullptr, &c),
            STATUS_SUCCESS);
  const NDK_PD_DISPATCH* pdd = p->Dispatch;
  const NDK_CQ_DISPATCH* cqd = c->Dispatch;
  scribble(&p->Header, 0xB0);
  scribble(&c->Header, 0xC0);
  p->Dispatch = nullptr;
  c->Dispatch = nullptr;
  NDK_QP* q = nullptr;
  NDK_MR* m = nullptr;
  ASSERT_EQ(pdd->NdkCreateQp(p, c, c, nullptr, 4, 4, 1, 1, 0, nullptr, nullptr, &q),
            STATUS_SUCCESS);
  ASSERT_EQ(pdd->NdkCreateMr(p, FALSE, nullptr, nullptr, &m), STATUS_SUCCESS);
  const NDK_QP_DISPATCH* qpd = q->Dispatch;
  const NDK_MR_DISPATCH* mrd = m->Dispatch;
  scribble(&q->Header, 0xD0);
  scribble(&m->Header, 0xE0);
  q->Dispatch = nullptr;
  m->Dispatch = nullptr;
  std::vector<uint8_t> buf(4096);
  MDL mdl{};
  mdl.VirtualAddress = buf.data();
  mdl.ByteCount = static_cast<ULONG>(buf.size());
  ASSERT_EQ(
      mrd->NdkRegisterMr(m, &mdl, buf.size(), NDK_MR_FLAG_ALLOW_LOCAL_WRITE, nullptr, nullptr),
      STATUS_SUCCESS);
  NDK_SGE sge{};
  sge.VirtualAddress = buf.data();
  sge.Length = 64;
  sge.MemoryRegionToken = mrd->NdkGetLocalTokenFromMr(m);
  ASSERT_EQ(qpd->NdkReceive(q, (void*)1, &sge, 1), STATUS_SUCCESS);
  qpd->NdkFlush(q);
  NDK_RESULT r{};
  ASSERT_TRUE(eventually([&] { return cqd->NdkGetCqResults(c, &r, 1) == 1; }));
  EXPECT_EQ(r.Status, STATUS_CANCELLED);
  EXPECT_EQ(r.RequestContext, (void*)1);
  EXPECT_TRUE(intact(&a_->Header, 0xA0));
  EXPECT_TRUE(intact(&p->Header, 0xB0));
  EXPECT_TRUE(intact(&c->Header, 0xC0));
  EXPECT_TRUE(intact(&q->Header, 0xD0));
  EXPECT_TRUE(intact(&m->Header, 0xE0));
  EXPECT_EQ(qpd->NdkCloseQp(&q->Header, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(mrd->NdkCloseMr(&m->Header, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(cqd->NdkCloseCq(&c->Header, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(pdd->NdkClosePd(&p->Header, nullptr, nullptr), STATUS_SUCCESS);
  SoftNdkCloseAdapter(a_);
  a_ = nullptr;
}

TEST_F(Lifetime, WrongKindIsTypeMismatch) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq();
  auto* as_pd = reinterpret_cast<NDK_PD*>(c);
  NDK_MR* m = nullptr;
  EXPECT_EQ(p->Dispatch->NdkCreateMr(as_pd, FALSE, nullptr, nullptr, &m),
            STATUS_OBJECT_TYPE_MISMATCH);
  EXPECT_EQ(p->Dispatch->NdkClosePd(&c->Header, nullptr, nullptr), STATUS_OBJECT_TYPE_MISMATCH);
  // An object passed as the adapter.
  EXPECT_EQ(a_->Dispatch->NdkCreatePd(reinterpret_cast<NDK_ADAPTER*>(p), nullptr, nullptr, &p),
            STATUS_OBJECT_TYPE_MISMATCH);
  // The CQ is still alive and closes normally.
  EXPECT_EQ(close(c), STATUS_SUCCESS);
}

TEST_F(Lifetime, NullHandles) {
  NDK_PD* p = pd();
  EXPECT_EQ(p->Dispatch->NdkClosePd(nullptr, nullptr, nullptr), STATUS_INVALID_HANDLE);
  NDK_MR* m = nullptr;
  EXPECT_EQ(p->Dispatch->NdkCreateMr(nullptr, FALSE, nullptr, nullptr, &m), STATUS_INVALID_HANDLE);
  EXPECT_EQ(a_->Dispatch->NdkCreatePd(nullptr, nullptr, nullptr, &p), STATUS_INVALID_HANDLE);
  NDK_CQ* c = cq();
  c->Dispatch->NdkArmCq(nullptr, NDK_CQ_NOTIFY_ANY);  // void: must not crash
  NDK_RESULT r[1];
  EXPECT_EQ(c->Dispatch->NdkGetCqResults(nullptr, r, 1), 0u);
}

TEST_F(Lifetime, UseOfClosedObjectIsFileClosed) {
  NDK_PD* p = pd();
  const NDK_PD_DISPATCH* d = p->Dispatch;
  ASSERT_EQ(close(p), STATUS_SUCCESS);
  NDK_MR* m = nullptr;
  EXPECT_EQ(d->NdkCreateMr(p, FALSE, nullptr, nullptr, &m), STATUS_FILE_CLOSED);
}

TEST_F(Lifetime, CloseFromInsideCreateCompletion) {
  open(SOFTNDK_OPEN_FLAG_ASYNC_CREATE);
  static std::atomic<NTSTATUS> closed{0};
  static std::atomic<bool> called{false};
  closed = 0;
  called = false;
  auto cb = [](PVOID, NTSTATUS s, NDK_OBJECT_HEADER* o) {
    ASSERT_EQ(s, STATUS_SUCCESS);
    auto* p = reinterpret_cast<NDK_PD*>(o);
    closed = p->Dispatch->NdkClosePd(o, nullptr, nullptr);
    called = true;
  };
  NDK_PD* out = nullptr;
  ASSERT_EQ(a_->Dispatch->NdkCreatePd(a_, cb, nullptr, &out), STATUS_PENDING);
  ASSERT_TRUE(eventually([] { return called.load(); }));
  // The create completion holds the object: the close pends until it returned.
  EXPECT_EQ(closed.load(), STATUS_PENDING);
  EXPECT_TRUE(eventually([&] { return adapter()->live_objects() == 0; }));
}

TEST_F(Lifetime, AdapterCloseClosesLeftoversAndWaitsForCallbacks) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq();
  qp(p, c);
  mr(p);
  Waiter w;
  ASSERT_EQ(p->Dispatch->NdkClosePd(&p->Header, &Waiter::close_cb, &w), STATUS_PENDING);
  SoftNdkCloseAdapter(a_);
  a_ = nullptr;
  // Every callback has returned by the time the blocking close returns.
  EXPECT_EQ(w.calls(), 1);
}

TEST_F(Lifetime, NoCallbackAfterCloseCompletion) {
  CqEvents ev;
  NDK_CQ* c = cq(8, &ev);
  c->Dispatch->NdkArmCq(c, NDK_CQ_NOTIFY_ANY);
  auto* impl = cq_of(c);
  ASSERT_EQ(close(c), STATUS_SUCCESS);
  // A late producer finds the CQ closed and nothing is called.
  (void)impl;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ev.count.load(), 0);
}

TEST_F(Lifetime, QuarantineIsBounded) {
  for (int i = 0; i < 1500; ++i) {
    NDK_PD* p = pd();
    ASSERT_EQ(close(p), STATUS_SUCCESS);
  }
  EXPECT_EQ(adapter()->live_objects(), 0u);
}

}  // namespace
}  // namespace ndktest
