// SPDX-License-Identifier: Apache-2.0
// The NVMe/RDMA capsule parsers (nvmf/proto/nvmf_capsule.h) on golden byte
// vectors written from the specifications' layouts, and on bad input.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "nvmf_capsule.h"

using namespace nvmf;

namespace {

// A Linux-host-style 4 KiB Read: opcode 02, PSDT 01b, CID 0x0007, NSID 1,
// keyed SGL addr 0x0000112233445566, len 0x001000, key 0xA1B2C3D4, subtype
// F (invalidate), SLBA 0x10, NLB 7 (0's based).
const uint8_t kReadCapsule[64] = {
    0x02, 0x40, 0x07, 0x00, 0x01, 0x00, 0x00, 0x00,  // opcode flags cid nsid
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // cdw2 cdw3
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // mptr
    0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00, 0x00,  // sgl address
    0x00, 0x10, 0x00, 0xD4, 0xC3, 0xB2, 0xA1, 0x4F,  // len(3) key(4) type
    0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // cdw10 cdw11 (slba)
    0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // cdw12 (nlb) cdw13
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // cdw14 cdw15
};

std::vector<uint8_t> write_in_capsule(uint64_t off, uint32_t len, size_t data_bytes) {
  std::vector<uint8_t> c(64 + data_bytes, 0xAB);
  Sqe s{};
  s.opcode = kNvmWrite;
  s.flags = kFlagsSgl;
  s.cid = 9;
  s.nsid = 1;
  s.sgl1.set_in_capsule(off, len);
  std::memcpy(c.data(), &s, sizeof s);
  return c;
}

}  // namespace

TEST(NvmfWire, GoldenReadCapsuleDecodes) {
  auto p = parse_capsule(kReadCapsule);
  ASSERT_EQ(p.status, 0);
  EXPECT_FALSE(p.fatal);
  EXPECT_EQ(p.sqe.opcode, kNvmRead);
  EXPECT_EQ(p.sqe.cid, 7);
  EXPECT_EQ(p.sqe.nsid, 1u);
  EXPECT_EQ(p.kind, DataKind::kKeyed);
  EXPECT_EQ(p.address, 0x112233445566ull);
  EXPECT_EQ(p.length, 0x1000u);
  EXPECT_EQ(p.key, 0xA1B2C3D4u);
  EXPECT_TRUE(p.invalidate);
  EXPECT_EQ(io_slba(p.sqe), 0x10u);
  EXPECT_EQ(io_nlb(p.sqe), 8u);
  EXPECT_EQ(data_direction(p.sqe), DataDir::kControllerToHost);
}

TEST(NvmfWire, SetKeyedEncodesTheGoldenBytes) {
  Sqe s{};
  std::memcpy(&s, kReadCapsule, 64);
  SglDescriptor d{};
  d.set_keyed(0x112233445566ull, 0x1000, 0xA1B2C3D4u, true);
  EXPECT_EQ(std::memcmp(&d, kReadCapsule + 24, 16), 0);
}

TEST(NvmfWire, CqeStatusLayout) {
  // SCT 1, SC 0x82 (Connect Invalid Parameters), DNR: status field 0x4182,
  // on the wire bits 15:1 -> 0x8304.
  Cqe c{};
  c.status = uint16_t(make_status(kSctCommandSpecific, kScConnectInvalidParameters) << 1);
  uint8_t b[16];
  std::memcpy(b, &c, 16);
  EXPECT_EQ(b[14], 0x04);
  EXPECT_EQ(b[15], 0x83);
  EXPECT_EQ(c.status_field() & 0x3FFF, 0x182);
}

TEST(NvmfCapsule, ShortCapsuleIsFatal) {
  auto p = parse_capsule(std::span<const uint8_t>(kReadCapsule, 63));
  EXPECT_TRUE(p.fatal);
  EXPECT_NE(p.status, 0);
  EXPECT_TRUE(parse_capsule({}).fatal);
}

