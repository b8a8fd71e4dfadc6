// SPDX-License-Identifier: Apache-2.0
// softndk_entry.h - the one direct C entry point the tools may find missing.
//
// Everything else in the NDKPI is reached through dispatch tables, and the
// softndk.h functions the tools call are exported by libsoftndk. Only
// SoftNdkQueryConnectionInfo (the negotiated CRC/MPA revision shown in the
// reports) is referenced weakly: the tools link against a library that does
// not export it yet and report "unknown" instead of failing to build. The
// tools link the shared libsoftndk, so the dynamic linker binds it as soon
// as the library has it.
#pragma once

#include "softndk/softndk.h"

#pragma weak SoftNdkQueryConnectionInfo
