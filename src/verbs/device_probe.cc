// SPDX-License-Identifier: Apache-2.0
// verbs/device_probe.cc - see device_probe.h.
#include "verbs/device_probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <rdma/rdma_cma.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace softndk::verbs {

namespace {

std::string addr_text(const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof buf);
  else if (sa->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, buf, sizeof buf);
  return buf;
}

bool same_addr(const sockaddr* a, const sockaddr_storage& b) {
  if (a->sa_family != b.ss_family) return false;
  if (a->sa_family == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(&b)->sin_addr.s_addr;
  return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                     &reinterpret_cast<const sockaddr_in6*>(&b)->sin6_addr, 16) == 0;
}

// The address to bind and the interface that has it.
bool resolve(const std::string& what, sockaddr_storage* ss, std::string* ifname) {
  std::memset(ss, 0, sizeof *ss);
  bool literal = false;
  auto* in4 = reinterpret_cast<sockaddr_in*>(ss);
  auto* in6 = reinterpret_cast<sockaddr_in6*>(ss);
  if (inet_pton(AF_INET, what.c_str(), &in4->sin_addr) == 1) {
    in4->sin_family = AF_INET;
    literal = true;
  } else if (inet_pton(AF_INET6, what.c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    literal = true;
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return literal;
  bool found = literal;
  for (int pass = 0; pass < 2 && !(found && !ifname->empty()); ++pass) {
    const int fam = pass == 0 ? AF_INET : AF_INET6;
    for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != fam) continue;
      if (literal) {
        if (same_addr(i->ifa_addr, *ss)) {
          *ifname = i->ifa_name;
          break;
        }
      } else if (what == i->ifa_name) {
        std::memcpy(ss, i->ifa_addr, fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
        *ifname = i->ifa_name;
        found = true;
        break;
      }
    }
  }
  freeifaddrs(list);
  return found;
}

std::string err(int e) {
  return std::string(std::strerror(e)) + " (errno " + std::to_string(e) + ")";
}

// "siw0" -> "siw", "mlx5_0" -> "mlx5"; the kernel driver's name where
// sysfs links one (hardware: "mlx5_core", "irdma", "cxgb4").
std::string driver_of(const std::string& ibdev) {
  char link[256] = {};
  std::string path = "/sys/class/infiniband/" + ibdev + "/device/driver";
  ssize_t n = readlink(path.c_str(), link, sizeof link - 1);
  if (n > 0) {
    std::string s(link, static_cast<size_t>(n));
    return s.substr(s.rfind('/') + 1);
  }
  std::string d = ibdev;
  while (!d.empty() && (isdigit(static_cast<unsigned char>(d.back())) || d.back() == '_'))
    d.pop_back();
  return d;
}

}  // namespace

