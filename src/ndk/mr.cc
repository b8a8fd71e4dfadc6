// SPDX-License-Identifier: Apache-2.0
// mr.cc - registration, deregistration and fast-register initialisation.
#include "ndk/mr.h"

#include <memory>
#include <new>

#include "ndk/adapter.h"
#include "ndk/dispatch.h"
#include "ndk/pd.h"

namespace softndk::ndk {

namespace {
constexpr ULONG kMrFlagsKnown = NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK;
}

Mr::Mr(Pd* pd, bool fast)
    : Object(pd->adapter(), NdkObjectTypeMr, Resource::kMr), pd_(pd), fast_(fast) {
  handle_.self = this;
  handle_.ndk.Dispatch = &kMrDispatch;
  bind_handle(&handle_.ndk.Header, &handle_.magic);
}

NTSTATUS Mr::create(Pd* pd, bool fast_register, Mr** out) {
  auto mr = std::unique_ptr<Mr>(new Mr(pd, fast_register));
  uint32_t stag = pd->adapter()->stags().allocate(fast_register ? StagKind::kFastMr : StagKind::kMr,
                                                  pd, mr.get());
  if (stag == 0) return STATUS_INSUFFICIENT_RESOURCES;
  mr->stag_.store(stag, std::memory_order_release);
  mr->depend_on(pd);
  *out = mr.release();
  return STATUS_SUCCESS;
}

NTSTATUS Mr::walk_mdl(const MDL* mdl, SIZE_T length, uint64_t* base) {
  if (mdl == nullptr || length == 0) return STATUS_INVALID_PARAMETER;
  if (mdl->VirtualAddress == nullptr) return STATUS_INVALID_PARAMETER;  // no zero-based VAs
  uint64_t start = reinterpret_cast<uintptr_t>(mdl->VirtualAddress);
  uint64_t end = start;
  size_t entries = 0;
  for (const MDL* m = mdl; m != nullptr; m = m->Next) {
    if (++entries > (1u << 20)) return STATUS_INVALID_PARAMETER;  // a cycle or absurd chain
    if (reinterpret_cast<uintptr_t>(m->VirtualAddress) != end) return STATUS_INVALID_PARAMETER;
    if (m->ByteCount > ~0ull - end) return STATUS_INVALID_PARAMETER;
    end += m->ByteCount;
  }
  if (length > end - start) return STATUS_INVALID_PARAMETER;
  *base = start;
  return STATUS_SUCCESS;
}

NTSTATUS Mr::register_mdl(const MDL* mdl, SIZE_T length, ULONG flags) {
  if (fast_) return STATUS_INVALID_DEVICE_REQUEST;
  if (flags & ~kMrFlagsKnown) return STATUS_INVALID_PARAMETER;
  if (length > adapter()->info().MaxRegistrationSize) return STATUS_INVALID_PARAMETER;
  uint64_t base = 0;
  NTSTATUS s = walk_mdl(mdl, length, &base);
  if (s != STATUS_SUCCESS) return s;
  if (registered_.load(std::memory_order_acquire) || busy_.exchange(true))
    return STATUS_INVALID_DEVICE_REQUEST;
  if (adapter()->registration_fault()) {
    busy_.store(false);
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  StagTable& t = adapter()->stags();
  uint32_t stag = t.rekey(stag_.load());
  t.validate(stag, base, length, access_from_mr_flags(flags));
  stag_.store(stag, std::memory_order_release);
  registered_.store(true, std::memory_order_release);
  busy_.store(false);
  return STATUS_SUCCESS;
}

NTSTATUS Mr::deregister() {
  if (fast_ || !registered_.load(std::memory_order_acquire)) return STATUS_INVALID_DEVICE_REQUEST;
  adapter()->stags().invalidate(stag_.load());
  registered_.store(false, std::memory_order_release);
  return STATUS_SUCCESS;
}

NTSTATUS Mr::register_on_device(const MDL* mdl, SIZE_T length, ULONG flags,
                                NDK_FN_REQUEST_COMPLETION done, void* ctx) {
  if (fast_) return STATUS_INVALID_DEVICE_REQUEST;
  if (flags & ~kMrFlagsKnown) return STATUS_INVALID_PARAMETER;
  if (length > adapter()->info().MaxRegistrationSize) return STATUS_INVALID_PARAMETER;
  // The device completes later, on its thread: without a callback the
  // consumer could never learn the outcome (the software engine answers
  // such a call at once instead).
  if (done == nullptr) return STATUS_INVALID_PARAMETER;
  uint64_t base = 0;
  NTSTATUS s = walk_mdl(mdl, length, &base);
  if (s != STATUS_SUCCESS) return s;
  if (registered_.load(std::memory_order_acquire) || busy_.exchange(true))
    return STATUS_INVALID_DEVICE_REQUEST;
  if (adapter()->registration_fault()) {
    busy_.store(false);
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  hold();  // until the completion returned
  s = adapter()->provider().register_memory(
      base, length, flags,
      [this, done, ctx, base, length](NTSTATUS st, provider::Provider::MemoryKeys k) {
        if (st == STATUS_SUCCESS) {
          dev_base_.store(base, std::memory_order_release);
          dev_len_.store(length, std::memory_order_release);
          dev_lkey_.store(k.lkey, std::memory_order_release);
          dev_rkey_.store(k.rkey, std::memory_order_release);
          dev_handle_.store(k.handle, std::memory_order_release);
          on_device_.store(true, std::memory_order_release);
          registered_.store(true, std::memory_order_release);
        }
        busy_.store(false);
        done(ctx, st);
        release();
      });
  if (s != STATUS_PENDING) {
    busy_.store(false);
    release();
    return s == STATUS_SUCCESS ? STATUS_INTERNAL_ERROR : s;
  }
  return STATUS_PENDING;
}

NTSTATUS Mr::deregister_on_device(NDK_FN_REQUEST_COMPLETION done, void* ctx) {
  if (fast_ || !registered_.load(std::memory_order_acquire)) return STATUS_INVALID_DEVICE_REQUEST;
  if (done == nullptr) return STATUS_INVALID_PARAMETER;
  if (busy_.exchange(true)) return STATUS_INVALID_DEVICE_REQUEST;
  registered_.store(false, std::memory_order_release);
  on_device_.store(false, std::memory_order_release);
  hold();
  adapter()->provider().deregister_memory(dev_handle_.exchange(0), [this, done, ctx](NTSTATUS st) {
    busy_.store(false);
    done(ctx, st);
    release();
  });
  return STATUS_PENDING;
}

NTSTATUS Mr::initialize_fast_register(ULONG pages, bool remote) {
  if (!fast_) return STATUS_INVALID_DEVICE_REQUEST;
  if (pages == 0) return STATUS_INVALID_PARAMETER;
  if (pages > Limits::kMaxFrPages) return STATUS_IMPLEMENTATION_LIMIT;
  provider::Provider& p = adapter()->provider();
  if (p.registers_memory()) {
    // A device engine (provider.h v3): the FR MR is a device window whose
    // rkey is the token for the MR's life (NDKPI: the token read after
    // this call stays valid across NdkFastRegister), or the degraded
    // re-registration mode, or nothing (docs/verbs.md, "Fast register").
    using F = provider::Provider::FrSupport;
    switch (p.fr_support()) {
      case F::kWindows:
        if (pages > adapter()->info().FRMRPageCount) return STATUS_INVALID_PARAMETER;
        if (dev_handle_.load() == 0) {
          provider::Provider::WindowKeys k;
          NTSTATUS s = p.alloc_window(&k);
          if (s != STATUS_SUCCESS) return s;
          dev_window_.store(true);
          dev_lkey_.store(k.rkey, std::memory_order_release);
          dev_rkey_.store(k.rkey, std::memory_order_release);
          dev_handle_.store(k.handle, std::memory_order_release);
          on_device_.store(true, std::memory_order_release);
        }
        break;
      case F::kReregister:
        if (pages > adapter()->info().FRMRPageCount) return STATUS_INVALID_PARAMETER;
        on_device_.store(true, std::memory_order_release);  // tokens 0 until the first FR
        break;
      default:
        return STATUS_NOT_SUPPORTED;
    }
  }
  fr_pages_ = pages;
  fr_remote_ = remote;
  return STATUS_SUCCESS;
}

void Mr::set_device_keys(uint32_t lkey, uint32_t rkey, uint64_t handle) {
  dev_lkey_.store(lkey, std::memory_order_release);
  dev_rkey_.store(rkey, std::memory_order_release);
  dev_handle_.store(handle, std::memory_order_release);
}

NTSTATUS Mr::stage_fr_pages(const NDK_LOGICAL_ADDRESS* pages, ULONG n, uint32_t* ticket) {
  std::lock_guard lk(fr_mu_);
  try {
    uint32_t t = ++fr_next_ticket_;
    if (t == 0) t = ++fr_next_ticket_;  // 0 is "none"
    fr_staged_[t].assign(pages, pages + n);
    *ticket = t;
  } catch (const std::bad_alloc&) {
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  return STATUS_SUCCESS;
}

std::vector<NDK_LOGICAL_ADDRESS> Mr::take_fr_pages(uint32_t ticket) {
  std::vector<NDK_LOGICAL_ADDRESS> pages;
  std::lock_guard lk(fr_mu_);
  auto it = fr_staged_.find(ticket);
  if (it == fr_staged_.end()) return pages;  // flushed meanwhile
  pages.swap(it->second);
  fr_staged_.erase(it);
  return pages;
}

void Mr::drop_fr_pages(uint32_t ticket) {
  std::vector<NDK_LOGICAL_ADDRESS> gone;  // freed outside the lock
  std::lock_guard lk(fr_mu_);
  auto it = fr_staged_.find(ticket);
  if (it == fr_staged_.end()) return;
  gone.swap(it->second);
  fr_staged_.erase(it);
}

uint32_t Mr::next_token() {
  uint32_t stag = adapter()->stags().rekey(stag_.load());
  stag_.store(stag, std::memory_order_release);
  return stag;
}

void Mr::on_closed() {
  if (uint64_t h = dev_handle_.exchange(0); h != 0) {
    if (dev_window_.load())
      adapter()->provider().free_window(h);
    else
      adapter()->provider().deregister_memory(h, nullptr);
  }
  adapter()->stags().free(stag_.load());
}

}  // namespace softndk::ndk
