// SPDX-License-Identifier: Apache-2.0
// ndk-smb's pure helpers: share-relative paths in UTF-16LE, names back to
// UTF-8, dialect names, the bench's verification pattern (it must be able
// to fail), NT status names. The client against a server runs in the
// interop suite (tests/interop/smb_cases.sh, against ksmbd).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "bench.h"
#include "client.h"

namespace {

using namespace smb::client;

TEST(SmbClient, PathsAndNames) {
  const std::vector<uint8_t> want = {'a', 0, '\\', 0, 'b', 0};
  EXPECT_EQ(smb_path("a/b"), want);
  EXPECT_EQ(smb_path("/a/b/"), want);
  EXPECT_EQ(smb_path("\\a\\b"), want);
  EXPECT_TRUE(smb_path("/").empty());
  EXPECT_TRUE(smb_path("").empty());
  EXPECT_EQ(utf8_from_utf16le(smb_path("dir/file-1.bin")), "dir\\file-1.bin");
  EXPECT_EQ(utf8_from_utf16le(smb_path("\xc3\xa9t\xc3\xa9")), "\xc3\xa9t\xc3\xa9");  // été
  // A surrogate pair (U+1F600) and back.
  EXPECT_EQ(utf8_from_utf16le(smb_path("\xf0\x9f\x98\x80")), "\xf0\x9f\x98\x80");
  // An odd trailing byte is dropped, never read past.
  const std::vector<uint8_t> odd = {'x', 0, 'y'};
  EXPECT_EQ(utf8_from_utf16le(odd), "x");
}

TEST(SmbClient, Dialects) {
  EXPECT_EQ(dialect_from("3.1.1"), 0x0311);
  EXPECT_EQ(dialect_from("3.02"), 0x0302);
  EXPECT_EQ(dialect_from("3.0"), 0x0300);
  EXPECT_EQ(dialect_from("2.1"), 0);
  EXPECT_EQ(dialect_name(0x0302), "3.0.2");
  EXPECT_EQ(dialect_name(0x0210), "0x0210");
}

TEST(SmbClient, PatternDetectsMisplacedAndStaleData) {
  std::vector<uint8_t> b(8192);
  fill_pattern(b.data(), 8192, 1 << 20, 7);
  EXPECT_EQ(check_pattern(b.data(), 8192, 1 << 20, 7), -1);
  EXPECT_EQ(check_pattern(b.data(), 8192, (1 << 20) + 4096, 7), int64_t((1 << 20) + 4096));
  EXPECT_GE(check_pattern(b.data(), 8192, 1 << 20, 8), 1 << 20);  // another seed
  b[5000] ^= 1;
  EXPECT_EQ(check_pattern(b.data(), 8192, 1 << 20, 7), int64_t((1 << 20) + 5000));
}

// The word-at-a-time fill writes the bytes the byte-wise check expects, at
// any alignment and length (a pattern written from offset 3 reads back
// from offset 3, and a piece of it at offset 1000 matches too).
TEST(SmbClient, PatternFillMatchesAtAnyAlignment) {
  for (uint64_t off : {0ull, 3ull, 7ull, 8ull, 1001ull}) {
    for (uint32_t len : {1u, 5u, 8u, 13u, 4099u}) {
      std::vector<uint8_t> b(len);
      fill_pattern(b.data(), len, off, 9);
      EXPECT_EQ(check_pattern(b.data(), len, off, 9), -1) << off << " " << len;
    }
  }
  std::vector<uint8_t> whole(2048), part(100);
  fill_pattern(whole.data(), 2048, 0, 9);
  fill_pattern(part.data(), 100, 1000, 9);
  EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + 1000));
}

TEST(SmbClient, StatusNames) {
  EXPECT_EQ(nt_status_name(0xC000006D), "STATUS_LOGON_FAILURE");
  EXPECT_EQ(nt_status_name(0xC00000CC), "STATUS_BAD_NETWORK_NAME");
  EXPECT_EQ(nt_status_name(0xC0001234), "NTSTATUS 0xc0001234");
}

}  // namespace
