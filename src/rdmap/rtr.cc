// SPDX-License-Identifier: Apache-2.0
// rdmap/rtr.cc — RTR FPDUs.
#include "rdmap/rtr.h"

#include "ddp/ddp_header.h"
#include "ddp/fpdu_builder.h"
#include "rdmap/rdmap_codec.h"

namespace softndk::wire {

size_t encode_rtr_write(std::span<uint8_t> out, bool crc) {
  return encode_fpdu(DdpHeader::tagged_hdr(Opcode::kWrite, true, kRtrStag, 0), {}, {}, crc, out);
}

size_t encode_rtr_read(std::span<uint8_t> out, uint32_t msn, bool crc) {
  uint8_t body[kReadRequestBodySize];
  encode_read_request(ReadRequestBody{0, 0, 0, kRtrStag, 0}, body);
  return encode_fpdu(DdpHeader::untagged_hdr(Opcode::kReadRequest, true, kQnReadRequest, msn, 0),
                     body, {}, crc, out);
}

size_t encode_zero_read_response(std::span<uint8_t> out, uint32_t sink_stag, uint64_t sink_to,
                                 bool crc) {
  return encode_fpdu(DdpHeader::tagged_hdr(Opcode::kReadResponse, true, sink_stag, sink_to), {}, {},
                     crc, out);
}

}  // namespace softndk::wire
