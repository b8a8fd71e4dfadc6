// SPDX-License-Identifier: Apache-2.0
// CRC32c wrapper: standard check value, iSCSI vector, IWARP.md 2.5 FPDU vectors.
#include "mpa/crc32c.h"

#include <gtest/gtest.h>

#include <string>

#include "test_util.h"
#include "util/bytes.h"

namespace softndk::wire {
namespace {
using test::hex;

TEST(Crc32c, CheckValue) {
  const std::string s = "123456789";
  EXPECT_EQ(crc32c({reinterpret_cast<const uint8_t*>(s.data()), s.size()}), 0xE3069283u);
}

TEST(Crc32c, ThirtyTwoZeros) {
  std::vector<uint8_t> z(32, 0);
  const uint32_t v = crc32c(z);
  EXPECT_EQ(v, 0x8A9136AAu);
  uint8_t w[4];
  store_le32(w, v);
  EXPECT_EQ(test::to_hex(w), "aa36918a");
}

TEST(Crc32c, IncrementalEqualsOneShot) {
  std::vector<uint8_t> d(1000);
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<uint8_t>(i * 7 + 3);
  Crc32c c;
  for (size_t i = 0; i < d.size(); i += 37)
    c.update(std::span(d).subspan(i, std::min<size_t>(37, d.size() - i)));
  EXPECT_EQ(c.value(), crc32c(d));
  c.reset();
  EXPECT_EQ(c.state(), kCrc32cInit);
  EXPECT_EQ(crc32c_update(5, nullptr, 0), 5u);
}

struct Vec {
  const char* what;
  const char* bytes;
  uint32_t crc;
  const char* wire;
};
const Vec kVectors[] = {
    {"rtr write", "00 0e c1 40 00 00 00 01 00 00 00 00 00 00 00 00", 0x5F4CD3EB, "ebd34c5f"},
    {"zero read resp", "00 0e c1 42 00 00 00 00 00 00 00 00 00 00 00 00", 0xCAD67569, "6975d6ca"},
    {"send hello",
     "00 17 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 68 65 6c 6c 6f 00 00 00",
     0x0CB190B9, "b990b10c"},
    {"zero send", "00 12 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00", 0xC4E87B58,
     "587be8c4"},
    {"send inv", "00 15 41 44 ab cd ef 01 00 00 00 00 00 00 00 01 00 00 00 00 61 62 63 00",
     0x148ABEE0, "e0be8a14"},
    {"read resp 8", "00 16 c1 42 12 34 56 00 00 00 00 00 00 00 10 00 00 01 02 03 04 05 06 07",
     0x96F7EC93, "93ecf796"},
    {"rtr read",
     "00 2e 41 41 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
     "00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00",
     0xC9E310BA, "ba10e3c9"},
    {"terminate rdmap", "00 16 41 47 00 00 00 00 00 00 00 02 00 00 00 01 00 00 00 00 01 00 00 00",
     0xC02A0841, "41082ac0"},
    {"terminate llp rfc", "00 16 41 47 00 00 00 00 00 00 00 02 00 00 00 01 00 00 00 00 20 02 00 00",
     0x8525E47F, "7fe42585"},
    {"terminate llp siw", "00 16 41 47 00 00 00 00 00 00 00 02 00 00 00 01 00 00 00 00 02 02 00 00",
     0xED67D375, "75d367ed"},
};

TEST(Crc32c, IwarpVectors) {
  for (const Vec& v : kVectors) {
    SCOPED_TRACE(v.what);
    const auto b = hex(v.bytes);
    EXPECT_EQ(b.size() % 4, 0u);
    EXPECT_EQ(crc32c(b), v.crc);
    uint8_t w[4];
    store_le32(w, crc32c(b));
    EXPECT_EQ(test::to_hex(w), v.wire);
  }
}

}  // namespace
}  // namespace softndk::wire
