// SPDX-License-Identifier: Apache-2.0
// Cancel-safe IRP queues (softndk_wdk/io.h): the driver's queue and lock,
// the kit's handling of the three-way race between insertion, cancellation
// and removal. The IRP's DriverContext[3] points at its IO_CSQ_IRP_CONTEXT
// or, without one, at the IO_CSQ (both start with a Type).
#include "irql/checker.h"

namespace {

constexpr int kCsqSlot = 3;

PIO_CSQ CsqOf(PIRP irp) {
  auto* p = static_cast<ULONG*>(irp->Tail.Overlay.DriverContext[kCsqSlot]);
  if (p == nullptr) return nullptr;
  if (*p == IO_TYPE_CSQ_IRP_CONTEXT) return reinterpret_cast<PIO_CSQ_IRP_CONTEXT>(p)->Csq;
  return reinterpret_cast<PIO_CSQ>(p);
}

// Under the queue lock: the IRP leaves the queue and its context.
void Detach(PIO_CSQ csq, PIRP irp) {
  csq->CsqRemoveIrp(csq, irp);
  auto* p = static_cast<ULONG*>(irp->Tail.Overlay.DriverContext[kCsqSlot]);
  if (p != nullptr && *p == IO_TYPE_CSQ_IRP_CONTEXT) {
    reinterpret_cast<PIO_CSQ_IRP_CONTEXT>(p)->Irp = nullptr;
  }
  irp->Tail.Overlay.DriverContext[kCsqSlot] = nullptr;
}

VOID CsqCancelRoutine(PDEVICE_OBJECT device, PIRP irp) {
  (void)device;
  IoReleaseCancelSpinLock(irp->CancelIrql);
  PIO_CSQ csq = CsqOf(irp);
  KIRQL irql;
  csq->CsqAcquireLock(csq, &irql);
  Detach(csq, irp);
  csq->CsqReleaseLock(csq, irql);
  csq->CsqCompleteCanceledIrp(csq, irp);
}

NTSTATUS Insert(PIO_CSQ csq, PIRP irp, PIO_CSQ_IRP_CONTEXT context, PVOID insert_context) {
  KIRQL irql;
  csq->CsqAcquireLock(csq, &irql);
  NTSTATUS status = STATUS_SUCCESS;
  if (csq->Type == IO_TYPE_CSQ_EX) {
    // The Ex form is stored in the same field (as on Windows).
    auto insert_ex = reinterpret_cast<PIO_CSQ_INSERT_IRP_EX>(
        reinterpret_cast<void (*)(void)>(csq->CsqInsertIrp));
    status = insert_ex(csq, irp, insert_context);
    if (!NT_SUCCESS(status)) {
      csq->CsqReleaseLock(csq, irql);
      return status;
    }
  } else {
    csq->CsqInsertIrp(csq, irp);
  }
  if (context != nullptr) {
    context->Type = IO_TYPE_CSQ_IRP_CONTEXT;
    context->Irp = irp;
    context->Csq = csq;
    irp->Tail.Overlay.DriverContext[kCsqSlot] = context;
  } else {
    irp->Tail.Overlay.DriverContext[kCsqSlot] = csq;
  }
  IoMarkIrpPending(irp);
  IoSetCancelRoutine(irp, CsqCancelRoutine);
  if (ReadBooleanAcquire(&irp->Cancel) && IoSetCancelRoutine(irp, nullptr) != nullptr) {
    // Cancelled before the routine was set: nobody else will complete it.
    Detach(csq, irp);
    csq->CsqReleaseLock(csq, irql);
    csq->CsqCompleteCanceledIrp(csq, irp);
    return status;
  }
  csq->CsqReleaseLock(csq, irql);
  return status;
}

NTSTATUS Init(PIO_CSQ csq, ULONG type, PIO_CSQ_INSERT_IRP insert, PIO_CSQ_REMOVE_IRP remove,
              PIO_CSQ_PEEK_NEXT_IRP peek, PIO_CSQ_ACQUIRE_LOCK acquire,
              PIO_CSQ_RELEASE_LOCK release, PIO_CSQ_COMPLETE_CANCELED_IRP complete) {
  if (csq == nullptr || insert == nullptr || remove == nullptr || peek == nullptr ||
      acquire == nullptr || release == nullptr || complete == nullptr) {
    return STATUS_INVALID_PARAMETER;
  }
  csq->Type = type;
  csq->CsqInsertIrp = insert;
  csq->CsqRemoveIrp = remove;
  csq->CsqPeekNextIrp = peek;
  csq->CsqAcquireLock = acquire;
  csq->CsqReleaseLock = release;
  csq->CsqCompleteCanceledIrp = complete;
  csq->ReservePointer = nullptr;
  return STATUS_SUCCESS;
}

}  // namespace

