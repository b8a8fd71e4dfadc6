// SPDX-License-Identifier: Apache-2.0
// consumer.cc - the header-only C++ layer against an installed softndk.
#include <cstdio>
#include <softndk/softndk.hpp>

int main() {
  softndk::Adapter a;
  NTSTATUS s = a.open("lo");
  std::printf("open: %s\n", softndk::status_name(s).c_str());
  if (s != STATUS_SUCCESS) return 1;
  softndk::Object<NDK_PD> pd;
  s = softndk::create_and_wait<NDK_PD>(
      [&](auto cb, auto ctx, NDK_PD** o) { return a->Dispatch->NdkCreatePd(a.get(), cb, ctx, o); },
      pd.out());
  std::printf("pd: %s\n", softndk::status_name(s).c_str());
  return s == STATUS_SUCCESS ? 0 : 1;
}
