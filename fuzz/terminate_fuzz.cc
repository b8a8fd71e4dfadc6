// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: Terminate payload parsing in both layouts. Whatever is
// accepted must re-encode (in the detected layout) to the same leading bytes.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "rdmap/terminate.h"
#include "rdmap/terminate_fpdu.h"

using namespace softndk::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  const TerminateParseResult r = parse_terminate_payload(in);
  (void)terminate_code_known(r.msg.code);
  (void)terminate_code_name(r.msg.code);
  if (!r.ok) return 0;
  if (static_cast<uint8_t>(r.msg.code.layer) > 2) std::abort();
  uint8_t out[kTerminateMaxPayload];
  const size_t n = encode_terminate_payload(r.msg, out, r.layout);
  if (n == 0 || n > size || std::memcmp(out, data, n) != 0) std::abort();
  // And the RFC form of the same message parses back to the same code.
  const size_t m = encode_terminate_payload(r.msg, out, TerminateLayout::kRfc);
  const TerminateParseResult back = parse_terminate_payload({out, m});
  if (!back.ok) std::abort();
  if (!back.ambiguous && !(back.msg.code == r.msg.code)) std::abort();
  uint8_t fpdu[128];
  if (encode_terminate_fpdu(r.msg, 1, true, fpdu) == 0) std::abort();
  return 0;
}
