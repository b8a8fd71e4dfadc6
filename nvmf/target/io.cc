// SPDX-License-Identifier: Apache-2.0
// io.cc - see io.h.
#include "target/io.h"

#include <array>
#include <cerrno>
#include <cstring>

namespace nvmf::target {

namespace {

Reply st(uint8_t sc, uint8_t sct = kSctGeneric) {
  Reply r;
  r.status = make_status(sct, sc);
  return r;
}

bool in_range(const Backend& b, uint64_t slba, uint64_t nlb) {
  return slba < b.blocks() && nlb <= b.blocks() - slba;
}

uint16_t io_errno(int e) {
  return e == ERANGE ? make_status(kSctGeneric, kScLbaOutOfRange)
                     : make_status(kSctGeneric, kScInternalError);
}

constexpr uint32_t kFua = 1u << 30;           // cdw12: force unit access
constexpr uint32_t kWzDeallocate = 1u << 25;  // Write Zeroes cdw12: DEAC
constexpr uint32_t kDsmAd = 1u << 2;          // DSM cdw11: deallocate

}  // namespace

uint16_t io_precheck(Subsystem& s, const ParsedCapsule& p) {
  const Sqe& q = p.sqe;
  Backend* b = s.ns(q.nsid);
  switch (q.opcode) {
    case kNvmRead:
    case kNvmWrite: {
      if (!b) return make_status(kSctGeneric, kScInvalidNamespace);
      uint64_t slba = io_slba(q), nlb = io_nlb(q);
      if (!in_range(*b, slba, nlb)) return make_status(kSctGeneric, kScLbaOutOfRange);
      uint64_t bytes = nlb << kBlockShift;
      if (bytes > s.cfg().mdts_bytes) return make_status(kSctGeneric, kScInvalidField);
      // The SGL must describe exactly the data the command moves.
      if (p.kind == DataKind::kNone || p.length != bytes)
        return make_status(kSctGeneric, kScDataSglLengthInvalid);
      return 0;
    }
    case kNvmFlush:
      if (!b && q.nsid != 0xFFFFFFFF) return make_status(kSctGeneric, kScInvalidNamespace);
      return 0;
    case kNvmWriteZeroes:
      if (!b) return make_status(kSctGeneric, kScInvalidNamespace);
      if (!in_range(*b, io_slba(q), io_nlb(q))) return make_status(kSctGeneric, kScLbaOutOfRange);
      return 0;
    case kNvmDatasetManagement: {
      if (!b) return make_status(kSctGeneric, kScInvalidNamespace);
      uint32_t need = ((q.cdw10 & 0xFF) + 1) * uint32_t(sizeof(DsmRange));
      if (p.kind == DataKind::kNone || p.length < need)
        return make_status(kSctGeneric, kScDataSglLengthInvalid);
      return 0;
    }
    default:
      return make_status(kSctGeneric, kScInvalidOpcode);
  }
}

Reply io_execute(Subsystem& s, const ParsedCapsule& p, std::span<const uint8_t> in,
                 std::span<uint8_t> out) {
  const Sqe& q = p.sqe;
  Backend* b = s.ns(q.nsid);
  Reply r;
  switch (q.opcode) {
    case kNvmRead: {
      uint64_t off = io_slba(q) << kBlockShift;
      uint32_t bytes = io_nlb(q) << kBlockShift;
      if (bytes > out.size()) return st(kScInvalidField);
      if (int e = b->read(off, out.data(), bytes)) return Reply{io_errno(e)};
      s.stats.reads++;
      s.stats.read_bytes += bytes;
      r.data_len = bytes;
      return r;
    }
    case kNvmWrite: {
      uint64_t off = io_slba(q) << kBlockShift;
      uint32_t bytes = io_nlb(q) << kBlockShift;
      if (bytes > in.size()) return st(kScDataSglLengthInvalid);
      if (int e = b->write(off, in.data(), bytes)) return Reply{io_errno(e)};
      if ((q.cdw12 & kFua) && b->flush() != 0) return st(kScInternalError);
      s.stats.writes++;
      s.stats.write_bytes += bytes;
      return r;
    }
    case kNvmFlush:
      for (uint32_t id = 1; id <= s.ns_count(); ++id)
        if ((q.nsid == 0xFFFFFFFF || q.nsid == id) && s.ns(id)->flush() != 0)
          return st(kScInternalError);
      return r;
    case kNvmWriteZeroes: {
      uint64_t off = io_slba(q) << kBlockShift;
      uint64_t bytes = uint64_t(io_nlb(q)) << kBlockShift;
      int e = (q.cdw12 & kWzDeallocate) ? b->deallocate(off, bytes) : b->zero(off, bytes);
      if (e) return Reply{io_errno(e)};
      return r;
    }
    case kNvmDatasetManagement: {
      if (!(q.cdw11 & kDsmAd)) return r;  // hints only: nothing to do
      uint32_t n = (q.cdw10 & 0xFF) + 1;
      if (in.size() < n * sizeof(DsmRange)) return st(kScDataSglLengthInvalid);
      // All ranges are checked before any is deallocated.
      // At most 256 ranges (NR is 8 bits): on the stack, no allocation.
      std::array<DsmRange, 256> ranges;
      std::memcpy(ranges.data(), in.data(), n * sizeof(DsmRange));
      for (uint32_t i = 0; i < n; ++i)
        if (!in_range(*b, ranges[i].slba, ranges[i].nlb)) return st(kScLbaOutOfRange);
      for (uint32_t i = 0; i < n; ++i) {
        const DsmRange& d = ranges[i];
        if (d.nlb && b->deallocate(d.slba << kBlockShift, uint64_t(d.nlb) << kBlockShift) != 0)
          return st(kScInternalError);
      }
      return r;
    }
    default:
      return st(kScInvalidOpcode);
  }
}

}  // namespace nvmf::target
