// SPDX-License-Identifier: Apache-2.0
#include "file_window.h"

#include <fcntl.h>
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

struct SharedWindow {
  dev_t dev = 0;
  ino_t ino = 0;
  uint64_t off = 0;  // the file byte the window starts at
  // Per page of the window: WRITEs it had (saturating), under g_mu.
  std::vector<uint8_t> writes;
  // The mapping, made under g_mu by the first WRITE mapped into the window;
  // `fd` (a duplicate) tells later whether the file was removed.
  uint8_t* base = nullptr;
  size_t len = 0;
  bool writable = false;  // mapped PROT_WRITE (a WRITE made it), else read-only
  int guard = -1, fd = -1;
  std::atomic<bool> gone{false};  // replaced, removed, or cut: not to be used again
  std::atomic<bool> cut{false};   // a store into it faulted (fault_guard)
  uint64_t used = 0;
  ~SharedWindow() {
    if (base) {
      fault_guard::remove(guard);
      munmap(base, len);
    }
    if (fd >= 0) ::close(fd);
  }
};

namespace {

// The process's windows (every connection's), least recently used first
// to go.
std::mutex g_mu;
std::vector<std::shared_ptr<SharedWindow>> g_windows;
uint64_t g_clock = 0;

size_t window_span(uint32_t max_io) {
  return size_t(FileWindows::kWindowBytes +
                (uint64_t(max_io) + page_size() - 1) / page_size() * page_size());
}

void sweep();

// The window of `sb` (open as `fd`) starting at `start`, made (counts
// only, no mapping) on a miss; null when the descriptor cannot be
// duplicated. The window keeps a duplicate of the descriptor: while it is
// kept, the inode cannot be reused by another file that would inherit its
// counts. Under g_mu.
std::shared_ptr<SharedWindow> window_of(int fd, const struct stat& sb, uint64_t start,
                                        size_t span) {
  for (auto& w : g_windows)
    if (w->dev == sb.st_dev && w->ino == sb.st_ino && w->off == start && !w->gone) {
      w->used = ++g_clock;
      return w;
    }
  sweep();
  const int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return nullptr;
  auto w = std::make_shared<SharedWindow>();
  w->fd = dup;
  w->dev = sb.st_dev;
  w->ino = sb.st_ino;
  w->off = start;
  w->writes.assign(span / page_size(), 0);
  w->used = ++g_clock;
  if (g_windows.size() >= FileWindows::kSharedWindows) {
    auto lru = std::min_element(g_windows.begin(), g_windows.end(),
                                [](const auto& x, const auto& y) { return x->used < y->used; });
    (*lru)->gone = true;  // connections holding it let it go at their next look
    *lru = w;
  } else {
    g_windows.push_back(w);
  }
  return w;
}

// Forgets windows of files no longer linked anywhere (their descriptor
// and mapping would keep the blocks) and those gone. Under g_mu.
void sweep() {
  std::erase_if(g_windows, [](const std::shared_ptr<SharedWindow>& w) {
    struct stat sb {};
    if (w->fd >= 0 && fstat(w->fd, &sb) == 0 && sb.st_nlink == 0) w->gone = true;
    return w->gone.load();
  });
}

}  // namespace

FileWindows::~FileWindows() {
  for (auto& r : regs_) release(r);
}

void FileWindows::release(Reg& r) {
  const double tmo = t_.adapter().close_timeout();
  bool freed = true;
  if (r.mr) {
    auto* p = tools::Pending::try_make();
    if (p) {
      NTSTATUS st = r.mr->Dispatch->NdkDeregisterMr(r.mr, &tools::Pending::on_request, p);
      freed = tools::Pending::finish(p, st, tmo) != STATUS_IO_TIMEOUT;
    } else {
      freed = false;
    }
    freed = tools::close_object(&r.mr->Header, r.mr->Dispatch->NdkCloseMr, tmo) && freed;
    r.mr = nullptr;
  }
  // A registration that would not go away in time keeps its pages mapped
  // (as tools::Buffer does): the engine might still place into them. The
  // window is then never unmapped.
  if (!freed && r.w) new std::shared_ptr<SharedWindow>(r.w);
  r = Reg{};
}

bool FileWindows::rewritten(int fd, const struct stat& sb, uint64_t off, uint32_t len,
                            unsigned before) {
  const uint64_t start = off / kWindowBytes * kWindowBytes;
  const size_t span = window_span(max_io_);
  if (len == 0 || off + len > start + span) return before == 0;
  std::lock_guard<std::mutex> g(g_mu);
  auto w = window_of(fd, sb, start, span);
  if (!w) return false;
  bool all = true;
  const size_t first = (off - start) / page_size(), last = (off - start + len - 1) / page_size();
  for (size_t i = first; i <= last && i < w->writes.size(); ++i) {
    if (w->writes[i] < before) all = false;
    if (w->writes[i] < 255) ++w->writes[i];
  }
  return all;
}

