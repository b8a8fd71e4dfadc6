// SPDX-License-Identifier: Apache-2.0
/*
 * wdmsec.h - device objects with a security descriptor (Wdmsec.lib), for the
 * softndk WDK kit.
 *
 * IoCreateDeviceSecure (WdmlibIoCreateDeviceSecure) checks DefaultSDDLString
 * against the subset of SDDL the WDK documents for device objects ("D:P"
 * followed by "(A;;Access;;;SID)" entries: Access is 0xHEX or GA/GR/GW/GX/
 * RC/SD/WD/WO codes, SID a two-letter alias or S-1-...), fails with
 * STATUS_INVALID_PARAMETER when it does not conform (as Windows does), and
 * then creates the device like IoCreateDevice. The descriptor itself has no
 * effect: the host process is the only requester there is.
 * WdmlibIoValidateDeviceIoControlAccess accepts every request for the same
 * reason (STATUS_INVALID_PARAMETER for access bits other than
 * FILE_READ_ACCESS/FILE_WRITE_ACCESS or a NULL IRP).
 */
#ifndef SOFTNDK_WDK_WDMSEC_H_
#define SOFTNDK_WDK_WDMSEC_H_

#include "devguid.h"
#include "wdm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The SDDL strings wdmsec.h predefines. */
#define SDDL_DEVOBJ_KERNEL_ONLY L"D:P"
#define SDDL_DEVOBJ_INF_SUPPLIED L"D:P"
#define SDDL_DEVOBJ_SYS_ALL L"D:P(A;;GA;;;SY)"
#define SDDL_DEVOBJ_SYS_ALL_ADM_ALL L"D:P(A;;GA;;;SY)(A;;GA;;;BA)"
#define SDDL_DEVOBJ_SYS_ALL_ADM_RX L"D:P(A;;GA;;;SY)(A;;GRGX;;;BA)"
#define SDDL_DEVOBJ_SYS_ALL_ADM_RWX_WORLD_R L"D:P(A;;GA;;;SY)(A;;GRGWGX;;;BA)(A;;GR;;;WD)"
#define SDDL_DEVOBJ_SYS_ALL_ADM_RWX_WORLD_RW_RES_R \
  L"D:P(A;;GA;;;SY)(A;;GRGWGX;;;BA)(A;;GRGW;;;WD)(A;;GR;;;RC)"
#define SDDL_DEVOBJ_SYS_ALL_ADM_RWX_WORLD_RWX_RES_RWX \
  L"D:P(A;;GA;;;SY)(A;;GRGWGX;;;BA)(A;;GRGWGX;;;WD)(A;;GRGWGX;;;RC)"
#define SDDL_DEVOBJ_SYS_ALL_ADM_ALL_WORLD_R L"D:P(A;;GA;;;SY)(A;;GA;;;BA)(A;;GR;;;WD)"

NTSTATUS IoCreateDeviceSecure(PDRIVER_OBJECT DriverObject, ULONG DeviceExtensionSize,
                              PUNICODE_STRING DeviceName, DEVICE_TYPE DeviceType,
                              ULONG DeviceCharacteristics, BOOLEAN Exclusive,
                              PCUNICODE_STRING DefaultSDDLString, LPCGUID DeviceClassGuid,
                              PDEVICE_OBJECT* DeviceObject);
#define WdmlibIoCreateDeviceSecure IoCreateDeviceSecure
#define WdmlibIoValidateDeviceIoControlAccess IoValidateDeviceIoControlAccess
#define WdmlibRtlInitUnicodeStringEx RtlInitUnicodeStringEx

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTNDK_WDK_WDMSEC_H_ */