TEST(NvmfCapsule, PrpOrMetadataSglPsdtIsInvalidField) {
  uint8_t c[64];
  std::memcpy(c, kReadCapsule, 64);
  for (uint8_t psdt : {0, 2, 3}) {
    c[1] = uint8_t(psdt << 6);
    auto p = parse_capsule(c);
    EXPECT_EQ(p.status, make_status(kSctGeneric, kScInvalidField)) << int(psdt);
    EXPECT_EQ(p.sqe.cid, 7);  // still answerable
  }
  c[1] = 0x41;  // fused
  EXPECT_EQ(parse_capsule(c).status, make_status(kSctGeneric, kScInvalidField));
}

TEST(NvmfCapsule, UnknownSglTypesAndSubtypes) {
  uint8_t c[64];
  std::memcpy(c, kReadCapsule, 64);
  for (uint8_t t : {0x41, 0x4A, 0x20, 0x30, 0x10, 0x50, 0xF0, 0x00}) {
    c[39] = t;
    EXPECT_EQ(parse_capsule(c).status, make_status(kSctGeneric, kScSglDescriptorTypeInvalid))
        << int(t);
  }
}

TEST(NvmfCapsule, NullKeyedSglIsNoData) {
  uint8_t c[64];
  std::memcpy(c, kReadCapsule, 64);
  c[32] = c[33] = c[34] = 0;
  c[39] = 0x40;
  auto p = parse_capsule(c);
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.kind, DataKind::kNone);
}

TEST(NvmfCapsule, InCapsuleDataWithinTheCapsule) {
  auto c = write_in_capsule(0, 4096, 4096);
  auto p = parse_capsule(c);
  ASSERT_EQ(p.status, 0);
  EXPECT_EQ(p.kind, DataKind::kInCapsule);
  EXPECT_EQ(p.address, 64u);
  EXPECT_EQ(p.length, 4096u);
  c = write_in_capsule(512, 512, 1024);
  p = parse_capsule(c);
  ASSERT_EQ(p.status, 0);
  EXPECT_EQ(p.address, 64u + 512);
}

TEST(NvmfCapsule, InCapsuleBoundsChecked) {
  EXPECT_EQ(parse_capsule(write_in_capsule(0, 4097, 4096)).status,
            make_status(kSctGeneric, kScDataSglLengthInvalid));
  EXPECT_EQ(parse_capsule(write_in_capsule(4097, 0, 4096)).status,
            make_status(kSctGeneric, kScInvalidSglOffset));
  EXPECT_EQ(parse_capsule(write_in_capsule(4000, 200, 4096)).status,
            make_status(kSctGeneric, kScDataSglLengthInvalid));
  // Offset + length overflowing 64 bits must not wrap into range.
  EXPECT_EQ(parse_capsule(write_in_capsule(~0ull, 2, 4096)).status,
            make_status(kSctGeneric, kScInvalidSglOffset));
  EXPECT_EQ(parse_capsule(write_in_capsule(16, 0xFFFFFFFFu, 4096)).status,
            make_status(kSctGeneric, kScDataSglLengthInvalid));
}

TEST(NvmfCapsule, InCapsuleDataOnAReadIsInvalid) {
  auto c = write_in_capsule(0, 16, 16);
  c[0] = kNvmRead;
  EXPECT_EQ(parse_capsule(c).status, make_status(kSctGeneric, kScInvalidField));
}

TEST(NvmfCapsule, FabricsDirectionFromFctype) {
  Sqe s{};
  s.opcode = kFabricsCommand;
  s.nsid = kFctConnect;
  EXPECT_EQ(data_direction(s), DataDir::kHostToController);
  s.nsid = kFctPropertyGet;
  EXPECT_EQ(data_direction(s), DataDir::kNone);
}

namespace {
std::vector<uint8_t> connect_data(const char* sub, const char* host) {
  std::vector<uint8_t> d(1024, 0);
  ConnectData cd{};
  cd.cntlid = 0xFFFF;
  std::memcpy(cd.subnqn, sub, std::strlen(sub));
  std::memcpy(cd.hostnqn, host, std::strlen(host));
  std::memcpy(d.data(), &cd, sizeof cd);
  return d;
}
}  // namespace

