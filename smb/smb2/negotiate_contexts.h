// SPDX-License-Identifier: Apache-2.0
// negotiate_contexts.h - the server's answer to a 3.1.1 NEGOTIATE's
// negotiate contexts (MS-SMB2 3.3.5.4), a pure function over the parsed
// request contexts.
//
// What ndk-smbd answers:
//   SMB2_PREAUTH_INTEGRITY_CAPABILITIES  required exactly once; SHA-512 must
//     be offered. Answered with HashAlgorithmCount 1, SHA-512 and the salt
//     given (the server's own random bytes).
//   SMB2_ENCRYPTION_CAPABILITIES         ndk-smbd does not encrypt: not
//     answered (no context in the response, so Connection.CipherId stays 0
//     and SMB2_GLOBAL_CAP_ENCRYPTION is not set), as a server without
//     encryption support does.
//   SMB2_SIGNING_CAPABILITIES            not answered: signing stays
//     AES-CMAC, the 3.1.1 default when the response has no such context.
//   COMPRESSION, NETNAME, TRANSPORT, RDMA_TRANSFORM, and types unknown to
//     MS-SMB2 (e.g. Linux's POSIX extensions, 0x0100): ignored.
//   Encryption, compression, RDMA transform and signing contexts may appear
//   at most once each.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "negotiate.h"

namespace smb::smb2 {

enum class ContextAnswer {
  kOk,
  kInvalidParameter,  // STATUS_INVALID_PARAMETER
  kNoHashOverlap,     // STATUS_SMB_NO_PREAUTH_INTEGRITY_HASH_OVERLAP
};

// Fills `response` with the contexts to send (on kOk only).
ContextAnswer answer_negotiate_contexts(const std::vector<NegotiateContext>& request,
                                        std::span<const uint8_t> salt,
                                        std::vector<NegotiateContext>* response);

inline constexpr uint32_t kStatusNoPreauthIntegrityHashOverlap = 0xC05D0000;

}  // namespace smb::smb2
