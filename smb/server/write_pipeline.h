// SPDX-License-Identifier: Apache-2.0
// write_pipeline.h - a connection's WRITEs over the RDMA channel in two
// stages at once: while a worker thread pwrite()s WRITE n out of its bounce
// buffer, the connection's thread serves WRITE n+1 (its RDMA Read, whose
// copy out of the client runs on the thread that polls the completion
// queue). The two copies of a WRITE (out of the client, into the page
// cache) then run on two cores instead of one after the other
// (docs/smb-direct.md, "Pipelined WRITEs").
//
// A fixed number of registered bounce buffers (ServerConfig::write_pipeline,
// each max_io bytes) bounds the WRITEs in flight and is reused: nothing is
// allocated per WRITE. The worker takes them in the order submitted, so
// WRITEs of one connection reach the file in the order they arrived and
// finish in that order; the connection answers each once it has finished
// (its status is the pwrite's). The connection serves any other request
// only once every WRITE in flight has finished (connection.cc), so a READ,
// FLUSH or CLOSE sees their data.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "ndkapp/session.h"
#include "smb2/keys.h"

namespace smb::server {

class WritePipeline {
 public:
  // What a WRITE's answer needs once its pwrite is done, given at submit().
  struct Answer {
    std::array<uint8_t, 64> header{};  // the response header as built
    std::optional<smb2::Key16> key;    // sign the answer with it
    uint32_t invalidate = 0;           // answer by Send with Invalidate of this token (0: none)
  };
  struct Done {
    Answer answer;
    uint32_t status = 0;   // NTSTATUS: success, or the pwrite's errno's
    uint32_t written = 0;  // bytes written (all of them on success)
  };

  // `depth` bounce buffers of `buffer_size` bytes registered as RDMA Read
  // sinks, and the worker thread. Throws (tools::ToolError, std::system_error)
  // when either cannot be had; the caller then serves WRITEs one at a time.
  WritePipeline(softndk::tools::Adapter& a, softndk::tools::Pd& pd, uint32_t buffer_size,
                unsigned depth);
  // Waits for the WRITEs in flight (finish()) and ends the worker.
  ~WritePipeline();
  WritePipeline(const WritePipeline&) = delete;
  WritePipeline& operator=(const WritePipeline&) = delete;

  unsigned depth() const { return unsigned(slots_.size()); }
  unsigned in_flight() const { return unsigned(order_.size()); }
  // A bounce buffer no WRITE holds (its index), or -1. Finished WRITEs
  // hold theirs until collect() hands them over.
  int free_slot() const;
  uint8_t* data(int slot) const;
  uint32_t token(int slot) const;  // its local token, for the RDMA Read
  // Hands the WRITE of `len` bytes in buffer `slot` to the worker: file
  // descriptor `fd` (open until the WRITE finished), at `offset`.
  void submit(int slot, int fd, uint64_t offset, uint32_t len, const Answer& answer);
  // Appends the finished WRITEs, oldest first, to *out and frees their
  // buffers. With `wait`, first waits until the oldest in flight has
  // finished, up to `deadline`: false when it had not by then.
  bool collect(std::vector<Done>* out, bool wait, softndk::tools::Deadline deadline);
  // Waits up to `timeout_s` for every WRITE in flight and ends the worker;
  // their results are dropped. False when a pwrite() did not return in
  // time: the worker is then left to finish on its own with the buffers
  // (leaked on purpose: it still reads them) and skips the WRITEs queued
  // behind.
  bool finish(double timeout_s);

 private:
  enum class State { kFree, kQueued, kDone };
  struct Slot {
    std::unique_ptr<softndk::tools::Buffer> buf;
    State state = State::kFree;
    int fd = -1;
    uint64_t offset = 0;
    uint32_t len = 0;
    Done done;
  };
  struct Shared;  // what the worker may outlive the pipeline with
  static void run(std::shared_ptr<Shared> s);

  std::shared_ptr<Shared> s_;
  std::vector<Slot>& slots_;
  std::deque<int> order_;  // the slots in flight, oldest first (the connection's view)
  std::thread worker_;
};

}  // namespace smb::server
