// SPDX-License-Identifier: Apache-2.0
// MS-SMBD wire formats: golden vectors are the SMB Direct payloads of
// /work/shared/interop/captures/smbdirect-rdma-io-same-guest-lo.pcap (Linux
// 6.1 cifs -> ksmbd over siw; frame numbers below), cut out of the FPDUs
// after the 18-byte untagged DDP/RDMAP header.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "buffer_descriptor.h"
#include "data_message.h"
#include "ird_ord.h"
#include "negotiate.h"
#include "reassembly.h"

namespace {

std::vector<uint8_t> hex(const std::string& s) {
  std::vector<uint8_t> v;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    v.push_back(uint8_t(std::stoul(s.substr(i, 2), nullptr, 16)));
  return v;
}

// Frame 8: cifs' negotiate request.
const std::string kCifsNegReq = "000100010000ff00540500005405000056a70200";
// Frame 9: ksmbd's negotiate response.
const std::string kKsmbdNegResp =
    "0001000100010000ff00fe000000000000008000540500005405000056a70200";
// Frame 10: cifs' first message, an empty credit grant (255 requested, 255 granted).
const std::string kCifsGrant = "ff00ff000000000000000000000000000000000000";
// Frame 11: first data message: SMB2 NEGOTIATE (102 bytes at offset 24).
const std::string kCifsSmb2NegHead = "ff0000000000000000000000180000006600000000000000fe534d42";
// Frame 65: the last 16 bytes of the SMB2 WRITE: the buffer descriptor.
const std::string kWriteDescriptor = "00f0fea1b08738ff0127734500200000";
// Frames 4/6: MPA private data after siw's 4-byte RFC 6581 words.
const std::string kCifsIrdOrd = "2000000001000000";   // little-endian {32, 1}: the cifs quirk
const std::string kKsmbdIrdOrd = "0000000100000008";  // big-endian {1, 8}

TEST(SmbdNegotiate, ParsesCifsRequestFromCapture) {
  auto b = hex(kCifsNegReq);
  smbd::NegotiateRequest r;
  ASSERT_EQ(smbd::parse_negotiate_request(b, &r), smbd::Error::kNone);
  EXPECT_EQ(r.min_version, 0x0100);
  EXPECT_EQ(r.max_version, 0x0100);
  EXPECT_EQ(r.credits_requested, 255);
  EXPECT_EQ(r.preferred_send_size, 1364u);
  EXPECT_EQ(r.max_receive_size, 1364u);
  EXPECT_EQ(r.max_fragmented_size, 173910u);
  auto again = smbd::build_negotiate_request(r);
  EXPECT_EQ(std::vector<uint8_t>(again.begin(), again.end()), b);
}

TEST(SmbdNegotiate, ParsesKsmbdResponseFromCapture) {
  auto b = hex(kKsmbdNegResp);
  smbd::NegotiateResponse r;
  ASSERT_EQ(smbd::parse_negotiate_response(b, 1364, &r), smbd::Error::kNone);
  EXPECT_EQ(r.negotiated_version, 0x0100);
  EXPECT_EQ(r.credits_requested, 255);
  EXPECT_EQ(r.credits_granted, 254);
  EXPECT_EQ(r.status, 0u);
  EXPECT_EQ(r.max_read_write_size, 8388608u);
  EXPECT_EQ(r.preferred_send_size, 1364u);
  EXPECT_EQ(r.max_receive_size, 1364u);
  EXPECT_EQ(r.max_fragmented_size, 173910u);
  auto again = smbd::build_negotiate_response(r);
  EXPECT_EQ(std::vector<uint8_t>(again.begin(), again.end()), b);
}

TEST(SmbdNegotiate, RequestChecksInSpecOrder) {
  smbd::NegotiateRequest ok{0x0100, 0x0100, 10, 1024, 1024, 131072};
  smbd::NegotiateRequest r;
  auto with = [&](auto mutate) {
    auto x = ok;
    mutate(x);
    auto b = smbd::build_negotiate_request(x);
    return smbd::parse_negotiate_request(b, &r);
  };
  EXPECT_EQ(with([](auto&) {}), smbd::Error::kNone);
  EXPECT_EQ(with([](auto& x) { x.min_version = 0x0200, x.max_version = 0x0200; }),
            smbd::Error::kNoCommonVersion);
  EXPECT_EQ(with([](auto& x) { x.max_version = 0x00ff, x.min_version = 0x0001; }),
            smbd::Error::kNoCommonVersion);
  // A range that includes 0x0100 is fine (3.1.5.6: the versions are then ignored).
  EXPECT_EQ(with([](auto& x) { x.min_version = 0x0001, x.max_version = 0x0300; }),
            smbd::Error::kNone);
  EXPECT_EQ(with([](auto& x) { x.credits_requested = 0; }), smbd::Error::kZeroCreditsRequested);
  EXPECT_EQ(with([](auto& x) { x.max_receive_size = 127; }), smbd::Error::kReceiveSizeTooSmall);
  EXPECT_EQ(with([](auto& x) { x.max_fragmented_size = 131071; }),
            smbd::Error::kFragmentedSizeTooSmall);
  auto b = smbd::build_negotiate_request(ok);
  EXPECT_EQ(smbd::parse_negotiate_request(std::span(b).first(19), &r), smbd::Error::kTooShort);
}

TEST(SmbdNegotiate, ResponseChecks) {
  smbd::NegotiateResponse ok;
  ok.credits_requested = 10;
  ok.credits_granted = 10;
  ok.max_read_write_size = 1 << 20;
  ok.preferred_send_size = 1024;
  ok.max_receive_size = 1024;
  ok.max_fragmented_size = 131072;
  smbd::NegotiateResponse r;
  auto with = [&](auto mutate, uint32_t local_max_recv = 1024) {
    auto x = ok;
    mutate(x);
    auto b = smbd::build_negotiate_response(x);
    return smbd::parse_negotiate_response(b, local_max_recv, &r);
  };
  EXPECT_EQ(with([](auto&) {}), smbd::Error::kNone);
  EXPECT_EQ(with([](auto& x) { x.status = smbd::kStatusNotSupported; }), smbd::Error::kPeerStatus);
  EXPECT_EQ(r.status, smbd::kStatusNotSupported);
  EXPECT_EQ(with([](auto& x) { x.negotiated_version = 0x0200; }),
            smbd::Error::kBadNegotiatedVersion);
  EXPECT_EQ(with([](auto& x) { x.max_receive_size = 64; }), smbd::Error::kReceiveSizeTooSmall);
  EXPECT_EQ(with([](auto& x) { x.max_fragmented_size = 4096; }),
            smbd::Error::kFragmentedSizeTooSmall);
  EXPECT_EQ(with([](auto& x) { x.credits_granted = 0; }), smbd::Error::kZeroCreditsGranted);
  EXPECT_EQ(with([](auto& x) { x.credits_requested = 0; }), smbd::Error::kZeroCreditsRequested);
  EXPECT_EQ(with([](auto&) {}, 1000), smbd::Error::kPreferredSendTooLarge);
  auto b = smbd::build_negotiate_response(ok);
  EXPECT_EQ(smbd::parse_negotiate_response(std::span(b).first(31), 1024, &r),
            smbd::Error::kTooShort);
}

TEST(SmbdData, EmptyCreditGrantFromCapture) {
  auto b = hex(kCifsGrant);
  b.resize(20);  // the FPDU's payload is 20 bytes
  smbd::DataMessage m;
  ASSERT_EQ(smbd::parse_data_message(b, 173910, &m), smbd::Error::kNone);
  EXPECT_EQ(m.header.credits_requested, 255);
  EXPECT_EQ(m.header.credits_granted, 255);
  EXPECT_FALSE(m.response_requested());
  EXPECT_TRUE(m.payload.empty());
  std::vector<uint8_t> out(32);
  smbd::DataHeader h{255, 255, 0, 0, 0, 0};
  ASSERT_EQ(smbd::build_data_header(h, 0, out), 20u);
  out.resize(20);
  EXPECT_EQ(out, b);
}

TEST(SmbdData, Smb2NegotiateMessageFromCapture) {
  auto head = hex(kCifsSmb2NegHead);
  std::vector<uint8_t> msg = head;
  msg.resize(24 + 102, 0xAB);  // the rest of the SMB2 NEGOTIATE (content irrelevant here)
  smbd::DataMessage m;
  ASSERT_EQ(smbd::parse_data_message(msg, 173910, &m), smbd::Error::kNone);
  EXPECT_EQ(m.header.credits_requested, 255);
  EXPECT_EQ(m.header.credits_granted, 0);
  EXPECT_EQ(m.header.data_offset, 24u);
  EXPECT_EQ(m.header.data_length, 102u);
  ASSERT_EQ(m.payload.size(), 102u);
  EXPECT_EQ(m.payload[0], 0xfe);
  EXPECT_EQ(m.payload[1], 'S');
  EXPECT_EQ(m.payload.data(), msg.data() + 24);
  std::vector<uint8_t> out(24);
  ASSERT_EQ(smbd::build_data_header(m.header, 102, out), 24u);
  EXPECT_EQ(out, std::vector<uint8_t>(head.begin(), head.begin() + 24));
}

TEST(SmbdData, ReceiveChecks) {
  std::vector<uint8_t> msg(24 + 100);
  smbd::DataHeader h{10, 1, smbd::kFlagResponseRequested, 0, 0, 0};
  ASSERT_EQ(smbd::build_data_header(h, 100, msg), 24u);
  smbd::DataMessage m;
  ASSERT_EQ(smbd::parse_data_message(msg, 131072, &m), smbd::Error::kNone);
  EXPECT_TRUE(m.response_requested());
  auto patch32 = [](std::vector<uint8_t> v, size_t at, uint32_t x) {
    for (int i = 0; i < 4; ++i) v[at + i] = uint8_t(x >> (8 * i));
    return v;
  };
  EXPECT_EQ(smbd::parse_data_message(std::span(msg).first(19), 131072, &m), smbd::Error::kTooShort);
  auto zero_credits = msg;
  zero_credits[0] = zero_credits[1] = 0;
  EXPECT_EQ(smbd::parse_data_message(zero_credits, 131072, &m), smbd::Error::kZeroCreditsRequested);
  EXPECT_EQ(smbd::parse_data_message(patch32(msg, 12, 28), 131072, &m),
            smbd::Error::kDataOffsetUnaligned);
  EXPECT_EQ(smbd::parse_data_message(patch32(msg, 16, 101), 131072, &m),
            smbd::Error::kDataOutOfBounds);
  // Offset + length overflowing 32 bits is still out of bounds.
  EXPECT_EQ(smbd::parse_data_message(patch32(patch32(msg, 12, 0xFFFFFFF8), 16, 16), 131072, &m),
            smbd::Error::kDataOutOfBounds);
  EXPECT_EQ(smbd::parse_data_message(patch32(msg, 8, 131072 - 99), 131072, &m),
            smbd::Error::kFragmentTooLarge);
  EXPECT_EQ(smbd::parse_data_message(patch32(msg, 8, 131072 - 100), 131072, &m),
            smbd::Error::kNone);
  EXPECT_EQ(smbd::parse_data_message(patch32(msg, 8, 0xFFFFFFFF), 131072, &m),
            smbd::Error::kFragmentTooLarge);
  EXPECT_EQ(smbd::parse_data_message(patch32(msg, 12, 8), 131072, &m),
            smbd::Error::kDataOverlapsHeader);
  // Unknown flag bits are reserved, not a protocol error.
  auto flags = msg;
  flags[5] = 0x80;
  EXPECT_EQ(smbd::parse_data_message(flags, 131072, &m), smbd::Error::kNone);
  EXPECT_EQ(std::string(smbd::error_name(smbd::Error::kDataOutOfBounds)),
            "DataOffset + DataLength beyond the message");
}

TEST(SmbdData, SegmentCapacity) {
  EXPECT_EQ(smbd::segment_capacity(1364), 1340u);
  EXPECT_EQ(smbd::segment_capacity(24), 0u);
  EXPECT_EQ(smbd::segment_capacity(0), 0u);
}

// Builds the segments a sender produces for `total` bytes at `max_send`.
std::vector<std::vector<uint8_t>> segments(const std::vector<uint8_t>& data, uint32_t max_send) {
  std::vector<std::vector<uint8_t>> out;
  const uint32_t cap = smbd::segment_capacity(max_send);
  size_t off = 0;
  while (off < data.size()) {
    uint32_t n = uint32_t(std::min<size_t>(cap, data.size() - off));
    std::vector<uint8_t> msg(24 + n);
    smbd::DataHeader h{1, 0, 0, uint32_t(data.size() - off - n), 0, 0};
    smbd::build_data_header(h, n, msg);
    std::copy(data.begin() + off, data.begin() + off + n, msg.begin() + 24);
    out.push_back(std::move(msg));
    off += n;
  }
  return out;
}

TEST(SmbdReassembly, JoinsSegmentsInOrder) {
  std::vector<uint8_t> data(5000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 7 + 3);
  auto segs = segments(data, 1364);
  ASSERT_EQ(segs.size(), 4u);  // 1340 * 3 + 980
  smbd::Reassembler r(131072);
  for (size_t i = 0; i < segs.size(); ++i) {
    smbd::DataMessage m;
    ASSERT_EQ(smbd::parse_data_message(segs[i], 131072, &m), smbd::Error::kNone);
    smbd::Error e;
    auto st = r.add(m, &e);
    ASSERT_EQ(e, smbd::Error::kNone);
    if (i + 1 < segs.size()) {
      EXPECT_EQ(st, smbd::Reassembler::State::kPartial);
      // An empty credit grant between segments leaves the message alone.
      smbd::DataMessage empty{};
      empty.header.credits_requested = 1;
      EXPECT_EQ(r.add(empty, &e), smbd::Reassembler::State::kEmpty);
      EXPECT_EQ(e, smbd::Error::kNone);
    } else {
      EXPECT_EQ(st, smbd::Reassembler::State::kComplete);
    }
  }
  EXPECT_EQ(r.message(), data);
  EXPECT_FALSE(r.in_progress());
  // Moved out (the transport's way), then the next message reassembles
  // from scratch, with nothing of the first left in it.
  EXPECT_EQ(r.take(), data);
  std::vector<uint8_t> second(2000, 0x42);
  for (const auto& seg : segments(second, 1364)) {
    smbd::DataMessage m;
    ASSERT_EQ(smbd::parse_data_message(seg, 131072, &m), smbd::Error::kNone);
    smbd::Error e;
    r.add(m, &e);
    ASSERT_EQ(e, smbd::Error::kNone);
  }
  EXPECT_EQ(r.take(), second);
}

TEST(SmbdReassembly, RejectsBrokenSequence) {
  std::vector<uint8_t> data(3000, 0x5a);
  auto segs = segments(data, 1364);
  smbd::Reassembler r(131072);
  smbd::DataMessage m;
  smbd::Error e;
  ASSERT_EQ(smbd::parse_data_message(segs[0], 131072, &m), smbd::Error::kNone);
  ASSERT_EQ(r.add(m, &e), smbd::Reassembler::State::kPartial);
  // Replaying the first segment claims more remaining data than was announced.
  r.add(m, &e);
  EXPECT_EQ(e, smbd::Error::kFragmentSequence);
  // A fresh reassembler refuses a first segment announcing more than the limit.
  smbd::Reassembler small(2000);
  small.add(m, &e);
  EXPECT_EQ(e, smbd::Error::kFragmentTooLarge);
}

TEST(SmbdBufferDescriptor, ParsesWriteChannelFromCapture) {
  auto b = hex(kWriteDescriptor);
  std::vector<smbd::BufferDescriptor> list;
  uint64_t total = 0;
  ASSERT_EQ(smbd::parse_buffer_descriptors(b, 16, &list, &total), smbd::Error::kNone);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].offset, 0xff3887b0a1fef000ull);
  EXPECT_EQ(list[0].token, 0x45732701u);  // the STag ksmbd's RDMA Read Request names (frame 66)
  EXPECT_EQ(list[0].length, 8192u);
  EXPECT_EQ(total, 8192u);
  auto again = smbd::build_buffer_descriptor(list[0]);
  EXPECT_EQ(std::vector<uint8_t>(again.begin(), again.end()), b);
}

