// SPDX-License-Identifier: Apache-2.0
#include "reassembly.h"

namespace smbd {

Reassembler::State Reassembler::add(const DataMessage& m, Error* error) {
  *error = Error::kNone;
  const uint32_t len = m.header.data_length;
  const uint32_t rem = m.header.remaining_data_length;
  if (len == 0) {
    // An empty message in the middle of a fragmented one carries no data;
    // it must not claim a different remainder either.
    if (in_progress_ && rem != 0 && rem != remaining_) {
      *error = Error::kFragmentSequence;
      return State::kEmpty;
    }
    return State::kEmpty;
  }
  if (!in_progress_) {
    buf_.clear();
    if (uint64_t(len) + rem > max_) {
      *error = Error::kFragmentTooLarge;
      return State::kEmpty;
    }
    buf_.reserve(size_t(len) + rem);
  } else if (uint64_t(len) + rem != remaining_) {
    *error = Error::kFragmentSequence;
    return State::kPartial;
  }
  buf_.insert(buf_.end(), m.payload.begin(), m.payload.end());
  remaining_ = rem;
  in_progress_ = rem != 0;
  return in_progress_ ? State::kPartial : State::kComplete;
}

}  // namespace smbd
