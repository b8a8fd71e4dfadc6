// SPDX-License-Identifier: Apache-2.0
// IRPs (softndk_wdk/io.h): allocation, IoCallDriver, IoCompleteRequest with
// completion routines run up the stack, cancellation with the cancel spin
// lock, and IoBuildDeviceIoControlRequest's self-completing IRPs.
//
// Irp->KitState guards completion: kIdle until dispatched, kInDriver while a
// driver owns it, kCompleting during IoCompleteRequest, kCompleted after the
// last completion routine. IoCompleteRequest while kCompleting/kCompleted is
// the "completed twice" report. A completion routine that returns
// STATUS_MORE_PROCESSING_REQUIRED takes the IRP back (kInDriver).
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>

#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/registry.h"
#include "kernel/spinlock.h"

using namespace softndk::wdk;

namespace {

constexpr ULONG kIrpMagic = 0x4b707249;  // "IrpK"
enum : LONG { kIdle = 0, kInDriver = 1, kCompleting = 2, kCompleted = 3 };
// IRP.AllocationFlags bits of the kit.
constexpr UCHAR kFromIoAllocateIrp = 0x01;
constexpr UCHAR kThreaded = 0x02;  // IoBuildDeviceIoControlRequest: completes itself

struct IrpInfo {
  const void* site = nullptr;
};

LiveRegistry<IrpInfo>& Irps() {
  static auto* r = new LiveRegistry<IrpInfo>;
  return *r;
}

// What IoBuildDeviceIoControlRequest's IRPs need at completion.
struct Threaded {
  ULONG method = METHOD_BUFFERED;
  ULONG output_length = 0;
};
std::mutex g_threaded_mutex;
std::unordered_map<PIRP, Threaded>& ThreadedIrps() {
  static auto* m = new std::unordered_map<PIRP, Threaded>;
  return *m;
}

KSPIN_LOCK g_cancel_lock = 0;

ULONG ReportIrpLeaks() {
  auto live = Irps().Snapshot();
  if (!live.empty()) {
    Report(SoftNdkWdkRuleLeak, "IoAllocateIrp", live.front().second.site,
           "%zu IRP(s) never freed with IoFreeIrp (one allocated at %s)", live.size(),
           DescribeAddress(live.front().second.site).c_str());
  }
  return static_cast<ULONG>(live.size());
}

const bool kRegistered = (RegisterLeakReporter("irp", ReportIrpLeaks), true);

PIO_STACK_LOCATION Stack(PIRP irp) { return reinterpret_cast<PIO_STACK_LOCATION>(irp + 1); }

void InitIrp(PIRP irp, USHORT size, CCHAR stack_size, UCHAR flags) {
  std::memset(static_cast<void*>(irp), 0, size);
  irp->Type = 6;  // IO_TYPE_IRP
  irp->Size = size;
  irp->StackCount = stack_size;
  irp->CurrentLocation = static_cast<CHAR>(stack_size + 1);
  irp->AllocationFlags = flags;
  InitializeListHead(&irp->ThreadListEntry);
  irp->Tail.Overlay.CurrentStackLocation = Stack(irp) + stack_size;
  irp->Magic = kIrpMagic;
  irp->KitState = kIdle;
}

bool CheckIrp(PIRP irp, const char* call, const void* site) {
  if (irp != nullptr && irp->Magic == kIrpMagic) return true;
  Report(SoftNdkWdkRuleIrpMisuse, call, site,
         "%p is not an initialized IRP (freed, or never from IoAllocateIrp/IoInitializeIrp)",
         static_cast<void*>(irp));
  return false;
}

void FreeIrpMemory(PIRP irp) {
  irp->Magic = 0;
  std::free(irp);
}

// The end of a threaded IRP: copy out, fill the caller's status block, set
// its event, free everything.
void FinishThreaded(PIRP irp) {
  Threaded t;
  {
    std::lock_guard<std::mutex> lock(g_threaded_mutex);
    auto it = ThreadedIrps().find(irp);
    if (it != ThreadedIrps().end()) {
      t = it->second;
      ThreadedIrps().erase(it);
    }
  }
  NTSTATUS status = irp->IoStatus.Status;
  if (t.method == METHOD_BUFFERED && !NT_ERROR(status) && irp->UserBuffer != nullptr &&
      irp->AssociatedIrp.SystemBuffer != nullptr) {
    ULONG_PTR n = irp->IoStatus.Information;
    if (n > t.output_length) n = t.output_length;
    std::memcpy(irp->UserBuffer, irp->AssociatedIrp.SystemBuffer, n);
  }
  if (irp->UserIosb != nullptr) *irp->UserIosb = irp->IoStatus;
  PKEVENT event = irp->UserEvent;
  std::free(irp->AssociatedIrp.SystemBuffer);
  for (PMDL m = irp->MdlAddress; m != nullptr;) {
    PMDL next = m->Next;
    IoFreeMdl(m);
    m = next;
  }
  Irps().Remove(irp, nullptr, nullptr, nullptr);
  FreeIrpMemory(irp);
  if (event != nullptr) KeSetEvent(event, IO_NO_INCREMENT, FALSE);
}

}  // namespace

