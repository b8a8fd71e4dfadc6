// SPDX-License-Identifier: Apache-2.0
// latency_histogram.cc - see latency_histogram.h. Values below kSub ns get
// one bucket each; above, bucket = (power of two, top 6 bits below it).
#include "latency_histogram.h"

#include <algorithm>
#include <bit>

namespace nvmf::host {

int LatencyHistogram::index(uint64_t ns) {
  if (ns < kSub) return int(ns);
  int p = 63 - std::countl_zero(ns);  // >= 6
  int sub = int((ns >> (p - 6)) & (kSub - 1));
  int idx = (p - 5) * kSub + sub;
  return std::min(idx, kSub * kPowers - 1);
}

double LatencyHistogram::bucket_mid(int idx) {
  if (idx < kSub) return idx;
  int p = idx / kSub + 5;
  int sub = idx % kSub;
  double lo = double((uint64_t(1) << p) + (uint64_t(sub) << (p - 6)));
  double width = double(uint64_t(1) << (p - 6));
  return lo + width / 2;
}

void LatencyHistogram::add(uint64_t ns) {
  ++buckets_[index(ns)];
  ++count_;
  sum_ += ns;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += o.buckets_[i];
  count_ += o.count_;
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

double LatencyHistogram::percentile_ns(double pct) const {
  if (count_ == 0) return 0;
  uint64_t rank = uint64_t(double(count_) * pct / 100.0 + 0.5);
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::clamp(bucket_mid(int(i)), double(min_), double(max_));
  }
  return double(max_);
}

}  // namespace nvmf::host
