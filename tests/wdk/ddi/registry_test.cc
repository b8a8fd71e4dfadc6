// SPDX-License-Identifier: Apache-2.0
// The kit's registry (softndk_wdk/zw.h): what softndk-wdk-run loads is what
// ZwOpenKey/ZwQueryValueKey/RtlQueryRegistryValues on the RegistryPath see.
#include <gtest/gtest.h>
#include <wdm.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

const WCHAR kService[] = L"\\Registry\\Machine\\System\\CurrentControlSet\\Services\\regtest";

class Registry : public ::testing::Test {
 protected:
  void SetUp() override {
    SoftNdkWdkRegistryReset();
    RtlInitUnicodeString(&path_, kService);
    ASSERT_EQ(SoftNdkWdkRegistrySetServiceKey(&path_), STATUS_SUCCESS);
  }
  HANDLE Open(const WCHAR* sub) {
    std::wstring p = std::wstring(kService) + (sub ? std::wstring(L"\\") + sub : L"");
    UNICODE_STRING name;
    RtlInitUnicodeString(&name, p.c_str());
    OBJECT_ATTRIBUTES oa;
    InitializeObjectAttributes(&oa, &name, OBJ_CASE_INSENSITIVE | OBJ_KERNEL_HANDLE, nullptr,
                               nullptr);
    HANDLE h = nullptr;
    last_ = ZwOpenKey(&h, KEY_READ, &oa);
    return h;
  }
  UNICODE_STRING path_;
  NTSTATUS last_ = STATUS_SUCCESS;
};

TEST_F(Registry, ValuesFromSpecsAreReadWithZwQueryValueKey) {
  ASSERT_EQ(SoftNdkWdkRegistrySet("Parameters\\MaxConnections=dword:8"), STATUS_SUCCESS);
  ASSERT_EQ(SoftNdkWdkRegistrySet("Parameters\\Greeting=sz:hello"), STATUS_SUCCESS);
  EXPECT_EQ(SoftNdkWdkRegistrySet("nonsense"), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkWdkRegistrySet("X=dword:notanumber"), STATUS_INVALID_PARAMETER);
  HANDLE h = Open(L"PARAMETERS");  // names are case-insensitive
  ASSERT_EQ(last_, STATUS_SUCCESS);
  UNICODE_STRING v;
  RtlInitUnicodeString(&v, L"maxconnections");
  UCHAR buf[64];
  ULONG len = 0;
  ASSERT_EQ(ZwQueryValueKey(h, &v, KeyValuePartialInformation, buf, sizeof buf, &len),
            STATUS_SUCCESS);
  auto* info = reinterpret_cast<PKEY_VALUE_PARTIAL_INFORMATION>(buf);
  EXPECT_EQ(info->Type, static_cast<ULONG>(REG_DWORD));
  EXPECT_EQ(info->DataLength, 4u);
  ULONG dword;
  std::memcpy(&dword, info->Data, 4);
  EXPECT_EQ(dword, 8u);
  // Too small for the data: the fixed part and STATUS_BUFFER_OVERFLOW;
  // too small for that: STATUS_BUFFER_TOO_SMALL. ResultLength is the need.
  EXPECT_EQ(ZwQueryValueKey(h, &v, KeyValuePartialInformation, buf, 13, &len),
            STATUS_BUFFER_OVERFLOW);
  EXPECT_EQ(len, offsetof(KEY_VALUE_PARTIAL_INFORMATION, Data) + 4u);
  EXPECT_EQ(ZwQueryValueKey(h, &v, KeyValuePartialInformation, buf, 4, &len),
            STATUS_BUFFER_TOO_SMALL);
  RtlInitUnicodeString(&v, L"Missing");
  EXPECT_EQ(ZwQueryValueKey(h, &v, KeyValuePartialInformation, buf, sizeof buf, &len),
            STATUS_OBJECT_NAME_NOT_FOUND);
  ULONG index_count = 0;
  UCHAR big[256];
  while (ZwEnumerateValueKey(h, index_count, KeyValueBasicInformation, big, sizeof big, &len) ==
         STATUS_SUCCESS)
    ++index_count;
  EXPECT_EQ(index_count, 2u);
  EXPECT_EQ(ZwClose(h), STATUS_SUCCESS);
  EXPECT_EQ(ZwQueryValueKey(h, &v, KeyValuePartialInformation, buf, sizeof buf, &len),
            STATUS_INVALID_HANDLE);
  Open(L"NoSuchKey");
  EXPECT_EQ(last_, STATUS_OBJECT_NAME_NOT_FOUND);
}