TEST(NvmfConnect, ValidData) {
  auto r = parse_connect_data(connect_data("nqn.2026-11.io.softndk:t", "nqn.h"));
  ASSERT_TRUE(r.info);
  EXPECT_EQ(r.info->subnqn, "nqn.2026-11.io.softndk:t");
  EXPECT_EQ(r.info->hostnqn, "nqn.h");
  EXPECT_EQ(r.info->cntlid, 0xFFFF);
}

TEST(NvmfConnect, UnterminatedOrEmptyNqnNamesTheField) {
  auto d = connect_data("x", "y");
  std::memset(d.data() + 256, 'a', 256);  // subnqn without NUL
  auto r = parse_connect_data(d);
  EXPECT_FALSE(r.info);
  EXPECT_EQ(r.status, make_status(kSctCommandSpecific, kScConnectInvalidParameters));
  EXPECT_EQ(r.result, (1u << 16) | 256u);
  d = connect_data("x", "");
  r = parse_connect_data(d);
  EXPECT_FALSE(r.info);
  EXPECT_EQ(r.result, (1u << 16) | 512u);
  EXPECT_FALSE(parse_connect_data(std::span<const uint8_t>(d.data(), 1023)).info);
}

TEST(NvmfCm, LinuxHostRequestGolden) {
  // recfmt 0, qid 1, hrqsize 128, hsqsize 127.
  std::vector<uint8_t> pd(32, 0);
  pd[2] = 1;
  pd[4] = 128;
  pd[6] = 127;
  CmLimits lim;
  auto r = parse_cm_request(pd, lim);
  ASSERT_TRUE(r.req);
  EXPECT_EQ(r.req->qid, 1);
  EXPECT_EQ(r.req->hsqsize, 127);
  EXPECT_EQ(r.req->hrqsize, 128);
  auto a = cm_accept_data(128);
  ASSERT_EQ(a.size(), 32u);
  EXPECT_EQ(a[0], 0);
  EXPECT_EQ(a[2], 128);
  auto j = cm_reject_data(kCmInvalidHsqsize);
  EXPECT_EQ(j, (std::vector<uint8_t>{0, 0, 4, 0}));
  EXPECT_EQ(parse_cm_reject(j), kCmInvalidHsqsize);
}

TEST(NvmfCm, BadRequestsGiveTheirRejectStatus) {
  CmLimits lim;
  std::vector<uint8_t> pd(32, 0);
  pd[4] = 32;
  pd[6] = 31;
  EXPECT_TRUE(parse_cm_request(pd, lim).req);
  EXPECT_EQ(parse_cm_request(std::span<const uint8_t>(pd.data(), 31), lim).reject,
            kCmInvalidLength);
  auto b = pd;
  b[0] = 1;
  EXPECT_EQ(parse_cm_request(b, lim).reject, kCmInvalidRecfmt);
  b = pd;
  b[2] = 9;  // qid 9 > max_qid 8
  EXPECT_EQ(parse_cm_request(b, lim).reject, kCmInvalidQid);
  b = pd;
  b[6] = 32;  // admin: 33 entries
  EXPECT_EQ(parse_cm_request(b, lim).reject, kCmInvalidHsqsize);
  b = pd;
  b[6] = 0;
  EXPECT_EQ(parse_cm_request(b, lim).reject, kCmInvalidHsqsize);
  b = pd;
  b[4] = 8;  // hrqsize below the queue's entries
  EXPECT_EQ(parse_cm_request(b, lim).reject, kCmInvalidHrqsize);
}

