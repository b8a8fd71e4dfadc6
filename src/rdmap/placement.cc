// SPDX-License-Identifier: Apache-2.0
// rdmap/placement.cc - RNIC-style remote access checks and address mapping.
#include "rdmap/placement.h"

#include <map>
#include <mutex>
#include <utility>

#include "rdmap/fr_map.h"

namespace softndk::rdmap {

namespace {
using wire::TerminateCode;
using wire::TermLayer;
namespace term = wire::term;

TerminateCode ddp_tagged(uint8_t code) { return {TermLayer::kDdp, term::kDdpTagged, code}; }
TerminateCode rdmap_prot(uint8_t code) {
  return {TermLayer::kRdmap, term::kRdmapRemoteProtection, code};
}
// A window drops its reference on the MR it was bound to.
bool invalidate_entry(provider::StagTable& stags, const provider::StagInfo& i, uint32_t stag) {
  if (i.kind == provider::StagKind::kMw && i.object != nullptr)
    return i.object->invalidate_window(stag);
  return stags.invalidate(stag);
}
}  // namespace

AccessCheck check_remote_access(const provider::StagTable& stags, uint32_t stag, const void* pd,
                                const void* qp, uint64_t to, uint64_t len, uint32_t need,
                                bool read_request) {
  AccessCheck r;
  provider::StagInfo i;
  // Unknown index, stale key, invalidated or privileged (never remote).
  if (!stags.lookup(stag, &i) || !i.valid || i.kind == provider::StagKind::kPrivileged) {
    r.code =
        read_request ? rdmap_prot(term::kRdmapInvalidStag) : ddp_tagged(term::kDdpTagInvalidStag);
    return r;
  }
  if (i.pd != pd || (i.kind == provider::StagKind::kMw && i.qp != nullptr && i.qp != qp)) {
    r.code = read_request ? rdmap_prot(term::kRdmapStagNotAssociated)
                          : ddp_tagged(term::kDdpTagStagNotAssociated);
    return r;
  }
  if ((i.access & need) != need) {
    r.code = rdmap_prot(term::kRdmapAccessRights);
    return r;
  }
  if (to + len < to) {
    r.code = read_request ? rdmap_prot(term::kRdmapToWrap) : ddp_tagged(term::kDdpTagToWrap);
    return r;
  }
  if (to < i.base || len > i.length || to - i.base > i.length - len) {
    r.code =
        read_request ? rdmap_prot(term::kRdmapBaseBounds) : ddp_tagged(term::kDdpTagBaseBounds);
    return r;
  }
  int64_t delta = 0;
  if (i.kind == provider::StagKind::kFastMr && !fr_delta(&stags, stag, &delta)) {
    // Fast-registered over pages that are not contiguous in the process:
    // not remotely addressable by this provider (docs/datapath.md).
    r.code =
        read_request ? rdmap_prot(term::kRdmapBaseBounds) : ddp_tagged(term::kDdpTagBaseBounds);
    return r;
  }
  r.ok = true;
  r.ptr = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(to + static_cast<uint64_t>(delta)));
  return r;
}

bool remote_invalidate(provider::StagTable& stags, uint32_t stag, const void* pd, const void* qp,
                       TerminateCode* code) {
  provider::StagInfo i;
  TerminateCode cannot{TermLayer::kRdmap, term::kRdmapRemoteOperation,
                       term::kRdmapCannotInvalidate};
  if (!stags.lookup(stag, &i) || !i.valid ||
      (i.kind != provider::StagKind::kFastMr && i.kind != provider::StagKind::kMw)) {
    *code = cannot;
    return false;
  }
  if (i.pd != pd || (i.kind == provider::StagKind::kMw && i.qp != nullptr && i.qp != qp)) {
    *code = {TermLayer::kRdmap, term::kRdmapRemoteProtection, term::kRdmapCannotInvalidate};
    return false;
  }
  if (!invalidate_entry(stags, i, stag)) {
    *code = cannot;
    return false;
  }
  return true;
}

bool check_local_sgl(const provider::StagTable& stags, const void* pd, NDK_SGE* sgl, ULONG nsge,
                     uint32_t need) {
  for (ULONG k = 0; k < nsge; ++k) {
    NDK_SGE& s = sgl[k];
    if (s.Length == 0) continue;
    provider::StagInfo i;
    // check(): valid, same PD, rights, bounds without wrap.
    if (stags.check(s.MemoryRegionToken, pd, reinterpret_cast<uintptr_t>(s.VirtualAddress),
                    s.Length, need, &i) != STATUS_SUCCESS)
      return false;
    if (i.kind == provider::StagKind::kMw) return false;  // windows are for remote access only
    if (i.kind == provider::StagKind::kFastMr) {
      // The address is in the region's registered address space (its
      // BaseVirtualAddress), as on an RNIC: into the process's pages.
      // Pages that are not contiguous in the process have no single delta.
      int64_t delta = 0;
      if (!fr_delta(&stags, s.MemoryRegionToken, &delta)) return false;
      s.VirtualAddress = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(s.VirtualAddress) +
                                                 static_cast<uintptr_t>(delta));
    }
  }
  return true;
}

bool local_invalidate(provider::StagTable& stags, uint32_t stag, const void* pd) {
  provider::StagInfo i;
  // An STag that is already invalid (invalidated locally, by the peer's
  // Send with Invalidate, or never registered) fails: NDKPI's completion
  // handling rules say a later NdkInvalidate of such a token fails.
  if (!stags.lookup(stag, &i) || !i.valid || i.pd != pd) return false;
  if (i.kind != provider::StagKind::kFastMr && i.kind != provider::StagKind::kMw) return false;
  return invalidate_entry(stags, i, stag);
}

// ---- fast-register address map ----------------------------------------------

namespace {
std::mutex g_fr_mu;
std::map<std::pair<const void*, uint32_t>, int64_t> g_fr;  // (table, STag index) -> delta
constexpr int64_t kNotContiguous = INT64_MIN;
}  // namespace

void fr_set(const void* table, uint32_t stag, int64_t delta, bool contiguous) {
  std::lock_guard lk(g_fr_mu);
  g_fr[{table, provider::StagTable::index_of(stag)}] = contiguous ? delta : kNotContiguous;
}

bool fr_delta(const void* table, uint32_t stag, int64_t* delta) {
  std::lock_guard lk(g_fr_mu);
  auto it = g_fr.find({table, provider::StagTable::index_of(stag)});
  if (it == g_fr.end() || it->second == kNotContiguous) return false;
  *delta = it->second;
  return true;
}

}  // namespace softndk::rdmap
