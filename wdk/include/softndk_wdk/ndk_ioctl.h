// SPDX-License-Identifier: Apache-2.0
/*
 * softndk_wdk/ndk_ioctl.h - softndk's asynchronous adapter control, driven
 * with IRPs (the "IRP-based verbs" design: queued, cancellable event
 * requests; query and modify of adapter and port; a close that does not
 * block).
 *
 * The target is the kit's adapter-control device, named
 * SOFTNDK_ADAPTER_CONTROL_DEVICE_NAME (IoGetDeviceObjectPointer finds it once
 * the consumer has called WskRegister), or SoftNdkWdkAdapterControlDevice().
 * Send it IRP_MJ_INTERNAL_DEVICE_CONTROL (or IRP_MJ_DEVICE_CONTROL) IRPs
 * with IoCallDriver, built by IoBuildDeviceIoControlRequest or by hand:
 * every code is METHOD_BUFFERED, so the input structure and the output
 * share Irp->AssociatedIrp.SystemBuffer, with the lengths in the stack
 * location's Parameters.DeviceIoControl. The adapter is one that
 * WskOpenNdkAdapter returned.
 *
 * Completion: through IoCompleteRequest, i.e. the IRP's completion routine,
 * with IoStatus.Status and IoStatus.Information. Common statuses:
 *   STATUS_INVALID_PARAMETER   input shorter than the code's structure
 *   STATUS_INVALID_HANDLE      not an open adapter of the kit
 *   STATUS_BUFFER_TOO_SMALL    output too short; Information = bytes needed
 *   STATUS_INVALID_DEVICE_REQUEST  unknown code or major function
 * docs/wdk.md, "Adapter control with IRPs", has the full table.
 */
#ifndef SOFTNDK_WDK_NDK_IOCTL_H_
#define SOFTNDK_WDK_NDK_IOCTL_H_

#include <softndk/softndk.h>
#include <wdm.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SOFTNDK_ADAPTER_CONTROL_DEVICE_NAME L"\\Device\\SoftNdkAdapterControl"

/* The adapter-control device (created on first use; never NULL). */
PDEVICE_OBJECT SoftNdkWdkAdapterControlDevice(void);

#define SOFTNDK_IOCTL(n) \
  CTL_CODE(FILE_DEVICE_NETWORK, 0x900 + (n), METHOD_BUFFERED, FILE_ANY_ACCESS)

/* Pends until the adapter's next fatal error (STATUS_SUCCESS), or
 * STATUS_CANCELLED on IoCancelIrp or adapter close. In: SOFTNDK_IOCTL_ADAPTER.
 * Out: nothing. Completes at once with STATUS_SUCCESS if the adapter has
 * already failed. Several may be queued; one error completes all. */
#define IOCTL_SOFTNDK_GET_FATAL_EVENT SOFTNDK_IOCTL(0)
/* Pends until the port's next event; the oldest queued request gets it.
 * In: SOFTNDK_IOCTL_PORT. Out: ULONG, a SOFTNDK_PORT_EVENT_* code
 * (Information = sizeof(ULONG)). STATUS_CANCELLED on IoCancelIrp or close;
 * STATUS_INVALID_PARAMETER for a bad port; STATUS_FILE_FORCED_CLOSED after a
 * fatal error. */
#define IOCTL_SOFTNDK_GET_PORT_EVENT SOFTNDK_IOCTL(1)
/* In: SOFTNDK_IOCTL_ADAPTER. Out: SOFTNDK_ADAPTER_ATTR (variable size;
 * Information = bytes written). Completes inline. */
#define IOCTL_SOFTNDK_QUERY_ADAPTER SOFTNDK_IOCTL(2)
/* In: SOFTNDK_IOCTL_PORT. Out: SOFTNDK_PORT_ATTR (variable size). */
#define IOCTL_SOFTNDK_QUERY_PORT SOFTNDK_IOCTL(3)
/* In: SOFTNDK_IOCTL_MODIFY_ADAPTER. Out: nothing. */
#define IOCTL_SOFTNDK_MODIFY_ADAPTER SOFTNDK_IOCTL(4)
/* In: SOFTNDK_IOCTL_MODIFY_PORT. Out: nothing. */
#define IOCTL_SOFTNDK_MODIFY_PORT SOFTNDK_IOCTL(5)
/* The non-blocking adapter close, callable up to DISPATCH_LEVEL:
 * STATUS_DEVICE_BUSY while NDK objects are open on the adapter (nothing
 * changes); otherwise every queued event IRP completes with
 * STATUS_CANCELLED and then this one with STATUS_SUCCESS. The adapter
 * pointer is invalid once it has completed. In: SOFTNDK_IOCTL_ADAPTER. */
#define IOCTL_SOFTNDK_CLOSE_ADAPTER SOFTNDK_IOCTL(6)

typedef struct _SOFTNDK_IOCTL_ADAPTER {
  NDK_ADAPTER* Adapter;
} SOFTNDK_IOCTL_ADAPTER;

typedef struct _SOFTNDK_IOCTL_PORT {
  NDK_ADAPTER* Adapter;
  UCHAR PortNumber; /* SOFTNDK_PORT_NUMBER */
  UCHAR Reserved[7];
} SOFTNDK_IOCTL_PORT;

typedef struct _SOFTNDK_IOCTL_MODIFY_ADAPTER {
  NDK_ADAPTER* Adapter;
  ULONG Flags; /* SOFTNDK_MODIFY_ADAPTER_* */
  ULONG Reserved;
  SOFTNDK_MODIFY_ADAPTER Modify;
} SOFTNDK_IOCTL_MODIFY_ADAPTER;

typedef struct _SOFTNDK_IOCTL_MODIFY_PORT {
  NDK_ADAPTER* Adapter;
  UCHAR PortNumber;
  UCHAR Reserved[3];
  ULONG Flags; /* SOFTNDK_MODIFY_PORT_* */
  SOFTNDK_MODIFY_PORT Modify;
} SOFTNDK_IOCTL_MODIFY_PORT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTNDK_WDK_NDK_IOCTL_H_ */
