// SPDX-License-Identifier: Apache-2.0
// mw.h - memory window: an STag bound to a range of a registered MR.
//
// NdkBind is a QP work request. At post time the QP calls prepare_bind(),
// which checks the request against the MR (range, rights) and picks the
// window's next STag (new key) so that NdkGetRemoteTokenFromMw is right as
// soon as NdkBind returned. The data path then executes the bind in SQ order
// with execute_bind(); NdkInvalidate (or a remote Send-with-Invalidate) uses
// invalidate(). A bound MR is an antecedent of the window until the window is
// invalidated, rebound or closed.
#pragma once

#include <atomic>
#include <mutex>

#include "ndk/object.h"
#include "provider/memory_object.h"

namespace softndk::ndk {

class Pd;
class Mr;

class Mw final : public Object, public provider::MemoryObject {
 public:
  static NTSTATUS create(Pd* pd, Mw** out);
  NDK_MW* ndk() { return &handle_.ndk; }
  Pd* pd() const { return pd_; }
  uint32_t token() const { return stag_.load(std::memory_order_acquire); }

  // Post time (NdkBind): STATUS_SUCCESS and the new STag, or
  // STATUS_INVALID_PARAMETER (range outside the MR, MR not registered, other
  // PD) / STATUS_ACCESS_VIOLATION (the MR lacks a right the window needs:
  // remote write needs local write on the MR).
  NTSTATUS prepare_bind(Mr* mr, uint64_t va, uint64_t length, uint32_t access, uint32_t* stag);
  // Execution time (data path, SQ order).
  bool execute_bind(Mr* mr, uint32_t stag, uint64_t va, uint64_t length, uint32_t access,
                    const void* qp);
  bool invalidate(uint32_t stag);
  // provider::MemoryObject: the same, for the engine (execution time).
  bool execute_bind(provider::MemoryObject* mr, uint32_t stag, uint64_t va, uint64_t length,
                    uint32_t access, const void* qp) override;
  bool invalidate_window(uint32_t stag) override { return invalidate(stag); }
  // provider.h v3: a device engine's window (0 on the software engine).
  uint64_t device_handle() const override { return dev_handle_; }

 private:
  explicit Mw(Pd* pd);
  void on_closed() override;
  void set_bound_mr(Mr* mr);

  Handle<NDK_MW> handle_{};
  Pd* pd_;
  std::atomic<uint32_t> stag_{0};
  std::mutex mu_;
  Mr* bound_ = nullptr;      // holds a reference while set
  uint64_t dev_handle_ = 0;  // the device window (set at create)
};

}  // namespace softndk::ndk
