// SPDX-License-Identifier: Apache-2.0
// pd.h - protection domain: parent of MRs, MWs, SRQs and QPs.
//
// Each PD owns one privileged STag (NdkGetPrivilegedMemoryRegionToken): it
// covers the whole process address space ("logical addresses" are process
// VAs in softndk) with local read and write only - never remote access, which
// the STag table's access check enforces.
#pragma once

#include "ndk/object.h"

namespace softndk::ndk {

class Pd final : public Object {
 public:
  static NTSTATUS create(Adapter* a, Pd** out);
  ~Pd() override;
  NDK_PD* ndk() { return &handle_.ndk; }
  uint32_t privileged_token() const { return privileged_; }

 private:
  explicit Pd(Adapter* a);
  void on_closed() override;

  Handle<NDK_PD> handle_{};
  uint32_t privileged_ = 0;
};

}  // namespace softndk::ndk
