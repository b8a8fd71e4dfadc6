// SPDX-License-Identifier: Apache-2.0
// setup_latency.cc - connection set-up time on 127.0.0.1 through the NDK C
// ABI, with and without the silent-peer wake-up (issue 32; a benchmark, not
// a test). One iteration: QPs and connector, NdkConnect / NdkAccept /
// NdkCompleteConnect, a 64-byte Send each way (so the first message and its
// answer are in), graceful disconnect, close. Two client adapters are
// opened in one process: "off" with SOFTNDK_MPA_HOLDOFF_MS=0 in the
// environment at open (softndk before issue 32: no wake-up), "default" with
// the library's defaults. Their blocks alternate, and the report is the
// median per-iteration time of each and their ratio.
//
//   setup_latency [iterations per block=1] [blocks per side=2000]
// Set SOFTNDK_SAMEHOST=off to measure loopback TCP instead of the same-host
// fast path.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "abi_util.h"

using namespace connector_test;

namespace {

[[noreturn]] void die(const char* what, NTSTATUS st) {
  std::fprintf(stderr, "setup_latency: %s: 0x%08x\n", what, static_cast<unsigned>(st));
  std::exit(1);
}

struct Side {
  NDK_ADAPTER* a = nullptr;
  NDK_PD* pd = nullptr;
  NDK_CQ* cq = nullptr;
  NDK_MR* mr = nullptr;
  uint32_t token = 0;
  std::vector<uint8_t> mem = std::vector<uint8_t>(4096);

  void open(bool wake_off) {
    if (wake_off)
      setenv("SOFTNDK_MPA_HOLDOFF_MS", "0", 1);
    else
      unsetenv("SOFTNDK_MPA_HOLDOFF_MS");
    SOFTNDK_OPEN_PARAMETERS p{};
    p.Size = sizeof p;
    NTSTATUS st = SoftNdkOpenAdapter("lo", kVersion, &p, &a);
    if (st != STATUS_SUCCESS) die("SoftNdkOpenAdapter", st);
    unsetenv("SOFTNDK_MPA_HOLDOFF_MS");
    if ((st = a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd)) != STATUS_SUCCESS)
      die("NdkCreatePd", st);
    if ((st = a->Dispatch->NdkCreateCq(a, 256, nullptr, nullptr, nullptr, nullptr, nullptr, &cq)) !=
        STATUS_SUCCESS)
      die("NdkCreateCq", st);
    if ((st = pd->Dispatch->NdkCreateMr(pd, FALSE, nullptr, nullptr, &mr)) != STATUS_SUCCESS)
      die("NdkCreateMr", st);
    MDL mdl{};
    mdl.VirtualAddress = mem.data();
    mdl.ByteCount = static_cast<ULONG>(mem.size());
    Req r;
    st = r.wait(mr->Dispatch->NdkRegisterMr(mr, &mdl, mem.size(), NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
                                            &Req::cb, &r));
    if (st != STATUS_SUCCESS) die("NdkRegisterMr", st);
    token = mr->Dispatch->NdkGetLocalTokenFromMr(mr);
  }
  NDK_SGE sge() {
    NDK_SGE s{};
    s.VirtualAddress = mem.data();
    s.Length = 64;
    s.MemoryRegionToken = token;
    return s;
  }
  // Waits for one completion (bounded).
  void reap(const char* what) {
    NDK_RESULT r{};
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (cq->Dispatch->NdkGetCqResults(cq, &r, 1) == 0)
      if (std::chrono::steady_clock::now() > deadline) die(what, STATUS_IO_TIMEOUT);
    if (r.Status != STATUS_SUCCESS) die(what, r.Status);
  }
};

