// workers.cc - pthreads (for the stack size std::thread cannot set), joined
// by the owner once they say they are done.
#include "common/workers.h"

#include <pthread.h>

#include <cstring>

namespace softndk::tools {

struct Workers::Slot {
  Workers* owner;
  std::function<void()> fn;
  pthread_t thread{};
  bool done = false;  // under owner->m_
};

Workers::Workers(size_t cap, size_t stack_bytes) : cap_(cap), stack_bytes_(stack_bytes) {}

Workers::~Workers() {
  for (auto& s : slots_) pthread_join(s->thread, nullptr);
}

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
  pthread_attr_t attr;
  int rc = pthread_attr_init(&attr);
  if (rc == 0) {
    pthread_attr_setstacksize(&attr, stack_bytes_);
    rc = pthread_create(&slot.thread, &attr, &Workers::run, &slot);
    pthread_attr_destroy(&attr);
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
