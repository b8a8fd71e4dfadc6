// SPDX-License-Identifier: Apache-2.0
// transport/samehost/samehost_wire.h - the bytes of the same-host fast path
// (docs/samehost.md): the rendezvous messages exchanged over the abstract
// unix socket, and the bodies of the three FPDUs that only a softndk peer
// that completed the rendezvous ever receives. Pure functions over byte
// spans (linked into softndk_wire; fuzz/samehost_fuzz.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace softndk::wire {

// ---- rendezvous messages (SOCK_SEQPACKET, one message per datagram) ----
inline constexpr uint32_t kSamehostMagic = 0x534E5348;  // "SNSH"
// 2: hellos may carry a shared-memory ring (docs/samehost.md section 4).
inline constexpr uint8_t kSamehostVersion = 2;
inline constexpr size_t kSamehostMsgSize = 36;
inline constexpr size_t kSamehostNonceSize = 16;

enum class SamehostMsgType : uint8_t { kHello = 1, kAck = 2 };
// flags: the sender verified the receiver and can read its memory, so the
// receiver may send it descriptors instead of payload.
inline constexpr uint8_t kSamehostCanPull = 0x01;
// flags: the sender mapped the ring the receiver passed with its hello, so
// the receiver may move its FPDU stream there (the marker, opcode 0xF).
inline constexpr uint8_t kSamehostRingOk = 0x02;
// flags, only with kSamehostCanPull: the sender also takes segment
// descriptors (kSamehostSegDescSize) and maps the segments they name. A
// peer without this flag only ever gets the 12-byte form.
inline constexpr uint8_t kSamehostCanMap = 0x04;

struct SamehostMsg {
  SamehostMsgType type = SamehostMsgType::kHello;
  uint8_t flags = 0;
  uint32_t pid = 0;
  uint64_t probe_addr = 0;  // where the sender keeps `nonce` in its memory
  uint8_t nonce[kSamehostNonceSize] = {};
};

// Writes kSamehostMsgSize bytes; returns that size (0 if `out` is short).
size_t encode_samehost_msg(const SamehostMsg& m, std::span<uint8_t> out);
// nullopt unless `in` is exactly one well-formed message of this version.
std::optional<SamehostMsg> parse_samehost_msg(std::span<const uint8_t> in);

// ---- FPDU bodies (control bodies, buffered by the stream parser) ----
// Descriptor (opcodes kSamehostWrite / kSamehostReadResponse): the bytes to
// place at the tagged header's STag/TO are `length` bytes at `source` in
// the sender's process.
inline constexpr size_t kSamehostDescSize = 12;
// The segment form (only to a peer that said kSamehostCanMap): the same 12
// bytes, then the sender's shared-memory segment that holds the whole
// source range: its fd number in the sender, its identity (st_dev, st_ino)
// and where the range starts in it - u32 fd, u64 dev, u64 ino, u64 offset.
inline constexpr size_t kSamehostSegDescSize = 40;
struct SamehostSegment {
  uint32_t fd = 0;
  uint64_t dev = 0, ino = 0, offset = 0;
};
struct SamehostDesc {
  uint64_t source = 0;
  uint32_t length = 0;
  std::optional<SamehostSegment> segment;
};
// Writes 12 bytes, or 40 with a segment; returns that size (0 if short).
size_t encode_samehost_desc(const SamehostDesc& d, std::span<uint8_t> out);
// nullopt unless exactly 12 or 40 bytes with a nonzero length and a source
// range that does not wrap; in the 40-byte form also an fd that fits an
// int and an offset range that does not wrap.
std::optional<SamehostDesc> parse_samehost_desc(std::span<const uint8_t> in);

// Ack (opcode kSamehostAck): the receiver pulled this many more Write
// messages (the sender completes them, oldest first).
inline constexpr size_t kSamehostAckSize = 4;
size_t encode_samehost_ack(uint32_t count, std::span<uint8_t> out);
// nullopt unless exactly 4 bytes and count > 0.
std::optional<uint32_t> parse_samehost_ack(std::span<const uint8_t> in);

}  // namespace softndk::wire