// One connection's whole life; returns its duration in microseconds.
double iteration(Side& c, Side& s, NDK_LISTENER* /*l*/, Incoming& in, const sockaddr_in& dst) {
  auto t0 = std::chrono::steady_clock::now();
  NDK_QP *cqp = nullptr, *sqp = nullptr;
  NDK_CONNECTOR* cc = nullptr;
  NTSTATUS st;
  if ((st = c.pd->Dispatch->NdkCreateQp(c.pd, c.cq, c.cq, nullptr, 4, 4, 1, 1, 0, nullptr, nullptr,
                                        &cqp)) != STATUS_SUCCESS ||
      (st = s.pd->Dispatch->NdkCreateQp(s.pd, s.cq, s.cq, nullptr, 4, 4, 1, 1, 0, nullptr, nullptr,
                                        &sqp)) != STATUS_SUCCESS)
    die("NdkCreateQp", st);
  if ((st = c.a->Dispatch->NdkCreateConnector(c.a, nullptr, nullptr, &cc)) != STATUS_SUCCESS)
    die("NdkCreateConnector", st);
  auto src = v4("127.0.0.1", 0);
  Req cr, ar, done;
  st = cc->Dispatch->NdkConnect(cc, cqp, sa(src), sizeof src, sa(dst), sizeof dst, 1, 1, nullptr, 0,
                                &Req::cb, &cr);
  if (st != STATUS_PENDING) die("NdkConnect", st);
  NDK_CONNECTOR* sc = in.next(10s);
  if (sc == nullptr) die("connect event", STATUS_IO_TIMEOUT);
  NDK_SGE rs = s.sge();
  if ((st = sqp->Dispatch->NdkReceive(sqp, nullptr, &rs, 1)) != STATUS_SUCCESS)
    die("NdkReceive", st);
  NTSTATUS as = sc->Dispatch->NdkAccept(sc, sqp, 1, 1, nullptr, 0, nullptr, nullptr, &Req::cb, &ar);
  if ((st = cr.wait(STATUS_PENDING)) != STATUS_SUCCESS) die("NdkConnect completion", st);
  NDK_SGE crs = c.sge();
  if ((st = cqp->Dispatch->NdkReceive(cqp, nullptr, &crs, 1)) != STATUS_SUCCESS)
    die("NdkReceive", st);
  st = done.wait(cc->Dispatch->NdkCompleteConnect(cc, nullptr, nullptr, &Req::cb, &done));
  if (st != STATUS_SUCCESS) die("NdkCompleteConnect", st);
  if ((st = ar.wait(as)) != STATUS_SUCCESS) die("NdkAccept", st);
  // The first message and its answer.
  NDK_SGE ss = c.sge();
  if ((st = cqp->Dispatch->NdkSend(cqp, nullptr, &ss, 1, 0)) != STATUS_SUCCESS) die("NdkSend", st);
  c.reap("client Send");
  s.reap("server receive");
  NDK_SGE as2 = s.sge();
  if ((st = sqp->Dispatch->NdkSend(sqp, nullptr, &as2, 1, 0)) != STATUS_SUCCESS)
    die("NdkSend back", st);
  s.reap("server Send");
  c.reap("client receive");
  // Both ends disconnect (each waits for the other's FIN).
  Req dc, ds;
  NTSTATUS sd = sc->Dispatch->NdkDisconnect(sc, &Req::cb, &ds);
  st = dc.wait(cc->Dispatch->NdkDisconnect(cc, &Req::cb, &dc));
  if (st != STATUS_SUCCESS) die("NdkDisconnect", st);
  if ((st = ds.wait(sd)) != STATUS_SUCCESS) die("NdkDisconnect (server)", st);
  for (void* o : {static_cast<void*>(cc), static_cast<void*>(sc), static_cast<void*>(cqp),
                  static_cast<void*>(sqp)})
    if ((st = close_object(o)) != STATUS_SUCCESS) die("close", st);
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int per_block = argc > 1 ? std::atoi(argv[1]) : 1;
  const int blocks = argc > 2 ? std::atoi(argv[2]) : 2000;
  Side server, off, dflt;
  server.open(false);
  off.open(true);
  dflt.open(false);
  Incoming in;
  uint16_t port = 0;
  NDK_LISTENER* l = listen_on(server.a, in, &port);
  if (l == nullptr) die("listen", STATUS_INSUFFICIENT_RESOURCES);
  const auto dst = v4("127.0.0.1", port);
  // Warm-up: first-use allocations are no one's set-up time.
  for (int i = 0; i < 5; ++i) {
    iteration(off, server, l, in, dst);
    iteration(dflt, server, l, in, dst);
  }
  std::vector<double> t_off, t_def;
  // A B B A ...: neither side always goes first (the previous connection's
  // teardown still runs on the reactors when the next one starts).
  for (int b = 0; b < blocks; ++b) {
    for (int k = 0; k < 2; ++k) {
      const bool def_now = (k == 1) != (b % 2 == 1);
      for (int i = 0; i < per_block; ++i) {
        if (def_now)
          t_def.push_back(iteration(dflt, server, l, in, dst));
        else
          t_off.push_back(iteration(off, server, l, in, dst));
      }
    }
  }
  const double m_off = median(t_off), m_def = median(t_def);
  const char* sh = std::getenv("SOFTNDK_SAMEHOST");
  std::printf(
      "set-up + first Send each way + disconnect on 127.0.0.1 (SOFTNDK_SAMEHOST=%s), %d x %d "
      "alternating blocks:\n  wake-up off (SOFTNDK_MPA_HOLDOFF_MS=0): median %.1f us\n  "
      "defaults:                             median %.1f us\n  ratio default/off: %.3f\n",
      sh ? sh : "(unset)", blocks, per_block, m_off, m_def, m_def / m_off);
  close_object(l);
  for (Side* s : {&server, &off, &dflt}) {
    close_object(s->mr);
    close_object(s->cq);
    close_object(s->pd);
    SoftNdkCloseAdapter(s->a);
  }
  return 0;
}
