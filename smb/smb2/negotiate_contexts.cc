// SPDX-License-Identifier: Apache-2.0
#include "negotiate_contexts.h"

#include <algorithm>

namespace smb::smb2 {

ContextAnswer answer_negotiate_contexts(const std::vector<NegotiateContext>& request,
                                        std::span<const uint8_t> salt,
                                        std::vector<NegotiateContext>* response) {
  response->clear();
  auto count = [&](uint16_t type) {
    return std::count_if(request.begin(), request.end(),
                         [type](const NegotiateContext& c) { return c.type == type; });
  };
  // 3.3.5.4: exactly one preauth integrity context; at most one of each of
  // these.
  if (count(kPreauthIntegrityCapabilities) != 1) return ContextAnswer::kInvalidParameter;
  for (uint16_t t : {kEncryptionCapabilities, kCompressionCapabilities, kRdmaTransformCapabilities,
                     kSigningCapabilities})
    if (count(t) > 1) return ContextAnswer::kInvalidParameter;
  PreauthIntegrity pi;
  if (parse_preauth_integrity(find_context(request, kPreauthIntegrityCapabilities)->data, &pi) !=
      ParseError::kNone)
    return ContextAnswer::kInvalidParameter;
  if (std::find(pi.hash_algorithms.begin(), pi.hash_algorithms.end(), kHashSha512) ==
      pi.hash_algorithms.end())
    return ContextAnswer::kNoHashOverlap;
  PreauthIntegrity answer;
  answer.hash_algorithms = {kHashSha512};
  answer.salt.assign(salt.begin(), salt.end());
  response->push_back({kPreauthIntegrityCapabilities, preauth_integrity_data(answer)});
  return ContextAnswer::kOk;
}

}  // namespace smb::smb2
