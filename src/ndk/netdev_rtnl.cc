// SPDX-License-Identifier: Apache-2.0
// netdev_rtnl.cc - rtnetlink decoding and dumps with libmnl.
//
// Every round-trip opens its own NETLINK_ROUTE socket: dumps are rare
// (adapter open, enumeration, monitor resync) and a private socket means no
// locking and no stray multicast traffic mixed into a reply.
#include "ndk/netdev_rtnl.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>

namespace softndk::ndk::rtnl {
namespace {

using MsgFn = std::function<void(const nlmsghdr*)>;

struct SocketCloser {
  void operator()(mnl_socket* s) const { mnl_socket_close(s); }
};
using Socket = std::unique_ptr<mnl_socket, SocketCloser>;

// Collects attributes by type; types beyond the table are ignored so a newer
// kernel's attributes cannot overrun it.
template <size_t N>
struct AttrTable {
  std::array<const nlattr*, N> at{};
  static int collect(const nlattr* attr, void* data) {
    auto* self = static_cast<AttrTable*>(data);
    const uint16_t type = mnl_attr_get_type(attr);
    if (type < N) self->at[type] = attr;
    return MNL_CB_OK;
  }
};

int on_message(const nlmsghdr* nlh, void* data) {
  (*static_cast<MsgFn*>(data))(nlh);
  return MNL_CB_OK;
}

// Sends one request and feeds every reply message to fn. A dump ends with
// NLMSG_DONE; a plain request ends with its single reply (or an error).
// Returns 0, or an errno (EINTR means "dump interrupted, retry").
int round_trip(uint16_t type, bool dump, const void* hdr, size_t hdr_len, const MsgFn& fn) {
  Socket nl(mnl_socket_open(NETLINK_ROUTE));
  if (!nl) return errno ? errno : EIO;
  if (mnl_socket_bind(nl.get(), 0, MNL_SOCKET_AUTOPID) < 0) return errno ? errno : EIO;
  std::vector<char> buf(kRecvBufferSize);
  nlmsghdr* req = mnl_nlmsg_put_header(buf.data());
  req->nlmsg_type = type;
  req->nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : 0);
  static std::atomic<uint32_t> seq_source{1};
  const uint32_t seq = seq_source.fetch_add(1, std::memory_order_relaxed);
  req->nlmsg_seq = seq;
  std::memcpy(mnl_nlmsg_put_extra_header(req, hdr_len), hdr, hdr_len);
  if (mnl_socket_sendto(nl.get(), req, req->nlmsg_len) < 0) return errno ? errno : EIO;
  const unsigned portid = mnl_socket_get_portid(nl.get());
  bool got_reply = false;
  MsgFn wrapper = [&](const nlmsghdr* nlh) {
    got_reply = true;
    fn(nlh);
  };
  for (;;) {
    const ssize_t n = mnl_socket_recvfrom(nl.get(), buf.data(), buf.size());
    if (n < 0) return errno ? errno : EIO;
    errno = 0;
    const int r = mnl_cb_run(buf.data(), static_cast<size_t>(n), seq, portid, on_message, &wrapper);
    if (r < 0) return errno ? errno : EIO;  // NLMSG_ERROR, DUMP_INTR (EINTR), bad seq
    if (r == MNL_CB_STOP) return 0;         // NLMSG_DONE
    if (!dump && got_reply) return 0;
  }
}

// Dumps are retried when the kernel flags them interrupted (the table
// changed while it was being walked); the caller's output is reset each time.
template <typename Reset>
bool dump_with_retry(uint16_t type, const void* hdr, size_t hdr_len, const MsgFn& fn, Reset reset) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    reset();
    const int err = round_trip(type, true, hdr, hdr_len, fn);
    if (err == 0) return true;
    if (err != EINTR) return false;
  }
  return false;
}

}  // namespace

bool link_is_up(uint32_t ifi_flags) { return (ifi_flags & IFF_UP) && (ifi_flags & IFF_RUNNING); }

std::optional<Link> parse_link(const nlmsghdr* nlh) {
  if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK) return std::nullopt;
  if (mnl_nlmsg_get_payload_len(nlh) < sizeof(ifinfomsg)) return std::nullopt;
  const auto* ifi = static_cast<const ifinfomsg*>(mnl_nlmsg_get_payload(nlh));
  AttrTable<IFLA_MAX + 1> tb;
  if (mnl_attr_parse(nlh, sizeof(*ifi), AttrTable<IFLA_MAX + 1>::collect, &tb) != MNL_CB_OK) {
    return std::nullopt;
  }
  Link link;
  link.ifindex = static_cast<uint32_t>(ifi->ifi_index);
  link.flags = ifi->ifi_flags;
  link.up = nlh->nlmsg_type == RTM_NEWLINK && link_is_up(ifi->ifi_flags);
  if (const nlattr* a = tb.at[IFLA_IFNAME]; a && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0) {
    link.name = mnl_attr_get_str(a);
  }
  if (const nlattr* a = tb.at[IFLA_MTU]; a && mnl_attr_validate(a, MNL_TYPE_U32) >= 0) {
    link.mtu = mnl_attr_get_u32(a);
  }
  return link;
}

