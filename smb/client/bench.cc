// SPDX-License-Identifier: Apache-2.0
#include "bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <random>

#include "smb2/create.h"

namespace smb::client {

namespace {
using Clock = std::chrono::steady_clock;

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}
}  // namespace

// 8-byte words, each a hash of its file offset and the seed: any misplaced,
// stale or torn block shows.
void fill_pattern(uint8_t* p, uint32_t len, uint64_t offset, uint64_t seed) {
  // One hash per 8-byte word (the same bytes as one per byte, 8x fewer):
  // the pattern must not be what limits `bench --rw write`.
  uint32_t i = 0;
  while (i < len) {
    const uint64_t at = offset + i;
    const uint64_t w = mix((at >> 3) ^ (seed << 40));
    for (uint64_t b = at & 7; b < 8 && i < len; ++b, ++i) p[i] = uint8_t(w >> (8 * b));
  }
}

int64_t check_pattern(const uint8_t* p, uint32_t len, uint64_t offset, uint64_t seed) {
  for (uint32_t i = 0; i < len; ++i) {
    const uint64_t at = offset + i;
    if (p[i] != uint8_t(mix((at >> 3) ^ (seed << 40)) >> (8 * (at & 7)))) return int64_t(at);
  }
  return -1;
}

BenchResult run_bench(Client& c, const BenchOptions& o) {
  const bool reads = o.rw == "read" || o.rw == "randread";
  const bool random = o.rw == "randread" || o.rw == "randwrite";
  const uint32_t bs = o.bs;
  if (bs == 0 || bs > c.io_size())
    throw ClientError(kExitUsage, "--bs must be 1.." + std::to_string(c.io_size()) +
                                      " (the negotiated I/O size)");
  if (o.iodepth == 0 || o.iodepth > c.slots())
    throw ClientError(kExitUsage, "--iodepth must be 1.." + std::to_string(c.slots()));
  const uint64_t blocks = o.size / bs;
  if (blocks == 0) throw ClientError(kExitUsage, "--size is smaller than --bs");
  smb2::CreateResponse info;
  const auto f = c.open(o.path, smb2::kGenericRead | smb2::kGenericWrite, smb2::kFileOpenIf,
                        smb2::kFileNonDirectoryFile, &info);
  // Lay out: reads need the data there, verified reads need our pattern.
  if (reads && (o.verify || info.end_of_file < o.size)) {
    std::deque<std::pair<uint64_t, unsigned>> q;
    uint64_t next = 0;
    while (next < blocks || !q.empty()) {
      while (next < blocks && q.size() < o.iodepth) {
        const unsigned slot = unsigned(next % o.iodepth);
        fill_pattern(c.slot_data(slot), bs, next * bs, o.seed);
        q.emplace_back(c.start_write(f, next * bs, bs, slot), slot);
        ++next;
      }
      if (c.finish(q.front().first) != bs) throw ClientError(kExitStatus, "short WRITE in lay-out");
      q.pop_front();
    }
  }
  if (!reads && !o.verify)
    for (unsigned s = 0; s < o.iodepth; ++s) fill_pattern(c.slot_data(s), bs, s * bs, o.seed);
  std::mt19937_64 rng(o.seed);
  // Latencies of the first 4 M I/Os reserved up front, and the I/Os in
  // flight in a ring of iodepth entries: the loop itself allocates
  // nothing per I/O (a std::deque took a node every dozen I/Os).
  std::vector<double> lat;
  lat.reserve(o.runtime_s > 0 ? size_t(1) << 22 : size_t(std::min<uint64_t>(blocks, 1u << 22)));
  struct Pending {
    uint64_t id = 0, offset = 0;
    unsigned slot = 0;
    Clock::time_point t0;
  };
  std::vector<Pending> ring(o.iodepth);
  size_t head = 0, count = 0;
  std::vector<unsigned> free_slots;
  for (unsigned s = 0; s < o.iodepth; ++s) free_slots.push_back(s);
  BenchResult r;
  uint64_t seq = 0;
  const auto start = Clock::now();
  const auto stop = start + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(o.runtime_s));
  auto more = [&] { return o.runtime_s > 0 ? Clock::now() < stop : seq < blocks; };
  while (more() || count) {
    while (!free_slots.empty() && more()) {
      const uint64_t blk = random ? rng() % blocks : seq % blocks;
      ++seq;
      const unsigned slot = free_slots.back();
      free_slots.pop_back();
      const uint64_t off = blk * bs;
      Pending p{0, off, slot, Clock::now()};
      if (reads) {
        p.id = c.start_read(f, off, bs, slot);
      } else {
        // The data is the pattern of its offset when it is to be verified
        // later; otherwise each slot keeps the pattern filled once below.
        if (o.verify) fill_pattern(c.slot_data(slot), bs, off, o.seed);
        p.t0 = Clock::now();
        p.id = c.start_write(f, off, bs, slot);
      }
      ring[(head + count++) % ring.size()] = p;
    }
    const Pending p = ring[head];
    head = (head + 1) % ring.size();
    --count;
    // A READ's bytes are looked at where they arrived (no copy into the
    // slot; client.h).
    std::span<const uint8_t> data;
    const uint32_t n = c.finish(p.id, reads ? &data : nullptr);
    lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - p.t0).count());
    if (n != bs)
      throw ClientError(kExitStatus, std::string(reads ? "short READ" : "short WRITE") + " at " +
                                         std::to_string(p.offset) + ": " + std::to_string(n) +
                                         " of " + std::to_string(bs) + " bytes");
    if (reads && o.verify) {
      const int64_t bad = check_pattern(data.data(), n, p.offset, o.seed);
      if (bad >= 0) {
        ++r.verify_errors;
        if (r.verify_errors == 1)
          std::fprintf(stderr, "ndk-smb: verify: first mismatch at byte %lld of %s\n",
                       static_cast<long long>(bad), o.path.c_str());
      }
    }
    ++r.ios;
    r.bytes += n;
    free_slots.push_back(p.slot);
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  c.close(f);
  if (!lat.empty()) {
    std::sort(lat.begin(), lat.end());
    double sum = 0;
    for (double v : lat) sum += v;
    r.lat_avg_us = sum / double(lat.size());
    r.lat_min_us = lat.front();
    r.lat_max_us = lat.back();
    r.lat_p50_us = lat[lat.size() / 2];
    r.lat_p99_us = lat[std::min(lat.size() - 1, lat.size() * 99 / 100)];
  }
  return r;
}