extern "C" {

PIRP IoAllocateIrp(CCHAR StackSize, BOOLEAN ChargeQuota) {
  (void)ChargeQuota;
  (void)kRegistered;
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(DISPATCH_LEVEL, "IoAllocateIrp", site);
  if (StackSize < 1) {
    Report(SoftNdkWdkRuleInvalidParameter, "IoAllocateIrp", site, "stack size %d", StackSize);
    return nullptr;
  }
  USHORT size = IoSizeOfIrp(StackSize);
  auto* irp = static_cast<PIRP>(std::malloc(size));
  if (irp == nullptr) return nullptr;
  InitIrp(irp, size, StackSize, kFromIoAllocateIrp);
  Irps().Add(irp, IrpInfo{site});
  return irp;
}

PIRP IoAllocateIrpEx(PDEVICE_OBJECT DeviceObject, CCHAR StackSize, BOOLEAN ChargeQuota) {
  (void)DeviceObject;
  return IoAllocateIrp(StackSize, ChargeQuota);
}

VOID IoInitializeIrp(PIRP Irp, USHORT PacketSize, CCHAR StackSize) {
  if (PacketSize < IoSizeOfIrp(StackSize)) {
    Report(SoftNdkWdkRuleInvalidParameter, "IoInitializeIrp", SOFTNDK_WDK_SITE(),
           "packet size %u is below IoSizeOfIrp(%d) = %u", PacketSize, StackSize,
           IoSizeOfIrp(StackSize));
    return;
  }
  InitIrp(Irp, PacketSize, StackSize, 0);
}

VOID IoFreeIrp(PIRP Irp) {
  const void* site = SOFTNDK_WDK_SITE();
  const void* first = nullptr;
  auto state = Irps().Remove(Irp, site, nullptr, &first);
  if (state == LiveRegistry<IrpInfo>::State::kFreed) {
    Report(SoftNdkWdkRuleDoubleFree, "IoFreeIrp", site, "IRP %p was already freed (at %s)",
           static_cast<void*>(Irp), DescribeAddress(first).c_str());
    return;
  }
  if (state == LiveRegistry<IrpInfo>::State::kUnknown) {
    Report(SoftNdkWdkRuleDoubleFree, "IoFreeIrp", site,
           "%p is not an IRP from IoAllocateIrp (or it was freed long ago)",
           static_cast<void*>(Irp));
    return;
  }
  if (__atomic_load_n(&Irp->CancelRoutine, __ATOMIC_ACQUIRE) != nullptr) {
    Report(SoftNdkWdkRuleIrpMisuse, "IoFreeIrp", site,
           "IRP %p still has a cancel routine (it is queued somewhere)", static_cast<void*>(Irp));
  }
  FreeIrpMemory(Irp);
}

VOID IoReuseIrp(PIRP Irp, NTSTATUS Iostatus) {
  const void* site = SOFTNDK_WDK_SITE();
  if (!CheckIrp(Irp, "IoReuseIrp", site)) return;
  if (__atomic_load_n(&Irp->CancelRoutine, __ATOMIC_ACQUIRE) != nullptr) {
    Report(SoftNdkWdkRuleIrpMisuse, "IoReuseIrp", site, "IRP %p still has a cancel routine",
           static_cast<void*>(Irp));
  }
  UCHAR flags = Irp->AllocationFlags;
  InitIrp(Irp, Irp->Size, Irp->StackCount, flags);
  Irp->IoStatus.Status = Iostatus;
}

NTSTATUS IoCallDriver(PDEVICE_OBJECT DeviceObject, PIRP Irp) {
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(DISPATCH_LEVEL, "IoCallDriver", site);
  if (!CheckIrp(Irp, "IoCallDriver", site)) return STATUS_INVALID_PARAMETER;
  if (DeviceObject == nullptr || DeviceObject->DriverObject == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, "IoCallDriver", site, "no device object");
    return STATUS_INVALID_PARAMETER;
  }
  if (Irp->CurrentLocation <= 1) {
    Report(SoftNdkWdkRuleIrpMisuse, "IoCallDriver", site,
           "IRP %p has no stack location left for the next driver (NO_MORE_IRP_STACK_LOCATIONS)",
           static_cast<void*>(Irp));
    return STATUS_INVALID_PARAMETER;
  }
  Irp->CurrentLocation--;
  Irp->Tail.Overlay.CurrentStackLocation--;
  PIO_STACK_LOCATION stack = Irp->Tail.Overlay.CurrentStackLocation;
  stack->DeviceObject = DeviceObject;
  __atomic_store_n(&Irp->KitState, kInDriver, __ATOMIC_RELEASE);
  UCHAR major = stack->MajorFunction;
  PDRIVER_DISPATCH dispatch =
      major <= IRP_MJ_MAXIMUM_FUNCTION ? DeviceObject->DriverObject->MajorFunction[major] : nullptr;
  if (dispatch == nullptr) {
    Irp->IoStatus.Status = STATUS_INVALID_DEVICE_REQUEST;
    Irp->IoStatus.Information = 0;
    IoCompleteRequest(Irp, IO_NO_INCREMENT);
    return STATUS_INVALID_DEVICE_REQUEST;
  }
  return dispatch(DeviceObject, Irp);
}

