// SPDX-License-Identifier: Apache-2.0
// ddp/rdmap_control.cc - the opcode tables and the Read Request body codec
// (ddp/rdmap_control.h).
#include "ddp/rdmap_control.h"

#include "util/bytes.h"

namespace softndk::wire {

namespace {
// Terminate body: 4-byte control, optionally 2 + 18 (D) and 28 (R) bytes.
constexpr uint8_t kTermMax = static_cast<uint8_t>(kTerminateMaxPayload);
}  // namespace

constinit const OpcodeInfo kOpcodeTable[12] = {
    {"RDMA Write", true, kQnAny, false, false, false, 0, 0},
    {"RDMA Read Request", false, kQnReadRequest, true, false, false, kReadRequestBodySize,
     kReadRequestBodySize},
    {"RDMA Read Response", true, kQnAny, false, false, false, 0, 0},
    {"Send", false, kQnSend, false, false, false, 0, 0},
    {"Send with Invalidate", false, kQnSend, false, false, true, 0, 0},
    {"Send with Solicited Event", false, kQnSend, false, false, false, 0, 0},
    {"Send with Solicited Event and Invalidate", false, kQnSend, false, false, true, 0, 0},
    {"Terminate", false, kQnTerminate, true, false, false, kTerminateMinPayload, kTermMax},
    {"Immediate Data", false, kQnAny, true, true, false, 0, 0},
    {"Immediate Data with Solicited Event", false, kQnAny, true, true, false, 0, 0},
    {"Atomic Request", false, kQnAtomic, true, true, false, kAtomicRequestBodySize,
     kAtomicRequestBodySize},
    {"Atomic Response", false, kQnAtomic, true, true, false, kAtomicResponseBodySize,
     kAtomicResponseBodySize},
};

constinit const OpcodeInfo kSamehostOpcodeTable[4] = {
    {"softndk Same-host Write", true, kQnAny, false, false, false, 12, 40},
    {"softndk Same-host Read Response", true, kQnAny, false, false, false, 12, 40},
    {"softndk Same-host Ack", false, kQnAny, true, false, false, 4, 4},
    {"softndk Same-host Ring", false, kQnAny, true, false, false, 4, 4},
};

const char* opcode_name(uint8_t opcode) {
  const OpcodeInfo* i = opcode_info(opcode);
  return i ? i->name : "Reserved";
}

std::optional<ReadRequestBody> decode_read_request(std::span<const uint8_t> b) {
  if (b.size() < kReadRequestBodySize) return std::nullopt;
  ReadRequestBody r;
  r.sink_stag = load_be32(&b[0]);
  r.sink_to = load_be64(&b[4]);
  r.size = load_be32(&b[12]);
  r.source_stag = load_be32(&b[16]);
  r.source_to = load_be64(&b[20]);
  return r;
}
void encode_read_request(const ReadRequestBody& r, uint8_t out[kReadRequestBodySize]) {
  store_be32(out + 0, r.sink_stag);
  store_be64(out + 4, r.sink_to);
  store_be32(out + 12, r.size);
  store_be32(out + 16, r.source_stag);
  store_be64(out + 20, r.source_to);
}

}  // namespace softndk::wire
