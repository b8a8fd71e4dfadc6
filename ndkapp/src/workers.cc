// SPDX-License-Identifier: Apache-2.0
// workers.cc - pthreads on stacks of our own (std::thread can set neither
// size nor placement), joined by the owner once they say they are done.
// The stacks are mapped here and unmapped at the join: glibc would keep the
// stacks of finished threads in its cache (up to 40 MiB), so after a burst
// of clients the address space would not come back.
#include "ndkapp/workers.h"

#include <pthread.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>

namespace softndk::tools {

struct Workers::Slot {
  Workers* owner;
  std::function<void()> fn;
  pthread_t thread{};
  void* stack = nullptr;  // guard page + stack, mmap'ed
  size_t stack_len = 0;
  bool done = false;  // under owner->m_
  ~Slot() {
    if (stack) munmap(stack, stack_len);
  }
};

Workers::Workers(size_t cap, size_t stack_bytes, size_t headroom_bytes)
    : cap_(cap), stack_bytes_(stack_bytes), headroom_bytes_(headroom_bytes) {}

namespace {

// True if `bytes` of address space can still be mapped (RLIMIT_AS counts
// even an inaccessible mapping, and none of it is ever touched).
bool address_space_left(size_t bytes) {
  if (bytes == 0) return true;
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  munmap(p, bytes);
  return true;
}

}  // namespace

Workers::~Workers() { join_all(); }

void Workers::join_all() {
  for (auto& s : slots_) pthread_join(s->thread, nullptr);
  slots_.clear();  // unmaps the stacks
}

namespace {
constexpr size_t kGuard = 4096;
}  // namespace

void* Workers::run(void* p) {
  auto* s = static_cast<Slot*>(p);
  try {
    s->fn();
  } catch (...) {  // the contract says fn does not throw; never let it end the process
  }
  s->fn = nullptr;  // release what fn captured before the owner joins
  std::lock_guard lk(s->owner->m_);
  s->done = true;
  return nullptr;
}

Workers::Start Workers::start(std::function<void()> fn, std::string* why) {
  if (cap_ != 0 && reap() >= cap_) return Start::kFull;
  if (!address_space_left(headroom_bytes_)) {
    if (why)
      *why = "out of address space (a client needs " + std::to_string(headroom_bytes_ >> 20) +
             " MiB free)";
    return Start::kFailed;
  }
  try {
    // The slot is in the list before its thread exists: nothing that can
    // fail comes after pthread_create.
    slots_.push_back(std::make_unique<Slot>());
    Slot& slot = *slots_.back();
    slot.owner = this;
    slot.fn = std::move(fn);
  } catch (const std::bad_alloc&) {  // nothing was added
    if (why) *why = "out of memory for a worker";
    return Start::kFailed;
  }
  Slot& slot = *slots_.back();
  // The lowest page stays inaccessible: an overflow faults instead of
  // writing into the next mapping.
  slot.stack_len = kGuard + stack_bytes_;
  void* mem = mmap(nullptr, slot.stack_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  int rc = 0;
  if (mem == MAP_FAILED) {
    rc = errno;
  } else {
    slot.stack = mem;
    mprotect(mem, kGuard, PROT_NONE);
    pthread_attr_t attr;
    rc = pthread_attr_init(&attr);
    if (rc == 0) {
      rc = pthread_attr_setstack(&attr, static_cast<char*>(mem) + kGuard, stack_bytes_);
      if (rc == 0) rc = pthread_create(&slot.thread, &attr, &Workers::run, &slot);
      pthread_attr_destroy(&attr);
    }
  }
  if (rc != 0) {
    slots_.pop_back();
    if (why) *why = std::string("cannot start a thread: ") + std::strerror(rc);
    return Start::kFailed;
  }
  return Start::kStarted;
}

size_t Workers::reap() {
  std::list<std::unique_ptr<Slot>> finished;
  {
    std::lock_guard lk(m_);
    for (auto it = slots_.begin(); it != slots_.end();) {
      auto next = std::next(it);
      if ((*it)->done) finished.splice(finished.end(), slots_, it);
      it = next;
    }
  }
  for (auto& s : finished) pthread_join(s->thread, nullptr);
  return slots_.size();
}

}  // namespace softndk::tools