TEST_F(Registry, RegFileAndRtlQueryRegistryValues) {
  char file[] = "/tmp/softndk-regtest-XXXXXX";
  int fd = mkstemp(file);
  ASSERT_GE(fd, 0);
  const char text[] =
      "Windows Registry Editor Version 5.00\n"
      "; a comment\n"
      "[Parameters]\n"
      "\"Port\"=dword:000012b7\n"
      "\"Address\"=\"127.0.0.1\"\n"
      "\"Blob\"=hex:01,02,03,04,05,06\n"
      "Names=multi_sz:a,bc\n";
  ASSERT_EQ(write(fd, text, sizeof text - 1), static_cast<ssize_t>(sizeof text - 1));
  close(fd);
  ASSERT_EQ(SoftNdkWdkRegistryLoad(file), STATUS_SUCCESS);
  unlink(file);
  EXPECT_EQ(SoftNdkWdkRegistryLoad("/nonexistent/file.reg"), STATUS_OBJECT_NAME_NOT_FOUND);

  ULONG port = 0, fallback = 0, def = 77;
  WCHAR addr_buf[32];
  UNICODE_STRING addr;
  RtlInitEmptyUnicodeString(&addr, addr_buf, sizeof addr_buf);
  // Larger than a ULONG, negative size: only the data, from the start.
  union {
    LONG size;
    UCHAR data[8];
  } blob;
  blob.size = -8;
  RTL_QUERY_REGISTRY_TABLE table[6] = {};
  table[0].Flags = RTL_QUERY_REGISTRY_DIRECT | RTL_QUERY_REGISTRY_TYPECHECK;
  table[0].Name = const_cast<PWSTR>(L"Port");
  table[0].EntryContext = &port;
  table[0].DefaultType = (REG_DWORD << RTL_QUERY_REGISTRY_TYPECHECK_SHIFT) | REG_NONE;
  table[1].Flags = RTL_QUERY_REGISTRY_DIRECT;
  table[1].Name = const_cast<PWSTR>(L"Address");
  table[1].EntryContext = &addr;
  table[2].Flags = RTL_QUERY_REGISTRY_DIRECT;
  table[2].Name = const_cast<PWSTR>(L"Absent");
  table[2].EntryContext = &fallback;
  table[2].DefaultType = REG_DWORD;
  table[2].DefaultData = &def;
  table[2].DefaultLength = sizeof def;
  table[3].Flags = RTL_QUERY_REGISTRY_DIRECT;
  table[3].Name = const_cast<PWSTR>(L"Blob");
  table[3].EntryContext = &blob;
  std::wstring params = std::wstring(L"regtest\\Parameters");
  ASSERT_EQ(RtlQueryRegistryValues(RTL_REGISTRY_SERVICES, params.c_str(), table, nullptr, nullptr),
            STATUS_SUCCESS);
  EXPECT_EQ(port, 4791u);
  EXPECT_EQ(std::wstring(addr.Buffer, addr.Length / sizeof(WCHAR)), L"127.0.0.1");
  EXPECT_EQ(fallback, 77u);
  EXPECT_EQ(blob.data[0], 1);
  EXPECT_EQ(blob.data[5], 6);

  // A query routine sees each string of a REG_MULTI_SZ.
  static int strings;
  strings = 0;
  RTL_QUERY_REGISTRY_TABLE multi[2] = {};
  multi[0].QueryRoutine = [](PWSTR, ULONG type, PVOID, ULONG, PVOID, PVOID) -> NTSTATUS {
    if (type == REG_SZ) ++strings;
    return STATUS_SUCCESS;
  };
  multi[0].Name = const_cast<PWSTR>(L"Names");
  EXPECT_EQ(RtlQueryRegistryValues(RTL_REGISTRY_SERVICES, params.c_str(), multi, nullptr, nullptr),
            STATUS_SUCCESS);
  EXPECT_EQ(strings, 2);

  // REQUIRED and a type check that fails.
  RTL_QUERY_REGISTRY_TABLE req[2] = {};
  req[0].Flags = RTL_QUERY_REGISTRY_DIRECT | RTL_QUERY_REGISTRY_REQUIRED;
  req[0].Name = const_cast<PWSTR>(L"Absent");
  req[0].EntryContext = &fallback;
  EXPECT_EQ(RtlQueryRegistryValues(RTL_REGISTRY_SERVICES, params.c_str(), req, nullptr, nullptr),
            STATUS_OBJECT_NAME_NOT_FOUND);
  req[0].Flags = RTL_QUERY_REGISTRY_DIRECT | RTL_QUERY_REGISTRY_TYPECHECK;
  req[0].Name = const_cast<PWSTR>(L"Address");
  req[0].DefaultType = REG_DWORD << RTL_QUERY_REGISTRY_TYPECHECK_SHIFT;
  EXPECT_EQ(RtlQueryRegistryValues(RTL_REGISTRY_SERVICES, params.c_str(), req, nullptr, nullptr),
            STATUS_OBJECT_TYPE_MISMATCH);
  EXPECT_EQ(RtlQueryRegistryValues(RTL_REGISTRY_SERVICES, L"regtest\\Nope", req, nullptr, nullptr),
            STATUS_OBJECT_NAME_NOT_FOUND);
}

