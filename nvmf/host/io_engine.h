// SPDX-License-Identifier: Apache-2.0
// io_engine.h - ndk-nvme's I/O driver: the `read`/`write` range commands
// and the `load` generator are both jobs run by one thread that keeps
// every I/O queue at its depth, polls each queue's CQ and sends Keep Alive
// from the same loop (like ndkperf, the polling thread drives progress).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "controller.h"
#include "latency_histogram.h"

namespace nvmf::host {

enum class Pattern { kSeqRead, kSeqWrite, kRandRead, kRandWrite, kRandRw, kSeqRw };

// "randread" -> kRandRead; false for an unknown name.
bool pattern_from_name(const std::string& name, Pattern& out);
const char* pattern_name(Pattern p);

struct JobSpec {
  Pattern pattern = Pattern::kRandRead;
  uint32_t nsid = 1;
  uint64_t first_lba = 0;    // region of the namespace the job touches
  uint64_t nblocks = 0;      // region length in blocks (0: to the end)
  uint32_t bs = 4096;        // bytes per I/O (multiple of the LBA size)
  unsigned iodepth = 1;      // per queue
  unsigned rwmixread = 50;   // % reads for the mixes
  double runtime_s = 0;      // 0: until `count` or the passes are done
  uint64_t count = 0;        // I/Os; 0: no limit
  unsigned passes = 0;       // sequential: stop after this many passes (0: no limit)
  bool verify = false;       // writes carry the pattern, reads check it
  bool fill_writes = false;  // writes carry the pattern (without read checks)
  uint64_t seed = 1;
  unsigned max_errors = 1;  // NVMe errors or mismatches before the job stops
  // Set (by Ctrl-C) to end the job early: nothing more is issued, what is
  // in flight completes, the result covers what ran. May be null.
  const std::atomic<bool>* interrupt = nullptr;
  bool progress = false;  // a line a second on stderr (load)
};

struct DirStats {
  uint64_t ios = 0, bytes = 0;
  LatencyHistogram clat;
};

struct JobResult {
  DirStats read, write;
  double seconds = 0;
  uint64_t errors = 0;      // NVMe error statuses
  uint64_t mismatches = 0;  // verify failures
  std::string first_error;  // text of the first error or mismatch
  ExitCode first_error_code = kExitOk;
  uint64_t remote_invalidations = 0, local_invalidations = 0, in_capsule_writes = 0;
  bool interrupted = false;  // JobSpec::interrupt ended it
};

// Runs the job on every I/O queue of `c`. Throws HostError for transport
// failures; NVMe errors and mismatches are counted in the result.
JobResult run_job(Controller& c, const JobSpec& spec);

}  // namespace nvmf::host
