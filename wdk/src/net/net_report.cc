// SPDX-License-Identifier: Apache-2.0
// net_report.cc - the networking half's reports, through the kit's checker.
#include "net_irql.h"

namespace softndk::wdk::net {

void report_misuse(const char* call, const void* site, const char* what) {
  Report(SoftNdkWdkRuleInvalidParameter, call, site, "%s", what);
}

void report_leak(const char* call, const void* site, const char* what) {
  Report(SoftNdkWdkRuleLeak, call, site, "%s", what);
}

}  // namespace softndk::wdk::net
