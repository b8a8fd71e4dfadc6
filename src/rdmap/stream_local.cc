// SPDX-License-Identifier: Apache-2.0
// rdmap/stream_local.cc - local work requests (fast register, bind,
// invalidate) executed in SQ order, and their failures (NDKPI 12;
// docs/ndk-objects.md). Split from stream_tx.cc: no byte of these goes on
// the wire.
#include <vector>

#include "rdmap/fr_map.h"
#include "rdmap/placement.h"
#include "rdmap/stream.h"

namespace softndk::rdmap {

void Stream::execute_local(const provider::WorkRequest& wr, uint64_t seq) {
  // Local STag state changes, executed in SQ order (NDKPI 12).
  NTSTATUS st = STATUS_SUCCESS;
  switch (wr.type) {
    case NdkOperationTypeFastRegister: {
      // This request's own page array, taken whatever happens next.
      std::vector<NDK_LOGICAL_ADDRESS> pages = wr.mr->take_fr_pages(wr.fr_ticket);
      // The MR must be invalid (never registered, or invalidated locally or
      // by the peer) - the iWARP verbs rule that siw and RNICs enforce.
      // With one token per MR's lifetime this is what keeps a token that
      // is still advertised from silently moving to a new range.
      provider::StagInfo cur;
      if (!stags_.lookup(wr.stag, &cur) || cur.valid) {
        st = STATUS_INVALID_PARAMETER;
        break;
      }
      bool contiguous = !pages.empty();
      for (size_t i = 1; i < pages.size() && contiguous; ++i)
        contiguous =
            pages[i].QuadPart == pages[0].QuadPart + static_cast<int64_t>(i * NDK_PAGE_SIZE);
      int64_t delta = contiguous ? pages[0].QuadPart + static_cast<int64_t>(wr.fbo) -
                                       static_cast<int64_t>(wr.va)
                                 : 0;
      fr_set(&stags_, wr.stag, delta, contiguous);
      if (!stags_.validate(wr.stag, wr.va, wr.length, wr.access)) st = STATUS_INVALID_PARAMETER;
      break;
    }
    case NdkOperationTypeBind:
      if (!wr.mw->execute_bind(wr.mr, wr.stag, wr.va, wr.length, wr.access, qp_))
        st = STATUS_INVALID_PARAMETER;
      break;
    case NdkOperationTypeInvalidate:
      if (!local_invalidate(stags_, wr.stag, pd_)) st = STATUS_INVALID_PARAMETER;
      break;
    default:
      st = STATUS_INVALID_PARAMETER;
  }
  if (st != STATUS_SUCCESS) {
    // Like a local protection/operation error on an RNIC: the failed
    // request completes with its status and the QP goes to error.
    fail_local(seq, st);
    return;
  }
  qp_->sq_complete(seq, st, 0);
}

void Stream::fail_local(uint64_t seq, NTSTATUS st) {
  qp_->sq_complete(seq, st, 0);
  wire::TerminateMessage t;
  t.code = {wire::TermLayer::kRdmap, wire::term::kRdmapLocalCatastrophic, 0x00};
  queue_terminate(t);
  fail(st, ECONNABORTED);
}

}  // namespace softndk::rdmap