TEST(NvmfLog, GetLogFieldsAndDiscoveryPage) {
  Sqe s{};
  s.cdw10 = 0x70 | (0x00FFu << 16);  // NUMDL 255 -> 256 dwords
  s.cdw11 = 0;
  s.cdw12 = 1024;
  auto f = get_log_fields(s);
  EXPECT_EQ(f.lid, 0x70);
  EXPECT_EQ(f.bytes(), 1024u);
  EXPECT_EQ(f.lpo, 1024u);

  DiscoveryEntry e;
  e.subnqn = "nqn.2026-11.io.softndk:disk";
  e.traddr = "10.0.2.2";
  e.trsvcid = "4420";
  auto page = build_discovery_log(3, {e});
  ASSERT_EQ(page.size(), 2048u);
  DiscLogHeader h;
  std::memcpy(&h, page.data(), sizeof h);
  EXPECT_EQ(h.genctr, 3u);
  EXPECT_EQ(h.numrec, 1u);
  const uint8_t* r = page.data() + 1024;
  EXPECT_EQ(r[0], kTrtypeRdma);
  EXPECT_EQ(r[1], kAdrfamIpv4);
  EXPECT_EQ(r[2], kSubtypeNvme);
  EXPECT_STREQ(reinterpret_cast<const char*>(r + 32), "4420");
  EXPECT_STREQ(reinterpret_cast<const char*>(r + 256), "nqn.2026-11.io.softndk:disk");
  EXPECT_STREQ(reinterpret_cast<const char*>(r + 512), "10.0.2.2");
  EXPECT_EQ(r[768], 1);  // qptype connected
  EXPECT_EQ(r[769], 5);  // prtype iWARP
  EXPECT_EQ(r[770], 1);  // cms rdma_cm

  std::vector<uint8_t> out(1536, 0xEE);
  ASSERT_TRUE(copy_log_slice(page, 1024, out));
  EXPECT_EQ(out[0], kTrtypeRdma);
  EXPECT_EQ(out[1535], 0);  // past the page: zeros
  EXPECT_FALSE(copy_log_slice(page, 2049, out));
  EXPECT_TRUE(copy_log_slice(page, 2048, out));
}

// Issue 28 item 5: the host read IATTR/IPO from the wrong bits and said
// "Invalid Parameters (command byte 1)" for an unknown NQN. The decoder
// against the target's encoder and against the NVMe-oF layout (IPO bits
// 15:0, IATTR bit 16 = the offset is into the Connect data).
TEST(NvmfConnectIpo, DecodesTheTargetsEncoding) {
  EXPECT_EQ(connect_ipo_text(connect_ipo(offsetof(ConnectData, subnqn), true)),
            "Connect data byte 256 (SUBNQN)");
  EXPECT_EQ(connect_ipo_text(connect_ipo(offsetof(ConnectData, hostnqn), true)),
            "Connect data byte 512 (HOSTNQN)");
  EXPECT_EQ(connect_ipo_text(connect_ipo(offsetof(ConnectData, cntlid), true)),
            "Connect data byte 16 (CNTLID)");
  EXPECT_EQ(connect_ipo_text(connect_ipo(42, false)), "command byte 42 (QID)");
  EXPECT_EQ(connect_ipo_text(connect_ipo(44, false)), "command byte 44 (SQSIZE)");
}

TEST(NvmfConnectIpo, DecodesTheSpecLayout) {
  // DW0 as the specification lays it out, written by hand.
  EXPECT_EQ(connect_ipo_text(0x00010100u), "Connect data byte 256 (SUBNQN)");
  EXPECT_EQ(connect_ipo_text(0x0000002Au), "command byte 42 (QID)");
  EXPECT_EQ(connect_ipo_text(0x00000001u), "command byte 1");  // no named field there
  // Reserved IATTR bits above 16 do not change the meaning.
  EXPECT_EQ(connect_ipo_text(0x00FF0200u), "Connect data byte 512 (HOSTNQN)");
}

TEST(NvmfConnectIpo, AnUnparsableSubnqnIsNamed) {
  std::vector<uint8_t> data(kConnectDataSize, 0);
  ConnectData cd{};
  std::memset(cd.subnqn, 'x', sizeof cd.subnqn);  // no terminating NUL
  std::strcpy(cd.hostnqn, "nqn.2014-08.org.example:host");
  std::memcpy(data.data(), &cd, sizeof cd);
  auto r = parse_connect_data(data);
  ASSERT_FALSE(r.info);
  EXPECT_EQ(connect_ipo_text(r.result), "Connect data byte 256 (SUBNQN)");
}
