// SPDX-License-Identifier: Apache-2.0
// mpa/markers.cc — marker removal.
#include "mpa/markers.h"

#include <cstring>

#include "util/bytes.h"

namespace softndk::wire {

MarkerStripResult strip_markers(std::span<const uint8_t> in, uint64_t pos, std::span<uint8_t> out) {
  MarkerStripResult r;
  size_t i = 0;
  while (i < in.size()) {
    const uint64_t off = pos % kMarkerInterval;
    if (off < kMarkerSize) {  // inside a marker
      const size_t skip = static_cast<size_t>(kMarkerSize - off);
      const size_t n = skip < in.size() - i ? skip : in.size() - i;
      i += n;
      pos += n;
      ++r.markers;
      continue;
    }
    size_t run = static_cast<size_t>(kMarkerInterval - off);
    if (run > in.size() - i) run = in.size() - i;
    if (run > out.size() - r.written) run = out.size() - r.written;
    if (run == 0) break;  // out full
    std::memcpy(out.data() + r.written, in.data() + i, run);
    r.written += run;
    i += run;
    pos += run;
  }
  r.consumed = i;
  return r;
}

uint16_t marker_fpdu_ptr(const uint8_t* marker) { return load_be16(marker + 2); }

}  // namespace softndk::wire
