// SPDX-License-Identifier: Apache-2.0
// Rtl strings and memory, IP address text, lists, SLISTs, interlocked
// operations.
#include <arpa/inet.h>
#include <ip2string.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kit_test_util.h"

namespace softndk::wdk::test {
namespace {

class RtlTest : public KitTest {};

TEST_F(RtlTest, UnicodeStrings) {
  UNICODE_STRING a;
  RtlInitUnicodeString(&a, L"Adapter");
  EXPECT_EQ(a.Length, 7 * sizeof(WCHAR));
  EXPECT_EQ(a.MaximumLength, 8 * sizeof(WCHAR));
  UNICODE_STRING b = RTL_CONSTANT_STRING(L"ADAPTER");
  EXPECT_FALSE(RtlEqualUnicodeString(&a, &b, FALSE));
  EXPECT_TRUE(RtlEqualUnicodeString(&a, &b, TRUE));
  EXPECT_GT(RtlCompareUnicodeString(&a, &b, FALSE), 0);
  WCHAR buf[16];
  UNICODE_STRING c{0, sizeof buf, buf};
  RtlCopyUnicodeString(&c, &a);
  EXPECT_EQ(RtlAppendUnicodeToString(&c, L"#1"), STATUS_SUCCESS);
  EXPECT_EQ(std::wstring(c.Buffer, c.Length / sizeof(WCHAR)), L"Adapter#1");
  EXPECT_EQ(RtlAppendUnicodeToString(&c, L"-way-too-long"), STATUS_BUFFER_TOO_SMALL);
  ANSI_STRING ansi;
  ASSERT_EQ(RtlUnicodeStringToAnsiString(&ansi, &c, TRUE), STATUS_SUCCESS);
  EXPECT_STREQ(ansi.Buffer, "Adapter#1");
  UNICODE_STRING back;
  ASSERT_EQ(RtlAnsiStringToUnicodeString(&back, &ansi, TRUE), STATUS_SUCCESS);
  EXPECT_TRUE(RtlEqualUnicodeString(&back, &c, FALSE));
  RtlFreeAnsiString(&ansi);
  RtlFreeUnicodeString(&back);
  UNICODE_STRING num = RTL_CONSTANT_STRING(L"0x1F");
  ULONG v = 0;
  EXPECT_EQ(RtlUnicodeStringToInteger(&num, 0, &v), STATUS_SUCCESS);
  EXPECT_EQ(v, 31u);
  EXPECT_EQ(RtlIntegerToUnicodeString(4791, 10, &c), STATUS_SUCCESS);
  EXPECT_EQ(std::wstring(c.Buffer, c.Length / sizeof(WCHAR)), L"4791");
  ExpectNone();
}

TEST_F(RtlTest, MemoryHelpers) {
  char a[8] = "abcdefg", b[8] = "abcXefg";
  EXPECT_EQ(RtlCompareMemory(a, b, 8), 3u);
  EXPECT_EQ(RtlCompareMemory(a, a, 8), 8u);
  EXPECT_FALSE(RtlEqualMemory(a, b, 8));
  RtlCopyMemory(b, a, 8);
  EXPECT_TRUE(RtlEqualMemory(a, b, 8));
  RtlMoveMemory(a + 1, a, 4);
  EXPECT_EQ(std::string(a, 5), "aabcd");
  RtlFillMemory(a, 3, 'z');
  RtlZeroMemory(a + 3, 5);
  EXPECT_EQ(std::string(a, 3), "zzz");
  EXPECT_EQ(a[7], 0);
}

TEST_F(RtlTest, Ipv4TextBothWays) {
  in_addr a{};
  USHORT port = 0;
  EXPECT_EQ(RtlIpv4StringToAddressExA("192.168.7.9:4791", TRUE, &a, &port), STATUS_SUCCESS);
  EXPECT_EQ(ntohl(a.s_addr), 0xc0a80709u);
  EXPECT_EQ(ntohs(port), 4791);
  EXPECT_EQ(RtlIpv4StringToAddressExW(L"10.0.0.1", TRUE, &a, &port), STATUS_SUCCESS);
  EXPECT_EQ(ntohl(a.s_addr), 0x0a000001u);
  EXPECT_EQ(port, 0);
  EXPECT_EQ(RtlIpv4StringToAddressExA("10.0.0.1:70000", TRUE, &a, &port), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(RtlIpv4StringToAddressExA("10.0.0", TRUE, &a, &port), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(RtlIpv4StringToAddressExA("256.1.1.1", TRUE, &a, &port), STATUS_INVALID_PARAMETER);
  // Non-strict forms: hex, octal, fewer parts.
  EXPECT_EQ(RtlIpv4StringToAddressExA("0x7f.1", FALSE, &a, &port), STATUS_SUCCESS);
  EXPECT_EQ(ntohl(a.s_addr), 0x7f000001u);
  PCSTR term = nullptr;
  EXPECT_EQ(RtlIpv4StringToAddressA("1.2.3.4/24", TRUE, &term, &a), STATUS_SUCCESS);
  EXPECT_STREQ(term, "/24");
  char text[INET_ADDRSTRLEN_W];
  ULONG len = sizeof text;
  EXPECT_EQ(RtlIpv4AddressToStringExA(&a, htons(80), text, &len), STATUS_SUCCESS);
  EXPECT_STREQ(text, "1.2.3.4:80");
  EXPECT_EQ(len, 11u);
  len = 4;
  EXPECT_EQ(RtlIpv4AddressToStringExA(&a, 0, text, &len), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(len, 8u);  // needed, with the NUL
  WCHAR wide[INET_ADDRSTRLEN_W];
  PWSTR end = RtlIpv4AddressToStringW(&a, wide);
  EXPECT_EQ(std::wstring(wide), L"1.2.3.4");
  EXPECT_EQ(end, wide + 7);
}

TEST_F(RtlTest, Ipv6TextBothWays) {
  in6_addr a{};
  ULONG scope = 0;
  USHORT port = 0;
  EXPECT_EQ(RtlIpv6StringToAddressExA("[fe80::1%3]:4791", &a, &scope, &port), STATUS_SUCCESS);
  EXPECT_EQ(scope, 3u);
  EXPECT_EQ(ntohs(port), 4791);
  EXPECT_EQ(a.s6_addr[0], 0xfe);
  EXPECT_EQ(a.s6_addr[15], 1);
  EXPECT_EQ(RtlIpv6StringToAddressExW(L"::1", &a, &scope, &port), STATUS_SUCCESS);
  EXPECT_EQ(scope, 0u);
  EXPECT_EQ(port, 0);
  EXPECT_EQ(RtlIpv6StringToAddressExA("[::1]junk", &a, &scope, &port), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(RtlIpv6StringToAddressExA("::g", &a, &scope, &port), STATUS_INVALID_PARAMETER);
  char text[INET6_ADDRSTRLEN_W];
  ULONG len = sizeof text;
  EXPECT_EQ(RtlIpv6StringToAddressExA("fe80::1", &a, &scope, &port), STATUS_SUCCESS);
  EXPECT_EQ(RtlIpv6AddressToStringExA(&a, 3, htons(4791), text, &len), STATUS_SUCCESS);
  EXPECT_STREQ(text, "[fe80::1%3]:4791");
  PSTR end = RtlIpv6AddressToStringA(&a, text);
  EXPECT_STREQ(text, "fe80::1");
  EXPECT_EQ(*end, '\0');
}

struct Item {
  int value;
  LIST_ENTRY link;
};

TEST_F(RtlTest, DoublyLinkedListHelpers) {
  LIST_ENTRY head;
  InitializeListHead(&head);
  EXPECT_TRUE(IsListEmpty(&head));
  Item items[4] = {{1, {}}, {2, {}}, {3, {}}, {4, {}}};
  InsertTailList(&head, &items[1].link);
  InsertHeadList(&head, &items[0].link);
  InsertTailList(&head, &items[2].link);
  InsertTailList(&head, &items[3].link);
  std::vector<int> seen;
  for (PLIST_ENTRY e = head.Flink; e != &head; e = e->Flink) {
    seen.push_back(CONTAINING_RECORD(e, Item, link)->value);
  }
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(CONTAINING_RECORD(RemoveHeadList(&head), Item, link)->value, 1);
  EXPECT_EQ(CONTAINING_RECORD(RemoveTailList(&head), Item, link)->value, 4);
  EXPECT_FALSE(RemoveEntryList(&items[1].link));
  EXPECT_TRUE(RemoveEntryList(&items[2].link));  // now empty
  EXPECT_TRUE(IsListEmpty(&head));
}

TEST_F(RtlTest, InterlockedListsUnderTheirSpinLock) {
  KSPIN_LOCK lock;
  KeInitializeSpinLock(&lock);
  LIST_ENTRY head;
  InitializeListHead(&head);
  constexpr int kPerThread = 2000;
  std::vector<Item> items(2 * kPerThread);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; i++) {
        ExInterlockedInsertTailList(&head, &items[t * kPerThread + i].link, &lock);
      }
    });
  }
  for (auto& th : threads) th.join();
  int n = 0;
  while (ExInterlockedRemoveHeadList(&head, &lock) != nullptr) n++;
  EXPECT_EQ(n, 2 * kPerThread);
  EXPECT_EQ(KeGetCurrentIrql(), PASSIVE_LEVEL);
  ExpectNone();
}

struct SItem {
  SLIST_ENTRY entry;
  int value;
};

TEST_F(RtlTest, SListPushPopFlushAcrossThreads) {
  SLIST_HEADER head;
  InitializeSListHead(&head);
  EXPECT_EQ(InterlockedPopEntrySList(&head), nullptr);
  constexpr int kItems = 4000;
  std::vector<SItem> items(kItems);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; t++) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kItems; i += 2) {
        items[i].value = i;
        InterlockedPushEntrySList(&head, &items[i].entry);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(QueryDepthSList(&head), kItems);
  std::atomic<long> sum{0};
  std::vector<std::thread> poppers;
  for (int t = 0; t < 2; t++) {
    poppers.emplace_back([&] {
      while (PSLIST_ENTRY e = InterlockedPopEntrySList(&head)) {
        sum += CONTAINING_RECORD(e, SItem, entry)->value;
      }
    });
  }
  for (auto& th : poppers) th.join();
  EXPECT_EQ(sum.load(), static_cast<long>(kItems) * (kItems - 1) / 2);
  InterlockedPushEntrySList(&head, &items[0].entry);
  EXPECT_EQ(InterlockedFlushSList(&head), &items[0].entry);
  EXPECT_EQ(QueryDepthSList(&head), 0);
}

TEST_F(RtlTest, InterlockedOperationsReturnWhatTheDocsSay) {
  volatile LONG v = 5;
  EXPECT_EQ(InterlockedIncrement(&v), 6);
  EXPECT_EQ(InterlockedDecrement(&v), 5);
  EXPECT_EQ(InterlockedExchange(&v, 9), 5);
  EXPECT_EQ(InterlockedExchangeAdd(&v, 3), 9);
  EXPECT_EQ(InterlockedCompareExchange(&v, 1, 12), 12);
  EXPECT_EQ(v, 1);
  EXPECT_EQ(InterlockedCompareExchange(&v, 7, 99), 1);  // no match, unchanged
  EXPECT_EQ(InterlockedOr(&v, 6), 1);
  EXPECT_EQ(InterlockedAnd(&v, 3), 7);
  EXPECT_EQ(v, 3);
  volatile LONG64 w = 1LL << 40;
  EXPECT_EQ(InterlockedIncrement64(&w), (1LL << 40) + 1);
  EXPECT_EQ(InterlockedExchangeAdd64(&w, -1), (1LL << 40) + 1);
  EXPECT_EQ(InterlockedCompareExchange64(&w, 5, 1LL << 40), 1LL << 40);
  EXPECT_EQ(w, 5);
  int x = 0, y = 0;
  PVOID volatile p = &x;
  EXPECT_EQ(InterlockedExchangePointer(&p, &y), &x);
  EXPECT_EQ(InterlockedCompareExchangePointer(&p, nullptr, &y), &y);
  EXPECT_EQ(p, nullptr);
  volatile LONG counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; i++) InterlockedIncrement(&counter);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(counter, 40000);
}

}  // namespace
}  // namespace softndk::wdk::test
