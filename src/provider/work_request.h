// SPDX-License-Identifier: Apache-2.0
// work_request.h - the queued form of NDK work requests (QP SQ/RQ, SRQ).
//
// Posting calls copy everything they need into preallocated ring slots so
// the consumer's SGL and inline buffers may be reused as soon as the call
// returns. The data path reads these copies.
#pragma once

#include <cstdint>

#include "provider/memory_object.h"
#include "softndk/ndkpi.h"

namespace softndk::provider {

inline constexpr uint32_t kMaxSge = 16;  // NDK_ADAPTER_INFO Max*RequestSge
// NDK_ADAPTER_INFO MaxInlineDataSize: the engine sizes its gather buffer by it.
inline constexpr uint32_t kMaxInlineData = 256;

// One initiator-queue request (Send, SendAndInvalidate, Write, Read, Bind,
// FastRegister, Invalidate): everything but its SGL. A QP's SQ ring keeps
// this part per slot and the SGL in an array sized by the QP's own SGE
// limit, so an idle ring does not pay for kMaxSge entries per slot.
struct WorkRequestHead {
  void* context = nullptr;
  NDK_OPERATION_TYPE type = NdkOperationTypeSend;
  ULONG flags = 0;                       // NDK_OP_FLAG_*
  ULONG nsge = 0;                        // entries in sge[] (0 for inline requests)
  uint64_t length = 0;                   // total bytes of the request's data
  const uint8_t* inline_data = nullptr;  // INLINE: `length` bytes owned by the QP slot
  uint64_t remote_addr = 0;              // Read/Write: tagged offset
  uint32_t remote_token = 0;  // Read/Write: remote STag; SendAndInvalidate: STag to invalidate
  // Bind / FastRegister / Invalidate.
  MemoryObject* mr = nullptr;  // ndk::Mr
  MemoryObject* mw = nullptr;  // ndk::Mw
  uint32_t stag = 0;       // Bind/FR: the new STag (key chosen at post time); Invalidate: target
  uint32_t access = 0;     // Access bits (stag_table.h)
  uint64_t va = 0;         // Bind/FR: first byte's VA
  ULONG fbo = 0;           // FR: first-byte offset in page 0
  ULONG pages = 0;         // FR: pages in the staged page array
  uint32_t fr_ticket = 0;  // FR: the MR's staged page array (Mr::stage_fr_pages)
};

// The whole request, as the data path takes it from the SQ.
struct WorkRequest : WorkRequestHead {
  NDK_SGE sge[kMaxSge] = {};
};

// One receive (QP RQ or SRQ): the part a QP's RQ ring keeps per slot (its
// SGL lives in an array sized by the QP's receive SGE limit) ...
struct ReceiveHead {
  void* context = nullptr;
  ULONG nsge = 0;
  uint64_t length = 0;  // total capacity
};

// ... and the whole receive, as the data path takes it.
struct ReceiveRequest : ReceiveHead {
  NDK_SGE sge[kMaxSge] = {};
};

}  // namespace softndk::provider
