// SPDX-License-Identifier: Apache-2.0
/* Precomp.h - the driver's common include, named the Windows way (the
 * sources write "precomp.h"; softndk_wdk_include_aliases makes that work). */
#pragma once

#include <Ntstrsafe.h>
#include <Wdmsec.h>
#include <ndis.h>
#include <ndkpi.h>
#include <netioapi.h>
#include <ntddk.h>
#include <ntintsafe.h>
#include <wdm.h>
#include <wsk.h>
#include <wskndk.h>

#define PD_TAG 'tDoP'

#define PD_LOG_IF_FAILED(Status, What)                                             \
  __pragma(warning(push)) __pragma(warning(disable : 4127)) do {                   \
    if (!NT_SUCCESS(Status))                                                       \
      DbgPrint("porting_driver: %s failed: 0x%08x\n", (What), (unsigned)(Status)); \
  }                                                                                \
  while (FALSE) __pragma(warning(pop))

typedef struct _PD_PARAMETERS {
  ULONG Port;
  WCHAR Endpoint[64];
  UNICODE_STRING Greeting; /* allocated by RtlQueryRegistryValues */
  ULONG Flags;
} PD_PARAMETERS, *PPD_PARAMETERS;

typedef struct _PD_SOCKET {
  KSPIN_LOCK Lock;
  _Guarded_by_(Lock) ULONG State;
  _Guarded_by_(Lock) LIST_ENTRY Pending;
} PD_SOCKET, *PPD_SOCKET;

_IRQL_requires_(PASSIVE_LEVEL) _Must_inspect_result_ NTSTATUS
    PdReadParameters(_In_ PCUNICODE_STRING RegistryPath, _Out_ PPD_PARAMETERS Parameters);
