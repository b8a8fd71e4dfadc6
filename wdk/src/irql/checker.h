// SPDX-License-Identifier: Apache-2.0
// The kit's checker: one place where every rule violation is reported, with
// the call named, its call site and the stack, counted per rule, and fatal
// on request (SOFTNDK_WDK_CHECK=fatal or SoftNdkWdkSetCheckMode).
//
// Kit code (kernel services here, the networking half in wdk/src/net)
// reports with Report(); the site is the caller's return address
// (SOFTNDK_WDK_SITE() in the exported function that was called).
#pragma once

#include <wdm.h>

#include <functional>
#include <string>

// The return address of the exported kit function this is written in: the
// consumer's call site.
#define SOFTNDK_WDK_SITE() __builtin_return_address(0)

namespace softndk::wdk {

// Reports a violation of `rule` by `call` (the WDK function the consumer
// called) made at `site`. In fatal mode it does not return.
void Report(SOFTNDK_WDK_RULE rule, const char* call, const void* site, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

// "function+0x12 (libdriver.so)" for an address, best effort.
std::string DescribeAddress(const void* address);

// A leak reporter: called by SoftNdkWdkCheckLeaks (the host calls that after
// DriverUnload); reports each leaked object with Report(SoftNdkWdkRuleLeak,
// ...) and returns how many it found. Kit parts register theirs once (at
// static initialisation or first use); the networking half registers one for
// NDK objects.
using LeakReporter = std::function<ULONG()>;
void RegisterLeakReporter(const char* what, LeakReporter reporter);

// The rundown and unload drain limit in milliseconds.
ULONG RundownWaitLimitMs();

}  // namespace softndk::wdk
