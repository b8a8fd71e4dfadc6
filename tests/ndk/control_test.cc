// SPDX-License-Identifier: Apache-2.0
// control_test.cc - the IRP-style adapter control: event requests, cancel,
// query/modify, lock conflicts, async close, fatal errors.
#include <vector>

#include "ndk_fixture.h"

namespace ndktest {
namespace {

struct Req {
  SOFTNDK_REQUEST r{};
  std::atomic<int> calls{0};
  std::atomic<NTSTATUS> status{STATUS_PENDING};
  std::atomic<ULONG_PTR> info{0};
  Req() {
    r.Context = this;
    r.Completion = [](SOFTNDK_REQUEST* p) {
      auto* self = static_cast<Req*>(p->Context);
      self->status = p->Status;
      self->info = p->Information;
      self->calls++;
    };
  }
};

using Control = NdkTest;

TEST_F(Control, PortEventsCompleteOldestFirstOnePerEvent) {
  Req a, b;
  ASSERT_EQ(SoftNdkGetPortEvent(a_, SOFTNDK_PORT_NUMBER, &a.r), STATUS_PENDING);
  ASSERT_EQ(SoftNdkGetPortEvent(a_, SOFTNDK_PORT_NUMBER, &b.r), STATUS_PENDING);
  adapter()->on_net_event(softndk::ndk::NetEvent::kLinkDown);
  ASSERT_TRUE(eventually([&] { return a.calls.load() == 1; }));
  EXPECT_EQ(a.status.load(), STATUS_SUCCESS);
  EXPECT_EQ(a.info.load(), SOFTNDK_PORT_EVENT_DOWN);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(b.calls.load(), 0);
  adapter()->on_net_event(softndk::ndk::NetEvent::kLinkUp);
  ASSERT_TRUE(eventually([&] { return b.calls.load() == 1; }));
  EXPECT_EQ(b.info.load(), SOFTNDK_PORT_EVENT_ACTIVE);
  EXPECT_EQ(a.calls.load(), 1);
}

TEST_F(Control, PortEventBadPortOrRequest) {
  Req a;
  EXPECT_EQ(SoftNdkGetPortEvent(a_, 2, &a.r), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkGetPortEvent(a_, SOFTNDK_PORT_NUMBER, nullptr), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkGetPortEvent(nullptr, SOFTNDK_PORT_NUMBER, &a.r), STATUS_INVALID_HANDLE);
}

TEST_F(Control, CancelCompletesWithCancelled) {
  Req a, b;
  ASSERT_EQ(SoftNdkGetPortEvent(a_, SOFTNDK_PORT_NUMBER, &a.r), STATUS_PENDING);
  ASSERT_EQ(SoftNdkGetFatalEvent(a_, &b.r), STATUS_PENDING);
  EXPECT_EQ(SoftNdkCancelRequest(a_, &a.r), STATUS_SUCCESS);
  EXPECT_EQ(SoftNdkCancelRequest(a_, &b.r), STATUS_SUCCESS);
  EXPECT_EQ(a.calls.load(), 1);
  EXPECT_EQ(a.status.load(), STATUS_CANCELLED);
  EXPECT_EQ(b.status.load(), STATUS_CANCELLED);
  // Not queued any more.
  EXPECT_EQ(SoftNdkCancelRequest(a_, &a.r), STATUS_INVALID_PARAMETER);
  // A cancelled request is not completed by a later event.
  adapter()->on_net_event(softndk::ndk::NetEvent::kLinkDown);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(a.calls.load(), 1);
}

TEST_F(Control, AdapterCloseCancelsQueuedRequests) {
  Req a, b;
  ASSERT_EQ(SoftNdkGetPortEvent(a_, SOFTNDK_PORT_NUMBER, &a.r), STATUS_PENDING);
  ASSERT_EQ(SoftNdkGetFatalEvent(a_, &b.r), STATUS_PENDING);
  SoftNdkCloseAdapter(a_);
  a_ = nullptr;
  EXPECT_EQ(a.status.load(), STATUS_CANCELLED);
  EXPECT_EQ(b.status.load(), STATUS_CANCELLED);
  EXPECT_EQ(a.calls.load() + b.calls.load(), 2);
}

TEST_F(Control, QueryAdapterBufferProtocol) {
  Req q;
  SOFTNDK_ADAPTER_ATTR small{};
  EXPECT_EQ(SoftNdkQueryAdapter(a_, 3, &small, &q.r), STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(q.r.Status, STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(q.calls.load(), 0);  // inline: no callback
  ASSERT_EQ(SoftNdkQueryAdapter(a_, 4, &small, &q.r), STATUS_BUFFER_OVERFLOW);
  EXPECT_EQ(q.r.Information, 4u);
  ULONG full = small.Size;
  ASSERT_GT(full, sizeof(ULONG));
  std::vector<unsigned char> buf(full + 64, 0xAB);
  auto* attr = reinterpret_cast<SOFTNDK_ADAPTER_ATTR*>(buf.data());
  ASSERT_EQ(SoftNdkQueryAdapter(a_, 64, attr, &q.r), STATUS_BUFFER_OVERFLOW);
  EXPECT_EQ(q.r.Information, 64u);
  EXPECT_EQ(buf[64], 0xAB);  // nothing written past the buffer
  ASSERT_EQ(SoftNdkQueryAdapter(a_, buf.size(), attr, &q.r), STATUS_SUCCESS);
  EXPECT_EQ(q.r.Information, full);
  EXPECT_EQ(attr->PortCount, 1u);
  EXPECT_EQ(attr->Info.RdmaTechnology, NdkiWarp);
  EXPECT_EQ(attr->Ports[0].PortNumber, SOFTNDK_PORT_NUMBER);
  EXPECT_STREQ(attr->Ports[0].IfName, "lo");
  EXPECT_GE(attr->Ports[0].AddressCount, 1u);
  EXPECT_EQ(SoftNdkQueryAdapter(a_, 64, attr, nullptr), STATUS_INVALID_PARAMETER);
}

TEST_F(Control, QueryPortBufferProtocol) {
  Req q;
  SOFTNDK_PORT_ATTR p{};
  EXPECT_EQ(SoftNdkQueryPort(a_, 1, 2, &p, &q.r), STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(SoftNdkQueryPort(a_, 7, sizeof p, &p, &q.r), STATUS_INVALID_PARAMETER);
  ASSERT_EQ(SoftNdkQueryPort(a_, 1, 8, &p, &q.r), STATUS_BUFFER_OVERFLOW);
  std::vector<unsigned char> buf(p.Size);
  auto* attr = reinterpret_cast<SOFTNDK_PORT_ATTR*>(buf.data());
  ASSERT_EQ(SoftNdkQueryPort(a_, 1, buf.size(), attr, &q.r), STATUS_SUCCESS);
  EXPECT_EQ(q.r.Information, buf.size());
  EXPECT_EQ(attr->State, static_cast<ULONG>(SoftNdkPortStateActive));
  EXPECT_EQ(attr->Addresses[0].ss_family == AF_INET || attr->Addresses[0].ss_family == AF_INET6,
            true);
}

TEST_F(Control, ExclusiveCapabilityLockConflictAcrossOpens) {
  NDK_ADAPTER* b = nullptr;
  ASSERT_EQ(SoftNdkOpenAdapter(test_adapter(), kVersion, nullptr, &b), STATUS_SUCCESS);
  Req q;
  SOFTNDK_MODIFY_PORT m{SOFTNDK_PORT_CAP_TRACE_OWNER, 0};
  ASSERT_EQ(SoftNdkModifyPort(a_, 1, SOFTNDK_MODIFY_PORT_SET_CAPS, &m, &q.r), STATUS_SUCCESS);
  EXPECT_EQ(SoftNdkModifyPort(b, 1, SOFTNDK_MODIFY_PORT_SET_CAPS, &m, &q.r),
            STATUS_FILE_LOCK_CONFLICT);
  EXPECT_EQ(q.r.Status, STATUS_FILE_LOCK_CONFLICT);
  // The other exclusive bit is free for b; the holder sees both in the port.
  SOFTNDK_MODIFY_PORT f{SOFTNDK_PORT_CAP_FAULT_INJECTOR, 0};
  EXPECT_EQ(SoftNdkModifyPort(b, 1, SOFTNDK_MODIFY_PORT_SET_CAPS, &f, &q.r), STATUS_SUCCESS);
  std::vector<unsigned char> buf(4096);
  auto* pa = reinterpret_cast<SOFTNDK_PORT_ATTR*>(buf.data());
  ASSERT_EQ(SoftNdkQueryPort(a_, 1, buf.size(), pa, &q.r), STATUS_SUCCESS);
  EXPECT_EQ(pa->Capabilities, SOFTNDK_PORT_CAP_EXCLUSIVE_MASK);
  // Clearing releases it.
  SOFTNDK_MODIFY_PORT c{0, SOFTNDK_PORT_CAP_TRACE_OWNER};
  ASSERT_EQ(SoftNdkModifyPort(a_, 1, SOFTNDK_MODIFY_PORT_CLEAR_CAPS, &c, &q.r), STATUS_SUCCESS);
  EXPECT_EQ(SoftNdkModifyPort(b, 1, SOFTNDK_MODIFY_PORT_SET_CAPS, &m, &q.r), STATUS_SUCCESS);
  // Closing the holder releases everything.
  SoftNdkCloseAdapter(b);
  EXPECT_EQ(SoftNdkModifyPort(a_, 1, SOFTNDK_MODIFY_PORT_SET_CAPS, &m, &q.r), STATUS_SUCCESS);
}

TEST_F(Control, ModifyPortInvalid) {
  Req q;
  SOFTNDK_MODIFY_PORT m{0x100, 0};
  EXPECT_EQ(SoftNdkModifyPort(a_, 1, SOFTNDK_MODIFY_PORT_SET_CAPS, &m, &q.r),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkModifyPort(a_, 1, SOFTNDK_MODIFY_PORT_SET_CAPS, nullptr, &q.r),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkModifyPort(a_, 3, SOFTNDK_MODIFY_PORT_SET_CAPS, &m, &q.r),
            STATUS_INVALID_PARAMETER);
}

TEST_F(Control, ModifyAdapterResetsCounters) {
  NDK_CQ* c = cq();
  cq_of(c)->push(result(STATUS_CANCELLED));
  Req q;
  ASSERT_EQ(SoftNdkModifyAdapter(a_, SOFTNDK_MODIFY_ADAPTER_COUNTERS_RESET, nullptr, &q.r),
            STATUS_SUCCESS);
  SOFTNDK_COUNTERS k{};
  ASSERT_EQ(SoftNdkQueryAdapterCounters(a_, &k), STATUS_SUCCESS);
  EXPECT_EQ(k.CQError, 0u);
  EXPECT_EQ(SoftNdkModifyAdapter(a_, 0x80, nullptr, &q.r), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkModifyAdapter(a_, SOFTNDK_MODIFY_ADAPTER_TRACE, nullptr, &q.r),
            STATUS_INVALID_PARAMETER);
}

TEST_F(Control, CloseAdapterAsyncBusyThenSuccess) {
  NDK_PD* p = pd();
  Req a, c;
  ASSERT_EQ(SoftNdkGetPortEvent(a_, SOFTNDK_PORT_NUMBER, &a.r), STATUS_PENDING);
  EXPECT_EQ(SoftNdkCloseAdapterAsync(a_, &c.r), STATUS_DEVICE_BUSY);
  EXPECT_EQ(a.calls.load(), 0);  // nothing changed
  ASSERT_EQ(close(p), STATUS_SUCCESS);
  EXPECT_EQ(SoftNdkCloseAdapterAsync(a_, &c.r), STATUS_SUCCESS);
  EXPECT_EQ(a.status.load(), STATUS_CANCELLED);  // before the close returned
  a_ = nullptr;
}

// From a provider callback (here: a port-event completion on the engine) the
// close cannot join the engine inline: it pends and completes the request.
TEST_F(Control, CloseAdapterAsyncFromCallbackPends) {
  static NDK_ADAPTER* target;
  static Req closer;
  static std::atomic<NTSTATUS> ret{0};
  target = a_;
  a_ = nullptr;
  closer.calls = 0;
  ret = 0;
  Req ev;
  ev.r.Completion = [](SOFTNDK_REQUEST*) { ret = SoftNdkCloseAdapterAsync(target, &closer.r); };
  ASSERT_EQ(SoftNdkGetPortEvent(target, SOFTNDK_PORT_NUMBER, &ev.r), STATUS_PENDING);
  softndk::ndk::Adapter* impl;
  softndk::ndk::Adapter::from(target, &impl);
  impl->on_net_event(softndk::ndk::NetEvent::kLinkUp);
  ASSERT_TRUE(eventually([] { return closer.calls.load() == 1; }));
  EXPECT_EQ(ret.load(), STATUS_PENDING);
  EXPECT_EQ(closer.status.load(), STATUS_SUCCESS);
}

TEST_F(Control, FatalErrorFlushesNotifiesAndForcesClosed) {
  CqEvents ev;
  NDK_PD* p = pd();
  NDK_CQ* c = cq(64, &ev);
  NDK_QP* q = qp(p, c);
  int ctx[2];
  NDK_SGE sge{};
  ASSERT_EQ(q->Dispatch->NdkReceive(q, &ctx[0], &sge, 0), STATUS_SUCCESS);
  ASSERT_EQ(q->Dispatch->NdkReceive(q, &ctx[1], &sge, 0), STATUS_SUCCESS);
  c->Dispatch->NdkArmCq(c, NDK_CQ_NOTIFY_ERRORS);
  Req f1, f2;
  ASSERT_EQ(SoftNdkGetFatalEvent(a_, &f1.r), STATUS_PENDING);
  ASSERT_EQ(SoftNdkGetFatalEvent(a_, &f2.r), STATUS_PENDING);
  SOFTNDK_FAULT fault{SoftNdkFaultFatalAdapterError, 0, 0};
  ASSERT_EQ(SoftNdkInjectAdapterFault(a_, &fault), STATUS_SUCCESS);
  ASSERT_TRUE(eventually([&] { return f1.calls.load() == 1 && f2.calls.load() == 1; }));
  EXPECT_EQ(f1.status.load(), STATUS_SUCCESS);
  ASSERT_TRUE(eventually([&] { return ev.count.load() == 1; }));
  EXPECT_EQ(ev.last.load(), STATUS_INTERNAL_ERROR);
  // The flushed requests can still be drained, in posting order.
  NDK_RESULT_EX r[4];
  ASSERT_EQ(c->Dispatch->NdkGetCqResultsEx(c, r, 4), 2u);
  EXPECT_EQ(r[0].Status, STATUS_CANCELLED);
  EXPECT_EQ(r[0].RequestContext, &ctx[0]);
  EXPECT_EQ(r[1].RequestContext, &ctx[1]);
  EXPECT_EQ(qp_of(q)->state(), softndk::ndk::QpState::kError);
  // Every call now: STATUS_FILE_FORCED_CLOSED.
  NDK_PD* p2 = nullptr;
  EXPECT_EQ(a_->Dispatch->NdkCreatePd(a_, nullptr, nullptr, &p2), STATUS_FILE_FORCED_CLOSED);
  NDK_MR* m = nullptr;
  EXPECT_EQ(p->Dispatch->NdkCreateMr(p, FALSE, nullptr, nullptr, &m), STATUS_FILE_FORCED_CLOSED);
  EXPECT_EQ(q->Dispatch->NdkReceive(q, nullptr, &sge, 0), STATUS_FILE_FORCED_CLOSED);
  EXPECT_EQ(q->Dispatch->NdkSend(q, nullptr, &sge, 0, 0), STATUS_FILE_FORCED_CLOSED);
  NDK_ADAPTER_INFO info;
  ULONG size = sizeof info;
  EXPECT_EQ(a_->Dispatch->NdkQueryAdapterInfo(a_, &info, &size), STATUS_FILE_FORCED_CLOSED);
  Req pe;
  EXPECT_EQ(SoftNdkGetPortEvent(a_, 1, &pe.r), STATUS_FILE_FORCED_CLOSED);
  EXPECT_EQ(SoftNdkQueryAdapter(a_, 64, nullptr, &pe.r), STATUS_FILE_FORCED_CLOSED);
  EXPECT_EQ(SoftNdkModifyPort(a_, 1, 1, nullptr, &pe.r), STATUS_FILE_FORCED_CLOSED);
  EXPECT_EQ(SoftNdkInjectAdapterFault(a_, &fault), STATUS_FILE_FORCED_CLOSED);
  EXPECT_EQ(c->Dispatch->NdkResizeCq(c, 8, nullptr, nullptr), STATUS_FILE_FORCED_CLOSED);
  // A fatal-event request after the fact completes inline.
  Req late;
  EXPECT_EQ(SoftNdkGetFatalEvent(a_, &late.r), STATUS_SUCCESS);
  EXPECT_EQ(late.calls.load(), 0);
  // Closing still works (never fails), and the adapter closes.
  EXPECT_EQ(close(q), STATUS_SUCCESS);
}

TEST_F(Control, InjectFaultInvalid) {
  EXPECT_EQ(SoftNdkInjectAdapterFault(a_, nullptr), STATUS_INVALID_PARAMETER);
  SOFTNDK_FAULT f{SoftNdkFaultDropTx, 1, 0};
  EXPECT_EQ(SoftNdkInjectAdapterFault(a_, &f), STATUS_INVALID_PARAMETER);
}

}  // namespace
}  // namespace ndktest