TEST(SmbdBufferDescriptor, ListChecks) {
  std::vector<smbd::BufferDescriptor> in = {{1, 2, 0xFFFFFFFF}, {4, 5, 0xFFFFFFFF}, {7, 8, 9}};
  std::vector<uint8_t> blob;
  smbd::append_buffer_descriptors(in, &blob);
  std::vector<smbd::BufferDescriptor> out;
  uint64_t total = 0;
  ASSERT_EQ(smbd::parse_buffer_descriptors(blob, 3, &out, &total), smbd::Error::kNone);
  EXPECT_EQ(out, in);
  EXPECT_EQ(total, 2ull * 0xFFFFFFFF + 9);
  EXPECT_EQ(smbd::parse_buffer_descriptors(blob, 2, &out), smbd::Error::kDescriptorListLength);
  EXPECT_EQ(smbd::parse_buffer_descriptors(std::span(blob).first(47), 3, &out),
            smbd::Error::kDescriptorListLength);
  EXPECT_EQ(smbd::parse_buffer_descriptors({}, 3, &out), smbd::Error::kDescriptorListLength);
}

TEST(SmbdIrdOrd, AcceptsCifsLittleEndianQuirk) {
  auto b = hex(kCifsIrdOrd);
  smbd::IrdOrd v;
  ASSERT_EQ(smbd::parse_ird_ord(b, &v), smbd::Error::kNone);
  EXPECT_EQ(v.ird, 32u);
  EXPECT_EQ(v.ord, 1u);
  EXPECT_TRUE(v.little_endian);
}

