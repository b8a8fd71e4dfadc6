// SPDX-License-Identifier: Apache-2.0
// Work items on the kit's worker pool at PASSIVE_LEVEL, their misuse, and
// system threads with waitable thread objects.
#include <atomic>
#include <thread>

#include "kernel/device.h"
#include "kernel/host.h"
#include "kit_test_util.h"

namespace softndk::wdk::test {
namespace {

class WorkItemTest : public KitTest {
 protected:
  void SetUp() override {
    KitTest::SetUp();
    driver_ = CreateDriverObject(L"workitem_test");
    ASSERT_EQ(IoCreateDevice(driver_, 0, nullptr, FILE_DEVICE_UNKNOWN, 0, FALSE, &device_),
              STATUS_SUCCESS);
  }
  void TearDown() override {
    IoDeleteDevice(device_);
    DeleteDriverObject(driver_);
    KitTest::TearDown();
  }
  PDRIVER_OBJECT driver_ = nullptr;
  PDEVICE_OBJECT device_ = nullptr;
};

struct Ran {
  KEVENT done;
  KIRQL irql = HIGH_LEVEL;
  std::thread::id thread;
  PVOID object = nullptr;
  PIO_WORKITEM item = nullptr;
};

VOID Routine(PDEVICE_OBJECT dev, PVOID ctx) {
  auto* r = static_cast<Ran*>(ctx);
  r->irql = KeGetCurrentIrql();
  r->thread = std::this_thread::get_id();
  r->object = dev;
  KeSetEvent(&r->done, IO_NO_INCREMENT, FALSE);
}

VOID RoutineExFreesItself(PVOID obj, PVOID ctx, PIO_WORKITEM item) {
  auto* r = static_cast<Ran*>(ctx);
  r->irql = KeGetCurrentIrql();
  r->object = obj;
  r->item = item;
  IoFreeWorkItem(item);  // allowed from the routine
  KeSetEvent(&r->done, IO_NO_INCREMENT, FALSE);
}

TEST_F(WorkItemTest, RunsAtPassiveLevelOnAWorkerThread) {
  Ran r;
  KeInitializeEvent(&r.done, NotificationEvent, FALSE);
  PIO_WORKITEM item = IoAllocateWorkItem(device_);
  ASSERT_NE(item, nullptr);
  KIRQL old = KeRaiseIrqlToDpcLevel();  // queued from DISPATCH_LEVEL, as from a DPC
  IoQueueWorkItem(item, Routine, DelayedWorkQueue, &r);
  KeLowerIrql(old);
  LARGE_INTEGER t = RelativeMs(5000);
  ASSERT_EQ(KeWaitForSingleObject(&r.done, Executive, KernelMode, FALSE, &t), STATUS_SUCCESS);
  EXPECT_EQ(r.irql, PASSIVE_LEVEL);
  EXPECT_NE(r.thread, std::this_thread::get_id());
  EXPECT_EQ(r.object, device_);
  EXPECT_TRUE(DrainForUnload("test"));
  IoFreeWorkItem(item);
  ExpectNone();
}

TEST_F(WorkItemTest, ExRoutineGetsTheItemAndMayFreeIt) {
  Ran r;
  KeInitializeEvent(&r.done, NotificationEvent, FALSE);
  PIO_WORKITEM item = IoAllocateWorkItem(device_);
  IoQueueWorkItemEx(item, RoutineExFreesItself, NormalWorkQueue, &r);
  LARGE_INTEGER t = RelativeMs(5000);
  ASSERT_EQ(KeWaitForSingleObject(&r.done, Executive, KernelMode, FALSE, &t), STATUS_SUCCESS);
  EXPECT_EQ(r.item, item);
  EXPECT_EQ(r.object, device_);
  EXPECT_TRUE(DrainForUnload("test"));
  ExpectNone();
}

TEST_F(WorkItemTest, InitializedWorkItemsInDriverMemory) {
  auto* item =
      static_cast<PIO_WORKITEM>(ExAllocatePool2(POOL_FLAG_NON_PAGED, IoSizeofWorkItem(), kTestTag));
  IoInitializeWorkItem(device_, item);
  Ran r;
  KeInitializeEvent(&r.done, NotificationEvent, FALSE);
  IoQueueWorkItem(item, Routine, DelayedWorkQueue, &r);
  KeWaitForSingleObject(&r.done, Executive, KernelMode, FALSE, nullptr);
  EXPECT_TRUE(DrainForUnload("test"));
  IoUninitializeWorkItem(item);
  ExFreePoolWithTag(item, kTestTag);
  ExpectNone();
}

VOID Blocks(PDEVICE_OBJECT, PVOID ctx) {
  KeWaitForSingleObject(static_cast<PKEVENT>(ctx), Executive, KernelMode, FALSE, nullptr);
}

// The checker: queueing a queued work item, freeing it while queued, and
// freeing it twice.
TEST_F(WorkItemTest, MisuseIsReported) {
  KEVENT gate;
  KeInitializeEvent(&gate, NotificationEvent, FALSE);
  // Keep the pool busy so the second item stays queued. The pool grows, so
  // block every worker the pool may start.
  PIO_WORKITEM blockers[16];
  for (auto& b : blockers) {
    b = IoAllocateWorkItem(device_);
    IoQueueWorkItem(b, Blocks, DelayedWorkQueue, &gate);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  PIO_WORKITEM item = IoAllocateWorkItem(device_);
  Ran r;
  KeInitializeEvent(&r.done, NotificationEvent, FALSE);
  IoQueueWorkItem(item, Routine, DelayedWorkQueue, &r);
  IoQueueWorkItem(item, Routine, DelayedWorkQueue, &r);
  ExpectOnly(SoftNdkWdkRuleWorkItemMisuse);
  IoFreeWorkItem(item);
  ExpectOnly(SoftNdkWdkRuleWorkItemMisuse);
  KeSetEvent(&gate, IO_NO_INCREMENT, FALSE);
  KeWaitForSingleObject(&r.done, Executive, KernelMode, FALSE, nullptr);
  EXPECT_TRUE(DrainForUnload("test"));
  for (auto& b : blockers) IoFreeWorkItem(b);
  IoFreeWorkItem(item);
  IoFreeWorkItem(item);
  ExpectOnly(SoftNdkWdkRuleDoubleFree);
}

// The checker: work items never freed are leaks.
TEST_F(WorkItemTest, UnfreedWorkItemIsALeak) {
  PIO_WORKITEM item = IoAllocateWorkItem(device_);
  EXPECT_EQ(SoftNdkWdkCheckLeaks(), 2u);  // the item, and the fixture's device
  ExpectOnly(SoftNdkWdkRuleLeak, 2);
  IoFreeWorkItem(item);
}

VOID ThreadMain(PVOID ctx) {
  auto* r = static_cast<Ran*>(ctx);
  r->irql = KeGetCurrentIrql();
  LARGE_INTEGER t = RelativeMs(30);
  KeDelayExecutionThread(KernelMode, FALSE, &t);
  PsTerminateSystemThread(STATUS_SUCCESS);
}

TEST_F(WorkItemTest, SystemThreadObjectIsSignaledWhenItEnds) {
  Ran r;
  HANDLE h = nullptr;
  ASSERT_EQ(PsCreateSystemThread(&h, THREAD_ALL_ACCESS, nullptr, nullptr, nullptr, ThreadMain, &r),
            STATUS_SUCCESS);
  PVOID thread = nullptr;
  ASSERT_EQ(ObReferenceObjectByHandle(h, SYNCHRONIZE, nullptr, KernelMode, &thread, nullptr),
            STATUS_SUCCESS);
  ZwClose(h);
  LARGE_INTEGER t = RelativeMs(5000);
  EXPECT_EQ(KeWaitForSingleObject(thread, Executive, KernelMode, FALSE, &t), STATUS_SUCCESS);
  ObDereferenceObject(thread);
  EXPECT_EQ(r.irql, PASSIVE_LEVEL);
  ExpectNone();
}

}  // namespace
}  // namespace softndk::wdk::test
