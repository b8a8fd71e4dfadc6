// SPDX-License-Identifier: Apache-2.0
// rdmap/terminate_fpdu.cc — Terminate FPDU assembly.
#include "rdmap/terminate_fpdu.h"

#include "ddp/ddp_header.h"
#include "ddp/fpdu_builder.h"

namespace softndk::wire {

size_t encode_terminate_fpdu(const TerminateMessage& t, uint32_t msn, bool crc,
                             std::span<uint8_t> out, TerminateLayout layout) {
  uint8_t body[kTerminateMaxPayload];
  const size_t n = encode_terminate_payload(t, body, layout);
  if (n == 0) return 0;
  return encode_fpdu(DdpHeader::untagged_hdr(Opcode::kTerminate, true, kQnTerminate, msn, 0),
                     {body, n}, {}, crc, out);
}

}  // namespace softndk::wire
