// SPDX-License-Identifier: Apache-2.0
// mpa/markers.h — RFC 5044 markers: removal from a received byte stream.
// Owns: marker arithmetic only. softndk refuses markers in negotiation (as siw
// does, IWARP.md 2.6), so this exists for tools/robustness: a stream captured
// from a marker-using peer can be stripped and then fed to the stream parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace softndk::wire {

inline constexpr uint32_t kMarkerInterval = 512;
inline constexpr uint32_t kMarkerSize = 4;

struct MarkerStripResult {
  size_t consumed = 0;  // input bytes consumed (all of them unless out is full)
  size_t written = 0;   // payload bytes written to out
  size_t markers = 0;   // complete or partial markers skipped
};

// Copies `in` to `out` without marker bytes. `stream_pos` is the position of
// in[0] counted in TCP sequence space from the start of FPDU mode in this
// direction (the first marker sits at position 0, RFC 5044 5.x). Markers may be
// split across calls: positions decide, so no state is needed besides the
// caller's running stream position (+= consumed).
MarkerStripResult strip_markers(std::span<const uint8_t> in, uint64_t stream_pos,
                                std::span<uint8_t> out);

// FPDUPTR of the marker at `marker` (4 bytes): bytes back to the FPDU start.
uint16_t marker_fpdu_ptr(const uint8_t* marker);

}  // namespace softndk::wire
