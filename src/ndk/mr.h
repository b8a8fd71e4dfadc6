// SPDX-License-Identifier: Apache-2.0
// mr.h - memory region: one STag over a virtually contiguous buffer.
//
// A normal MR is registered with NdkRegisterMr (an MDL chain) and gets a new
// STag key on every registration. A fast-register MR is initialised with a
// page budget (NdkInitializeFastRegisterMr) and made valid by the
// NdkFastRegister work request, which the data path executes in SQ order
// using take_fr_pages()/stags(). Local and remote tokens are the same STag; the
// STag table entry carries the rights (remote access only if granted).
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "ndk/object.h"
#include "provider/memory_object.h"

namespace softndk::ndk {

class Pd;

class Mr final : public Object, public provider::MemoryObject {
 public:
  static NTSTATUS create(Pd* pd, bool fast_register, Mr** out);
  NDK_MR* ndk() { return &handle_.ndk; }
  Pd* pd() const { return pd_; }
  bool fast_register() const { return fast_; }

  NTSTATUS register_mdl(const MDL* mdl, SIZE_T length, ULONG flags);
  NTSTATUS deregister();
  // The same on an engine that registers memory below the seam (verbs,
  // provider.h v2): always asynchronous (STATUS_PENDING, `done` later on an
  // engine thread) or a failure now; the tokens become the device's keys.
  NTSTATUS register_on_device(const MDL* mdl, SIZE_T length, ULONG flags,
                              NDK_FN_REQUEST_COMPLETION done, void* ctx);
  NTSTATUS deregister_on_device(NDK_FN_REQUEST_COMPLETION done, void* ctx);
  NTSTATUS initialize_fast_register(ULONG pages, bool remote);

  // The current STag (both tokens); on a device engine the registration's
  // rkey (remote) and lkey (local).
  uint32_t token() const {
    return on_device_.load(std::memory_order_acquire) ? dev_rkey_.load(std::memory_order_acquire)
                                                      : stag_.load(std::memory_order_acquire);
  }
  uint32_t local_token() const {
    return on_device_.load(std::memory_order_acquire) ? dev_lkey_.load(std::memory_order_acquire)
                                                      : stag_.load(std::memory_order_acquire);
  }
  // NdkFastRegister post time with SOFTNDK_OPEN_FLAG_FR_REKEY: takes a new
  // key for the next registration and returns it (the entry is invalid
  // until the WR validate()s it in SQ order).
  uint32_t next_token();
  ULONG fr_page_budget() const { return fr_pages_.load(); }
  bool fr_remote_allowed() const { return fr_remote_.load(); }
  // NdkFastRegister post time: copies the page array (the consumer's may go
  // away when the call returns) under a ticket the work request carries.
  // Each post keeps its own: several registrations of one MR can be queued
  // at once (FR, Invalidate, FR in one chain), each with its own pages.
  NTSTATUS stage_fr_pages(const NDK_LOGICAL_ADDRESS* pages, ULONG n, uint32_t* ticket);
  // The data path, when the request runs: the pages, handed over.
  std::vector<NDK_LOGICAL_ADDRESS> take_fr_pages(uint32_t ticket) override;
  // A request that never runs (failed post, flush).
  void drop_fr_pages(uint32_t ticket);
  bool registered() const { return registered_.load(std::memory_order_acquire); }
  // provider::MemoryObject (v3): the device registration or window.
  uint64_t device_handle() const override { return dev_handle_.load(std::memory_order_acquire); }
  void set_device_keys(uint32_t lkey, uint32_t rkey, uint64_t handle) override;
  // A device registration's range (NdkBind checks a window against it).
  uint64_t device_base() const { return dev_base_.load(std::memory_order_acquire); }
  uint64_t device_length() const { return dev_len_.load(std::memory_order_acquire); }

  // Checks that the MDL chain is virtually contiguous and long enough;
  // returns its base VA and total size. Shared with NdkBuildLAM.
  static NTSTATUS walk_mdl(const MDL* mdl, SIZE_T length, uint64_t* base);

 private:
  Mr(Pd* pd, bool fast);
  void on_closed() override;

  Handle<NDK_MR> handle_{};
  Pd* pd_;
  bool fast_;
  std::atomic<uint32_t> stag_{0};
  std::atomic<bool> registered_{false};
  std::atomic<bool> busy_{false};  // a register/deregister is running
  // Device registration (provider.h v2): keys and the engine's handle.
  std::atomic<bool> on_device_{false};
  std::atomic<uint32_t> dev_lkey_{0}, dev_rkey_{0};
  std::atomic<uint64_t> dev_handle_{0};
  std::atomic<uint64_t> dev_base_{0}, dev_len_{0};
  std::atomic<bool> dev_window_{false};  // dev_handle_ is a window (FR MR, provider.h v3)
  std::atomic<ULONG> fr_pages_{0};
  std::atomic<bool> fr_remote_{false};
  std::mutex fr_mu_;  // guards the staged page arrays
  std::map<uint32_t, std::vector<NDK_LOGICAL_ADDRESS>> fr_staged_;
  uint32_t fr_next_ticket_ = 0;
};

}  // namespace softndk::ndk
