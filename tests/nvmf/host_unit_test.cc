// SPDX-License-Identifier: Apache-2.0
// host_unit_test.cc - the pure parts of ndk-nvme (nvmf/host): the data
// pattern that lets a later read verify an earlier write, the latency
// histogram behind the fio-style percentiles, and the status texts.
#include <gtest/gtest.h>

#include <vector>

#include "host_error.h"
#include "latency_histogram.h"
#include "nvmf_capsule.h"
#include "nvmf_wire.h"
#include "pattern.h"

using namespace nvmf::host;

TEST(HostPattern, ReadBackOfTheSameLbasAndSeedVerifies) {
  std::vector<uint8_t> b(8 * 512);
  fill_pattern(b.data(), 1000, 8, 512, 42);
  std::string why;
  EXPECT_TRUE(check_pattern(b.data(), 1000, 8, 512, 42, &why)) << why;
  // A sub-range checks on its own (the pattern is per LBA, not per command).
  EXPECT_TRUE(check_pattern(b.data() + 3 * 512, 1003, 2, 512, 42, &why)) << why;
}

TEST(HostPattern, WrongSeedLbaOrOneFlippedBitIsCaught) {
  std::vector<uint8_t> b(4 * 4096);
  fill_pattern(b.data(), 7, 4, 4096, 1);
  std::string why;
  EXPECT_FALSE(check_pattern(b.data(), 7, 4, 4096, 2, &why));
  EXPECT_FALSE(check_pattern(b.data(), 8, 4, 4096, 1, &why));
  b[2 * 4096 + 100] ^= 0x10;
  EXPECT_FALSE(check_pattern(b.data(), 7, 4, 4096, 1, &why));
  EXPECT_NE(why.find("LBA 9 byte 96"), std::string::npos) << why;
}

TEST(HostPattern, BlocksDiffer) {
  std::vector<uint8_t> b(2 * 512);
  fill_pattern(b.data(), 0, 2, 512, 1);
  EXPECT_NE(0, memcmp(b.data(), b.data() + 512, 512));
}

TEST(HostLatency, PercentilesWithinOneBucket) {
  LatencyHistogram h;
  for (uint64_t i = 1; i <= 10000; ++i) h.add(i * 1000);  // 1 us .. 10 ms
  EXPECT_EQ(h.count(), 10000u);
  EXPECT_EQ(h.min_ns(), 1000u);
  EXPECT_EQ(h.max_ns(), 10000000u);
  EXPECT_NEAR(h.mean_ns(), 5000500.0, 1.0);
  EXPECT_NEAR(h.percentile_ns(50), 5e6, 5e6 * 0.02);
  EXPECT_NEAR(h.percentile_ns(99), 9.9e6, 9.9e6 * 0.02);
  EXPECT_NEAR(h.percentile_ns(99.9), 9.99e6, 9.99e6 * 0.02);
  LatencyHistogram g;
  g.add(5);
  g.merge(h);
  EXPECT_EQ(g.min_ns(), 5u);
  EXPECT_EQ(g.count(), 10001u);
}

TEST(HostLatency, EmptyIsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.percentile_ns(99), 0);
  EXPECT_EQ(h.min_ns(), 0u);
}

TEST(HostStatus, NamesAndCodes) {
  EXPECT_EQ(nvme_status_text(nvmf::make_status(nvmf::kSctGeneric, nvmf::kScLbaOutOfRange)),
            "LBA Out of Range (SCT 0x0, SC 0x80, DNR)");
  EXPECT_NE(nvme_status_text(
                nvmf::make_status(nvmf::kSctCommandSpecific, nvmf::kScConnectInvalidHost, false))
                .find("Connect: Invalid Host"),
            std::string::npos);
  EXPECT_NE(cm_reject_text(nvmf::kCmInvalidHsqsize).find("HSQSIZE"), std::string::npos);
}

// What the target's encoders produce is read back as NVMe/RDMA; an ndkperf
// server's refusal (its magic and text) or an accept without the 32-byte
// NVMe/RDMA CM accept is named "not an NVMe/RDMA target" (issue 28).
TEST(HostCm, RefusalAndAcceptFromAnotherServiceAreNamed) {
  auto rj = nvmf::cm_reject_data(nvmf::kCmInvalidHsqsize);
  std::string t = cm_refusal_text(rj, 1, "127.0.0.1:4420");
  EXPECT_NE(t.find("the target rejected queue 1"), std::string::npos) << t;
  EXPECT_NE(t.find("HSQSIZE"), std::string::npos) << t;
  EXPECT_EQ(cm_refusal_text({}, 1, "x"), "");
  // An ndkperf refusal: 'NPRF'-style magic, a version and a text.
  std::vector<uint8_t> other = {0x50, 0x52, 0x50, 0x52, 1, 0, 3, 0, 'b', 'a', 'd'};
  t = cm_refusal_text(other, 0, "127.0.0.1:18515");
  EXPECT_EQ(t.find("127.0.0.1:18515 is not an NVMe/RDMA target"), 0u) << t;
  EXPECT_EQ(t.find("unknown reject status"), std::string::npos) << t;
  // Four bytes, but a RECFMT or status no target sends.
  EXPECT_NE(cm_refusal_text(std::vector<uint8_t>{1, 0, 1, 0}, 0, "p").find("not an NVMe/RDMA"),
            std::string::npos);
  EXPECT_NE(cm_refusal_text(std::vector<uint8_t>{0, 0, 0x50, 0x52}, 0, "p").find("not an NVMe"),
            std::string::npos);

  EXPECT_EQ(cm_accept_problem(nvmf::cm_accept_data(32), "p"), "");
  // Padded (an IB CM REP carries more bytes): still an NVMe/RDMA accept.
  auto padded = nvmf::cm_accept_data(32);
  padded.resize(196);
  EXPECT_EQ(cm_accept_problem(padded, "p"), "");
  EXPECT_NE(cm_accept_problem({}, "p").find("p is not an NVMe/RDMA target"), std::string::npos);
  EXPECT_NE(cm_accept_problem(std::vector<uint8_t>(8, 1), "p").find("not an NVMe/RDMA target"),
            std::string::npos);
}

TEST(HostSgl, KeyedInvalidateDescriptor) {
  nvmf::SglDescriptor d{};
  d.set_keyed(0x1122334455667788ull, 131072, 0xA1B2C3D4, true);
  EXPECT_EQ(d.type(), nvmf::kSglKeyedDataBlock);
  EXPECT_EQ(d.subtype(), nvmf::kSglSubInvalidate);
  EXPECT_EQ(d.keyed_length(), 131072u);
  EXPECT_EQ(d.key(), 0xA1B2C3D4u);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(&d)[15], 0x4F);
}
