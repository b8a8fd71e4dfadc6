// SPDX-License-Identifier: Apache-2.0
// ifapi.cc - NET_IFINDEX / NET_LUID / alias conversions over the Linux
// interfaces of the calling thread's network namespace.
//
// The link type comes from SIOCGIFHWADDR on a socket made by the calling
// thread (not from /sys, which shows the namespace sysfs was mounted in).
#include <net/if.h>
#include <net/if_arp.h>
#include <netioapi.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstring>

#include "net_irql.h"

namespace softndk::wdk::net {
namespace {

// The Linux name of interface `index`, or false.
bool name_of(ULONG index, char (&name)[IF_NAMESIZE]) {
  return index != 0 && ::if_indextoname(index, name) != nullptr;
}

// IF_TYPE_* of a Linux interface; 0 when it has gone.
ULONG if_type_of(const char* name) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IF_TYPE_OTHER;
  struct ifreq req {};
  std::strncpy(req.ifr_name, name, IF_NAMESIZE - 1);
  int rc = ::ioctl(fd, SIOCGIFHWADDR, &req);
  ::close(fd);
  if (rc != 0) return 0;
  switch (req.ifr_hwaddr.sa_family) {
    case ARPHRD_LOOPBACK:
      return IF_TYPE_SOFTWARE_LOOPBACK;
    case ARPHRD_ETHER:
      return IF_TYPE_ETHERNET_CSMACD;
    case ARPHRD_TUNNEL:
    case ARPHRD_TUNNEL6:
    case ARPHRD_SIT:
    case ARPHRD_IPGRE:
      return IF_TYPE_TUNNEL;
    default:
      return IF_TYPE_OTHER;
  }
}

NTSTATUS luid_of(ULONG index, NET_LUID* luid) {
  char name[IF_NAMESIZE];
  if (index >= (1u << 24)) return STATUS_INVALID_PARAMETER;  // does not fit NetLuidIndex
  if (!name_of(index, name)) return STATUS_NOT_FOUND;
  ULONG type = if_type_of(name);
  if (type == 0) return STATUS_NOT_FOUND;
  luid->Value = 0;
  luid->Info.NetLuidIndex = index;
  luid->Info.IfType = type;
  return STATUS_SUCCESS;
}

// The index a LUID names, checked against the interface that has it now.
NTSTATUS index_of(const NET_LUID* luid, ULONG* index, char (&name)[IF_NAMESIZE]) {
  if (luid->Info.Reserved != 0) return STATUS_INVALID_PARAMETER;
  ULONG i = static_cast<ULONG>(luid->Info.NetLuidIndex);
  if (!name_of(i, name)) return STATUS_NOT_FOUND;
  if (if_type_of(name) != luid->Info.IfType) return STATUS_NOT_FOUND;  // index reused
  *index = i;
  return STATUS_SUCCESS;
}

}  // namespace
}  // namespace softndk::wdk::net

using namespace softndk::wdk::net;

extern "C" {

NETIO_STATUS ConvertInterfaceIndexToLuid(NET_IFINDEX InterfaceIndex, PNET_LUID InterfaceLuid) {
  NET_REQUIRE_IRQL("ConvertInterfaceIndexToLuid", PASSIVE_LEVEL);
  if (InterfaceLuid == nullptr || InterfaceIndex == NET_IFINDEX_UNSPECIFIED) {
    return STATUS_INVALID_PARAMETER;
  }
  return luid_of(InterfaceIndex, InterfaceLuid);
}

NETIO_STATUS ConvertInterfaceLuidToIndex(const NET_LUID* InterfaceLuid,
                                         PNET_IFINDEX InterfaceIndex) {
  NET_REQUIRE_IRQL("ConvertInterfaceLuidToIndex", PASSIVE_LEVEL);
  if (InterfaceLuid == nullptr || InterfaceIndex == nullptr) return STATUS_INVALID_PARAMETER;
  char name[IF_NAMESIZE];
  return index_of(InterfaceLuid, InterfaceIndex, name);
}

NETIO_STATUS ConvertInterfaceLuidToAlias(const NET_LUID* InterfaceLuid, PWSTR InterfaceAlias,
                                         SIZE_T Length) {
  NET_REQUIRE_IRQL("ConvertInterfaceLuidToAlias", PASSIVE_LEVEL);
  if (InterfaceLuid == nullptr || InterfaceAlias == nullptr) return STATUS_INVALID_PARAMETER;
  char name[IF_NAMESIZE];
  ULONG index = 0;
  NTSTATUS st = index_of(InterfaceLuid, &index, name);
  if (st != STATUS_SUCCESS) return st;
  size_t n = std::strlen(name);
  if (Length < n + 1) return STATUS_BUFFER_TOO_SMALL;
  for (size_t i = 0; i <= n; ++i) InterfaceAlias[i] = static_cast<WCHAR>(name[i]);
  return STATUS_SUCCESS;
}

NETIO_STATUS ConvertInterfaceAliasToLuid(const WCHAR* InterfaceAlias, PNET_LUID InterfaceLuid) {
  NET_REQUIRE_IRQL("ConvertInterfaceAliasToLuid", PASSIVE_LEVEL);
  if (InterfaceAlias == nullptr || InterfaceLuid == nullptr) return STATUS_INVALID_PARAMETER;
  char name[IF_NAMESIZE];
  size_t n = 0;
  for (; InterfaceAlias[n] != 0; ++n) {
    // Linux names are short ASCII: anything else names no interface here.
    if (n + 1 >= IF_NAMESIZE || InterfaceAlias[n] > 0x7e || InterfaceAlias[n] < 0x20) {
      return STATUS_NOT_FOUND;
    }
    name[n] = static_cast<char>(InterfaceAlias[n]);
  }
  name[n] = '\0';
  if (n == 0) return STATUS_NOT_FOUND;
  ULONG index = ::if_nametoindex(name);
  if (index == 0) return STATUS_NOT_FOUND;
  return luid_of(index, InterfaceLuid);
}

}  // extern "C"
