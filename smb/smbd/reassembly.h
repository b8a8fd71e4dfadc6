// SPDX-License-Identifier: Apache-2.0
// reassembly.h - joins the segments of one fragmented upper-layer message
// (MS-SMBD 3.1.5.8: RemainingDataLength counts the bytes still to come).
// Pure state over parsed DataMessages; the transport owns the buffer limit.
#pragma once

#include <cstdint>
#include <vector>

#include "data_message.h"

namespace smbd {

class Reassembler {
 public:
  explicit Reassembler(uint32_t max_fragmented_size) : max_(max_fragmented_size) {}

  enum class State { kEmpty, kPartial, kComplete };
  // Adds one parsed message. kComplete: message() holds a whole upper-layer
  // message until the next add(). Empty messages (credit grants, keepalive
  // answers) are not part of any upper-layer message: kEmpty, no state change.
  // A segment whose RemainingDataLength does not equal the previous one's
  // minus its own DataLength is kFragmentSequence (the connection ends).
  State add(const DataMessage& m, Error* error);
  const std::vector<uint8_t>& message() const { return buf_; }
  // The completed message, moved out (no copy; message() is empty after).
  std::vector<uint8_t> take() { return std::move(buf_); }
  // The completed message swapped into *out; out's old vector (cleared)
  // becomes the buffer of the next message, so that its capacity is reused
  // instead of allocating one per message.
  void take(std::vector<uint8_t>* out) {
    out->swap(buf_);
    buf_.clear();
  }
  // Bytes the peer still owes for the message being reassembled.
  uint32_t expected_remaining() const { return remaining_; }
  bool in_progress() const { return in_progress_; }

 private:
  uint32_t max_;
  std::vector<uint8_t> buf_;
  uint32_t remaining_ = 0;
  bool in_progress_ = false;
};

}  // namespace smbd
