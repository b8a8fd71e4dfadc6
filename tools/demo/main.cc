// SPDX-License-Identifier: Apache-2.0
// softndk-demo - lists adapters, then walks every NDK object kind on "lo".
//
// Uses only the public API (ndkpi.h, softndk.h, softndk.hpp). Each step
// prints its NTSTATUS; the exit code is 0 when every step succeeded.
#include <arpa/inet.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "softndk/softndk.hpp"

namespace {

int g_failures = 0;

NTSTATUS step(const char* what, NTSTATUS s, NTSTATUS want = STATUS_SUCCESS) {
  bool ok = s == want;
  if (!ok) ++g_failures;
  std::printf("  %-44s %s%s\n", what, softndk::status_name(s).c_str(),
              ok ? "" : "  <-- unexpected");
  return s;
}

std::string addr_text(const sockaddr_storage& a) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (a.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, buf, sizeof buf);
  else if (a.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, buf, sizeof buf);
  return buf;
}

void list_adapters() {
  std::printf("Adapters:\n");
  ULONG n = 0;
  SoftNdkEnumerateAdapters(nullptr, &n);
  std::vector<SOFTNDK_ADAPTER_DESC> d(n);
  if (step("SoftNdkEnumerateAdapters", SoftNdkEnumerateAdapters(d.data(), &n)) != STATUS_SUCCESS)
    return;
  for (ULONG i = 0; i < n; ++i) {
    std::printf("    %-12s ifindex %-3u mtu %-6u %-6s", d[i].IfName, d[i].IfIndex, d[i].Mtu,
                d[i].PortState == SoftNdkPortStateActive ? "ACTIVE" : "DOWN");
    for (ULONG k = 0; k < d[i].AddressCount; ++k)
      std::printf(" %s", addr_text(d[i].Addresses[k]).c_str());
    std::printf("\n");
  }
}

template <typename T, typename F>
T* create(const char* what, F&& f) {
  T* o = nullptr;
  step(what, softndk::create_and_wait<T>(f, &o));
  return o;
}

template <typename T>
void close(const char* what, T* o) {
  if (o != nullptr) step(what, softndk::close_and_wait(o));
}

