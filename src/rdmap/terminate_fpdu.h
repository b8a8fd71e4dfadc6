// SPDX-License-Identifier: Apache-2.0
// rdmap/terminate_fpdu.h — a whole Terminate FPDU (untagged, QN 2, MO 0, L=1).
// Owns: glue between rdmap/terminate.h payloads and the FPDU builder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "rdmap/terminate.h"

namespace softndk::wire {

// Writes the Terminate FPDU; `msn` is the Terminate queue's counter (first 1;
// siw always sends its single Terminate with MSN 1). Returns the wire size or
// 0 on error (message inconsistent, out too small).
size_t encode_terminate_fpdu(const TerminateMessage& t, uint32_t msn, bool crc,
                             std::span<uint8_t> out,
                             TerminateLayout layout = TerminateLayout::kRfc);

}  // namespace softndk::wire
