// SPDX-License-Identifier: Apache-2.0
// bench.h - `ndk-smb bench`: a load against one file with fio's vocabulary
// (rw, bs, iodepth, size, runtime, verify), reported as bandwidth, IOPS and
// completion latency (avg, p50, p99, max).
#pragma once

#include <cstdint>
#include <string>

#include "client.h"

namespace smb::client {

struct BenchOptions {
  std::string path;
  std::string rw = "read";  // read | write | randread | randwrite
  uint32_t bs = 1u << 20;
  unsigned iodepth = 1;
  uint64_t size = 64ull << 20;  // the file's extent the load covers
  double runtime_s = 5;         // 0: one pass over `size`
  bool verify = false;          // pattern writes / checked reads
  uint64_t seed = 1;
};

struct BenchResult {
  uint64_t ios = 0, bytes = 0, verify_errors = 0;
  double seconds = 0;
  double lat_avg_us = 0, lat_p50_us = 0, lat_p99_us = 0, lat_max_us = 0, lat_min_us = 0;
};

// Lays the file out first when reads need data (or verification needs the
// pattern), then runs the load. Throws ClientError.
BenchResult run_bench(Client& c, const BenchOptions& o);
// fio-like text: "read: IOPS=..., BW=...".
std::string bench_report(const BenchOptions& o, const BenchResult& r);

// The verification pattern: a function of the file offset and the seed.
void fill_pattern(uint8_t* p, uint32_t len, uint64_t offset, uint64_t seed);
// Offset of the first byte that differs from the pattern, or -1.
int64_t check_pattern(const uint8_t* p, uint32_t len, uint64_t offset, uint64_t seed);

}  // namespace smb::client
