// SPDX-License-Identifier: Apache-2.0
// mpa/mpa_frame.cc — MPA connection frames and IRD/ORD blocks.
#include "mpa/mpa_frame.h"

#include <cstring>

#include "util/bytes.h"

namespace softndk::wire {

const uint8_t kMpaKeyRequest[kMpaKeySize] = {'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
                                             'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e'};
const uint8_t kMpaKeyReply[kMpaKeySize] = {'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
                                           'e', 'p', ' ', 'F', 'r', 'a', 'm', 'e'};

const char* to_string(MpaError e) {
  switch (e) {
    case MpaError::kOk:
      return "ok";
    case MpaError::kNeedMore:
      return "need more bytes";
    case MpaError::kBadKey:
      return "bad MPA key";
    case MpaError::kBadRevision:
      return "unsupported MPA revision";
    case MpaError::kPrivateDataTooLong:
      return "private data too long";
    case MpaError::kBufferTooSmall:
      return "output buffer too small";
    case MpaError::kEnhancedBlockMissing:
      return "enhanced IRD/ORD block missing";
    case MpaError::kBadArgument:
      return "bad argument";
  }
  return "?";
}

MpaDecodeResult decode_mpa_frame(std::span<const uint8_t> in, MpaFrame& out,
                                 std::optional<MpaFrameType> expect, size_t max_private_data) {
  if (in.empty()) return {MpaError::kNeedMore, 0, kMpaHeaderSize};
  // Check the key as soon as its bytes are there so garbage fails early
  // instead of waiting for 20 bytes that may never come.
  const size_t key_have = in.size() < kMpaKeySize ? in.size() : kMpaKeySize;
  const bool req_ok = std::memcmp(in.data(), kMpaKeyRequest, key_have) == 0;
  const bool rep_ok = std::memcmp(in.data(), kMpaKeyReply, key_have) == 0;
  bool key_ok = (!expect || *expect == MpaFrameType::kRequest) && req_ok;
  key_ok = key_ok || ((!expect || *expect == MpaFrameType::kReply) && rep_ok);
  if (!key_ok) return {MpaError::kBadKey, 0, 0};
  if (in.size() < kMpaHeaderSize) return {MpaError::kNeedMore, 0, kMpaHeaderSize};
  const uint8_t rev = in[17];
  if (rev > kMpaRev2) return {MpaError::kBadRevision, 0, 0};
  const size_t pd_len = load_be16(&in[18]);
  if (pd_len > max_private_data || pd_len > kMpaMaxPrivateDataRfc)
    return {MpaError::kPrivateDataTooLong, 0, 0};
  const size_t total = kMpaHeaderSize + pd_len;
  if (in.size() < total) return {MpaError::kNeedMore, 0, total};
  out.type = (in[9] == 'q') ? MpaFrameType::kRequest : MpaFrameType::kReply;
  out.flags = in[16];
  out.rev = rev;
  out.private_data = in.subspan(kMpaHeaderSize, pd_len);
  return {MpaError::kOk, total, 0};
}

uint16_t IrdOrdBlock::ird_word() const {
  return static_cast<uint16_t>((ird & kIrdOrdValueMask) | (peer_to_peer ? kIrdFlagPeerToPeer : 0) |
                               (rtr_send ? kIrdFlagRtrSend : 0));
}
uint16_t IrdOrdBlock::ord_word() const {
  return static_cast<uint16_t>((ord & kIrdOrdValueMask) | (rtr_write ? kOrdFlagRtrWrite : 0) |
                               (rtr_read ? kOrdFlagRtrRead : 0));
}
IrdOrdBlock IrdOrdBlock::from_words(uint16_t iw, uint16_t ow) {
  IrdOrdBlock b;
  b.ird = iw & kIrdOrdValueMask;
  b.ord = ow & kIrdOrdValueMask;
  b.peer_to_peer = iw & kIrdFlagPeerToPeer;
  b.rtr_send = iw & kIrdFlagRtrSend;
  b.rtr_write = ow & kOrdFlagRtrWrite;
  b.rtr_read = ow & kOrdFlagRtrRead;
  return b;
}

std::optional<IrdOrdBlock> decode_ird_ord(std::span<const uint8_t> pd) {
  if (pd.size() < kIrdOrdBlockSize) return std::nullopt;
  return IrdOrdBlock::from_words(load_be16(&pd[0]), load_be16(&pd[2]));
}
void encode_ird_ord(const IrdOrdBlock& b, uint8_t out[kIrdOrdBlockSize]) {
  store_be16(out, b.ird_word());
  store_be16(out + 2, b.ord_word());
}

std::optional<LegacyIrdOrdBlock> decode_legacy_ird_ord(std::span<const uint8_t> pd) {
  if (pd.size() < kLegacyIrdOrdBlockSize) return std::nullopt;
  return LegacyIrdOrdBlock{load_be32(&pd[0]), load_be32(&pd[4])};
}
void encode_legacy_ird_ord(const LegacyIrdOrdBlock& b, uint8_t out[kLegacyIrdOrdBlockSize]) {
  store_be32(out, b.ird);
  store_be32(out + 4, b.ord);
}

std::optional<MpaEnhancedView> enhanced_view(const MpaFrame& f, MpaError* error) {
  if (error) *error = MpaError::kOk;
  if (!f.has_ird_ord_block()) return std::nullopt;
  auto b = decode_ird_ord(f.private_data);
  if (!b) {
    if (error) *error = MpaError::kEnhancedBlockMissing;
    return std::nullopt;
  }
  return MpaEnhancedView{*b, f.private_data.subspan(kIrdOrdBlockSize)};
}

static void write_header(uint8_t* o, MpaFrameType t, uint8_t flags, uint8_t rev, size_t pd) {
  std::memcpy(o, t == MpaFrameType::kRequest ? kMpaKeyRequest : kMpaKeyReply, kMpaKeySize);
  o[16] = flags;
  o[17] = rev;
  store_be16(o + 18, static_cast<uint16_t>(pd));
}

MpaEncodeResult encode_mpa_frame(const MpaFrameSpec& s, std::span<uint8_t> out, size_t pd_limit) {
  if (s.rev > kMpaRev2) return {MpaError::kBadRevision, 0};
  if (s.ird_ord && (s.ird_ord->ird > kIrdOrdValueMask || s.ird_ord->ord > kIrdOrdValueMask))
    return {MpaError::kBadArgument, 0};
  const size_t pd = (s.ird_ord ? kIrdOrdBlockSize : 0) +
                    (s.legacy_ird_ord ? kLegacyIrdOrdBlockSize : 0) + s.ulp_private_data.size();
  if (pd > pd_limit || pd > kMpaMaxPrivateDataRfc) return {MpaError::kPrivateDataTooLong, 0};
  const size_t total = kMpaHeaderSize + pd;
  if (out.size() < total) return {MpaError::kBufferTooSmall, 0};
  uint8_t flags = s.flags;
  if (s.ird_ord) flags |= kMpaFlagEnhanced;
  write_header(out.data(), s.type, flags, s.rev, pd);
  uint8_t* p = out.data() + kMpaHeaderSize;
  if (s.ird_ord) {
    encode_ird_ord(*s.ird_ord, p);
    p += kIrdOrdBlockSize;
  }
  if (s.legacy_ird_ord) {
    encode_legacy_ird_ord(*s.legacy_ird_ord, p);
    p += kLegacyIrdOrdBlockSize;
  }
  if (!s.ulp_private_data.empty())
    std::memcpy(p, s.ulp_private_data.data(), s.ulp_private_data.size());
  return {MpaError::kOk, total};
}

MpaEncodeResult encode_mpa_frame(const MpaFrame& f, std::span<uint8_t> out) {
  if (f.private_data.size() > kMpaMaxPrivateDataRfc) return {MpaError::kPrivateDataTooLong, 0};
  const size_t total = f.wire_size();
  if (out.size() < total) return {MpaError::kBufferTooSmall, 0};
  write_header(out.data(), f.type, f.flags, f.rev, f.private_data.size());
  if (!f.private_data.empty())
    std::memcpy(out.data() + kMpaHeaderSize, f.private_data.data(), f.private_data.size());
  return {MpaError::kOk, total};
}

}  // namespace softndk::wire
