// SPDX-License-Identifier: Apache-2.0
// mpa/mpa_frame.h — MPA Request / Reply / Reject frames (RFC 5044 7.1) and the
// private-data blocks carried in them: the RFC 6581 IRD/ORD block (rev 2,
// enhanced flag) and the [MS-SMBD] 8-byte legacy IRD/ORD block (rev 1).
// Owns: encode/decode of connection-setup frames. Negotiation policy (what to
// accept, siw quirks such as "no bytes behind the Reply") lives in the caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace softndk::wire {

inline constexpr size_t kMpaKeySize = 16;
inline constexpr size_t kMpaHeaderSize = 20;  // key + flags + rev + PD_Length
// RFC 5044 allows 512 bytes of private data; Linux caps at 256 including the
// 4-byte RFC 6581 block (IWARP.md 2.1, 9.2). Decode accepts the RFC limit,
// encode takes the caller's limit (use kMpaMaxPrivateDataSiw toward siw).
inline constexpr size_t kMpaMaxPrivateDataRfc = 512;
inline constexpr size_t kMpaMaxPrivateDataSiw = 256;
inline constexpr size_t kMpaMaxFrameSize = kMpaHeaderSize + kMpaMaxPrivateDataRfc;

// Flags byte (offset 16).
inline constexpr uint8_t kMpaFlagMarkers = 0x80;       // M
inline constexpr uint8_t kMpaFlagCrc = 0x40;           // C
inline constexpr uint8_t kMpaFlagReject = 0x20;        // R
inline constexpr uint8_t kMpaFlagEnhanced = 0x10;      // RFC 6581 enhanced establishment
inline constexpr uint8_t kMpaFlagReservedMask = 0x0F;  // 0x08 = siw "GSO_EXP"

inline constexpr uint8_t kMpaRev0 = 0;  // pre-IETF; siw still accepts it
inline constexpr uint8_t kMpaRev1 = 1;  // RFC 5044
inline constexpr uint8_t kMpaRev2 = 2;  // RFC 6581

enum class MpaFrameType : uint8_t { kRequest, kReply };

extern const uint8_t kMpaKeyRequest[kMpaKeySize];  // "MPA ID Req Frame"
extern const uint8_t kMpaKeyReply[kMpaKeySize];    // "MPA ID Rep Frame"

enum class MpaError : uint8_t {
  kOk,
  kNeedMore,              // fewer bytes than the frame needs; `needed` says how many
  kBadKey,                // neither Req nor Rep key (or not the expected one)
  kBadRevision,           // rev > 2
  kPrivateDataTooLong,    // decode: PD_Length > caller max (default 512); encode: > caller limit
  kBufferTooSmall,        // encode output buffer too small
  kEnhancedBlockMissing,  // enhanced block requested/expected but PD shorter than 4
  kBadArgument,           // e.g. IRD/ORD value > 0x3FFF
};
const char* to_string(MpaError e);

// A decoded frame. `private_data` is the whole PD (including any IRD/ORD
// block) and aliases the input buffer. `flags` is the raw byte so reserved
// bits survive a decode/encode round trip (siw echoes them, IWARP.md 9.3).
struct MpaFrame {
  MpaFrameType type = MpaFrameType::kRequest;
  uint8_t flags = 0;
  uint8_t rev = kMpaRev2;
  std::span<const uint8_t> private_data;

  bool markers() const { return flags & kMpaFlagMarkers; }
  bool crc() const { return flags & kMpaFlagCrc; }
  bool reject() const { return flags & kMpaFlagReject; }
  bool enhanced() const { return flags & kMpaFlagEnhanced; }
  uint8_t reserved_bits() const { return flags & kMpaFlagReservedMask; }
  // RFC 6581 block present: rev 2 and the enhanced flag (siw's rule, 9.3).
  bool has_ird_ord_block() const { return rev >= kMpaRev2 && enhanced(); }
  size_t wire_size() const { return kMpaHeaderSize + private_data.size(); }
};

struct MpaDecodeResult {
  MpaError error = MpaError::kOk;
  size_t consumed = 0;  // frame bytes when kOk
  size_t needed = 0;    // total bytes needed when kNeedMore
};

