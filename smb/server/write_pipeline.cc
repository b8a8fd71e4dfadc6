// SPDX-License-Identifier: Apache-2.0
#include "write_pipeline.h"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "nt_status.h"
#include "share.h"

namespace smb::server {

namespace tools = softndk::tools;

struct WritePipeline::Shared {
  std::mutex mu;
  std::condition_variable work;      // the worker: a WRITE queued, or stop
  std::condition_variable finished;  // the connection: a WRITE finished
  std::deque<int> queue;             // slots for the worker, in the order submitted
  std::vector<Slot> slots;
  bool stop = false;       // no more WRITEs: the worker ends once the queue is empty
  bool abandoned = false;  // finish() gave up: the WRITEs still queued are skipped
};

WritePipeline::WritePipeline(tools::Adapter& a, tools::Pd& pd, uint32_t buffer_size, unsigned depth)
    : s_(std::make_shared<Shared>()), slots_(s_->slots) {
  slots_.resize(std::max(1u, depth));
  for (auto& sl : slots_)
    sl.buf = std::make_unique<tools::Buffer>(
        a, pd, buffer_size, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
  worker_ = std::thread(&WritePipeline::run, s_);
}

WritePipeline::~WritePipeline() {
  // 60 s, the transport's bound of an RDMA transfer: a pwrite() to a local
  // file takes far less; one that does not return by then is left behind.
  finish(60);
}

int WritePipeline::free_slot() const {
  std::lock_guard<std::mutex> g(s_->mu);
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].state == State::kFree) return int(i);
  return -1;
}

uint8_t* WritePipeline::data(int slot) const { return slots_[size_t(slot)].buf->data(); }

uint32_t WritePipeline::token(int slot) const { return slots_[size_t(slot)].buf->local_token(); }

void WritePipeline::submit(int slot, int fd, uint64_t offset, uint32_t len, const Answer& answer) {
  {
    std::lock_guard<std::mutex> g(s_->mu);
    Slot& sl = slots_[size_t(slot)];
    sl.state = State::kQueued;
    sl.fd = fd;
    sl.offset = offset;
    sl.len = len;
    sl.done = Done{answer, nt::kSuccess, 0};
    s_->queue.push_back(slot);
  }
  order_.push_back(slot);
  s_->work.notify_one();
}

bool WritePipeline::collect(std::vector<Done>* out, bool wait, tools::Deadline deadline) {
  std::unique_lock<std::mutex> lk(s_->mu);
  if (wait && !order_.empty()) {
    Slot& oldest = slots_[size_t(order_.front())];
    if (!s_->finished.wait_until(lk, deadline, [&] { return oldest.state == State::kDone; }))
      return false;
  }
  while (!order_.empty() && slots_[size_t(order_.front())].state == State::kDone) {
    Slot& sl = slots_[size_t(order_.front())];
    out->push_back(sl.done);
    sl.state = State::kFree;
    sl.fd = -1;
    order_.pop_front();
  }
  return true;
}

bool WritePipeline::finish(double timeout_s) {
  if (!worker_.joinable()) return true;
  bool all = true;
  {
    std::unique_lock<std::mutex> lk(s_->mu);
    s_->stop = true;
    s_->work.notify_one();
    all = s_->finished.wait_until(lk, tools::deadline_in(timeout_s), [&] {
      for (const auto& sl : slots_)
        if (sl.state == State::kQueued) return false;
      return true;
    });
    if (!all) {
      s_->abandoned = true;
      // The buffers stay: the worker may still be reading one in pwrite().
      // Their registrations go with the adapter's end, their memory never.
      for (auto& sl : slots_) (void)sl.buf.release();
    }
  }
  if (all) {
    worker_.join();
  } else {
    std::fprintf(stderr,
                 "ndk-smbd: a WRITE's pwrite() did not return within %g s; its thread is left "
                 "to finish on its own\n",
                 timeout_s);
    worker_.detach();
  }
  order_.clear();
  return all;
}

void WritePipeline::run(std::shared_ptr<Shared> s) {
  pthread_setname_np(pthread_self(), "ndk-smbd-write");  // in profiles and top -H
  std::unique_lock<std::mutex> lk(s->mu);
  for (;;) {
    s->work.wait(lk, [&] { return s->stop || !s->queue.empty(); });
    if (s->queue.empty()) return;  // stopped, nothing left
    const int i = s->queue.front();
    s->queue.pop_front();
    Slot& sl = s->slots[size_t(i)];
    if (s->abandoned) {  // the connection is gone: its fd may be another file's now
      sl.done.status = nt::kUnexpectedIoError;
      sl.state = State::kDone;
      continue;
    }
    const int fd = sl.fd;
    const uint64_t offset = sl.offset;
    const uint32_t len = sl.len;
    const uint8_t* p = sl.buf ? sl.buf->data() : nullptr;
    lk.unlock();
    uint32_t status = nt::kSuccess, put = 0;
    while (p && put < len) {
      const ssize_t k = pwrite(fd, p + put, len - put, off_t(offset + put));
      if (k < 0) {
        if (errno == EINTR) continue;
        status = status_from_errno(errno);
        break;
      }
      if (k == 0) {  // not for a regular file; never loop on it
        status = nt::kUnexpectedIoError;
        break;
      }
      put += uint32_t(k);
    }
    lk.lock();
    sl.done.status = status;
    sl.done.written = put;
    sl.state = State::kDone;
    s->finished.notify_all();
  }
}

}  // namespace smb::server
