// SPDX-License-Identifier: Apache-2.0
// messages_test.cc - rping's wire bytes (checked against the siw capture
// siw-rping-C3-S64) and ndkperf's own set-up and control messages.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "ndkperf/perf_wire.h"
#include "ndkping/rping_msg.h"

namespace {

using namespace softndk;

std::vector<uint8_t> hex(const std::string& h) {
  std::vector<uint8_t> b;
  for (size_t i = 0; i + 1 < h.size(); i += 2) b.push_back(std::stoi(h.substr(i, 2), nullptr, 16));
  return b;
}

TEST(RpingInfo, MatchesSiwCapture) {
  // frame 8 of siw-rping-C3-S64: the client's source advertisement.
  auto bytes = hex("0000564f7602957097e7ed0000000040");
  auto info = ndkping::decode_rping_info(bytes.data(), bytes.size());
  ASSERT_TRUE(info);
  EXPECT_EQ(info->buf, 0x564f76029570ull);
  EXPECT_EQ(info->rkey, 0x97e7ed00u);
  EXPECT_EQ(info->size, 64u);
  uint8_t out[16];
  ndkping::encode_rping_info(*info, out);
  EXPECT_EQ(0, std::memcmp(out, bytes.data(), 16));
  EXPECT_FALSE(ndkping::decode_rping_info(bytes.data(), 15));
  EXPECT_FALSE(ndkping::decode_rping_info(bytes.data(), 17));
  // The server's "go ahead": 16 zero bytes.
  ndkping::encode_rping_info({}, out);
  for (uint8_t b : out) EXPECT_EQ(b, 0);
}

TEST(RpingPayload, MatchesRpingOutput) {
  std::vector<uint8_t> buf(64);
  char start = ndkping::kFirstChar;
  start = ndkping::format_ping(buf.data(), 64, 0, start);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf.data())),
            "rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr");
  EXPECT_EQ(buf[63], 0);
  start = ndkping::format_ping(buf.data(), 64, 1, start);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf.data())),
            "rdma-ping-1: BCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrs");
  // Capture: the Read Response payload of ping 0 begins with these bytes.
  auto head = hex("72646d612d70696e672d303a204142434445464748494a4b");
  ndkping::format_ping(buf.data(), 64, 0, ndkping::kFirstChar);
  EXPECT_EQ(0, std::memcmp(buf.data(), head.data(), head.size()));
}

TEST(RpingPayload, PatternWrapsAfterLowercaseZ) {
  std::vector<uint8_t> buf(200);
  ndkping::format_ping(buf.data(), buf.size(), 7, 'y');
  std::string s(reinterpret_cast<char*>(buf.data()));
  EXPECT_EQ(s.substr(0, 17), "rdma-ping-7: yzAB");
  EXPECT_EQ(s.size(), 199u);
  char next = ndkping::format_ping(buf.data(), buf.size(), 8, 'z');
  EXPECT_EQ(next, 'A');
}

TEST(PerfWire, HelloAcceptRefusalRoundTrip) {
  ndkperf::Hello h;
  h.test = 3;
  h.flags = ndkperf::kHelloAllSizes;
  h.qps = 4;
  h.qp_index = 2;
  h.tx_depth = 128;
  h.rx_depth = 130;
  h.size = 0;
  h.max_size = 8u << 20;
  h.buf_va = 0x7f0012345000ull;
  h.buf_token = 0xabcdef00;
  h.buf_len = 16u << 20;
  auto b = ndkperf::encode_hello(h);
  EXPECT_LE(b.size(), 252u);  // fits siw's MPA private data budget
  auto d = ndkperf::decode_hello(b);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->test, 3);
  EXPECT_EQ(d->qps, 4);
  EXPECT_EQ(d->qp_index, 2);
  EXPECT_EQ(d->rx_depth, 130u);
  EXPECT_EQ(d->max_size, 8u << 20);
  EXPECT_EQ(d->buf_va, h.buf_va);
  EXPECT_EQ(d->buf_token, h.buf_token);
  EXPECT_EQ(d->buf_len, h.buf_len);
  b[0] ^= 1;
  EXPECT_FALSE(ndkperf::decode_hello(b));

  auto a = ndkperf::decode_accept(ndkperf::encode_accept({1, 2, 3}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->buf_va, 1u);
  EXPECT_EQ(a->buf_token, 2u);
  EXPECT_EQ(a->buf_len, 3u);
  EXPECT_FALSE(ndkperf::decode_refusal(ndkperf::encode_accept({1, 2, 3})));

  std::string why(400, 'x');
  auto r = ndkperf::encode_refusal(why);
  EXPECT_LE(r.size(), 252u);
  auto dr = ndkperf::decode_refusal(r);
  ASSERT_TRUE(dr);
  EXPECT_EQ(*dr, why.substr(0, dr->size()));
  EXPECT_FALSE(ndkperf::decode_accept(r));
}

TEST(PerfWire, ControlMessages) {
  ndkperf::CtrlMsg m{ndkperf::CtrlType::Report, 7, 65536, 1000, 65536000, 42, 123456789, 987};
  uint8_t buf[ndkperf::kCtrlSize];
  ndkperf::encode_ctrl(m, buf);
  auto d = ndkperf::decode_ctrl(buf, sizeof buf);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->type, ndkperf::CtrlType::Report);
  EXPECT_EQ(d->seq, 7u);
  EXPECT_EQ(d->size, 65536u);
  EXPECT_EQ(d->iters, 1000u);
  EXPECT_EQ(d->bytes, 65536000u);
  EXPECT_EQ(d->credits, 42u);
  EXPECT_EQ(d->cpu_ns, 123456789u);
  EXPECT_EQ(d->elapsed_ns, 987u);
  EXPECT_FALSE(ndkperf::decode_ctrl(buf, sizeof buf - 1));
  buf[4] = 9;
  EXPECT_FALSE(ndkperf::decode_ctrl(buf, sizeof buf));
}

}  // namespace
