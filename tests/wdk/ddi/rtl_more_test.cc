// SPDX-License-Identifier: Apache-2.0
// softndk_wdk/rtl_more.h and wdmsec.h: bitmaps, time fields, GUID strings,
// UTF-8, probes, IoCreateDeviceSecure's SDDL check.
#include <gtest/gtest.h>
#include <ip2string.h>
#include <wdm.h>
#include <wdmsec.h>

#include "kernel/device.h"

TEST(RtlMore, Bitmaps) {
  ULONG bits[2] = {};
  RTL_BITMAP bm;
  RtlInitializeBitMap(&bm, bits, 64);
  RtlSetBits(&bm, 3, 5);
  EXPECT_TRUE(RtlAreBitsSet(&bm, 3, 5));
  EXPECT_FALSE(RtlAreBitsSet(&bm, 2, 5));
  EXPECT_EQ(RtlNumberOfSetBits(&bm), 5u);
  EXPECT_EQ(RtlFindClearBits(&bm, 4, 0), 8u);
  EXPECT_EQ(RtlFindClearBitsAndSet(&bm, 3, 0), 0u);
  EXPECT_EQ(RtlFindSetBits(&bm, 8, 0), 0u);
  EXPECT_EQ(RtlFindClearBits(&bm, 65, 0), 0xFFFFFFFFu);
  ULONG start = 0;
  EXPECT_EQ(RtlFindLongestRunClear(&bm, &start), 56u);
  EXPECT_EQ(start, 8u);
  EXPECT_EQ(RtlFindLeastSignificantBit(0x50), 4);
  EXPECT_EQ(RtlFindMostSignificantBit(0x50), 6);
  EXPECT_EQ(RtlFindMostSignificantBit(0), -1);
}

TEST(RtlMore, TimeFieldsRoundTrip) {
  TIME_FIELDS tf = {2024, 2, 29, 13, 45, 30, 123, 0};
  LARGE_INTEGER t;
  ASSERT_TRUE(RtlTimeFieldsToTime(&tf, &t));
  // 2024-02-29 13:45:30.123 UTC = Unix 1709214330.123
  EXPECT_EQ(t.QuadPart, 116444736000000000LL + 1709214330LL * 10000000 + 1230000);
  TIME_FIELDS back;
  RtlTimeToTimeFields(&t, &back);
  EXPECT_EQ(back.Year, 2024);
  EXPECT_EQ(back.Month, 2);
  EXPECT_EQ(back.Day, 29);
  EXPECT_EQ(back.Hour, 13);
  EXPECT_EQ(back.Milliseconds, 123);
  EXPECT_EQ(back.Weekday, 4);  // a Thursday
  TIME_FIELDS bad = {2023, 2, 29, 0, 0, 0, 0, 0};
  EXPECT_FALSE(RtlTimeFieldsToTime(&bad, &t));
}

TEST(RtlMore, GuidStringsAndUtf8) {
  GUID g;
  UNICODE_STRING s;
  RtlInitUnicodeString(&s, L"{4d36e972-e325-11ce-bfc1-08002be10318}");
  ASSERT_EQ(RtlGUIDFromString(&s, &g), STATUS_SUCCESS);
  EXPECT_TRUE(InlineIsEqualGUID(&g, &GUID_DEVCLASS_NET));
  UNICODE_STRING back;
  ASSERT_EQ(RtlStringFromGUID(&g, &back), STATUS_SUCCESS);
  EXPECT_EQ(std::wstring(back.Buffer, back.Length / sizeof(WCHAR)),
            L"{4D36E972-E325-11CE-BFC1-08002BE10318}");
  RtlFreeUnicodeString(&back);
  RtlInitUnicodeString(&s, L"{4d36e972-e325-11ce-bfc1-08002be1031}");
  EXPECT_EQ(RtlGUIDFromString(&s, &g), STATUS_INVALID_PARAMETER);
  char out[16];
  ULONG n = 0;
  const WCHAR text[] = L"a\u00e9\u20ac";
  ASSERT_EQ(RtlUnicodeToUTF8N(out, sizeof out, &n, text, 3 * sizeof(WCHAR)), STATUS_SUCCESS);
  EXPECT_EQ(std::string(out, n), "a\xc3\xa9\xe2\x82\xac");
  WCHAR wide[8];
  ASSERT_EQ(RtlUTF8ToUnicodeN(wide, sizeof wide, &n, out, 6), STATUS_SUCCESS);
  EXPECT_EQ(n, 3 * sizeof(WCHAR));
  EXPECT_EQ(wide[2], 0x20ac);
}

TEST(WdmSec, IoCreateDeviceSecureChecksTheSddlSubset) {
  PDRIVER_OBJECT driver = softndk::wdk::CreateDriverObject(L"wdmsectest");
  UNICODE_STRING name, sddl;
  RtlInitUnicodeString(&name, L"\\Device\\WdmSecTest");
  PDEVICE_OBJECT dev = nullptr;
  RtlInitUnicodeString(&sddl, L"D:P(A;;GA;;;SY)(A;;GRZZ;;;BA)");
  EXPECT_EQ(IoCreateDeviceSecure(driver, 0, &name, FILE_DEVICE_NETWORK, 0, FALSE, &sddl,
                                 &GUID_DEVCLASS_NET, &dev),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(dev, nullptr);
  RtlInitUnicodeString(&sddl, L"O:BAG:SY");
  EXPECT_EQ(IoCreateDeviceSecure(driver, 0, &name, FILE_DEVICE_NETWORK, 0, FALSE, &sddl,
                                 &GUID_DEVCLASS_NET, &dev),
            STATUS_INVALID_PARAMETER);
  RtlInitUnicodeString(&sddl, SDDL_DEVOBJ_SYS_ALL_ADM_RWX_WORLD_RW_RES_R);
  ASSERT_EQ(IoCreateDeviceSecure(driver, 16, &name, FILE_DEVICE_NETWORK, 0, FALSE, &sddl,
                                 &GUID_DEVCLASS_NET, &dev),
            STATUS_SUCCESS);
  ASSERT_NE(dev, nullptr);
  EXPECT_NE(dev->DeviceExtension, nullptr);
  IoDeleteDevice(dev);
  softndk::wdk::DeleteDriverObject(driver);
}

TEST(Ip2String, EthernetAddresses) {
  DL_EUI48 mac = {{0x02, 0x00, 0x5e, 0xab, 0xcd, 0xef}};
  char text[18];
  EXPECT_EQ(RtlEthernetAddressToStringA(&mac, text), text + 17);
  EXPECT_STREQ(text, "02-00-5E-AB-CD-EF");
  WCHAR wide[18];
  RtlEthernetAddressToStringW(&mac, wide);
  EXPECT_STREQ(wide, L"02-00-5E-AB-CD-EF");
  DL_EUI48 back = {};
  PCWSTR end = nullptr;
  ASSERT_EQ(RtlEthernetStringToAddressW(L"02-00-5e-ab-cd-ef!", &end, &back), STATUS_SUCCESS);
  EXPECT_EQ(*end, L'!');
  EXPECT_EQ(back.Byte[5], 0xef);
  PCSTR stop = nullptr;
  EXPECT_EQ(RtlEthernetStringToAddressA("02:00:5e:ab:cd:ef", &stop, &back),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(RtlEthernetStringToAddressA("02-00-5e-ab-cd-e", &stop, &back),
            STATUS_INVALID_PARAMETER);
}