VOID IoCompleteRequest(PIRP Irp, CCHAR PriorityBoost) {
  (void)PriorityBoost;
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(DISPATCH_LEVEL, "IoCompleteRequest", site);
  if (!CheckIrp(Irp, "IoCompleteRequest", site)) return;
  LONG state = __atomic_load_n(&Irp->KitState, __ATOMIC_ACQUIRE);
  for (;;) {
    if (state == kCompleting || state == kCompleted) {
      Report(SoftNdkWdkRuleIrpCompletedTwice, "IoCompleteRequest", site,
             "IRP %p is already %s (status 0x%08x)", static_cast<void*>(Irp),
             state == kCompleting ? "being completed" : "completed",
             static_cast<unsigned>(Irp->IoStatus.Status));
      return;
    }
    if (__atomic_compare_exchange_n(&Irp->KitState, &state, kCompleting, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      break;
    }
  }
  if (Irp->IoStatus.Status == STATUS_PENDING) {
    Report(SoftNdkWdkRuleIrpMisuse, "IoCompleteRequest", site,
           "IRP %p completed with STATUS_PENDING", static_cast<void*>(Irp));
  }
  if (__atomic_load_n(&Irp->CancelRoutine, __ATOMIC_ACQUIRE) != nullptr) {
    Report(SoftNdkWdkRuleIrpMisuse, "IoCompleteRequest", site,
           "IRP %p completed with a cancel routine still set", static_cast<void*>(Irp));
  }
  // Walk up from the current location; each location above the completing
  // driver may hold the completion routine of the driver that called down.
  while (Irp->CurrentLocation <= Irp->StackCount) {
    PIO_STACK_LOCATION done = Irp->Tail.Overlay.CurrentStackLocation;
    Irp->PendingReturned = (done->Control & SL_PENDING_RETURNED) != 0;
    PIO_COMPLETION_ROUTINE routine = done->CompletionRoutine;
    PVOID context = done->Context;
    UCHAR control = done->Control;
    done->CompletionRoutine = nullptr;
    done->Control = 0;
    Irp->CurrentLocation++;
    Irp->Tail.Overlay.CurrentStackLocation++;
    NTSTATUS status = Irp->IoStatus.Status;
    bool invoke =
        routine != nullptr &&
        ((NT_SUCCESS(status) && (control & SL_INVOKE_ON_SUCCESS)) ||
         (!NT_SUCCESS(status) && (control & SL_INVOKE_ON_ERROR)) ||
         (__atomic_load_n(&Irp->Cancel, __ATOMIC_ACQUIRE) && (control & SL_INVOKE_ON_CANCEL)));
    if (invoke) {
      PDEVICE_OBJECT dev = Irp->CurrentLocation <= Irp->StackCount
                               ? Irp->Tail.Overlay.CurrentStackLocation->DeviceObject
                               : nullptr;
      // The routine owns the IRP while it runs: it may complete it again
      // (after STATUS_MORE_PROCESSING_REQUIRED) or free it.
      __atomic_store_n(&Irp->KitState, kInDriver, __ATOMIC_RELEASE);
      if (routine(dev, Irp, context) == STATUS_MORE_PROCESSING_REQUIRED) return;
      __atomic_store_n(&Irp->KitState, kCompleting, __ATOMIC_RELEASE);
    } else if (Irp->PendingReturned && Irp->CurrentLocation <= Irp->StackCount) {
      IoMarkIrpPending(Irp);
    }
  }
  __atomic_store_n(&Irp->KitState, kCompleted, __ATOMIC_RELEASE);
  if ((Irp->AllocationFlags & kThreaded) != 0) FinishThreaded(Irp);
}

NTSTATUS IoSetCompletionRoutineEx(PDEVICE_OBJECT DeviceObject, PIRP Irp,
                                  PIO_COMPLETION_ROUTINE CompletionRoutine, PVOID Context,
                                  BOOLEAN InvokeOnSuccess, BOOLEAN InvokeOnError,
                                  BOOLEAN InvokeOnCancel) {
  (void)DeviceObject;  // keeps the driver loaded on Windows; drivers stay loaded here
  IoSetCompletionRoutine(Irp, CompletionRoutine, Context, InvokeOnSuccess, InvokeOnError,
                         InvokeOnCancel);
  return STATUS_SUCCESS;
}

VOID IoAcquireCancelSpinLock(PKIRQL Irql) {
  const void* site = SOFTNDK_WDK_SITE();
  KIRQL old = KeGetCurrentIrql();
  if (old < DISPATCH_LEVEL) KeRaiseIrql(DISPATCH_LEVEL, &old);
  AcquireSpinLockRaw(&g_cancel_lock, "IoAcquireCancelSpinLock", site);
  *Irql = old;
}

VOID IoReleaseCancelSpinLock(KIRQL Irql) {
  const void* site = SOFTNDK_WDK_SITE();
  ReleaseSpinLockRaw(&g_cancel_lock, "IoReleaseCancelSpinLock", site);
  KeLowerIrql(Irql);
}

BOOLEAN IoCancelIrp(PIRP Irp) {
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(DISPATCH_LEVEL, "IoCancelIrp", site);
  if (!CheckIrp(Irp, "IoCancelIrp", site)) return FALSE;
  KIRQL irql;
  IoAcquireCancelSpinLock(&irql);
  // Atomic: drivers read Cancel under their own locks (with
  // ReadBooleanAcquire under TSan-clean code), not the cancel lock.
  __atomic_store_n(&Irp->Cancel, TRUE, __ATOMIC_RELEASE);
  PDRIVER_CANCEL routine = IoSetCancelRoutine(Irp, nullptr);
  if (routine == nullptr) {
    IoReleaseCancelSpinLock(irql);
    return FALSE;
  }
  Irp->CancelIrql = irql;
  PDEVICE_OBJECT dev = Irp->CurrentLocation <= Irp->StackCount
                           ? Irp->Tail.Overlay.CurrentStackLocation->DeviceObject
                           : nullptr;
  // The routine releases the cancel spin lock (IoReleaseCancelSpinLock with
  // Irp->CancelIrql) and completes the IRP.
  routine(dev, Irp);
  if (HoldsSpinLock(&g_cancel_lock)) {
    Report(SoftNdkWdkRuleIrpMisuse, "IoCancelIrp", reinterpret_cast<const void*>(routine),
           "the cancel routine returned without releasing the cancel spin lock");
    IoReleaseCancelSpinLock(irql);
  }
  return TRUE;
}

PIRP IoBuildDeviceIoControlRequest(ULONG IoControlCode, PDEVICE_OBJECT DeviceObject,
                                   PVOID InputBuffer, ULONG InputBufferLength, PVOID OutputBuffer,
                                   ULONG OutputBufferLength, BOOLEAN InternalDeviceIoControl,
                                   PKEVENT Event, PIO_STATUS_BLOCK IoStatusBlock) {
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(PASSIVE_LEVEL, "IoBuildDeviceIoControlRequest", site);
  if (DeviceObject == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, "IoBuildDeviceIoControlRequest", site,
           "no device object");
    return nullptr;
  }
  CCHAR stack_size = DeviceObject->StackSize < 1 ? 1 : DeviceObject->StackSize;
  USHORT size = IoSizeOfIrp(stack_size);
  auto* irp = static_cast<PIRP>(std::malloc(size));
  if (irp == nullptr) return nullptr;
  InitIrp(irp, size, stack_size, kFromIoAllocateIrp | kThreaded);
  Irps().Add(irp, IrpInfo{site});
  irp->UserIosb = IoStatusBlock;
  irp->UserEvent = Event;
  irp->UserBuffer = OutputBuffer;
  irp->RequestorMode = KernelMode;
  PIO_STACK_LOCATION next = IoGetNextIrpStackLocation(irp);
  next->MajorFunction =
      InternalDeviceIoControl ? IRP_MJ_INTERNAL_DEVICE_CONTROL : IRP_MJ_DEVICE_CONTROL;
  next->Parameters.DeviceIoControl.IoControlCode = IoControlCode;
  next->Parameters.DeviceIoControl.InputBufferLength = InputBufferLength;
  next->Parameters.DeviceIoControl.OutputBufferLength = OutputBufferLength;
  ULONG method = METHOD_FROM_CTL_CODE(IoControlCode);
  bool ok = true;
  if (method == METHOD_BUFFERED) {
    ULONG n = InputBufferLength > OutputBufferLength ? InputBufferLength : OutputBufferLength;
    if (n > 0) {
      irp->AssociatedIrp.SystemBuffer = std::calloc(1, n);
      ok = irp->AssociatedIrp.SystemBuffer != nullptr;
      if (ok && InputBuffer != nullptr) {
        std::memcpy(irp->AssociatedIrp.SystemBuffer, InputBuffer, InputBufferLength);
      }
    }
  } else if (method == METHOD_NEITHER) {
    next->Parameters.DeviceIoControl.Type3InputBuffer = InputBuffer;
  } else {
    irp->AssociatedIrp.SystemBuffer = InputBufferLength ? std::malloc(InputBufferLength) : nullptr;
    if (InputBufferLength != 0) {
      ok = irp->AssociatedIrp.SystemBuffer != nullptr;
      if (ok) std::memcpy(irp->AssociatedIrp.SystemBuffer, InputBuffer, InputBufferLength);
    }
    if (ok && OutputBufferLength != 0) {
      ok = IoAllocateMdl(OutputBuffer, OutputBufferLength, FALSE, FALSE, irp) != nullptr;
    }
  }
  if (!ok) {
    std::free(irp->AssociatedIrp.SystemBuffer);
    if (irp->MdlAddress != nullptr) IoFreeMdl(irp->MdlAddress);
    Irps().Remove(irp, nullptr, nullptr, nullptr);
    FreeIrpMemory(irp);
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(g_threaded_mutex);
  ThreadedIrps()[irp] = Threaded{method, OutputBufferLength};
  return irp;
}

}  // extern "C"
