// SPDX-License-Identifier: Apache-2.0
// qp_idle_memory.cc - memory per idle connected QP (a benchmark, not a
// test). Opens `pairs` connected QP pairs on 127.0.0.1 through the NDK C
// ABI, with the tools' default depths (ndkapp/include/ndkapp/session.h: receive 64,
// initiator 128, one SGE each, no inline data), lets them sit idle, and
// reports per connected QP (each pair is two QPs, each with its own
// socket):
//   heap    growth of malloc'ed bytes in use (mallinfo2, all arenas);
//   socket  kernel buffer memory charged to the sockets (SO_MEMINFO, what
//           `ss -m` shows as skmem: receive + send queue + forward alloc +
//           option memory), summed over our sockets;
//   slab    growth of the kernel's TCP socket objects (/proc/slabinfo TCP +
//           sock_inode_cache; system-wide, so only indicative on a busy host);
//   rss     growth of VmRSS (heap pages touched, stacks, CQ rings...).
// The PD, the two CQs and the listener exist before the baseline: they are
// shared by every connection, not per-QP cost.
//
//   qp_idle_memory [pairs=1000] [receive_depth=64] [initiator_depth=128]
#include <linux/sock_diag.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cstdlib>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "abi_util.h"

using namespace connector_test;

namespace {

struct SockMem {
  long rmem = 0, wmem_queued = 0, fwd = 0, optmem = 0, sockets = 0;
  long total() const { return rmem + wmem_queued + fwd + optmem; }
};

// Every socket of this process once (the data path holds a duplicate
// descriptor of each connection's socket).
SockMem socket_memory() {
  SockMem m;
  std::set<ino_t> seen;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      int fd = std::atoi(e->d_name);
      struct stat st {};
      if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) || !seen.insert(st.st_ino).second)
        continue;
      uint32_t v[SK_MEMINFO_VARS] = {};
      socklen_t len = sizeof v;
      if (::getsockopt(fd, SOL_SOCKET, SO_MEMINFO, v, &len) != 0) continue;
      m.rmem += v[SK_MEMINFO_RMEM_ALLOC];
      m.wmem_queued += v[SK_MEMINFO_WMEM_QUEUED];
      m.fwd += v[SK_MEMINFO_FWD_ALLOC];
      m.optmem += v[SK_MEMINFO_OPTMEM];
      ++m.sockets;
    }
    ::closedir(d);
  }
  return m;
}

// Bytes of the kernel's TCP socket objects (active objects x object size).
long slab_bytes() {
  long total = 0;
  if (FILE* f = std::fopen("/proc/slabinfo", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
      char name[64];
      long active = 0, objs = 0, size = 0;
      if (std::sscanf(line, "%63s %ld %ld %ld", name, &active, &objs, &size) != 4) continue;
      std::string n(name);
      if (n == "TCP" || n == "sock_inode_cache") total += active * size;
    }
    std::fclose(f);
  }
  return total;
}

[[noreturn]] void die(const char* what, NTSTATUS st) {
  std::fprintf(stderr, "%s: 0x%08x\n", what, static_cast<unsigned>(st));
  std::exit(1);
}