bool FileWindows::faulted(const Sink& sink) {
  for (auto it = regs_.begin(); it != regs_.end(); ++it) {
    SharedWindow& w = *it->w;
    if (sink.at < w.base || sink.at >= w.base + w.len) continue;
    // Another connection's cut window is this WRITE's failure too: its
    // pages may be anonymous ones now.
    if (fault_guard::take_hit(w.guard)) w.cut = true;
    if (!w.cut) return false;
    if (!w.gone.exchange(true)) {
      std::lock_guard<std::mutex> g(g_mu);
      sweep();
    }
    release(*it);
    regs_.erase(it);
    return true;
  }
  return false;
}

void FileWindows::drop(uint64_t) {
  {
    std::lock_guard<std::mutex> g(g_mu);
    sweep();
  }
  for (auto it = regs_.begin(); it != regs_.end();) {
    if (it->w->gone) {
      release(*it);
      it = regs_.erase(it);
    } else {
      ++it;
    }
  }
}

bool FileWindows::sink(int fd, const struct stat& sb, uint64_t off, uint32_t len, Sink* out) {
  return window(fd, sb, off, len, true, out);
}

bool FileWindows::source(int fd, const struct stat& sb, uint64_t off, uint32_t len, Sink* out) {
  return window(fd, sb, off, len, false, out);
}

bool FileWindows::window(int fd, const struct stat& sb, uint64_t off, uint32_t len, bool write,
                         Sink* out) {
  const uint64_t start = off / kWindowBytes * kWindowBytes;
  const size_t span = window_span(max_io_);
  if (off + len > start + span) return false;  // a transfer larger than max_io: not ours
  for (auto it = regs_.begin(); it != regs_.end(); ++it) {
    SharedWindow& w = *it->w;
    if (w.dev != sb.st_dev || w.ino != sb.st_ino || w.off != start) continue;
    // Replaced or cut: map it anew. A read-only window a WRITE needs:
    // replaced by a writable one below.
    if (w.gone || (write && !w.writable)) {
      release(*it);
      regs_.erase(it);
      break;
    }
    it->used = ++clock_;
    *out = {w.base + (off - start), it->token};
    return true;
  }
  std::shared_ptr<SharedWindow> w;
  {
    std::lock_guard<std::mutex> g(g_mu);
    w = window_of(fd, sb, start, span);
    if (!w) return false;
    if (w->base && write && !w->writable) {
      // Made by READs: a writable mapping replaces it (the connections
      // holding the old one let it go at their next look), with its counts.
      w->gone = true;
      auto counts = w->writes;
      w = window_of(fd, sb, start, span);
      if (!w) return false;
      w->writes = std::move(counts);
    }
    if (!w->base) {
      // Mapped through this open's descriptor: a WRITE's was opened for
      // writing (the caller's fallocate succeeded on it); a READ's for
      // reading, or mmap says no and pread() serves.
      const int prot = write ? PROT_READ | PROT_WRITE : PROT_READ;
      void* m = mmap(nullptr, span, prot, MAP_SHARED, fd, off_t(start));
      if (m == MAP_FAILED) return false;
      const int guard = fault_guard::add(m, span);
      if (guard < 0) {  // unguarded, a cut file could end the server
        munmap(m, span);
        return false;
      }
      w->base = static_cast<uint8_t*>(m);
      w->len = span;
      w->writable = write;
      w->guard = guard;
    }
  }
  Reg r;
  r.w = w;
  r.used = ++clock_;
  tools::Adapter& a = t_.adapter();
  NDK_PD* pd = t_.pd().get();
  auto* p = new tools::Pending;
  NDK_OBJECT_HEADER* obj = nullptr;
  NTSTATUS st = pd->Dispatch->NdkCreateMr(pd, FALSE, &tools::Pending::on_create, p, &r.mr);
  st = tools::Pending::finish(p, st, a.timeout(), &obj);
  if (!r.mr) r.mr = reinterpret_cast<NDK_MR*>(obj);
  if (st != STATUS_SUCCESS || !r.mr) {
    r.mr = nullptr;
    return false;
  }
  MDL mdl{nullptr, w->base, w->len};
  p = new tools::Pending;
  // A read-only mapping is registered for local reads only (the source of
  // RDMA Writes; NDK_MR_FLAG_ALLOW_LOCAL_READ is 0 in Microsoft's
  // ndkpi.h): a device backend refuses write access to it.
  const ULONG flags = w->writable ? NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK
                                  : NDK_MR_FLAG_ALLOW_LOCAL_READ;
  st = r.mr->Dispatch->NdkRegisterMr(r.mr, &mdl, w->len, flags, &tools::Pending::on_request, p);
  st = tools::Pending::finish(p, st, a.timeout());
  if (st != STATUS_SUCCESS) {
    // Not registered: closing the MR is all it needs (a device backend may
    // refuse a long-term pin of a file's pages; the pwrite() path serves).
    tools::close_object(&r.mr->Header, r.mr->Dispatch->NdkCloseMr, a.close_timeout());
    r.mr = nullptr;
    return false;
  }
  r.token = r.mr->Dispatch->NdkGetLocalTokenFromMr(r.mr);
  ++mapped_;
  if (regs_.size() >= kMaxWindows) {
    auto lru = std::min_element(regs_.begin(), regs_.end(),
                                [](const Reg& x, const Reg& y) { return x.used < y.used; });
    release(*lru);
    *lru = r;
  } else {
    regs_.push_back(r);
  }
  *out = {w->base + (off - start), r.token};
  return true;
}

}  // namespace smb::server
