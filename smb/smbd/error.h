// SPDX-License-Identifier: Apache-2.0
// error.h - the protocol errors MS-SMBD names (sections 3.1.5.6 - 3.1.5.8,
// 6.1), each of which ends the connection; error_name() is the reason the
// transport logs and returns when it disconnects.
#pragma once

#include <cstdint>

namespace smbd {

enum class Error : uint8_t {
  kNone = 0,
  kTooShort,                // message shorter than its fixed part (20 / 32 / 20 / 16 / 8 bytes)
  kNoCommonVersion,         // request's [MinVersion, MaxVersion] excludes 0x0100 (answer
                            // STATUS_NOT_SUPPORTED)
  kBadNegotiatedVersion,    // response's NegotiatedVersion is not 0x0100
  kZeroCreditsRequested,    // CreditsRequested == 0
  kZeroCreditsGranted,      // negotiate response grants no credit
  kReceiveSizeTooSmall,     // MaxReceiveSize < 128
  kFragmentedSizeTooSmall,  // MaxFragmentedSize < 131072
  kPreferredSendTooLarge,   // response's PreferredSendSize > our MaxReceiveSize
  kPeerStatus,              // negotiate response carries a failure Status
  kDataOffsetUnaligned,     // DataOffset not 8-byte aligned
  kDataOutOfBounds,         // DataOffset + DataLength beyond the received message
  kDataOverlapsHeader,      // DataLength > 0 with DataOffset inside the 20-byte header
  kFragmentTooLarge,        // DataLength + RemainingDataLength > MaxFragmentedSize
  kFragmentSequence,        // RemainingDataLength does not continue the message being reassembled
  kDescriptorListLength,    // buffer descriptor list empty or not a multiple of 16 bytes
  kZeroIrdOrd,              // 6.1 header: IRD or ORD is 0 in either byte order
};

const char* error_name(Error e);

}  // namespace smbd