std::string bench_report(const BenchOptions& o, const BenchResult& r) {
  const double mib = double(r.bytes) / (1 << 20);
  const double s = r.seconds > 0 ? r.seconds : 1e-9;
  const bool reads = o.rw == "read" || o.rw == "randread";
  char b[512];
  std::snprintf(b, sizeof b,
                "%s: (rw=%s, bs=%u, iodepth=%u)\n"
                "  %s: IOPS=%.0f, BW=%.1fMiB/s (%.1fMB/s)(%.1fMiB/%.0fmsec)\n"
                "    clat (usec): min=%.2f, max=%.2f, avg=%.2f, p50=%.2f, p99=%.2f\n"
                "  ios=%llu, bytes=%llu, verify_errors=%llu\n",
                o.path.c_str(), o.rw.c_str(), o.bs, o.iodepth, reads ? "read" : "write",
                double(r.ios) / s, mib / s, double(r.bytes) / s / 1e6, mib, s * 1000, r.lat_min_us,
                r.lat_max_us, r.lat_avg_us, r.lat_p50_us, r.lat_p99_us,
                static_cast<unsigned long long>(r.ios), static_cast<unsigned long long>(r.bytes),
                static_cast<unsigned long long>(r.verify_errors));
  return b;
}

}  // namespace smb::client