struct Pair {
  NDK_QP *cqp = nullptr, *sqp = nullptr;
  NDK_CONNECTOR *cc = nullptr, *sc = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  const int pairs = argc > 1 ? std::atoi(argv[1]) : 1000;
  const ULONG rq = argc > 2 ? static_cast<ULONG>(std::atoi(argv[2])) : 64;
  const ULONG sq = argc > 3 ? static_cast<ULONG>(std::atoi(argv[3])) : 128;
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);

  SOFTNDK_OPEN_PARAMETERS p{};
  p.Size = sizeof p;
  p.EngineThreads = 2;
  NDK_ADAPTER* a = nullptr;
  NTSTATUS st = SoftNdkOpenAdapter("lo", kVersion, &p, &a);
  if (st != STATUS_SUCCESS) die("SoftNdkOpenAdapter", st);
  auto* d = a->Dispatch;
  NDK_PD* pd = nullptr;
  NDK_CQ *ccq = nullptr, *scq = nullptr;
  if ((st = d->NdkCreatePd(a, nullptr, nullptr, &pd)) != STATUS_SUCCESS) die("NdkCreatePd", st);
  for (NDK_CQ** cq : {&ccq, &scq})
    if ((st = d->NdkCreateCq(a, 65536, nullptr, nullptr, nullptr, nullptr, nullptr, cq)) !=
        STATUS_SUCCESS)
      die("NdkCreateCq", st);
  Incoming in;
  NDK_LISTENER* l = nullptr;
  if ((st = d->NdkCreateListener(a, &Incoming::cb, &in, nullptr, nullptr, &l)) != STATUS_SUCCESS)
    die("NdkCreateListener", st);
  auto any = v4("127.0.0.1", 0);
  if ((st = l->Dispatch->NdkListen(l, sa(any), sizeof any, nullptr, nullptr)) != STATUS_SUCCESS)
    die("NdkListen", st);
  sockaddr_in dst{};
  ULONG len = sizeof dst;
  l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<SOCKADDR*>(&dst), &len);

  auto connect_pair = [&](Pair& x) {
    NTSTATUS s;
    if ((s = pd->Dispatch->NdkCreateQp(pd, ccq, ccq, &x, rq, sq, 1, 1, 0, nullptr, nullptr,
                                       &x.cqp)) != STATUS_SUCCESS ||
        (s = pd->Dispatch->NdkCreateQp(pd, scq, scq, &x, rq, sq, 1, 1, 0, nullptr, nullptr,
                                       &x.sqp)) != STATUS_SUCCESS)
      die("NdkCreateQp", s);
    if ((s = d->NdkCreateConnector(a, nullptr, nullptr, &x.cc)) != STATUS_SUCCESS)
      die("NdkCreateConnector", s);
    auto src = v4("127.0.0.1", 0);
    Req cr, ar, cc;
    s = x.cc->Dispatch->NdkConnect(x.cc, x.cqp, sa(src), sizeof src, sa(dst), sizeof dst, 4, 4,
                                   nullptr, 0, &Req::cb, &cr);
    if (s != STATUS_PENDING) die("NdkConnect", s);
    x.sc = in.next(10s);
    if (x.sc == nullptr) die("connect event", STATUS_IO_TIMEOUT);
    NTSTATUS as =
        x.sc->Dispatch->NdkAccept(x.sc, x.sqp, 4, 4, nullptr, 0, nullptr, nullptr, &Req::cb, &ar);
    if ((s = cr.wait(STATUS_PENDING)) != STATUS_SUCCESS) die("NdkConnect completion", s);
    s = cc.wait(x.cc->Dispatch->NdkCompleteConnect(x.cc, nullptr, nullptr, &Req::cb, &cc));
    if (s != STATUS_SUCCESS) die("NdkCompleteConnect", s);
    if ((s = ar.wait(as)) != STATUS_SUCCESS) die("NdkAccept", s);
  };

  // Warm-up pair: one-time allocations are not per-QP cost.
  Pair warm;
  connect_pair(warm);
  std::this_thread::sleep_for(200ms);
  const long heap0 = heap_bytes(), rss0 = rss_kib(), slab0 = slab_bytes();
  const SockMem sock0 = socket_memory();

  std::vector<Pair> ps(pairs);
  auto t0 = std::chrono::steady_clock::now();
  for (auto& x : ps) connect_pair(x);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::this_thread::sleep_for(500ms);  // idle: nothing in flight
  const long heap1 = heap_bytes(), rss1 = rss_kib(), slab1 = slab_bytes();
  const SockMem sock1 = socket_memory();

  const double qps = 2.0 * pairs;
  const double heap = double(heap1 - heap0) / qps;
  const double sock = double(sock1.total() - sock0.total()) / qps;
  const double slab = double(slab1 - slab0) / qps;
  const double rss = double(rss1 - rss0) * 1024.0 / qps;
  std::printf("%d connected QP pairs (receive depth %lu, initiator depth %lu), set up in %.2f s\n",
              pairs, static_cast<unsigned long>(rq), static_cast<unsigned long>(sq), secs);
  std::printf(
      "per connected QP: heap %.0f B, socket buffers %.0f B (rmem %.0f, wqueued %.0f, "
      "fwd %.0f, opt %.0f; %ld sockets), kernel socket objects %.0f B (slab, "
      "system-wide), total %.0f B = %.1f KiB; RSS %.0f B\n",
      heap, sock, double(sock1.rmem - sock0.rmem) / qps,
      double(sock1.wmem_queued - sock0.wmem_queued) / qps, double(sock1.fwd - sock0.fwd) / qps,
      double(sock1.optmem - sock0.optmem) / qps, sock1.sockets - sock0.sockets, slab,
      heap + sock + slab, (heap + sock + slab) / 1024.0, rss);
  SoftNdkCloseAdapter(a);  // closes whatever is still open
  return 0;
}
