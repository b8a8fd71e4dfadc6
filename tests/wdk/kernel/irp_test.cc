// SPDX-License-Identifier: Apache-2.0
// IRPs through a two-driver stack: completion routines up the stack,
// STATUS_MORE_PROCESSING_REQUIRED, pending propagation, double completion,
// cancellation and its races, IoBuildDeviceIoControlRequest to a kit device.
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "kernel/device.h"
#include "kit_test_util.h"

namespace softndk::wdk::test {
namespace {

class IrpTest : public KitTest {
 protected:
  void SetUp() override {
    KitTest::SetUp();
    upper_driver_ = CreateDriverObject(L"irptest_upper");
    lower_driver_ = CreateDriverObject(L"irptest_lower");
    ASSERT_EQ(IoCreateDevice(lower_driver_, sizeof(void*), nullptr, FILE_DEVICE_UNKNOWN, 0, FALSE,
                             &lower_),
              STATUS_SUCCESS);
    ASSERT_EQ(IoCreateDevice(upper_driver_, sizeof(void*), nullptr, FILE_DEVICE_UNKNOWN, 0, FALSE,
                             &upper_),
              STATUS_SUCCESS);
    upper_->StackSize = 2;
    *static_cast<PDEVICE_OBJECT*>(upper_->DeviceExtension) = lower_;
  }
  void TearDown() override {
    IoDeleteDevice(upper_);
    IoDeleteDevice(lower_);
    DeleteDriverObject(upper_driver_);
    DeleteDriverObject(lower_driver_);
    KitTest::TearDown();
  }
  PDRIVER_OBJECT upper_driver_ = nullptr;
  PDRIVER_OBJECT lower_driver_ = nullptr;
  PDEVICE_OBJECT upper_ = nullptr;
  PDEVICE_OBJECT lower_ = nullptr;
};

struct Trace {
  std::mutex mutex;
  std::vector<std::string> steps;
  void Add(std::string s) {
    std::lock_guard<std::mutex> lock(mutex);
    steps.push_back(std::move(s));
  }
};
Trace* g_trace = nullptr;

NTSTATUS LowerCompletesNow(PDEVICE_OBJECT dev, PIRP irp) {
  (void)dev;
  g_trace->Add("lower dispatch");
  irp->IoStatus.Status = STATUS_SUCCESS;
  irp->IoStatus.Information = 42;
  IoCompleteRequest(irp, IO_NO_INCREMENT);
  return STATUS_SUCCESS;
}

NTSTATUS UpperCompletion(PDEVICE_OBJECT dev, PIRP irp, PVOID ctx) {
  g_trace->Add(dev == static_cast<PDEVICE_OBJECT>(ctx) ? "upper completion (own device)"
                                                       : "upper completion (wrong device)");
  if (irp->PendingReturned) IoMarkIrpPending(irp);
  return STATUS_CONTINUE_COMPLETION;
}

NTSTATUS UpperForwards(PDEVICE_OBJECT dev, PIRP irp) {
  g_trace->Add("upper dispatch");
  IoCopyCurrentIrpStackLocationToNext(irp);
  IoSetCompletionRoutine(irp, UpperCompletion, dev, TRUE, TRUE, TRUE);
  return IoCallDriver(*static_cast<PDEVICE_OBJECT*>(dev->DeviceExtension), irp);
}

NTSTATUS OriginatorCompletion(PDEVICE_OBJECT dev, PIRP irp, PVOID ctx) {
  g_trace->Add(dev == nullptr ? "originator completion" : "originator completion (device?)");
  KeSetEvent(static_cast<PKEVENT>(ctx), IO_NO_INCREMENT, FALSE);
  (void)irp;
  return STATUS_MORE_PROCESSING_REQUIRED;
}

TEST_F(IrpTest, CompletionRoutinesRunUpTheStack) {
  Trace trace;
  g_trace = &trace;
  upper_driver_->MajorFunction[IRP_MJ_INTERNAL_DEVICE_CONTROL] = UpperForwards;
  lower_driver_->MajorFunction[IRP_MJ_INTERNAL_DEVICE_CONTROL] = LowerCompletesNow;
  PIRP irp = IoAllocateIrp(upper_->StackSize, FALSE);
  KEVENT done;
  KeInitializeEvent(&done, NotificationEvent, FALSE);
  PIO_STACK_LOCATION next = IoGetNextIrpStackLocation(irp);
  next->MajorFunction = IRP_MJ_INTERNAL_DEVICE_CONTROL;
  next->Parameters.DeviceIoControl.IoControlCode = 0x1234;
  IoSetCompletionRoutine(irp, OriginatorCompletion, &done, TRUE, TRUE, TRUE);
  EXPECT_EQ(IoCallDriver(upper_, irp), STATUS_SUCCESS);
  EXPECT_EQ(KeReadStateEvent(&done), 1);
  EXPECT_EQ(irp->IoStatus.Status, STATUS_SUCCESS);
  EXPECT_EQ(irp->IoStatus.Information, 42u);
  EXPECT_EQ(irp->CurrentLocation, irp->StackCount + 1);  // back at the top
  EXPECT_EQ(trace.steps,
            (std::vector<std::string>{"upper dispatch", "lower dispatch",
                                      "upper completion (own device)", "originator completion"}));
  // Reused for a second trip.
  IoReuseIrp(irp, STATUS_NOT_SUPPORTED);
  EXPECT_EQ(irp->IoStatus.Status, STATUS_NOT_SUPPORTED);
  trace.steps.clear();
  KeClearEvent(&done);
  next = IoGetNextIrpStackLocation(irp);
  next->MajorFunction = IRP_MJ_INTERNAL_DEVICE_CONTROL;
  IoSetCompletionRoutine(irp, OriginatorCompletion, &done, TRUE, TRUE, TRUE);
  EXPECT_EQ(IoCallDriver(upper_, irp), STATUS_SUCCESS);
  EXPECT_EQ(trace.steps.size(), 4u);
  IoFreeIrp(irp);
  ExpectNone();
}

std::atomic<PIRP> g_parked{nullptr};

NTSTATUS LowerPends(PDEVICE_OBJECT dev, PIRP irp) {
  (void)dev;
  IoMarkIrpPending(irp);
  g_parked = irp;
  return STATUS_PENDING;
}

NTSTATUS OriginatorSeesPending(PDEVICE_OBJECT dev, PIRP irp, PVOID ctx) {
  (void)dev;
  *static_cast<BOOLEAN*>(ctx) = irp->PendingReturned;
  return STATUS_MORE_PROCESSING_REQUIRED;
}

TEST_F(IrpTest, PendingIsPropagatedAndCompletionHappensLater) {
  Trace trace;
  g_trace = &trace;
  upper_driver_->MajorFunction[IRP_MJ_READ] = UpperForwards;
  lower_driver_->MajorFunction[IRP_MJ_READ] = LowerPends;
  PIRP irp = IoAllocateIrp(2, FALSE);
  IoGetNextIrpStackLocation(irp)->MajorFunction = IRP_MJ_READ;
  BOOLEAN pending_returned = FALSE;
  IoSetCompletionRoutine(irp, OriginatorSeesPending, &pending_returned, TRUE, TRUE, TRUE);
  EXPECT_EQ(IoCallDriver(upper_, irp), STATUS_PENDING);
  std::thread completer([] {
    PIRP p = g_parked.exchange(nullptr);
    p->IoStatus.Status = STATUS_SUCCESS;
    IoCompleteRequest(p, IO_NO_INCREMENT);
  });
  completer.join();
  EXPECT_TRUE(pending_returned);
  IoFreeIrp(irp);
  ExpectNone();
}

NTSTATUS CompleteTwice(PDEVICE_OBJECT dev, PIRP irp) {
  (void)dev;
  irp->IoStatus.Status = STATUS_SUCCESS;
  IoCompleteRequest(irp, IO_NO_INCREMENT);
  IoCompleteRequest(irp, IO_NO_INCREMENT);  // the bug
  return STATUS_SUCCESS;
}

NTSTATUS ContinueCompletion(PDEVICE_OBJECT, PIRP, PVOID) { return STATUS_CONTINUE_COMPLETION; }

// The checker: an IRP completed twice.
TEST_F(IrpTest, CompletingTwiceIsReported) {
  lower_driver_->MajorFunction[IRP_MJ_WRITE] = CompleteTwice;
  PIRP irp = IoAllocateIrp(1, FALSE);
  IoGetNextIrpStackLocation(irp)->MajorFunction = IRP_MJ_WRITE;
  IoSetCompletionRoutine(irp, ContinueCompletion, nullptr, TRUE, TRUE, TRUE);
  IoCallDriver(lower_, irp);
  ExpectOnly(SoftNdkWdkRuleIrpCompletedTwice);
  IoFreeIrp(irp);
}

struct SyncForward {
  KEVENT event;
};

NTSTATUS SignalAndTakeBack(PDEVICE_OBJECT, PIRP irp, PVOID ctx) {
  (void)irp;
  KeSetEvent(&static_cast<SyncForward*>(ctx)->event, IO_NO_INCREMENT, FALSE);
  return STATUS_MORE_PROCESSING_REQUIRED;
}

// The synchronous-forwarding pattern: the upper driver's completion routine
// takes the IRP back and the upper driver completes it again (not a
// double completion).
NTSTATUS UpperForwardsSynchronously(PDEVICE_OBJECT dev, PIRP irp) {
  SyncForward f;
  KeInitializeEvent(&f.event, NotificationEvent, FALSE);
  IoCopyCurrentIrpStackLocationToNext(irp);
  IoSetCompletionRoutine(irp, SignalAndTakeBack, &f, TRUE, TRUE, TRUE);
  NTSTATUS st = IoCallDriver(*static_cast<PDEVICE_OBJECT*>(dev->DeviceExtension), irp);
  if (st == STATUS_PENDING) KeWaitForSingleObject(&f.event, Executive, KernelMode, FALSE, nullptr);
  irp->IoStatus.Information += 1;
  st = irp->IoStatus.Status;
  IoCompleteRequest(irp, IO_NO_INCREMENT);
  return st;
}

TEST_F(IrpTest, MoreProcessingRequiredHandsTheIrpBack) {
  Trace trace;
  g_trace = &trace;
  upper_driver_->MajorFunction[IRP_MJ_FLUSH_BUFFERS] = UpperForwardsSynchronously;
  lower_driver_->MajorFunction[IRP_MJ_FLUSH_BUFFERS] = LowerCompletesNow;
  PIRP irp = IoAllocateIrp(2, FALSE);
  KEVENT done;
  KeInitializeEvent(&done, NotificationEvent, FALSE);
  IoGetNextIrpStackLocation(irp)->MajorFunction = IRP_MJ_FLUSH_BUFFERS;
  IoSetCompletionRoutine(irp, OriginatorCompletion, &done, TRUE, TRUE, TRUE);
  EXPECT_EQ(IoCallDriver(upper_, irp), STATUS_SUCCESS);
  EXPECT_EQ(KeReadStateEvent(&done), 1);
  EXPECT_EQ(irp->IoStatus.Information, 43u);
  IoFreeIrp(irp);
  ExpectNone();
}

TEST_F(IrpTest, NoStackLocationLeftIsReported) {
  lower_driver_->MajorFunction[IRP_MJ_READ] = LowerCompletesNow;
  PIRP irp = IoAllocateIrp(1, FALSE);
  IoSetNextIrpStackLocation(irp);  // uses the only location
  EXPECT_EQ(IoCallDriver(lower_, irp), STATUS_INVALID_PARAMETER);
  ExpectOnly(SoftNdkWdkRuleIrpMisuse);
  IoFreeIrp(irp);
  IoFreeIrp(irp);
  ExpectOnly(SoftNdkWdkRuleDoubleFree);
}

// A driver queue with cancellation, written the documented way: the queue
// lock, IoSetCancelRoutine's return value and Irp->Cancel decide who
// completes the IRP.
struct CancelQueue {
  KSPIN_LOCK lock;
  LIST_ENTRY head;
  std::atomic<int> completed{0};
  std::atomic<int> cancelled{0};
};
CancelQueue* g_queue = nullptr;

VOID QueueCancelRoutine(PDEVICE_OBJECT dev, PIRP irp) {
  (void)dev;
  IoReleaseCancelSpinLock(irp->CancelIrql);
  KIRQL old;
  KeAcquireSpinLock(&g_queue->lock, &old);
  RemoveEntryList(&irp->Tail.Overlay.ListEntry);
  KeReleaseSpinLock(&g_queue->lock, old);
  g_queue->cancelled++;
  irp->IoStatus.Status = STATUS_CANCELLED;
  irp->IoStatus.Information = 0;
  IoCompleteRequest(irp, IO_NO_INCREMENT);
}

NTSTATUS QueueDispatch(PDEVICE_OBJECT dev, PIRP irp) {
  (void)dev;
  KIRQL old;
  KeAcquireSpinLock(&g_queue->lock, &old);
  IoSetCancelRoutine(irp, QueueCancelRoutine);
  // Cancel is read with acquire semantics: IoCancelIrp sets it from another
  // thread, outside this queue's lock.
  if (ReadBooleanAcquire(&irp->Cancel) && IoSetCancelRoutine(irp, nullptr) != nullptr) {
    // Cancelled before it was queued, and the routine will not run.
    KeReleaseSpinLock(&g_queue->lock, old);
    g_queue->cancelled++;
    irp->IoStatus.Status = STATUS_CANCELLED;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return STATUS_CANCELLED;
  }
  IoMarkIrpPending(irp);
  InsertTailList(&g_queue->head, &irp->Tail.Overlay.ListEntry);
  KeReleaseSpinLock(&g_queue->lock, old);
  return STATUS_PENDING;
}

// Completes the oldest queued IRP unless its cancel routine already owns it.
bool CompleteOne() {
  KIRQL old;
  KeAcquireSpinLock(&g_queue->lock, &old);
  for (PLIST_ENTRY e = g_queue->head.Flink; e != &g_queue->head; e = e->Flink) {
    PIRP irp = CONTAINING_RECORD(e, IRP, Tail.Overlay.ListEntry);
    if (IoSetCancelRoutine(irp, nullptr) == nullptr) continue;  // being cancelled
    RemoveEntryList(e);
    KeReleaseSpinLock(&g_queue->lock, old);
    g_queue->completed++;
    irp->IoStatus.Status = STATUS_SUCCESS;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return true;
  }
  KeReleaseSpinLock(&g_queue->lock, old);
  return false;
}

NTSTATUS CountCompletion(PDEVICE_OBJECT, PIRP irp, PVOID ctx) {
  auto* finals = static_cast<std::atomic<int>*>(ctx);
  finals[irp->IoStatus.Status == STATUS_CANCELLED ? 1 : 0]++;
  return STATUS_MORE_PROCESSING_REQUIRED;
}

TEST_F(IrpTest, CancelRoutineCompletesAQueuedIrp) {
  CancelQueue q;
  KeInitializeSpinLock(&q.lock);
  InitializeListHead(&q.head);
  g_queue = &q;
  lower_driver_->MajorFunction[IRP_MJ_READ] = QueueDispatch;
  std::atomic<int> finals[2] = {0, 0};
  PIRP irp = IoAllocateIrp(1, FALSE);
  IoGetNextIrpStackLocation(irp)->MajorFunction = IRP_MJ_READ;
  IoSetCompletionRoutine(irp, CountCompletion, finals, TRUE, TRUE, TRUE);
  EXPECT_EQ(IoCallDriver(lower_, irp), STATUS_PENDING);
  EXPECT_TRUE(IoCancelIrp(irp));
  EXPECT_EQ(finals[1].load(), 1);
  EXPECT_TRUE(IsListEmpty(&q.head));
  EXPECT_FALSE(IoCancelIrp(irp));  // no cancel routine any more
  IoFreeIrp(irp);
  ExpectNone();
}

// Cancel racing completion: every IRP completes exactly once, cancelled or
// not, and nothing is reported.
TEST_F(IrpTest, CancelRacesCompletionWithoutDoubleCompletion) {
  CancelQueue q;
  KeInitializeSpinLock(&q.lock);
  InitializeListHead(&q.head);
  g_queue = &q;
  lower_driver_->MajorFunction[IRP_MJ_READ] = QueueDispatch;
  constexpr int kIrps = 1000;
  std::atomic<int> finals[2] = {0, 0};
  std::vector<PIRP> irps;
  for (int i = 0; i < kIrps; i++) {
    PIRP irp = IoAllocateIrp(1, FALSE);
    IoGetNextIrpStackLocation(irp)->MajorFunction = IRP_MJ_READ;
    IoSetCompletionRoutine(irp, CountCompletion, finals, TRUE, TRUE, TRUE);
    irps.push_back(irp);
  }
  int cancelled_early = 0;
  for (int i = 0; i < kIrps; i++) {
    // Every tenth is cancelled before it reaches the driver: the driver sees
    // Irp->Cancel and completes it itself.
    if (i % 10 == 0 && !IoCancelIrp(irps[i])) cancelled_early++;
    IoCallDriver(lower_, irps[i]);
  }
  // The completer takes the queue from the front and the canceller cancels
  // the odd IRPs, front to back too; each waits when it is more than kWindow
  // ahead of the other, so they keep racing for the same IRPs.
  constexpr int kWindow = 8;
  std::atomic<int> cancel_pos{0};
  auto handled = [&] { return finals[0].load() + finals[1].load(); };
  std::thread canceller([&] {
    for (int i = 0; i < kIrps; i++) {
      while (handled() + kWindow < i) std::this_thread::yield();
      if (i % 2 == 1) IoCancelIrp(irps[i]);
      cancel_pos = i + 1;
    }
  });
  std::thread completer([&] {
    while (handled() < kIrps) {
      while (handled() > cancel_pos.load() + kWindow && cancel_pos.load() < kIrps) {
        std::this_thread::yield();
      }
      if (!CompleteOne()) std::this_thread::yield();
    }
  });
  canceller.join();
  completer.join();
  EXPECT_EQ(finals[0].load() + finals[1].load(), kIrps);
  EXPECT_EQ(q.completed.load(), finals[0].load());
  EXPECT_EQ(q.cancelled.load(), finals[1].load());
  EXPECT_EQ(cancelled_early, kIrps / 10);
  EXPECT_GE(finals[1].load(), kIrps / 10);
  EXPECT_GE(finals[0].load(), kIrps / 2 - kIrps / 10);  // the even ones complete normally
  RecordProperty("completed", finals[0].load());
  RecordProperty("cancelled", finals[1].load());
  for (PIRP irp : irps) IoFreeIrp(irp);
  ExpectNone();
}

// An adapter-control-style device of the kit: METHOD_BUFFERED requests with
// the output size check.
NTSTATUS EchoDispatch(PDEVICE_OBJECT dev, PIRP irp) {
  EXPECT_EQ(KitDeviceContext(dev), reinterpret_cast<void*>(0x5eed));
  PIO_STACK_LOCATION s = IoGetCurrentIrpStackLocation(irp);
  ULONG in = s->Parameters.DeviceIoControl.InputBufferLength;
  ULONG out = s->Parameters.DeviceIoControl.OutputBufferLength;
  if (s->MajorFunction != IRP_MJ_DEVICE_CONTROL || out < in) {
    irp->IoStatus.Status = STATUS_BUFFER_TOO_SMALL;
    irp->IoStatus.Information = in;  // the size needed
  } else {
    auto* b = static_cast<char*>(irp->AssociatedIrp.SystemBuffer);
    for (ULONG i = 0; i < in / 2; i++) std::swap(b[i], b[in - 1 - i]);
    irp->IoStatus.Status = STATUS_SUCCESS;
    irp->IoStatus.Information = in;
  }
  NTSTATUS st = irp->IoStatus.Status;
  IoCompleteRequest(irp, IO_NO_INCREMENT);
  return st;
}

TEST_F(IrpTest, DeviceIoControlRequestToAKitDevice) {
  PDEVICE_OBJECT kit =
      CreateKitDevice(L"\\Device\\WdkTestEcho", EchoDispatch, reinterpret_cast<void*>(0x5eed));
  ASSERT_NE(kit, nullptr);
  EXPECT_EQ(CreateKitDevice(L"\\Device\\WdkTestEcho", EchoDispatch, nullptr), nullptr);
  UNICODE_STRING name = RTL_CONSTANT_STRING(L"\\Device\\WdkTestEcho");
  PFILE_OBJECT file = nullptr;
  PDEVICE_OBJECT dev = nullptr;
  ASSERT_EQ(IoGetDeviceObjectPointer(&name, 0, &file, &dev), STATUS_SUCCESS);
  EXPECT_EQ(dev, kit);
  char in[5] = {'a', 'b', 'c', 'd', 'e'};
  char out[8] = {};
  KEVENT event;
  KeInitializeEvent(&event, NotificationEvent, FALSE);
  IO_STATUS_BLOCK iosb{};
  ULONG code = CTL_CODE(FILE_DEVICE_NETWORK, 0x801, METHOD_BUFFERED, FILE_ANY_ACCESS);
  PIRP irp = IoBuildDeviceIoControlRequest(code, dev, in, sizeof in, out, sizeof out, FALSE, &event,
                                           &iosb);
  ASSERT_NE(irp, nullptr);
  NTSTATUS st = IoCallDriver(dev, irp);
  if (st == STATUS_PENDING) KeWaitForSingleObject(&event, Executive, KernelMode, FALSE, nullptr);
  EXPECT_EQ(iosb.Status, STATUS_SUCCESS);
  EXPECT_EQ(iosb.Information, 5u);
  EXPECT_EQ(std::string(out, 5), "edcba");
  EXPECT_EQ(KeReadStateEvent(&event), 1);
  // Too small an output buffer: the size needed comes back in Information.
  KeClearEvent(&event);
  irp = IoBuildDeviceIoControlRequest(code, dev, in, sizeof in, out, 2, FALSE, &event, &iosb);
  EXPECT_EQ(IoCallDriver(dev, irp), STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(iosb.Status, STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(iosb.Information, 5u);
  ObDereferenceObject(file);
  DeleteKitDevice(kit);
  name = RTL_CONSTANT_STRING(L"\\Device\\WdkTestEcho");
  EXPECT_EQ(IoGetDeviceObjectPointer(&name, 0, &file, &dev), STATUS_OBJECT_NAME_NOT_FOUND);
  ExpectNone();
}

// The checker: a device object left at unload.
TEST_F(IrpTest, DeviceNotDeletedIsALeak) {
  PDEVICE_OBJECT extra = nullptr;
  UNICODE_STRING name = RTL_CONSTANT_STRING(L"\\Device\\WdkTestLeft");
  ASSERT_EQ(IoCreateDevice(lower_driver_, 0, &name, FILE_DEVICE_UNKNOWN, 0, FALSE, &extra),
            STATUS_SUCCESS);
  PDEVICE_OBJECT dup = nullptr;
  EXPECT_EQ(IoCreateDevice(lower_driver_, 0, &name, FILE_DEVICE_UNKNOWN, 0, FALSE, &dup),
            STATUS_OBJECT_NAME_COLLISION);
  // The fixture's two devices are live too: three reports, one per device.
  EXPECT_EQ(SoftNdkWdkCheckLeaks(), 3u);
  ExpectOnly(SoftNdkWdkRuleLeak, 3);
  IoDeleteDevice(extra);
  IoDeleteDevice(extra);
  ExpectOnly(SoftNdkWdkRuleDoubleFree);
}

}  // namespace
}  // namespace softndk::wdk::test
