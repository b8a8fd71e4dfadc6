// SPDX-License-Identifier: Apache-2.0
#include "file_window.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>

#include "ndkapp/session.h"

namespace smb::server {

namespace tools = softndk::tools;

namespace {

size_t page_size() {
  static const size_t p = size_t(sysconf(_SC_PAGESIZE));
  return p;
}

}  // namespace

namespace fault_guard {
namespace {

struct Slot {
  std::atomic<bool> used{false};
  std::atomic<uintptr_t> begin{0}, end{0};
  std::atomic<bool> hit{false};
};
std::array<Slot, 4096> g_slots;
struct sigaction g_before {};
uintptr_t g_page = 4096;

void on_sigbus(int sig, siginfo_t* si, void* uc) {
  const auto a = reinterpret_cast<uintptr_t>(si->si_addr);
  for (auto& s : g_slots) {
    const uintptr_t b = s.begin.load(std::memory_order_acquire);
    if (b == 0 || a < b || a >= s.end.load(std::memory_order_acquire)) continue;
    // mmap is a plain system call: safe in a handler. The store that
    // faulted is retried into the new page.
    void* page = reinterpret_cast<void*>(a & ~(g_page - 1));
    if (mmap(page, g_page, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1,
             0) != MAP_FAILED) {
      s.hit.store(true, std::memory_order_release);
      return;
    }
    break;
  }
  // Not ours: what there was before (the default ends the process as the
  // fault is retried).
  if ((g_before.sa_flags & SA_SIGINFO) && g_before.sa_sigaction) {
    g_before.sa_sigaction(sig, si, uc);
  } else if (g_before.sa_handler != SIG_DFL && g_before.sa_handler != SIG_IGN &&
             g_before.sa_handler != nullptr) {
    g_before.sa_handler(sig);
  } else {
    signal(SIGBUS, SIG_DFL);
  }
}

void install() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_page = uintptr_t(page_size());
    struct sigaction sa {};
    sa.sa_sigaction = &on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &g_before);
  });
}

}  // namespace

int add(void* base, size_t len) {
  install();
  for (size_t i = 0; i < g_slots.size(); ++i) {
    Slot& s = g_slots[i];
    bool no = false;
    if (!s.used.compare_exchange_strong(no, true)) continue;
    s.hit.store(false);
    s.end.store(reinterpret_cast<uintptr_t>(base) + len, std::memory_order_release);
    s.begin.store(reinterpret_cast<uintptr_t>(base), std::memory_order_release);
    return int(i);
  }
  return -1;
}

bool take_hit(int slot) {
  return slot >= 0 && g_slots[size_t(slot)].hit.exchange(false, std::memory_order_acq_rel);
}

void remove(int slot) {
  if (slot < 0) return;
  Slot& s = g_slots[size_t(slot)];
  s.begin.store(0, std::memory_order_release);
  s.end.store(0, std::memory_order_release);
  s.hit.store(false);
  s.used.store(false, std::memory_order_release);
}

}  // namespace fault_guard

WriteWindows::~WriteWindows() {
  for (auto& w : w_) release(w);
}

void WriteWindows::release(Window& w) {
  const double tmo = t_.adapter().close_timeout();
  bool freed = true;
  if (w.mr) {
    auto* p = tools::Pending::try_make();
    if (p) {
      NTSTATUS st = w.mr->Dispatch->NdkDeregisterMr(w.mr, &tools::Pending::on_request, p);
      freed = tools::Pending::finish(p, st, tmo) != STATUS_IO_TIMEOUT;
    } else {
      freed = false;
    }
    freed = tools::close_object(&w.mr->Header, w.mr->Dispatch->NdkCloseMr, tmo) && freed;
    w.mr = nullptr;
  }
  // A registration that would not go away in time keeps its pages mapped
  // (as tools::Buffer does): the engine might still place into them.
  if (w.base && freed) {
    fault_guard::remove(w.guard);
    munmap(w.base, w.len);
  }
  w = Window{};
}

bool WriteWindows::faulted(const Sink& sink) {
  for (auto it = w_.begin(); it != w_.end(); ++it) {
    if (sink.at < it->base || sink.at >= it->base + it->len) continue;
    if (!fault_guard::take_hit(it->guard)) return false;
    release(*it);
    w_.erase(it);
    return true;
  }
  return false;
}

void WriteWindows::drop(uint64_t key) {
  for (auto it = w_.begin(); it != w_.end();) {
    if (it->key == key) {
      release(*it);
      it = w_.erase(it);
    } else {
      ++it;
    }
  }
}

bool WriteWindows::sink(uint64_t key, int fd, uint64_t off, uint32_t len, Sink* out) {
  const uint64_t start = off / kWindowBytes * kWindowBytes;
  // Mapped max_io (whole pages) past the window's end: a WRITE starting in
  // the window ends inside the mapping.
  const size_t span =
      size_t(kWindowBytes + (uint64_t(max_io_) + page_size() - 1) / page_size() * page_size());
  if (off + len > start + span) return false;  // a WRITE larger than max_io: not ours
  for (auto& w : w_) {
    if (w.key == key && w.off == start) {
      w.used = ++clock_;
      *out = {w.base + (off - start), w.token};
      return true;
    }
  }
  void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(start));
  if (m == MAP_FAILED) return false;
  Window nw;
  nw.key = key;
  nw.off = start;
  nw.base = static_cast<uint8_t*>(m);
  nw.len = span;
  nw.used = ++clock_;
  tools::Adapter& a = t_.adapter();
  NDK_PD* pd = t_.pd().get();
  auto* p = new tools::Pending;
  NDK_OBJECT_HEADER* obj = nullptr;
  NTSTATUS st = pd->Dispatch->NdkCreateMr(pd, FALSE, &tools::Pending::on_create, p, &nw.mr);
  st = tools::Pending::finish(p, st, a.timeout(), &obj);
  if (!nw.mr) nw.mr = reinterpret_cast<NDK_MR*>(obj);
  if (st != STATUS_SUCCESS || !nw.mr) {
    nw.mr = nullptr;
    release(nw);
    return false;
  }
  MDL mdl{nullptr, nw.base, span};
  p = new tools::Pending;
  st = nw.mr->Dispatch->NdkRegisterMr(nw.mr, &mdl, span,
                                      NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK,
                                      &tools::Pending::on_request, p);
  st = tools::Pending::finish(p, st, a.timeout());
  if (st != STATUS_SUCCESS) {
    // Not registered: closing the MR is all it needs (a device backend may
    // refuse a long-term pin of a file's pages; the pwrite() path serves).
    tools::close_object(&nw.mr->Header, nw.mr->Dispatch->NdkCloseMr, a.close_timeout());
    nw.mr = nullptr;
    release(nw);
    return false;
  }
  nw.token = nw.mr->Dispatch->NdkGetLocalTokenFromMr(nw.mr);
  nw.guard = fault_guard::add(nw.base, nw.len);
  if (nw.guard < 0) {  // unguarded, a cut file could end the server: copy instead
    release(nw);
    return false;
  }
  ++mapped_;
  if (w_.size() >= kMaxWindows) {
    auto lru = std::min_element(w_.begin(), w_.end(),
                                [](const Window& x, const Window& y) { return x.used < y.used; });
    release(*lru);
    *lru = nw;
  } else {
    w_.push_back(nw);
  }
  *out = {nw.base + (off - start), nw.token};
  return true;
}

}  // namespace smb::server