extern "C" {

NTSTATUS IoCsqInitialize(PIO_CSQ Csq, PIO_CSQ_INSERT_IRP CsqInsertIrp,
                         PIO_CSQ_REMOVE_IRP CsqRemoveIrp, PIO_CSQ_PEEK_NEXT_IRP CsqPeekNextIrp,
                         PIO_CSQ_ACQUIRE_LOCK CsqAcquireLock, PIO_CSQ_RELEASE_LOCK CsqReleaseLock,
                         PIO_CSQ_COMPLETE_CANCELED_IRP CsqCompleteCanceledIrp) {
  return Init(Csq, IO_TYPE_CSQ, CsqInsertIrp, CsqRemoveIrp, CsqPeekNextIrp, CsqAcquireLock,
              CsqReleaseLock, CsqCompleteCanceledIrp);
}

NTSTATUS IoCsqInitializeEx(PIO_CSQ Csq, PIO_CSQ_INSERT_IRP_EX CsqInsertIrp,
                           PIO_CSQ_REMOVE_IRP CsqRemoveIrp, PIO_CSQ_PEEK_NEXT_IRP CsqPeekNextIrp,
                           PIO_CSQ_ACQUIRE_LOCK CsqAcquireLock, PIO_CSQ_RELEASE_LOCK CsqReleaseLock,
                           PIO_CSQ_COMPLETE_CANCELED_IRP CsqCompleteCanceledIrp) {
  return Init(Csq, IO_TYPE_CSQ_EX,
              reinterpret_cast<PIO_CSQ_INSERT_IRP>(reinterpret_cast<void (*)(void)>(CsqInsertIrp)),
              CsqRemoveIrp, CsqPeekNextIrp, CsqAcquireLock, CsqReleaseLock, CsqCompleteCanceledIrp);
}

VOID IoCsqInsertIrp(PIO_CSQ Csq, PIRP Irp, PIO_CSQ_IRP_CONTEXT Context) {
  (void)Insert(Csq, Irp, Context, nullptr);
}

NTSTATUS IoCsqInsertIrpEx(PIO_CSQ Csq, PIRP Irp, PIO_CSQ_IRP_CONTEXT Context, PVOID InsertContext) {
  return Insert(Csq, Irp, Context, InsertContext);
}

PIRP IoCsqRemoveIrp(PIO_CSQ Csq, PIO_CSQ_IRP_CONTEXT Context) {
  KIRQL irql;
  Csq->CsqAcquireLock(Csq, &irql);
  PIRP irp = Context->Irp;
  if (irp != nullptr) {
    if (IoSetCancelRoutine(irp, nullptr) != nullptr) {
      Detach(Csq, irp);
    } else {
      irp = nullptr;  // its cancel routine is about to run and complete it
    }
  }
  Csq->CsqReleaseLock(Csq, irql);
  return irp;
}

PIRP IoCsqRemoveNextIrp(PIO_CSQ Csq, PVOID PeekContext) {
  KIRQL irql;
  Csq->CsqAcquireLock(Csq, &irql);
  PIRP irp = Csq->CsqPeekNextIrp(Csq, nullptr, PeekContext);
  while (irp != nullptr) {
    if (IoSetCancelRoutine(irp, nullptr) != nullptr) {
      Detach(Csq, irp);
      break;
    }
    irp = Csq->CsqPeekNextIrp(Csq, irp, PeekContext);  // skip one being cancelled
  }
  Csq->CsqReleaseLock(Csq, irql);
  return irp;
}

}  // extern "C"
