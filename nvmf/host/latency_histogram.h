// SPDX-License-Identifier: Apache-2.0
// latency_histogram.h - completion latencies of the load generator without
// an allocation per I/O: log-linear buckets (64 per power of two, < 1.6 %
// error) over nanoseconds, plus exact min/max/sum.
#pragma once

#include <array>
#include <cstdint>

namespace nvmf::host {

class LatencyHistogram {
 public:
  void add(uint64_t ns);
  void merge(const LatencyHistogram& o);
  uint64_t count() const { return count_; }
  uint64_t min_ns() const { return count_ ? min_ : 0; }
  uint64_t max_ns() const { return max_; }
  double mean_ns() const { return count_ ? double(sum_) / double(count_) : 0.0; }
  // The value below which `pct` percent of the samples fall (bucket midpoint).
  double percentile_ns(double pct) const;

 private:
  static constexpr int kSub = 64;     // buckets per power of two
  static constexpr int kPowers = 40;  // up to 2^40 ns (~18 min)
  static int index(uint64_t ns);
  static double bucket_mid(int idx);
  std::array<uint64_t, kSub * kPowers> buckets_{};
  uint64_t count_ = 0, min_ = UINT64_MAX, max_ = 0, sum_ = 0;
};

}  // namespace nvmf::host
