// SPDX-License-Identifier: Apache-2.0
#include "error.h"

namespace smbd {

const char* error_name(Error e) {
  switch (e) {
    case Error::kNone:
      return "none";
    case Error::kTooShort:
      return "message too short";
    case Error::kNoCommonVersion:
      return "no common protocol version (0x0100 not offered)";
    case Error::kBadNegotiatedVersion:
      return "NegotiatedVersion is not 0x0100";
    case Error::kZeroCreditsRequested:
      return "CreditsRequested is 0";
    case Error::kZeroCreditsGranted:
      return "CreditsGranted is 0 in the negotiate response";
    case Error::kReceiveSizeTooSmall:
      return "MaxReceiveSize below 128";
    case Error::kFragmentedSizeTooSmall:
      return "MaxFragmentedSize below 131072";
    case Error::kPreferredSendTooLarge:
      return "PreferredSendSize above our MaxReceiveSize";
    case Error::kPeerStatus:
      return "negotiate response Status is not STATUS_SUCCESS";
    case Error::kDataOffsetUnaligned:
      return "DataOffset not 8-byte aligned";
    case Error::kDataOutOfBounds:
      return "DataOffset + DataLength beyond the message";
    case Error::kDataOverlapsHeader:
      return "DataOffset inside the data transfer header";
    case Error::kFragmentTooLarge:
      return "DataLength + RemainingDataLength above MaxFragmentedSize";
    case Error::kFragmentSequence:
      return "RemainingDataLength does not continue the fragmented message";
    case Error::kDescriptorListLength:
      return "buffer descriptor list empty or not a multiple of 16 bytes";
    case Error::kZeroIrdOrd:
      return "IRD/ORD negotiate header with a zero value";
  }
  return "unknown error";
}

}  // namespace smbd
