// SPDX-License-Identifier: Apache-2.0
// rdmap/placement.h - remote access checks on inbound tagged segments and
// Read Requests, and where the bytes of a local SGL or a remote region live.
//
// Owns: the RNIC-style check of an STag against the adapter's STag table
// (valid and current key, same PD, MW bound to this QP, rights, bounds
// without wrap) with the Terminate code each refusal earns, and turning a
// checked (STag, TO) into a process pointer.
//
// Codes (docs/datapath.md, IWARP.md 9.5): RDMA Write refusals are DDP tagged
// buffer errors (invalid STag 0x00, bounds 0x01, not associated 0x02, wrap
// 0x03) like siw, except a missing right, which is RDMAP remote protection
// "access rights" (0x02, RFC 5040 7.2) so that the peer learns why. Read
// Request refusals are RDMAP remote protection errors (IWARP.md 4.4).
#pragma once

#include <cstdint>

#include "ddp/stream_parser.h"
#include "provider/provider.h"
#include "rdmap/terminate.h"

namespace softndk::rdmap {

struct AccessCheck {
  bool ok = false;
  wire::TerminateCode code;
  uint8_t* ptr = nullptr;  // first byte of [to, to+len) when ok
};

// `need` is provider::kAccessRemoteWrite (Write) or kAccessRemoteRead (Read
// Request). `read_request` selects the RDMAP code family.
AccessCheck check_remote_access(const provider::StagTable& stags, uint32_t stag, const void* pd,
                                const void* qp, uint64_t to, uint64_t len, uint32_t need,
                                bool read_request);

// Remote invalidation (Send with Invalidate): only fast-register MRs and
// windows of this PD (and, for windows bound by a QP, of this QP) qualify.
// Returns true when invalidated; otherwise `code` is RDMAP 0x09 "cannot
// invalidate" (EType remote protection on a PD mismatch, else remote
// operation, as siw).
bool remote_invalidate(provider::StagTable& stags, uint32_t stag, const void* pd, const void* qp,
                       wire::TerminateCode* code);

// Local access check of an SGL, as an RNIC checks local keys when it
// processes a request (docs/datapath.md "Local access checks"): every SGE
// with a non-zero length must name, by MemoryRegionToken, a valid memory
// region (registered or fast-registered; never a window) of `pd` or be the
// PD's privileged token, the region must grant `need` (provider::kAccessLocalWrite
// where the operation writes local memory: receive buffers, Read sinks) and
// [VirtualAddress, +Length) must lie inside it. Zero-length SGEs are not
// checked (siw skips them too). One STag lookup per SGE. An SGE of a
// fast-registered MR names an address in the MR's registered address space
// (NdkFastRegister's BaseVirtualAddress): it is rewritten in place to the
// process address (fr_map.h); pages not contiguous in the process fail.
bool check_local_sgl(const provider::StagTable& stags, const void* pd, NDK_SGE* sgl, ULONG nsge,
                     uint32_t need);

// The Terminate that refuses inbound segment `seg` with `code`: it copies
// the segment's DDP header (and, `with_read`, a Read Request's body).
inline wire::TerminateMessage segment_terminate(const wire::TerminateCode& code,
                                                const wire::SegmentInfo& seg, bool with_read) {
  wire::TerminateMessage t;
  t.code = code;
  t.m = true;
  t.d = true;
  t.ddp_segment_length = static_cast<uint16_t>(seg.payload_len);
  t.ddp_header = seg.header_bytes;
  if (with_read && seg.body.size() == wire::kReadRequestBodySize) {
    t.r = true;
    t.rdma_header = seg.body;
  }
  return t;
}

// Local invalidation (NdkInvalidate, RDMA_READ_LOCAL_INVALIDATE): same
// rules without the QP binding check. False if the STag is not current.
bool local_invalidate(provider::StagTable& stags, uint32_t stag, const void* pd);

}  // namespace softndk::rdmap