void walk_objects(const char* name) {
  std::printf("\nObjects on %s:\n", name);
  softndk::Adapter a;
  if (step("SoftNdkOpenAdapter", a.open(name)) != STATUS_SUCCESS) return;
  NDK_ADAPTER* ad = a.get();
  NDK_ADAPTER_INFO info{};
  if (step("NdkQueryAdapterInfo", a.info(&info)) == STATUS_SUCCESS) {
    std::printf("    NDK %u.%u, iWARP, SQ/RQ depth %u, SGE %u/%u, inline %u, CQ depth %u\n",
                info.Version.Major, info.Version.Minor, info.MaxInitiatorQueueDepth,
                info.MaxInitiatorRequestSge, info.MaxReceiveRequestSge, info.MaxInlineDataSize,
                info.MaxCqDepth);
  }
  auto* cq = create<NDK_CQ>("NdkCreateCq (depth 256)", [&](auto cb, auto ctx, NDK_CQ** o) {
    return ad->Dispatch->NdkCreateCq(ad, 256, nullptr, nullptr, nullptr, cb, ctx, o);
  });
  auto* pd = create<NDK_PD>("NdkCreatePd", [&](auto cb, auto ctx, NDK_PD** o) {
    return ad->Dispatch->NdkCreatePd(ad, cb, ctx, o);
  });
  if (cq == nullptr || pd == nullptr) return;
  auto* mr = create<NDK_MR>("NdkCreateMr", [&](auto cb, auto ctx, NDK_MR** o) {
    return pd->Dispatch->NdkCreateMr(pd, FALSE, cb, ctx, o);
  });
  static char buffer[65536];
  MDL mdl{nullptr, buffer, sizeof buffer};
  if (mr != nullptr) {
    step("NdkRegisterMr (64 KiB, remote read/write)",
         softndk::request_and_wait([&](auto cb, auto ctx) {
           return mr->Dispatch->NdkRegisterMr(
               mr, &mdl, sizeof buffer,
               NDK_MR_FLAG_ALLOW_REMOTE_READ | NDK_MR_FLAG_ALLOW_REMOTE_WRITE, cb, ctx);
         }));
    std::printf("    token 0x%08x\n", mr->Dispatch->NdkGetRemoteTokenFromMr(mr));
  }
  auto* frmr = create<NDK_MR>("NdkCreateMr (fast register)", [&](auto cb, auto ctx, NDK_MR** o) {
    return pd->Dispatch->NdkCreateMr(pd, TRUE, cb, ctx, o);
  });
  if (frmr != nullptr)
    step("NdkInitializeFastRegisterMr (16 pages)",
         softndk::request_and_wait([&](auto cb, auto ctx) {
           return frmr->Dispatch->NdkInitializeFastRegisterMr(frmr, 16, TRUE, cb, ctx);
         }));
  auto* mw = create<NDK_MW>("NdkCreateMw", [&](auto cb, auto ctx, NDK_MW** o) {
    return pd->Dispatch->NdkCreateMw(pd, cb, ctx, o);
  });
  auto* srq = create<NDK_SRQ>("NdkCreateSrq (depth 64)", [&](auto cb, auto ctx, NDK_SRQ** o) {
    return pd->Dispatch->NdkCreateSrq(pd, 64, 4, 0, nullptr, nullptr, nullptr, cb, ctx, o);
  });
  auto* qp =
      create<NDK_QP>("NdkCreateQp (64/64, 4 SGE, 64 B inline)", [&](auto cb, auto ctx, NDK_QP** o) {
        return pd->Dispatch->NdkCreateQp(pd, cq, cq, nullptr, 64, 64, 4, 4, 64, cb, ctx, o);
      });
  auto* qps = create<NDK_QP>("NdkCreateQpWithSrq", [&](auto cb, auto ctx, NDK_QP** o) {
    return pd->Dispatch->NdkCreateQpWithSrq(pd, cq, cq, srq, nullptr, 64, 4, 64, cb, ctx, o);
  });
  if (qp != nullptr) {
    NDK_SGE sge{};
    sge.VirtualAddress = buffer;
    sge.Length = 4096;
    sge.MemoryRegionToken = mr ? mr->Dispatch->NdkGetLocalTokenFromMr(mr) : 0;
    step("NdkReceive (before connect)", qp->Dispatch->NdkReceive(qp, nullptr, &sge, 1));
    step("NdkSend (not connected)", qp->Dispatch->NdkSend(qp, nullptr, &sge, 1, 0),
         STATUS_CONNECTION_INVALID);
    qp->Dispatch->NdkFlush(qp);
    NDK_RESULT r{};
    ULONG n = cq->Dispatch->NdkGetCqResults(cq, &r, 1);
    std::printf("  %-44s %u result(s), %s\n", "NdkFlush + NdkGetCqResults", n,
                n ? softndk::status_name(r.Status).c_str() : "-");
  }
  auto* conn =
      create<NDK_CONNECTOR>("NdkCreateConnector", [&](auto cb, auto ctx, NDK_CONNECTOR** o) {
        return ad->Dispatch->NdkCreateConnector(ad, cb, ctx, o);
      });
  auto* lis = create<NDK_LISTENER>("NdkCreateListener", [&](auto cb, auto ctx, NDK_LISTENER** o) {
    return ad->Dispatch->NdkCreateListener(
        ad, [](PVOID, NDK_CONNECTOR*) {}, nullptr, cb, ctx, o);
  });
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto* se = create<NDK_SHARED_ENDPOINT>(
      "NdkCreateSharedEndpoint (127.0.0.1:0)", [&](auto cb, auto ctx, NDK_SHARED_ENDPOINT** o) {
        return ad->Dispatch->NdkCreateSharedEndpoint(ad, reinterpret_cast<SOCKADDR*>(&local),
                                                     sizeof local, cb, ctx, o);
      });
  if (se != nullptr) {
    sockaddr_in got{};
    ULONG len = sizeof got;
    if (step("NdkGetLocalAddress",
             se->Dispatch->NdkGetLocalAddress(se, reinterpret_cast<SOCKADDR*>(&got), &len)) == 0)
      std::printf("    bound to 127.0.0.1:%u\n", ntohs(got.sin_port));
  }
  // Successors before antecedents: every close completes inline.
  close("NdkCloseSharedEndpoint", se);
  close("NdkCloseListener", lis);
  close("NdkCloseConnector", conn);
  close("NdkCloseQp (with SRQ)", qps);
  close("NdkCloseQp", qp);
  close("NdkCloseSrq", srq);
  close("NdkCloseMw", mw);
  if (mr != nullptr)
    step("NdkDeregisterMr", softndk::request_and_wait([&](auto cb, auto ctx) {
           return mr->Dispatch->NdkDeregisterMr(mr, cb, ctx);
         }));
  close("NdkCloseMr", mr);
  close("NdkCloseMr (fast register)", frmr);
  close("NdkClosePd", pd);
  close("NdkCloseCq", cq);
  SOFTNDK_COUNTERS c{};
  step("SoftNdkQueryAdapterCounters", SoftNdkQueryAdapterCounters(ad, &c));
  std::printf("    CQError %llu\n", static_cast<unsigned long long>(c.CQError));
  a.close();
  std::printf("  %-44s done\n", "SoftNdkCloseAdapter");
}

}  // namespace

int main(int argc, char** argv) {
  const char* name = argc > 1 ? argv[1] : "lo";
  std::printf("softndk demo (NDKPI %u.%u over software iWARP)\n\n", NDK_VERSION_MAJOR,
              NDK_VERSION_MINOR);
  list_adapters();
  walk_objects(name);
  std::printf("\n%s\n", g_failures == 0 ? "all steps succeeded" : "some steps failed");
  return g_failures == 0 ? 0 : 1;
}