TEST_F(Registry, CreateSetDeleteAndRelativeOpen) {
  HANDLE svc = Open(nullptr);
  ASSERT_EQ(last_, STATUS_SUCCESS);
  UNICODE_STRING sub;
  RtlInitUnicodeString(&sub, L"State");
  OBJECT_ATTRIBUTES oa;
  InitializeObjectAttributes(&oa, &sub, OBJ_KERNEL_HANDLE, svc, nullptr);
  HANDLE h = nullptr;
  ULONG disp = 0;
  ASSERT_EQ(ZwCreateKey(&h, KEY_ALL_ACCESS, &oa, 0, nullptr, 0, &disp), STATUS_SUCCESS);
  EXPECT_EQ(disp, static_cast<ULONG>(REG_CREATED_NEW_KEY));
  UNICODE_STRING v;
  RtlInitUnicodeString(&v, L"Counter");
  ULONGLONG q = 0x1122334455667788ull;
  EXPECT_EQ(ZwSetValueKey(h, &v, 0, REG_QWORD, &q, sizeof q), STATUS_SUCCESS);
  UCHAR buf[64];
  ULONG len;
  ASSERT_EQ(ZwQueryValueKey(h, &v, KeyValueFullInformation, buf, sizeof buf, &len), STATUS_SUCCESS);
  auto* full = reinterpret_cast<PKEY_VALUE_FULL_INFORMATION>(buf);
  EXPECT_EQ(full->Type, static_cast<ULONG>(REG_QWORD));
  EXPECT_EQ(std::memcmp(buf + full->DataOffset, &q, sizeof q), 0);
  EXPECT_EQ(ZwDeleteKey(svc), static_cast<NTSTATUS>(0xC0000121L));  // has a subkey
  EXPECT_EQ(ZwDeleteKey(h), STATUS_SUCCESS);
  EXPECT_EQ(ZwSetValueKey(h, &v, 0, REG_QWORD, &q, sizeof q), STATUS_INVALID_HANDLE);
  EXPECT_EQ(ZwClose(h), STATUS_SUCCESS);
  EXPECT_EQ(ZwClose(svc), STATUS_SUCCESS);
}

}  // namespace