std::optional<Addr> parse_addr(const nlmsghdr* nlh) {
  if (nlh->nlmsg_type != RTM_NEWADDR && nlh->nlmsg_type != RTM_DELADDR) return std::nullopt;
  if (mnl_nlmsg_get_payload_len(nlh) < sizeof(ifaddrmsg)) return std::nullopt;
  const auto* ifa = static_cast<const ifaddrmsg*>(mnl_nlmsg_get_payload(nlh));
  if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) return std::nullopt;
  AttrTable<IFA_MAX + 1> tb;
  if (mnl_attr_parse(nlh, sizeof(*ifa), AttrTable<IFA_MAX + 1>::collect, &tb) != MNL_CB_OK) {
    return std::nullopt;
  }
  // IFA_LOCAL is the local end on point-to-point links, where IFA_ADDRESS is
  // the peer; elsewhere only IFA_ADDRESS may be present (iproute2's rule).
  const nlattr* a = tb.at[IFA_LOCAL] ? tb.at[IFA_LOCAL] : tb.at[IFA_ADDRESS];
  if (!a) return std::nullopt;
  Addr out;
  out.ifindex = ifa->ifa_index;
  const void* payload = mnl_attr_get_payload(a);
  const size_t len = mnl_attr_get_payload_len(a);
  if (ifa->ifa_family == AF_INET) {
    if (len != sizeof(in_addr)) return std::nullopt;
    auto* sin = reinterpret_cast<sockaddr_in*>(&out.addr);
    sin->sin_family = AF_INET;
    std::memcpy(&sin->sin_addr, payload, len);
  } else {
    if (len != sizeof(in6_addr)) return std::nullopt;
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&out.addr);
    sin6->sin6_family = AF_INET6;
    std::memcpy(&sin6->sin6_addr, payload, len);
    // A link-local address is usable only together with its interface.
    if (ifa->ifa_scope == RT_SCOPE_LINK) sin6->sin6_scope_id = ifa->ifa_index;
  }
  return out;
}

bool dump_links(std::vector<Link>& out) {
  ifinfomsg hdr{};
  hdr.ifi_family = AF_UNSPEC;
  return dump_with_retry(
      RTM_GETLINK, &hdr, sizeof(hdr),
      [&](const nlmsghdr* nlh) {
        if (auto l = parse_link(nlh)) out.push_back(std::move(*l));
      },
      [&] { out.clear(); });
}

bool dump_addrs(std::vector<Addr>& out) {
  ifaddrmsg hdr{};
  hdr.ifa_family = AF_UNSPEC;
  return dump_with_retry(
      RTM_GETADDR, &hdr, sizeof(hdr),
      [&](const nlmsghdr* nlh) {
        if (auto a = parse_addr(nlh)) out.push_back(*a);
      },
      [&] { out.clear(); });
}

std::optional<Link> get_link(uint32_t ifindex) {
  if (ifindex == 0 || ifindex > INT32_MAX) return std::nullopt;  // 0 would mean "by name"
  ifinfomsg hdr{};
  hdr.ifi_family = AF_UNSPEC;
  hdr.ifi_index = static_cast<int>(ifindex);
  std::optional<Link> link;
  const int err = round_trip(RTM_GETLINK, false, &hdr, sizeof(hdr), [&](const nlmsghdr* nlh) {
    if (auto l = parse_link(nlh); l && l->ifindex == ifindex) link = std::move(l);
  });
  if (err != 0) return std::nullopt;
  return link;
}

bool same_address(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET) {
    return std::memcmp(&reinterpret_cast<const sockaddr_in&>(a).sin_addr,
                       &reinterpret_cast<const sockaddr_in&>(b).sin_addr, sizeof(in_addr)) == 0;
  }
  if (a.ss_family == AF_INET6) {
    return std::memcmp(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr,
                       &reinterpret_cast<const sockaddr_in6&>(b).sin6_addr, sizeof(in6_addr)) == 0;
  }
  return false;
}

uint32_t read_speed_mbps(const std::string& name) {
  // An interface name never contains '/', but it comes from the kernel or
  // the consumer; refuse anything that could walk out of /sys/class/net.
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") return 0;
  std::ifstream f("/sys/class/net/" + name + "/speed");
  long long speed = 0;
  // Reading fails with EINVAL for links that are down or have no speed.
  if (!(f >> speed) || speed <= 0 || speed > UINT32_MAX) return 0;
  return static_cast<uint32_t>(speed);
}

}  // namespace softndk::ndk::rtnl
