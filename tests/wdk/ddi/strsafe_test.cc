// SPDX-License-Identifier: Apache-2.0
// ntstrsafe.h and ntintsafe.h: the documented results, truncation, flags,
// and Windows printf formats (%ws, %wZ, %I64u, %S in wide formats).
#include <gtest/gtest.h>
#include <ntintsafe.h>
#include <ntstrsafe.h>

#include <cwchar>

TEST(StrSafe, CopyAndTruncate) {
  char buf[8];
  EXPECT_EQ(RtlStringCbCopyA(buf, sizeof buf, "abc"), STATUS_SUCCESS);
  EXPECT_STREQ(buf, "abc");
  EXPECT_EQ(RtlStringCbCopyA(buf, sizeof buf, "abcdefghij"), STATUS_BUFFER_OVERFLOW);
  EXPECT_STREQ(buf, "abcdefg");  // truncated, terminated
  EXPECT_EQ(RtlStringCchCopyA(buf, 0, "x"), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(RtlStringCchCopyA(buf, NTSTRSAFE_MAX_CCH + 1ull, "x"), STATUS_INVALID_PARAMETER);
  WCHAR w[6];
  EXPECT_EQ(RtlStringCchCopyW(w, 6, L"hello"), STATUS_SUCCESS);
  EXPECT_STREQ(w, L"hello");
  EXPECT_EQ(RtlStringCbCopyW(w, sizeof w, L"hello!"), STATUS_BUFFER_OVERFLOW);
  EXPECT_STREQ(w, L"hello");
  EXPECT_EQ(RtlStringCchCopyNW(w, 6, L"abcdef", 2), STATUS_SUCCESS);
  EXPECT_STREQ(w, L"ab");
}

TEST(StrSafe, CatNeedsATerminatedDestination) {
  char buf[8] = "ab";
  EXPECT_EQ(RtlStringCchCatA(buf, sizeof buf, "cd"), STATUS_SUCCESS);
  EXPECT_STREQ(buf, "abcd");
  EXPECT_EQ(RtlStringCchCatA(buf, sizeof buf, "efghij"), STATUS_BUFFER_OVERFLOW);
  EXPECT_STREQ(buf, "abcdefg");
  char full[4] = {'x', 'y', 'z', 'w'};  // no terminator within its size
  EXPECT_EQ(RtlStringCchCatA(full, sizeof full, "a"), STATUS_INVALID_PARAMETER);
  char n[8] = "ab";
  EXPECT_EQ(RtlStringCchCatNA(n, sizeof n, "cdef", 1), STATUS_SUCCESS);
  EXPECT_STREQ(n, "abc");
}

TEST(StrSafe, ExFlagsAndRemaining) {
  char buf[8];
  char* end = nullptr;
  size_t rem = 0;
  EXPECT_EQ(RtlStringCchCopyExA(buf, sizeof buf, "abc", &end, &rem, 0), STATUS_SUCCESS);
  EXPECT_EQ(end, buf + 3);
  EXPECT_EQ(rem, 5u);
  EXPECT_EQ(RtlStringCchCopyExA(buf, sizeof buf, nullptr, &end, &rem, STRSAFE_IGNORE_NULLS),
            STATUS_SUCCESS);
  EXPECT_STREQ(buf, "");
  EXPECT_EQ(RtlStringCchCopyExA(buf, sizeof buf, nullptr, nullptr, nullptr, 0),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(RtlStringCchCopyExA(buf, sizeof buf, "abcdefghij", &end, &rem, STRSAFE_NO_TRUNCATION),
            STATUS_BUFFER_OVERFLOW);
  EXPECT_STREQ(buf, "");
  EXPECT_EQ(RtlStringCchCopyExA(buf, sizeof buf, "ab", nullptr, nullptr, STRSAFE_FILL_BYTE('z')),
            STATUS_SUCCESS);
  EXPECT_EQ(std::string(buf, 8), std::string("ab\0zzzzz", 8));
  size_t cb_rem = 0;
  WCHAR w[8];
  EXPECT_EQ(RtlStringCbCopyExW(w, sizeof w, L"abc", nullptr, &cb_rem, 0), STATUS_SUCCESS);
  EXPECT_EQ(cb_rem, 5 * sizeof(WCHAR));
}

TEST(StrSafe, Length) {
  size_t n = 99;
  EXPECT_EQ(RtlStringCchLengthA("abcd", 10, &n), STATUS_SUCCESS);
  EXPECT_EQ(n, 4u);
  EXPECT_EQ(RtlStringCchLengthA("abcd", 4, &n), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(RtlStringCbLengthW(L"abc", 16 * sizeof(WCHAR), &n), STATUS_SUCCESS);
  EXPECT_EQ(n, 3 * sizeof(WCHAR));
}

TEST(StrSafe, WindowsPrintfFormats) {
  WCHAR w[64];
  UNICODE_STRING u;
  RtlInitUnicodeString(&u, L"ndk0");
  EXPECT_EQ(RtlStringCchPrintfW(w, 64, L"%s|%ws|%wZ|%S|%d|%I64u|%04x|%-3s|", L"wide", L"ws", &u,
                                "narrow", -5, 12345678901234ull, 0xab, L"l"),
            STATUS_SUCCESS);
  EXPECT_STREQ(w, L"wide|ws|ndk0|narrow|-5|12345678901234|00ab|l  |");
  char a[32];
  EXPECT_EQ(RtlStringCbPrintfA(a, sizeof a, "%s-%S-%c-%lu", "n", L"w", 'c', 7u), STATUS_SUCCESS);
  EXPECT_STREQ(a, "n-w-c-7");
  EXPECT_EQ(RtlStringCbPrintfA(a, 4, "%d", 123456), STATUS_BUFFER_OVERFLOW);
  EXPECT_STREQ(a, "123");
  EXPECT_EQ(RtlStringCbPrintfA(a, sizeof a, "%n", nullptr), STATUS_INVALID_PARAMETER);
}

TEST(StrSafe, UnicodeStringFunctions) {
  WCHAR storage[8];
  UNICODE_STRING d;
  RtlInitEmptyUnicodeString(&d, storage, sizeof storage);
  EXPECT_EQ(RtlUnicodeStringCopyString(&d, L"abc"), STATUS_SUCCESS);
  EXPECT_EQ(d.Length, 3 * sizeof(WCHAR));
  EXPECT_EQ(RtlUnicodeStringCatString(&d, L"defgh"), STATUS_SUCCESS);
  EXPECT_EQ(d.Length, 8 * sizeof(WCHAR));
  EXPECT_EQ(RtlUnicodeStringCatString(&d, L"x"), STATUS_BUFFER_OVERFLOW);
  EXPECT_EQ(RtlUnicodeStringPrintf(&d, L"%d-%ws", 42, L"ab"), STATUS_SUCCESS);
  EXPECT_EQ(std::wstring(d.Buffer, d.Length / sizeof(WCHAR)), L"42-ab");
  UNICODE_STRING bad = {3, 8, storage};  // odd length
  EXPECT_EQ(RtlUnicodeStringValidate(&bad), STATUS_INVALID_PARAMETER);
  UNICODE_STRING init;
  EXPECT_EQ(RtlUnicodeStringInit(&init, L"xyz"), STATUS_SUCCESS);
  EXPECT_EQ(init.Length, 3 * sizeof(WCHAR));
  WCHAR out[8];
  EXPECT_EQ(RtlStringCchCopyUnicodeString(out, 8, &init), STATUS_SUCCESS);
  EXPECT_STREQ(out, L"xyz");
}

TEST(IntSafe, OverflowIsAnErrorWithTheErrorValue) {
  ULONG u = 0;
  EXPECT_EQ(RtlULongAdd(0xfffffffeu, 1, &u), STATUS_SUCCESS);
  EXPECT_EQ(u, 0xffffffffu);
  EXPECT_EQ(RtlULongAdd(0xffffffffu, 1, &u), STATUS_INTEGER_OVERFLOW);
  EXPECT_EQ(u, 0xffffffffu);
  LONG l = 0;
  EXPECT_EQ(RtlULongToLong(0x80000000u, &l), STATUS_INTEGER_OVERFLOW);
  EXPECT_EQ(RtlLongToULong(-1, &u), STATUS_INTEGER_OVERFLOW);
  SIZE_T z = 0;
  EXPECT_EQ(RtlSizeTMult(SIZE_MAX / 2, 3, &z), STATUS_INTEGER_OVERFLOW);
  EXPECT_EQ(RtlSizeTMult(4096, 16, &z), STATUS_SUCCESS);
  EXPECT_EQ(z, 65536u);
  USHORT s = 0;
  EXPECT_EQ(RtlUShortSub(1, 2, &s), STATUS_INTEGER_OVERFLOW);
}