TEST(SmbdIrdOrd, ParsesKsmbdBigEndianAndBuildsSpecOrder) {
  auto b = hex(kKsmbdIrdOrd);
  smbd::IrdOrd v;
  ASSERT_EQ(smbd::parse_ird_ord(b, &v), smbd::Error::kNone);
  EXPECT_EQ(v.ird, 1u);
  EXPECT_EQ(v.ord, 8u);
  EXPECT_FALSE(v.little_endian);
  auto again = smbd::build_ird_ord(1, 8);
  EXPECT_EQ(std::vector<uint8_t>(again.begin(), again.end()), b);
  // 16/4, the probe's big-endian blob in the README's table.
  auto p = hex("0000001000000004");
  ASSERT_EQ(smbd::parse_ird_ord(p, &v), smbd::Error::kNone);
  EXPECT_EQ(v.ird, 16u);
  EXPECT_EQ(v.ord, 4u);
}

TEST(SmbdIrdOrd, Rejects) {
  smbd::IrdOrd v;
  auto zero = hex("0000000000000008");
  EXPECT_EQ(smbd::parse_ird_ord(zero, &v), smbd::Error::kZeroIrdOrd);
  auto shrt = hex("00000001000000");
  EXPECT_EQ(smbd::parse_ird_ord(shrt, &v), smbd::Error::kTooShort);
}

}  // namespace