ProbeResult probe_device(const std::string& name_or_address) {
  ProbeResult r;
  sockaddr_storage ss{};
  if (!resolve(name_or_address, &ss, &r.ifname)) {
    r.status = STATUS_NO_SUCH_DEVICE;
    r.error = "no interface or address " + name_or_address;
    return r;
  }
  r.address = addr_text(reinterpret_cast<sockaddr*>(&ss));

  rdma_event_channel* ch = rdma_create_event_channel();
  if (ch == nullptr) {
    r.status = STATUS_NOT_SUPPORTED;
    r.error = "rdma_create_event_channel: " + err(errno) + " (no rdma_cm: rdma_ucm not loaded?)";
    return r;
  }
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(ch, &id, nullptr, RDMA_PS_TCP) != 0) {
    r.status = STATUS_NOT_SUPPORTED;
    r.error = "rdma_create_id: " + err(errno);
    rdma_destroy_event_channel(ch);
    return r;
  }
  if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&ss)) != 0 || id->verbs == nullptr) {
    r.status = STATUS_NO_SUCH_DEVICE;
    r.error = "no RDMA device serves " + r.address + " (rdma_bind_addr: " +
              (id->verbs == nullptr && errno == 0 ? std::string("no device") : err(errno)) + ")";
    rdma_destroy_id(id);
    rdma_destroy_event_channel(ch);
    return r;
  }
  ibv_context* ctx = id->verbs;
  r.port_num = id->port_num;
  r.device.probed = true;
  r.device.present = true;
  r.device.name = ibv_get_device_name(ctx->device);
  r.device.driver = driver_of(r.device.name);
  r.facts.name = r.device.name;
  r.facts.driver = r.device.driver;
  auto step = [&](const char* what, bool ok, std::string detail) {
    r.steps.push_back({what, ok, std::move(detail)});
    return ok;
  };

  step("query_device_ex", ibv_query_device_ex(ctx, nullptr, &r.attr) == 0, "");
  const bool port_ok = ibv_query_port(ctx, r.port_num, &r.port) == 0;
  step("query_port", port_ok,
       "port " + std::to_string(r.port_num) + " " + ibv_port_state_str(r.port.state));
  r.facts.transport = transport_of(ctx->device->transport_type, r.port.link_layer);

  ibv_pd* pd = ibv_alloc_pd(ctx);
  step("alloc_pd", pd != nullptr, pd ? "" : err(errno));
  ibv_comp_channel* cc = ibv_create_comp_channel(ctx);
  bool nb = false;
  if (cc != nullptr) {
    int fl = fcntl(cc->fd, F_GETFL);
    nb = fl >= 0 && fcntl(cc->fd, F_SETFL, fl | O_NONBLOCK) == 0;
  }
  step("comp_channel_nonblocking", cc != nullptr && nb, cc ? "" : err(errno));
  ibv_cq* cq = ibv_create_cq(ctx, 16, nullptr, cc, 0);
  step("create_cq", cq != nullptr, cq ? "" : err(errno));
  if (cq != nullptr) {
    step("req_notify_cq", ibv_req_notify_cq(cq, 0) == 0, "");
    int rv = ibv_resize_cq(cq, 64);
    r.facts.cq_resize = rv == 0;
    step("resize_cq", rv == 0, rv == 0 ? "" : err(rv > 0 ? rv : errno));
  }
  if (pd != nullptr && cq != nullptr) {
    // The largest inline size a QP is created with: devices refuse a
    // max_inline_data above theirs (and may round a smaller one up), so
    // halve from 1024 until one is accepted, then bisect up to the first
    // size refused.
    auto try_qp = [&](uint32_t want, uint32_t* got) {
      ibv_qp_init_attr qa{};
      qa.send_cq = cq;
      qa.recv_cq = cq;
      qa.qp_type = IBV_QPT_RC;
      qa.cap.max_send_wr = 4;
      qa.cap.max_recv_wr = 4;
      qa.cap.max_send_sge = 1;
      qa.cap.max_recv_sge = 1;
      qa.cap.max_inline_data = want;
      ibv_qp* qp = ibv_create_qp(pd, &qa);
      if (qp == nullptr) return false;
      *got = qa.cap.max_inline_data;
      ibv_destroy_qp(qp);
      return true;
    };
    uint32_t lo = 0, hi = 2048, got = 0;
    bool any = false;
    for (uint32_t want = 1024;; want /= 2) {
      if (try_qp(want, &got)) {
        lo = want;
        any = true;
        break;
      }
      hi = want;
      if (want == 0) break;
    }
    int qp_errno = errno;
    uint32_t best = got;
    while (any && hi - lo > 1) {
      uint32_t mid = lo + (hi - lo) / 2;
      uint32_t g = 0;
      if (try_qp(mid, &g)) {
        lo = mid;
        best = g;
      } else {
        hi = mid;
      }
    }
    r.facts.max_inline = any ? std::max(best, lo) : 0;
    step("create_qp_rc", any,
         any ? "max_inline_data " + std::to_string(r.facts.max_inline) : err(qp_errno));

    std::vector<uint8_t> buf(1 << 16);
    const unsigned acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
                         IBV_ACCESS_MW_BIND;
    ibv_mr* mr =
        ibv_reg_mr_iova(pd, buf.data(), buf.size(), reinterpret_cast<uint64_t>(buf.data()), acc);
    if (mr == nullptr) {
      // Devices without windows refuse IBV_ACCESS_MW_BIND on the MR.
      mr = ibv_reg_mr_iova(pd, buf.data(), buf.size(), reinterpret_cast<uint64_t>(buf.data()),
                           acc & ~static_cast<unsigned>(IBV_ACCESS_MW_BIND));
    }
    step("reg_mr_iova", mr != nullptr, mr ? "" : err(errno));
    if (mr != nullptr) ibv_dereg_mr(mr);

    errno = 0;
    ibv_mw* mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
    r.facts.mw_type2 = mw != nullptr;
    step("alloc_mw_type2", mw != nullptr, mw ? "" : err(errno ? errno : EOPNOTSUPP));
    if (mw != nullptr) ibv_dealloc_mw(mw);

    ibv_srq_init_attr sa{};
    sa.attr.max_wr = 16;
    sa.attr.max_sge = 1;
    ibv_srq* srq = ibv_create_srq(pd, &sa);
    step("create_srq", srq != nullptr, srq ? "" : err(errno));
    if (srq != nullptr) ibv_destroy_srq(srq);
  }
  if (cq != nullptr) ibv_destroy_cq(cq);
  if (cc != nullptr) ibv_destroy_comp_channel(cc);
  if (pd != nullptr) ibv_dealloc_pd(pd);
  rdma_destroy_id(id);
  rdma_destroy_event_channel(ch);
  return r;
}

}  // namespace softndk::verbs
