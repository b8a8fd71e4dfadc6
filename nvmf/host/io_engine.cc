// SPDX-License-Identifier: Apache-2.0
// io_engine.cc - see io_engine.h.
#include "io_engine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "pattern.h"

namespace nvmf::host {

namespace {

struct NamedPattern {
  const char* name;
  Pattern p;
};
constexpr NamedPattern kPatterns[] = {
    {"read", Pattern::kSeqRead},      {"write", Pattern::kSeqWrite},
    {"randread", Pattern::kRandRead}, {"randwrite", Pattern::kRandWrite},
    {"randrw", Pattern::kRandRw},     {"rw", Pattern::kSeqRw},
};

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

struct Rng {  // xorshift64*: cheap and good enough to spread LBAs
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
};

}  // namespace

bool pattern_from_name(const std::string& name, Pattern& out) {
  for (const auto& n : kPatterns)
    if (name == n.name) {
      out = n.p;
      return true;
    }
  return false;
}

const char* pattern_name(Pattern p) {
  for (const auto& n : kPatterns)
    if (n.p == p) return n.name;
  return "?";
}

JobResult run_job(Controller& c, const JobSpec& spec) {
  const NamespaceInfo& ns = c.ns(spec.nsid);
  const uint32_t lba_size = ns.lba_size;
  if (spec.bs == 0 || spec.bs % lba_size)
    throw HostError(kExitUsage, "block size " + std::to_string(spec.bs) +
                                    " is not a multiple of the namespace's LBA size " +
                                    std::to_string(lba_size));
  auto& queues = c.io_queues();
  if (queues.empty()) throw HostError(kExitUsage, "no I/O queues");
  for (auto& q : queues) {
    if (spec.bs > q->max_io())
      throw HostError(kExitUsage, "block size " + std::to_string(spec.bs) +
                                      " is above the maximum transfer " +
                                      std::to_string(q->max_io()));
    if (spec.iodepth > q->depth()) throw HostError(kExitUsage, "queue depth above the queue size");
  }
  const uint32_t bsb = spec.bs / lba_size;
  const uint64_t first = spec.first_lba;
  uint64_t nblocks = spec.nblocks;
  if (nblocks == 0) nblocks = ns.nsze > first ? ns.nsze - first : 0;
  if (nblocks == 0) throw HostError(kExitUsage, "the region is empty");
  const uint64_t end = first + nblocks;
  const uint64_t rand_slots = std::max<uint64_t>(1, nblocks / bsb);
  const bool sequential = spec.pattern == Pattern::kSeqRead || spec.pattern == Pattern::kSeqWrite ||
                          spec.pattern == Pattern::kSeqRw;
  const bool fill = spec.verify || spec.fill_writes;

  JobResult res;
  Rng rng{spec.seed * 0x9E3779B97F4A7C15ull | 1};
  uint64_t cursor = first, issued = 0;
  unsigned passes = 0;
  bool stop = false;
  const uint64_t t0 = now_ns();
  const uint64_t t_end = spec.runtime_s > 0 ? t0 + uint64_t(spec.runtime_s * 1e9) : UINT64_MAX;
  uint64_t last_done = t0, last_progress = t0;
  uint64_t next_progress = t0 + uint64_t(1e9);
  const uint64_t stall_ns = uint64_t(30e9);

  auto pick_write = [&]() {
    switch (spec.pattern) {
      case Pattern::kSeqRead:
      case Pattern::kRandRead:
        return false;
      case Pattern::kSeqWrite:
      case Pattern::kRandWrite:
        return true;
      default:
        return (rng.next() % 100) >= spec.rwmixread;
    }
  };

  for (uint64_t loop = 0;; ++loop) {
    uint64_t now = now_ns();
    if (!stop) {
      if ((spec.count && issued >= spec.count) || now >= t_end ||
          res.errors + res.mismatches >= spec.max_errors)
        stop = true;
      if (spec.interrupt != nullptr && spec.interrupt->load(std::memory_order_relaxed)) {
        stop = true;
        res.interrupted = true;
      }
    }
    for (auto& qp : queues) {
      Queue& q = *qp;
      while (!stop && q.outstanding() < spec.iodepth) {
        uint64_t lba;
        uint32_t nlb = bsb;
        if (sequential) {
          lba = cursor;
          nlb = uint32_t(std::min<uint64_t>(bsb, end - cursor));
          cursor += nlb;
          if (cursor >= end) {
            cursor = first;
            if (spec.passes && ++passes >= spec.passes) stop = true;
          }
        } else {
          lba = first + (rng.next() % rand_slots) * bsb;
        }
        const bool write = pick_write();
        int slot = q.acquire();
        Sqe& cmd = q.sqe(slot);
        cmd.opcode = write ? kNvmWrite : kNvmRead;
        cmd.nsid = spec.nsid;
        cmd.cdw10 = uint32_t(lba);
        cmd.cdw11 = uint32_t(lba >> 32);
        cmd.cdw12 = nlb - 1;
        if (write && fill) fill_pattern(q.buffer(slot), lba, nlb, lba_size, spec.seed);
        q.submit(slot, nlb * lba_size, write ? DataDir::kToController : DataDir::kToHost);
        ++issued;
        if (spec.count && issued >= spec.count) stop = true;
      }
    }
    unsigned outstanding = 0;
    for (auto& qp : queues) {
      Queue& q = *qp;
      unsigned n = q.poll([&](int slot, const Cqe& cqe) {
        const uint64_t t = now_ns();
        const Sqe& cmd = q.sqe(slot);
        const bool write = cmd.opcode == kNvmWrite;
        const uint64_t lba = io_slba(cmd);
        const uint32_t nlb = io_nlb(cmd);
        last_done = t;
        if (!cqe.ok()) {
          if (res.errors++ == 0 && res.mismatches == 0) {
            res.first_error = std::string(write ? "Write" : "Read") + " of LBA " +
                              std::to_string(lba) + "+" + std::to_string(nlb) + ": " +
                              nvme_status_text(cqe.status_field());
            res.first_error_code = kExitNvmeStatus;
          }
          return;
        }
        DirStats& d = write ? res.write : res.read;
        d.ios++;
        d.bytes += uint64_t(nlb) * lba_size;
        d.clat.add(t - q.submitted_ns(slot));
        if (!write && spec.verify) {
          std::string why;
          if (!check_pattern(q.buffer(slot), lba, nlb, lba_size, spec.seed, &why)) {
            if (res.mismatches++ == 0 && res.errors == 0) {
              res.first_error = "verify: " + why;
              res.first_error_code = kExitVerify;
            }
          }
        }
      });
      if (n) last_progress = now_ns();
      outstanding += q.outstanding();
    }
    if (stop && outstanding == 0) break;
    if ((loop & 255) == 0) {
      c.tick();
      now = now_ns();
      if (spec.progress && now >= next_progress) {
        // Where a long load stands (and that it runs), a line a second.
        const double el = double(now - t0) / 1e9;
        const uint64_t ios = res.read.ios + res.write.ios;
        const uint64_t bytes = res.read.bytes + res.write.bytes;
        std::fprintf(stderr, "ndk-nvme: load %.0f s: %llu I/Os, %.1f MB/s, %llu errors\n", el,
                     static_cast<unsigned long long>(ios), el > 0 ? double(bytes) / el / 1e6 : 0.0,
                     static_cast<unsigned long long>(res.errors + res.mismatches));
        next_progress = now + uint64_t(1e9);
      }
      if (outstanding && now - last_progress > stall_ns)
        throw HostError(
            kExitConnectionLost,
            "no completion for 30 s with " + std::to_string(outstanding) + " commands outstanding");
    }
  }
  res.seconds = double(last_done - t0) / 1e9;
  for (auto& q : queues) {
    res.remote_invalidations += q->remote_invalidations();
    res.local_invalidations += q->local_invalidations();
    res.in_capsule_writes += q->in_capsule_writes();
  }
  return res;
}

}  // namespace nvmf::host
