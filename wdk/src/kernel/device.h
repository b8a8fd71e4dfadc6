// SPDX-License-Identifier: Apache-2.0
// Driver and device objects: what the host and the networking half of the
// kit need beyond the WDK calls.
//
// The networking half registers its adapter-control target with
// CreateKitDevice: a named device object of the kit's own driver
// ("\Driver\softndk") whose IRPs, whatever their major function, go to the
// given dispatch routine. A consumer finds it by name with
// IoGetDeviceObjectPointer (or is handed the pointer) and sends IRPs with
// IoCallDriver; the dispatch routine completes them with IoCompleteRequest,
// marks them pending with IoMarkIrpPending, or queues them with a cancel
// routine (IoSetCancelRoutine).
#pragma once

#include <wdm.h>

namespace softndk::wdk {

// A DRIVER_OBJECT as the I/O manager makes one for a loaded driver: every
// MajorFunction answers STATUS_INVALID_DEVICE_REQUEST until DriverEntry sets
// its own. `name` is the driver name without "\Driver\".
PDRIVER_OBJECT CreateDriverObject(const wchar_t* name);
// Frees it (and reports device objects the driver did not delete).
void DeleteDriverObject(PDRIVER_OBJECT driver);

// A named device object of the kit's driver whose IRPs go to `dispatch`.
// `name` like L"\\Device\\SoftNdkAdapterControl" (may be nullptr).
// `context` is returned by KitDeviceContext. Returns nullptr on a name
// collision or no memory.
PDEVICE_OBJECT CreateKitDevice(const wchar_t* name, PDRIVER_DISPATCH dispatch, void* context,
                               CCHAR stack_size = 1);
void* KitDeviceContext(PDEVICE_OBJECT device);
void DeleteKitDevice(PDEVICE_OBJECT device);

// ObDereferenceObject's part for file objects from IoGetDeviceObjectPointer:
// true if `object` was one (now freed).
bool ReleaseFileObject(PVOID object);

}  // namespace softndk::wdk
