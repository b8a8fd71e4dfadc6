// SPDX-License-Identifier: Apache-2.0
// Cancel-safe queues: a driver's queue under IoCsq*, with cancellation
// before insertion, while queued, and racing removal.
#include <atomic>
#include <thread>
#include <vector>

#include "kit_test_util.h"

namespace softndk::wdk::test {
namespace {

class CsqTest : public KitTest {};

struct Queue {
  IO_CSQ csq;  // first: the callbacks get the IO_CSQ
  KSPIN_LOCK lock;
  LIST_ENTRY head;
  std::atomic<int> cancelled{0};
};

VOID Insert(PIO_CSQ csq, PIRP irp) {
  InsertTailList(&reinterpret_cast<Queue*>(csq)->head, &irp->Tail.Overlay.ListEntry);
}
NTSTATUS InsertEx(PIO_CSQ csq, PIRP irp, PVOID ctx) {
  if (ctx != nullptr) return STATUS_DEVICE_BUSY;  // the driver refuses
  Insert(csq, irp);
  return STATUS_SUCCESS;
}
VOID Remove(PIO_CSQ csq, PIRP irp) {
  (void)csq;
  RemoveEntryList(&irp->Tail.Overlay.ListEntry);
}
PIRP Peek(PIO_CSQ csq, PIRP irp, PVOID ctx) {
  (void)ctx;
  auto* q = reinterpret_cast<Queue*>(csq);
  PLIST_ENTRY next = irp == nullptr ? q->head.Flink : irp->Tail.Overlay.ListEntry.Flink;
  return next == &q->head ? nullptr : CONTAINING_RECORD(next, IRP, Tail.Overlay.ListEntry);
}
VOID Acquire(PIO_CSQ csq, PKIRQL irql) {
  KeAcquireSpinLock(&reinterpret_cast<Queue*>(csq)->lock, irql);
}
VOID Release(PIO_CSQ csq, KIRQL irql) {
  KeReleaseSpinLock(&reinterpret_cast<Queue*>(csq)->lock, irql);
}
VOID CompleteCanceled(PIO_CSQ csq, PIRP irp) {
  reinterpret_cast<Queue*>(csq)->cancelled++;
  irp->IoStatus.Status = STATUS_CANCELLED;
  IoCompleteRequest(irp, IO_NO_INCREMENT);
}

NTSTATUS TakeBack(PDEVICE_OBJECT, PIRP, PVOID) { return STATUS_MORE_PROCESSING_REQUIRED; }

// An IRP as a driver holds it in its dispatch routine: one location used.
PIRP DispatchedIrp() {
  PIRP irp = IoAllocateIrp(1, FALSE);
  IoSetCompletionRoutine(irp, TakeBack, nullptr, TRUE, TRUE, TRUE);
  IoSetNextIrpStackLocation(irp);
  return irp;
}

void Init(Queue& q, bool ex) {
  KeInitializeSpinLock(&q.lock);
  InitializeListHead(&q.head);
  NTSTATUS st =
      ex ? IoCsqInitializeEx(&q.csq, InsertEx, Remove, Peek, Acquire, Release, CompleteCanceled)
         : IoCsqInitialize(&q.csq, Insert, Remove, Peek, Acquire, Release, CompleteCanceled);
  ASSERT_EQ(st, STATUS_SUCCESS);
}

TEST_F(CsqTest, QueueCancelAndRemove) {
  Queue q;
  Init(q, false);
  PIRP a = DispatchedIrp(), b = DispatchedIrp(), c = DispatchedIrp();
  IO_CSQ_IRP_CONTEXT bctx;
  IoCsqInsertIrp(&q.csq, a, nullptr);
  IoCsqInsertIrp(&q.csq, b, &bctx);
  IoCsqInsertIrp(&q.csq, c, nullptr);
  EXPECT_TRUE(IoGetCurrentIrpStackLocation(a)->Control & SL_PENDING_RETURNED);
  EXPECT_TRUE(IoCancelIrp(b));  // completed through CompleteCanceled
  EXPECT_EQ(q.cancelled.load(), 1);
  EXPECT_EQ(b->IoStatus.Status, STATUS_CANCELLED);
  EXPECT_EQ(IoCsqRemoveIrp(&q.csq, &bctx), nullptr);  // already gone
  EXPECT_EQ(IoCsqRemoveNextIrp(&q.csq, nullptr), a);
  EXPECT_EQ(IoCsqRemoveNextIrp(&q.csq, nullptr), c);
  EXPECT_EQ(IoCsqRemoveNextIrp(&q.csq, nullptr), nullptr);
  EXPECT_FALSE(IoCancelIrp(a));  // removed: no cancel routine
  for (PIRP irp : {a, b, c}) IoFreeIrp(irp);
  ExpectNone();
}

TEST_F(CsqTest, CancelledBeforeInsertCompletesAtOnce) {
  Queue q;
  Init(q, true);
  PIRP irp = DispatchedIrp();
  EXPECT_FALSE(IoCancelIrp(irp));  // no cancel routine yet; Cancel is set
  EXPECT_EQ(IoCsqInsertIrpEx(&q.csq, irp, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(q.cancelled.load(), 1);
  EXPECT_TRUE(IsListEmpty(&q.head));
  PIRP refused = DispatchedIrp();
  EXPECT_EQ(IoCsqInsertIrpEx(&q.csq, refused, nullptr, reinterpret_cast<PVOID>(1)),
            STATUS_DEVICE_BUSY);
  EXPECT_TRUE(IsListEmpty(&q.head));
  IoFreeIrp(irp);
  IoFreeIrp(refused);
  ExpectNone();
}

// Cancellation racing removal: each IRP leaves exactly once.
TEST_F(CsqTest, CancelRacingRemovalTakesEachIrpOnce) {
  Queue q;
  Init(q, false);
  constexpr int kIrps = 500;
  std::vector<PIRP> irps;
  for (int i = 0; i < kIrps; i++) {
    irps.push_back(DispatchedIrp());
    IoCsqInsertIrp(&q.csq, irps.back(), nullptr);
  }
  std::atomic<int> removed{0};
  std::thread canceller([&] {
    for (int i = kIrps - 1; i >= 0; i -= 2) IoCancelIrp(irps[i]);
  });
  std::thread remover([&] {
    while (PIRP irp = IoCsqRemoveNextIrp(&q.csq, nullptr)) {
      removed++;
      irp->IoStatus.Status = STATUS_SUCCESS;
      IoCompleteRequest(irp, IO_NO_INCREMENT);
    }
  });
  canceller.join();
  remover.join();
  while (PIRP irp = IoCsqRemoveNextIrp(&q.csq, nullptr)) {
    removed++;
    irp->IoStatus.Status = STATUS_SUCCESS;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
  }
  EXPECT_EQ(removed.load() + q.cancelled.load(), kIrps);
  EXPECT_GE(removed.load(), kIrps / 2);
  for (PIRP irp : irps) IoFreeIrp(irp);
  ExpectNone();
}

}  // namespace
}  // namespace softndk::wdk::test
