// SPDX-License-Identifier: Apache-2.0
// workers.h - a bounded set of joinable worker threads for a server that
// serves each client on its own thread (ndkping -s -P, ndk-nvmet).
//
// Finished workers are joined by reap(), which the accept loop calls every
// time it wakes, so a long-running server holds only the threads of the
// clients it is serving (no stack, no mapping left behind per client). The
// set refuses a new worker beyond its cap, and a thread that cannot be
// created (address space, RLIMIT_NPROC) is reported, not thrown: the server
// refuses that one client and goes on. Workers get small stacks (they run
// request/response loops, not recursion), so many clients fit in little
// address space.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>

namespace softndk::tools {

class Workers {
 public:
  // `cap`: most workers alive at once (0: no cap); `stack_bytes`: each
  // worker's stack; `headroom_bytes`: address space that must still be
  // free for a new worker to start (probed with a mapping that is given
  // back at once), so that under an address-space limit a client is
  // refused before its worker runs out of memory halfway, deep in a
  // library call.
  explicit Workers(size_t cap, size_t stack_bytes = 1u << 20, size_t headroom_bytes = 4u << 20);
  ~Workers();  // joins every worker (they must end on their own)
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  enum class Start { kStarted, kFull, kFailed };
  // Runs `fn` on a new worker. kFull: `cap` workers are alive; kFailed: no
  // thread could be made, `why` says why. `fn` must not throw (what it
  // throws is dropped). Call from one thread only (with reap()).
  Start start(std::function<void()> fn, std::string* why);
  // Joins the workers that have finished; returns how many are alive.
  size_t reap();
  // Joins every worker, waiting for those still running (tell them to end
  // first): for a server that reads what its workers counted once they
  // are done. The set stays usable.
  void join_all();
  size_t cap() const { return cap_; }

 private:
  struct Slot;
  static void* run(void* slot);
  const size_t cap_;
  const size_t stack_bytes_;
  const size_t headroom_bytes_;
  std::mutex m_;  // guards Slot::done
  std::list<std::unique_ptr<Slot>> slots_;
};

}  // namespace softndk::tools
