// SPDX-License-Identifier: Apache-2.0
/*
 * ntifs.h - the installable file system kit header; for the kit, ntddk.h
 * (push locks and the rest a network redirector-style NDK consumer takes from
 * here are declared there).
 */
#ifndef SOFTNDK_WDK_NTIFS_H_
#define SOFTNDK_WDK_NTIFS_H_

#include "ntddk.h"

#define _NTIFS_ 1

#endif /* SOFTNDK_WDK_NTIFS_H_ */
