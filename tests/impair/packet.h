// SPDX-License-Identifier: Apache-2.0
// impair/packet.h - the packet rewriting of the impaired link, as pure
// functions over byte spans (no sockets, no state), so they can be tested
// with fixed vectors.
//
// Packets are what a TUN device (IFF_TUN | IFF_NO_PI) hands over: a bare
// IPv4 datagram. Only IPv4/TCP is rewritten; anything else is forwarded
// as is. A TUN without offloads gives and takes full checksums, so a byte
// flipped in the TCP payload must come with a recomputed TCP checksum or
// the receiving kernel drops the segment; with it, only an end-to-end
// check above TCP (MPA CRC32c) can notice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace softndk::test::impair {

// Where the parts of an IPv4/TCP packet are (byte offsets into the packet).
struct TcpView {
  size_t ip_header_len = 0;   // IHL * 4
  size_t tcp_offset = 0;      // = ip_header_len
  size_t tcp_header_len = 0;  // data offset * 4
  size_t payload_offset = 0;
  size_t payload_len = 0;
};

// The view of an unfragmented IPv4 packet carrying TCP whose lengths are
// consistent with the span, else nullopt (IPv6, UDP, fragments, garbage).
std::optional<TcpView> parse_ipv4_tcp(std::span<const uint8_t> packet);

// RFC 1071 one's-complement sum of `bytes` added to `sum` (not folded, not
// inverted); an odd length is padded with a zero byte.
uint32_t ones_sum(std::span<const uint8_t> bytes, uint32_t sum = 0);
// Folds a ones_sum to 16 bits and inverts it: the checksum field value.
uint16_t fold_checksum(uint32_t sum);

// The TCP checksum the packet should carry (over the IPv4 pseudo-header,
// the TCP header with its checksum field taken as zero, and the payload).
uint16_t tcp_checksum(std::span<const uint8_t> packet, const TcpView& v);
// True if the packet's TCP checksum field is right.
bool tcp_checksum_ok(std::span<const uint8_t> packet);
// Writes the right TCP checksum into the packet; false if not IPv4/TCP.
bool fix_tcp_checksum(std::span<uint8_t> packet);

// XORs payload byte `index` (0 = first TCP payload byte) with `mask` and
// fixes the TCP checksum, so the damage passes TCP. False (packet
// untouched) if not IPv4/TCP, index is past the payload, or mask is 0.
bool corrupt_tcp_payload(std::span<uint8_t> packet, size_t index, uint8_t mask);

// The index of a payload byte inside a run of at least `run` bytes equal to
// `value` (the middle of the first such run), or nullopt. Lets a test aim
// its corruption at data it wrote rather than at protocol headers.
std::optional<size_t> find_run(std::span<const uint8_t> payload, uint8_t value, size_t run);

}  // namespace softndk::test::impair
