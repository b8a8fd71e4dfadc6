// SPDX-License-Identifier: Apache-2.0
// Bug-check analysis: a fault in driver code (SIGSEGV, SIGBUS, SIGILL,
// SIGFPE, SIGTRAP, an abort) becomes a report shaped like WinDbg's
// `!analyze -v` - the bug check Windows would raise, its arguments, the
// faulting address and what it is (NULL + offset, inside or past a pool
// block, a freed block with the stacks that allocated and freed it), the
// thread's IRQL and the symbolized stack - and the process ends with a
// defined exit status instead of a bare "Segmentation fault".
#pragma once

#include <wdm.h>

namespace softndk::wdk {

// Installs the handlers (process wide; an alternate signal stack for the
// calling thread). The process ends with `exit_code` after the report.
void InstallBugCheckHandler(int exit_code);
// An alternate signal stack for the calling thread, so that a stack
// overflow is reported too; kit threads call it when they start. No-op
// when the handler is not installed.
void PrepareThreadForFaults();
// Called before abort() by KeBugCheckEx, ExRaiseStatus and the fatal
// checker: the report names this bug check instead of the abort.
void SetPendingBugCheck(ULONG code, ULONG_PTR p1, ULONG_PTR p2, ULONG_PTR p3, ULONG_PTR p4,
                        const char* call, const void* site);

// Microsoft's name for a bug check code ("" when the kit does not know it).
const char* BugCheckName(ULONG code);

}  // namespace softndk::wdk
