// SPDX-License-Identifier: Apache-2.0
// provider/memory_object.h - an MR or MW as the engine sees it: what a
// local work request or an STag table entry points at (provider.h).
#pragma once

#include <cstdint>
#include <vector>

#include "softndk/ndkpi.h"

namespace softndk::provider {

// An MR or MW named by a local work request (FastRegister, Bind) or by an
// STag table entry, executed by the engine in SQ order (NDKPI 12).
// Implemented by ndk::Mr and ndk::Mw; the defaults refuse.
class MemoryObject {
 public:
  // FastRegister MR: the page array staged at post time under `ticket`,
  // handed over (empty if none).
  virtual std::vector<NDK_LOGICAL_ADDRESS> take_fr_pages(uint32_t ticket) {
    (void)ticket;
    return {};
  }
  // MW: bind to `mr` over [va, va+length) with `access` (stag_table.h),
  // for QP `qp` (type-2 window). False if the window or the MR changed
  // since the post.
  virtual bool execute_bind(MemoryObject* mr, uint32_t stag, uint64_t va, uint64_t length,
                            uint32_t access, const void* qp) {
    (void)mr, (void)stag, (void)va, (void)length, (void)access, (void)qp;
    return false;
  }
  // MW: invalidate (local NdkInvalidate or a peer's Send with Invalidate);
  // drops the window's hold on its MR.
  virtual bool invalidate_window(uint32_t stag) {
    (void)stag;
    return false;
  }
  // v3 (device engines): the engine's handle of the object's device
  // resource - a registered MR's registration, a window-backed FR MR's or
  // MW's window - 0 if none.
  virtual uint64_t device_handle() const { return 0; }
  // v3: a fast-register MR of the degraded mode (re-registration): the
  // engine registered its pages anew; the MR's tokens become these. Called
  // by the engine before it completes the FastRegister (SQ order).
  virtual void set_device_keys(uint32_t lkey, uint32_t rkey, uint64_t handle) {
    (void)lkey, (void)rkey, (void)handle;
  }

 protected:
  ~MemoryObject() = default;
};

}  // namespace softndk::provider
