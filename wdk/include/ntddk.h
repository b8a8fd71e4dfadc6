// SPDX-License-Identifier: Apache-2.0
/*
 * ntddk.h - the kernel-mode driver interface: wdm.h plus the few additions
 * NDK consumers take from ntddk.h (all of which the kit keeps in wdm.h).
 */
#ifndef SOFTNDK_WDK_NTDDK_H_
#define SOFTNDK_WDK_NTDDK_H_

#include "wdm.h"

#define _NTDDK_ 1

#endif /* SOFTNDK_WDK_NTDDK_H_ */
