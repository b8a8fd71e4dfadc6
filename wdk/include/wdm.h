// SPDX-License-Identifier: Apache-2.0
/*
 * wdm.h - the Windows Driver Model kernel interface, as the softndk WDK kit
 * provides it on Linux (user space, one process). See docs/wdk.md for what is
 * emulated, how it maps to Linux, and what is left out (which then fails to
 * compile or link, never silently).
 *
 * Include order with softndk/ndkpi.h does not matter: both take the shared
 * Windows base types from softndk/ndk_base_types.h.
 */
#ifndef SOFTNDK_WDK_WDM_H_
#define SOFTNDK_WDK_WDM_H_

#include "ntdef.h"
#include "ntstatus.h"
#include "sal.h"
#include "softndk_wdk/ex.h"
#include "softndk_wdk/io.h"
#include "softndk_wdk/ke.h"
#include "softndk_wdk/kit.h"
#include "softndk_wdk/rtl.h"
#include "softndk_wdk/rtl_more.h"
#include "softndk_wdk/zw.h"

#define _WDMDDK_ 1
#define NTDDI_WIN10_FE 0x0A00000B
#ifndef NTDDI_VERSION
#define NTDDI_VERSION NTDDI_WIN10_FE
#endif
#define _WIN32_WINNT_WIN10 0x0A00
#ifndef _WIN32_WINNT
#define _WIN32_WINNT _WIN32_WINNT_WIN10
#endif
#define POOL_NX_OPTIN 1

#endif /* SOFTNDK_WDK_WDM_H_ */