// Decodes one frame from the start of `in`. `expect`: if set, the key must be
// that type's. Bytes behind the frame are left alone (consumed tells where
// FPDU mode starts).
MpaDecodeResult decode_mpa_frame(std::span<const uint8_t> in, MpaFrame& out,
                                 std::optional<MpaFrameType> expect = std::nullopt,
                                 size_t max_private_data = kMpaMaxPrivateDataRfc);

// ---- RFC 6581 IRD/ORD block (4 bytes, big-endian words) ----
inline constexpr uint16_t kIrdOrdValueMask = 0x3FFF;
inline constexpr uint16_t kIrdFlagPeerToPeer = 0x8000;  // A
inline constexpr uint16_t kIrdFlagRtrSend = 0x4000;     // B: zero-length FPDU/Send RTR
inline constexpr uint16_t kOrdFlagRtrWrite = 0x8000;    // C
inline constexpr uint16_t kOrdFlagRtrRead = 0x4000;     // D
inline constexpr size_t kIrdOrdBlockSize = 4;

struct IrdOrdBlock {
  uint16_t ird = 0;  // 14-bit values
  uint16_t ord = 0;
  bool peer_to_peer = false;
  bool rtr_send = false;
  bool rtr_write = false;
  bool rtr_read = false;

  uint16_t ird_word() const;
  uint16_t ord_word() const;
  static IrdOrdBlock from_words(uint16_t ird_word, uint16_t ord_word);
  bool operator==(const IrdOrdBlock&) const = default;
};
std::optional<IrdOrdBlock> decode_ird_ord(std::span<const uint8_t> pd);
void encode_ird_ord(const IrdOrdBlock& b, uint8_t out[kIrdOrdBlockSize]);

// ---- [MS-SMBD] legacy IRD/ORD block for MPA rev 1 (8 bytes, big-endian) ----
inline constexpr size_t kLegacyIrdOrdBlockSize = 8;
struct LegacyIrdOrdBlock {
  uint32_t ird = 0;
  uint32_t ord = 0;
  bool operator==(const LegacyIrdOrdBlock&) const = default;
};
std::optional<LegacyIrdOrdBlock> decode_legacy_ird_ord(std::span<const uint8_t> pd);
void encode_legacy_ird_ord(const LegacyIrdOrdBlock& b, uint8_t out[kLegacyIrdOrdBlockSize]);

// The RFC 6581 view of a frame: block + ULP private data behind it.
struct MpaEnhancedView {
  IrdOrdBlock block;
  std::span<const uint8_t> ulp_private_data;
};
// Fails with kEnhancedBlockMissing when the frame is enhanced but PD < 4;
// returns nullopt-equivalent (has_value false, error kOk) for non-enhanced frames.
std::optional<MpaEnhancedView> enhanced_view(const MpaFrame& f, MpaError* error = nullptr);

// What to encode. `flags` is written as given (reserved bits preserved) except
// that kMpaFlagEnhanced is forced on when `ird_ord` is set.
struct MpaFrameSpec {
  MpaFrameType type = MpaFrameType::kRequest;
  uint8_t flags = 0;
  uint8_t rev = kMpaRev2;
  std::optional<IrdOrdBlock> ird_ord;               // RFC 6581 block (rev 2)
  std::optional<LegacyIrdOrdBlock> legacy_ird_ord;  // [MS-SMBD] block (rev 1)
  std::span<const uint8_t> ulp_private_data;
};

struct MpaEncodeResult {
  MpaError error = MpaError::kOk;
  size_t size = 0;
};
// Encodes into `out`. Total PD (blocks + ULP data) must be <= pd_limit
// (default: siw's 256) and <= 512, else kPrivateDataTooLong.
MpaEncodeResult encode_mpa_frame(const MpaFrameSpec& spec, std::span<uint8_t> out,
                                 size_t pd_limit = kMpaMaxPrivateDataSiw);

// Re-encodes a decoded frame byte-for-byte (used by golden tests).
MpaEncodeResult encode_mpa_frame(const MpaFrame& f, std::span<uint8_t> out);

}  // namespace softndk::wire
