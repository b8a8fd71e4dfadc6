// SPDX-License-Identifier: Apache-2.0
// verbs/exercise_ndk_main.cc - softndk-verbs-ndk-exercise: fast register,
// memory windows, invalidation and SRQs through the NDK API on the verbs
// backend (group verbs, cases ndk_fr_rxe / ndk_fr_siw; docs/verbs.md).
// Unlike softndk-verbs-exercise (the mapping on raw verbs) this one is an
// NDK consumer: public headers only, two adapters of one process on one
// address (SOFTNDK_BACKEND=verbs), a server with an SRQ shared by two
// accepted QPs, a client with two connected QPs. One JSON line per step
// ({"op", "ok", "status", ...}); exit 0 only if every step held.
//
//   softndk-verbs-ndk-exercise ADDRESS PORT [--fr-register]
//
// --fr-register opens both adapters with SOFTNDK_OPEN_FLAG_FR_REGISTER
// (the degraded mode, for devices without type-2 windows).
#include <arpa/inet.h>
#include <execinfo.h>
#include <netinet/in.h>
#include <softndk/softndk.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <softndk/softndk.hpp>
#include <string>
#include <thread>
#include <vector>

#include "exercise_ndk_util.h"

using namespace std::chrono_literals;
using softndk::create_and_wait;
using softndk::Object;
using softndk::request_and_wait;

using namespace ndkx;  // NOLINT: the exercise's own plumbing

// A crash in the guest (no debugger there): the frames as module+offset,
// for addr2line on the host.
void on_crash(int sig) {
  const char msg[] = "softndk-verbs-ndk-exercise: crashed; frames:\n";
  (void)!write(2, msg, sizeof msg - 1);
  void* frames[64];
  int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

int main(int argc, char** argv) {
  signal(SIGSEGV, on_crash);
  signal(SIGABRT, on_crash);
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s ADDRESS PORT [--fr-register]\n", argv[0]);
    return 2;
  }
  const char* addr = argv[1];
  const int port = std::atoi(argv[2]);
  const bool degraded = argc > 3 && std::strcmp(argv[3], "--fr-register") == 0;
  const ULONG flags = degraded ? SOFTNDK_OPEN_FLAG_FR_REGISTER : 0;

  Side srv, cli;
  NTSTATUS st = open_side(&srv, addr, flags);
  if (st == STATUS_SUCCESS) st = open_side(&cli, addr, flags);
  NDK_ADAPTER_INFO info{};
  if (st == STATUS_SUCCESS) st = srv.ad.info(&info);
  step("open", st == STATUS_SUCCESS, st,
       "\"FRMRPageCount\": " + std::to_string(info.FRMRPageCount) + ", \"MaxWindowSize\": " +
           std::to_string(info.MaxWindowSize != 0 ? 1 : 0) + ", \"ReadLocalInvalidate\": " +
           std::to_string(
               (info.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED) != 0));
  if (st != STATUS_SUCCESS) return 1;
  NDK_PD* spd = srv.pd.get();
  NDK_PD* cpd = cli.pd.get();
  NDK_CQ* scq = srv.cq.get();
  NDK_CQ* ccq = cli.cq.get();

  // ---- SRQ shared by the server's two QPs -----------------------------------------
  Waiter w;
  Object<NDK_SRQ> srq;
  st = create_and_wait<NDK_SRQ>(
      [&](auto cb, auto ctx, auto o) {
        return spd->Dispatch->NdkCreateSrq(spd, 8, 1, 0, &on_srq_limit, &w, nullptr, cb, ctx, o);
      },
      srq.out());
  step("create_srq", st == STATUS_SUCCESS, st);
  if (st != STATUS_SUCCESS) return 1;
  std::vector<uint8_t> sbuf(64 * 1024), cbuf(64 * 1024);
  Object<NDK_MR> smr, cmr;
  MDL smdl{}, cmdl{};
  const ULONG all = NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                    NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK;
  st = register_mr(spd, sbuf, all, &smr, &smdl);
  if (st == STATUS_SUCCESS) st = register_mr(cpd, cbuf, all, &cmr, &cmdl);
  step("register_mr", st == STATUS_SUCCESS, st);
  if (st != STATUS_SUCCESS) return 1;
  {
    // No privileged token on a device: 0 (docs/verbs.md).
    UINT32 pt = 1;
    spd->Dispatch->NdkGetPrivilegedMemoryRegionToken(spd, &pt);
    step("privileged_token_is_zero", pt == 0, STATUS_SUCCESS, "\"token\": " + std::to_string(pt));
  }
  const UINT32 slk = smr->Dispatch->NdkGetLocalTokenFromMr(smr.get());
  const UINT32 clk = cmr->Dispatch->NdkGetLocalTokenFromMr(cmr.get());
  NDK_SRQ* sq = srq.get();
  // Eight 512-byte receives in sbuf[0..4 KiB).
  for (int i = 0; i < 8 && st == STATUS_SUCCESS; ++i) {
    NDK_SGE g = sge_of(sbuf.data() + i * 512, 512, slk);
    st = sq->Dispatch->NdkSrqReceive(sq, reinterpret_cast<PVOID>(uintptr_t(100 + i)), &g, 1);
  }
  if (st == STATUS_SUCCESS)
    st = request_and_wait(
        [&](auto cb, auto ctx) { return sq->Dispatch->NdkModifySrq(sq, 0, 6, cb, ctx); });
  step("srq_receive_and_arm", st == STATUS_SUCCESS, st);

  // ---- two connections ----------------------------------------------------------------
  Object<NDK_QP> sqp[2], cqp[2];
  Object<NDK_CONNECTOR> sconn[2], cconn[2];
  Object<NDK_LISTENER> lis;
  NDK_ADAPTER* sa = srv.ad.get();
  NDK_ADAPTER* ca = cli.ad.get();
  std::string where = "create_qp_with_srq";
  for (int i = 0; i < 2 && st == STATUS_SUCCESS; ++i) {
    where = "create_qp_with_srq";
    st = create_and_wait<NDK_QP>(
        [&](auto cb, auto ctx, auto o) {
          return spd->Dispatch->NdkCreateQpWithSrq(spd, scq, scq, sq, nullptr, 32, 2, 0, cb, ctx,
                                                   o);
        },
        sqp[i].out());
    if (st == STATUS_SUCCESS) where = "create_qp";
    if (st == STATUS_SUCCESS)
      st = create_and_wait<NDK_QP>(
          [&](auto cb, auto ctx, auto o) {
            return cpd->Dispatch->NdkCreateQp(cpd, ccq, ccq, nullptr, 8, 32, 2, 2, 0, cb, ctx, o);
          },
          cqp[i].out());
    if (st == STATUS_SUCCESS)
      st = create_and_wait<NDK_CONNECTOR>(
          [&](auto cb, auto ctx, auto o) {
            return ca->Dispatch->NdkCreateConnector(ca, cb, ctx, o);
          },
          cconn[i].out());
  }
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, addr, &sin.sin_addr);
  if (st == STATUS_SUCCESS) where = "listen";
  if (st == STATUS_SUCCESS)
    st = create_and_wait<NDK_LISTENER>(
        [&](auto cb, auto ctx, auto o) {
          return sa->Dispatch->NdkCreateListener(sa, &on_connect_event, &w, cb, ctx, o);
        },
        lis.out());
  NDK_LISTENER* l = lis.get();
  if (st == STATUS_SUCCESS)
    st = request_and_wait([&](auto cb, auto ctx) {
      return l->Dispatch->NdkListen(l, reinterpret_cast<SOCKADDR*>(&sin), sizeof sin, cb, ctx);
    });
  for (int i = 0; i < 2 && st == STATUS_SUCCESS; ++i) {
    softndk::Waiter cw, aw;
    NDK_CONNECTOR* cc = cconn[i].get();
    where = "connect";
    sockaddr_in any{};  // the source: any address, any port
    any.sin_family = AF_INET;
    st = cc->Dispatch->NdkConnect(cc, cqp[i].get(), reinterpret_cast<SOCKADDR*>(&any), sizeof any,
                                  reinterpret_cast<SOCKADDR*>(&sin), sizeof sin, 4, 4, nullptr, 0,
                                  &softndk::Waiter::request_cb, &cw);
    if (st != STATUS_PENDING) break;
    NDK_CONNECTOR* in = nullptr;
    for (int t = 0; t < 30000 && in == nullptr; ++t) {  // 30 s
      {
        std::lock_guard lk(w.mu);
        in = w.n > i ? w.incoming[i] : nullptr;
      }
      if (in == nullptr) std::this_thread::sleep_for(1ms);
    }
    if (in == nullptr) {
      st = STATUS_IO_TIMEOUT;
      break;
    }
    sconn[i].reset(in);
    where = "accept";
    st = in->Dispatch->NdkAccept(in, sqp[i].get(), 4, 4, nullptr, 0, nullptr, nullptr,
                                 &softndk::Waiter::request_cb, &aw);
    if (st != STATUS_PENDING) break;
    where = "connect_completion";
    if (!cw.wait(30s) || (st = cw.status()) != STATUS_SUCCESS) break;
    where = "complete_connect_and_accept";
    softndk::Waiter ccw;
    st = cc->Dispatch->NdkCompleteConnect(cc, nullptr, nullptr, &softndk::Waiter::request_cb, &ccw);
    if (st == STATUS_PENDING) st = ccw.wait(30s) ? ccw.status() : STATUS_IO_TIMEOUT;
    if (st == STATUS_SUCCESS) st = aw.wait(30s) ? aw.status() : STATUS_IO_TIMEOUT;
  }
  step("connect_two_qps_on_srq", st == STATUS_SUCCESS, st,
       st == STATUS_SUCCESS ? std::string() : "\"where\": \"" + where + "\"");
  // A failure may leave requests pending with waiters on this stack: end
  // the process here rather than tear down under them.
  if (st != STATUS_SUCCESS) std::_Exit(1);

  // ---- Sends into the SRQ from both QPs; the limit event -------------------------------
  NTSTATUS done = STATUS_PENDING;
  bool data_ok = true;
  int fired_after = 0;  // consumed receives when the notification came
  for (int i = 0; i < 4 && st == STATUS_SUCCESS; ++i) {
    fill(cbuf, 8192 + i * 256, 256, static_cast<uint8_t>(i + 1));
    NDK_SGE g = sge_of(cbuf.data() + 8192 + i * 256, 256, clk);
    NDK_QP* q = cqp[i % 2].get();
    st = run(ccq, q->Dispatch->NdkSend(q, nullptr, &g, 1, 0), &done);
    if (st == STATUS_SUCCESS && done != STATUS_SUCCESS) st = done;
    NDK_RESULT_EX r{};
    if (st == STATUS_SUCCESS && !next_result(scq, &r)) st = STATUS_IO_TIMEOUT;
    if (st == STATUS_SUCCESS) st = r.Status;
    if (st == STATUS_SUCCESS) {
      size_t slot = reinterpret_cast<uintptr_t>(r.RequestContext) - 100;
      data_ok = data_ok && r.BytesTransferred == 256 && slot < 8 &&
                same(sbuf, slot * 512, cbuf, 8192 + i * 256, 256);
    }
    // Armed at 6 of 8: NDK's rule fires once fewer than 6 are queued (the
    // third consumed); a device may count before it takes the receive
    // (then the fourth). Wait for it at each step (bounded) and record when.
    if (i >= 2 && fired_after == 0) {
      for (int t = 0; t < (i == 2 ? 3000 : 10000) && w.fired.load() == 0; ++t)
        std::this_thread::sleep_for(1ms);
      if (w.fired.load() > 0) fired_after = i + 1;
    }
  }
  step("srq_sends_from_two_qps", st == STATUS_SUCCESS && data_ok, st);
  step("srq_limit_event", w.fired.load() == 1, STATUS_SUCCESS,
       "\"fired\": " + std::to_string(w.fired.load()) +
           ", \"after_consumed\": " + std::to_string(fired_after));
  // ---- NdkModifySrq of the depth with two QPs on the SRQ ------------------------------
  // 4 receives are still on the device: 3 is below them. 24 resizes where
  // the device can (rxe; the QPs' CQs grow first), else STATUS_NOT_SUPPORTED.
  if (st == STATUS_SUCCESS) {
    auto modify = [&](ULONG depth) {
      return request_and_wait(
          [&](auto cb, auto ctx) { return sq->Dispatch->NdkModifySrq(sq, depth, 0, cb, ctx); });
    };
    NTSTATUS below = modify(3);
    st = modify(24);
    const bool resized = st == STATUS_SUCCESS;
    step("srq_resize", below == STATUS_INVALID_PARAMETER && (resized || st == STATUS_NOT_SUPPORTED),
         st, std::string("\"resized\": ") + (resized ? "true" : "false"));
    st = STATUS_SUCCESS;
    if (resized) {
      // 20 more fill the new depth (4 + 20 = 24); one more is refused.
      for (int i = 0; i < 20 && st == STATUS_SUCCESS; ++i) {
        NDK_SGE g = sge_of(sbuf.data() + 12288 + i * 512, 512, slk);
        st = sq->Dispatch->NdkSrqReceive(sq, reinterpret_cast<PVOID>(uintptr_t(200 + i)), &g, 1);
      }
      NDK_SGE g0 = sge_of(sbuf.data() + 12288, 512, slk);
      NTSTATUS full = sq->Dispatch->NdkSrqReceive(sq, nullptr, &g0, 1);
      step("srq_receives_to_new_depth",
           st == STATUS_SUCCESS && full == STATUS_INSUFFICIENT_RESOURCES,
           st != STATUS_SUCCESS ? st : full);
      // 20 Sends from one QP land in them (the 4 older receives first).
      for (int i = 0; i < 20 && st == STATUS_SUCCESS; ++i) {
        fill(cbuf, 24576 + i * 256, 256, static_cast<uint8_t>(0x60 + i));
        NDK_SGE g = sge_of(cbuf.data() + 24576 + i * 256, 256, clk);
        st = run(ccq, cqp[0]->Dispatch->NdkSend(cqp[0].get(), nullptr, &g, 1, 0), &done);
        if (st == STATUS_SUCCESS && done != STATUS_SUCCESS) st = done;
        NDK_RESULT_EX r{};
        if (st == STATUS_SUCCESS && !next_result(scq, &r)) st = STATUS_IO_TIMEOUT;
        if (st == STATUS_SUCCESS) st = r.Status;
        if (st == STATUS_SUCCESS) {
          const uintptr_t c = reinterpret_cast<uintptr_t>(r.RequestContext);
          const size_t at = c >= 200 ? 12288 + (c - 200) * 512 : (c - 100) * 512;
          data_ok = data_ok && r.BytesTransferred == 256 && (c >= 200 ? c < 220 : c >= 104) &&
                    same(sbuf, at, cbuf, 24576 + i * 256, 256);
        }
      }
      step("srq_sends_after_resize", st == STATUS_SUCCESS && data_ok, st);
    }
  }

  // Teardown, in the NDK's order, each close bounded and reported (a
  // close that never completes would leave its waiter's stack behind).
  auto timed_close = [](const char* what, auto& obj) {
    auto t0 = std::chrono::steady_clock::now();
    NTSTATUS c = obj.reset();
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    step(what, c == STATUS_SUCCESS, c, "\"ms\": " + std::to_string(ms));
    if (c != STATUS_SUCCESS) std::_Exit(1);
  };
  auto teardown = [&] {
    for (auto& c : cconn) timed_close("close_client_connector", c);
    for (auto& c : sconn) timed_close("close_server_connector", c);
    timed_close("close_listener", lis);  // after the connectors it delivered
    for (auto& q : cqp) timed_close("close_client_qp", q);
    for (auto& q : sqp) timed_close("close_server_qp", q);
    timed_close("close_srq", srq);
    timed_close("close_mrs", smr);
    timed_close("close_mrs", cmr);
  };

  // ---- fast register with a stable token ------------------------------------------------
  // The server's FR region: the second 32 KiB of a LAM over sbuf2.
  std::vector<uint8_t> sbuf2(64 * 1024 + 4096);
  uint8_t* base2 = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(sbuf2.data()) + 4095) &
                                              ~uintptr_t{4095});
  MDL lmdl{nullptr, base2, 64 * 1024};
  std::vector<uint8_t> lamb(sizeof(NDK_LOGICAL_ADDRESS_MAPPING) + 32 * sizeof(NDK_LOGICAL_ADDRESS));
  auto* lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lamb.data());
  ULONG lam_size = static_cast<ULONG>(lamb.size()), fbo = 0;
  st = request_and_wait([&](auto cb, auto ctx) {
    return sa->Dispatch->NdkBuildLAM(sa, &lmdl, 64 * 1024, cb, ctx, lam, &lam_size, &fbo);
  });
  Object<NDK_MR> fr;
  if (st == STATUS_SUCCESS)
    st = create_and_wait<NDK_MR>(
        [&](auto cb, auto ctx, auto o) {
          return spd->Dispatch->NdkCreateMr(spd, TRUE, cb, ctx, o);
        },
        fr.out());
  NDK_MR* frm = fr.get();
  if (st == STATUS_SUCCESS)
    st = request_and_wait([&](auto cb, auto ctx) {
      return frm->Dispatch->NdkInitializeFastRegisterMr(frm, 8, TRUE, cb, ctx);
    });
  const UINT32 t0 = st == STATUS_SUCCESS ? frm->Dispatch->NdkGetRemoteTokenFromMr(frm) : 0;
  step("initialize_fast_register_mr", st == STATUS_SUCCESS, st);
  if (st != STATUS_SUCCESS) {  // the documented refusal ends it here
    timed_close("close_fr_mr", fr);
    sa->Dispatch->NdkReleaseLAM(sa, lam);
    teardown();
    return g_all_ok ? 0 : 1;
  }
  NDK_QP* s0 = sqp[0].get();
  NDK_QP* c0 = cqp[0].get();
  NDK_QP* c1 = cqp[1].get();
  uint8_t* region = base2 + 32 * 1024;
  const ULONG kFrFlags = NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
  auto fast_register = [&]() {
    NTSTATUS d = STATUS_PENDING;
    NTSTATUS p = run(scq,
                     s0->Dispatch->NdkFastRegister(s0, nullptr, frm, 8, &lam->AdapterPageArray[8],
                                                   0, 8 * 4096, region, kFrFlags),
                     &d);
    return p != STATUS_SUCCESS ? p : d;
  };
  st = fast_register();
  const UINT32 t1 = frm->Dispatch->NdkGetRemoteTokenFromMr(frm);
  step("fast_register", st == STATUS_SUCCESS && (degraded || t1 == t0), st,
       "\"token_stable\": " + std::string(t1 == t0 ? "true" : "false"));
  // The peer uses the token: Write, then Read back, data verified.
  auto write_to = [&](NDK_QP* q, UINT32 token, size_t len, uint8_t seed, uint8_t* dst) {
    fill(cbuf, 16384, len, seed);
    NDK_SGE g = sge_of(cbuf.data() + 16384, static_cast<ULONG>(len), clk);
    NTSTATUS d = STATUS_PENDING;
    NTSTATUS p = run(
        ccq, q->Dispatch->NdkWrite(q, nullptr, &g, 1, reinterpret_cast<uintptr_t>(dst), token, 0),
        &d);
    return p != STATUS_SUCCESS ? p : d;
  };
  const UINT32 tok = degraded ? t1 : t0;
  st = write_to(c0, tok, 8192, 0x31, region + 100);
  step("write_through_fr_token",
       st == STATUS_SUCCESS && same(cbuf, 16384, sbuf2, region + 100 - sbuf2.data(), 8192), st);
  {
    NDK_SGE g = sge_of(cbuf.data() + 32768, 8192, clk);
    NTSTATUS d = STATUS_PENDING;
    st = run(ccq,
             c0->Dispatch->NdkRead(c0, nullptr, &g, 1, reinterpret_cast<uintptr_t>(region + 100),
                                   tok, 0),
             &d);
    if (st == STATUS_SUCCESS) st = d;
    step("read_through_fr_token", st == STATUS_SUCCESS && same(cbuf, 32768, cbuf, 16384, 8192), st);
  }
  // A probe through a token that should be dead: an RDMA Read, because
  // only a Read's completion waits for the target's answer on every
  // transport (an iWARP Write completes once sent; the target's refusal
  // comes as a Terminate afterwards).
  auto read_from = [&](NDK_QP* q, UINT32 token, uint8_t* src) {
    NDK_SGE g = sge_of(cbuf.data() + 49152, 512, clk);
    NTSTATUS d = STATUS_PENDING;
    NTSTATUS p = run(
        ccq, q->Dispatch->NdkRead(q, nullptr, &g, 1, reinterpret_cast<uintptr_t>(src), token, 0),
        &d);
    return p != STATUS_SUCCESS ? p : d;
  };
  // Local invalidate, then a new FastRegister: the same token again.
  auto invalidate = [&](NDK_OBJECT_HEADER* h) {
    NTSTATUS d = STATUS_PENDING;
    NTSTATUS p = run(scq, s0->Dispatch->NdkInvalidate(s0, nullptr, h, 0), &d);
    return p != STATUS_SUCCESS ? p : d;
  };
  st = invalidate(&frm->Header);
  step("local_invalidate", st == STATUS_SUCCESS, st);
  st = fast_register();
  const UINT32 t2 = frm->Dispatch->NdkGetRemoteTokenFromMr(frm);
  step("fast_register_again_same_token", st == STATUS_SUCCESS && (degraded || t2 == t0), st);
  st = write_to(c0, t2, 4096, 0x52, region);
  step("write_after_refastregister",
       st == STATUS_SUCCESS && same(cbuf, 16384, sbuf2, region - sbuf2.data(), 4096), st);
  if (!degraded) {
    // Zero-based (BaseVirtualAddress 0, FBO 0): the peer reads the region
    // at 100, the window bound with IBV_ACCESS_ZERO_BASED; then the region
    // at its own VA again.
    st = invalidate(&frm->Header);
    NTSTATUS d = STATUS_PENDING;
    NTSTATUS p = run(scq,
                     s0->Dispatch->NdkFastRegister(s0, nullptr, frm, 8, &lam->AdapterPageArray[8],
                                                   0, 8 * 4096, nullptr, kFrFlags),
                     &d);
    st = p != STATUS_SUCCESS ? p : d;
    step("fast_register_zero_based", st == STATUS_SUCCESS, st);
    NDK_SGE g = sge_of(cbuf.data() + 32768, 4096, clk);
    d = STATUS_PENDING;
    p = run(ccq, c0->Dispatch->NdkRead(c0, nullptr, &g, 1, 100, t0, 0), &d);
    st = p != STATUS_SUCCESS ? p : d;
    step("read_zero_based_at_100",
         st == STATUS_SUCCESS && same(cbuf, 32768, sbuf2, region + 100 - sbuf2.data(), 4096), st);
    st = invalidate(&frm->Header);
    if (st == STATUS_SUCCESS) st = fast_register();
    step("fast_register_after_zero_based", st == STATUS_SUCCESS, st);
  }

  // ---- Read with local invalidate into a fast-registered sink ------------------------
  if (!degraded) {
    // The client's sink: its own LAM and FR MR; the Read names the sink by
    // the FR token and invalidates it when the data is there (one completion).
    std::vector<uint8_t> cb2(16 * 1024 + 4096);
    uint8_t* cbase = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(cb2.data()) + 4095) &
                                                ~uintptr_t{4095});
    MDL cl_mdl{nullptr, cbase, 16 * 1024};
    std::vector<uint8_t> clb(sizeof(NDK_LOGICAL_ADDRESS_MAPPING) + 8 * sizeof(NDK_LOGICAL_ADDRESS));
    auto* clam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(clb.data());
    ULONG clam_size = static_cast<ULONG>(clb.size()), cfbo = 0;
    st = request_and_wait([&](auto cb, auto ctx) {
      return ca->Dispatch->NdkBuildLAM(ca, &cl_mdl, 16 * 1024, cb, ctx, clam, &clam_size, &cfbo);
    });
    Object<NDK_MR> sink;
    if (st == STATUS_SUCCESS)
      st = create_and_wait<NDK_MR>(
          [&](auto cb, auto ctx, auto o) {
            return cpd->Dispatch->NdkCreateMr(cpd, TRUE, cb, ctx, o);
          },
          sink.out());
    NDK_MR* sk = sink.get();
    if (st == STATUS_SUCCESS)
      st = request_and_wait([&](auto cb, auto ctx) {
        return sk->Dispatch->NdkInitializeFastRegisterMr(sk, 4, FALSE, cb, ctx);
      });
    auto sink_register = [&]() {
      NTSTATUS d = STATUS_PENDING;
      NTSTATUS p = run(ccq,
                       c0->Dispatch->NdkFastRegister(
                           c0, nullptr, sk, 4, clam->AdapterPageArray, 0, 4 * 4096, cbase,
                           NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_RDMA_READ_SINK),
                       &d);
      return p != STATUS_SUCCESS ? p : d;
    };
    if (st == STATUS_SUCCESS) st = sink_register();
    step("sink_fast_register", st == STATUS_SUCCESS, st);
    int completions = 0;
    if (st == STATUS_SUCCESS) {
      fill(sbuf2, region - sbuf2.data(), 8192, 0x5a);
      std::memset(cbase, 0, 8192);
      NDK_SGE g = sge_of(cbase, 8192, sk->Dispatch->NdkGetLocalTokenFromMr(sk));
      st = c0->Dispatch->NdkRead(c0, nullptr, &g, 1, reinterpret_cast<uintptr_t>(region), t2,
                                 NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE);
      NDK_RESULT_EX r{};
      if (st == STATUS_SUCCESS) st = next_result(ccq, &r) ? r.Status : STATUS_IO_TIMEOUT;
      if (st == STATUS_SUCCESS) completions = 1;
      // Exactly one completion for the Read + its local invalidate.
      std::this_thread::sleep_for(50ms);
      while (ccq->Dispatch->NdkGetCqResultsEx(ccq, &r, 1) == 1) ++completions;
    }
    const bool data = st == STATUS_SUCCESS && std::memcmp(cbase, region, 8192) == 0;
    step("read_with_local_invalidate", st == STATUS_SUCCESS && data && completions == 1, st,
         "\"completions\": " + std::to_string(completions));
    // The sink was invalidated: it fast-registers again with its same token
    // (a still-valid type-2 window refuses a bind with its own key on rxe).
    if (st == STATUS_SUCCESS) st = sink_register();
    step("sink_fast_register_after_read_invalidate", st == STATUS_SUCCESS, st);
    if (st == STATUS_SUCCESS) {
      NDK_OBJECT_HEADER* h = &sk->Header;
      NTSTATUS d = STATUS_PENDING;
      st = run(ccq, c0->Dispatch->NdkInvalidate(c0, nullptr, h, 0), &d);
      if (st == STATUS_SUCCESS) st = d;
    }
    sink.reset();
    ca->Dispatch->NdkReleaseLAM(ca, clam);
  }

  // ---- memory window over the registered MR ---------------------------------------------
  if (!degraded) {
    Object<NDK_MW> mw;
    st = create_and_wait<NDK_MW>(
        [&](auto cb, auto ctx, auto o) { return spd->Dispatch->NdkCreateMw(spd, cb, ctx, o); },
        mw.out());
    NDK_MW* m = mw.get();
    NTSTATUS d = STATUS_PENDING;
    if (st == STATUS_SUCCESS)
      st =
          run(scq,
              s0->Dispatch->NdkBind(s0, nullptr, smr.get(), m, sbuf.data() + 40960, 8192,
                                    NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
              &d);
    if (st == STATUS_SUCCESS) st = d;
    const UINT32 mt = st == STATUS_SUCCESS ? m->Dispatch->NdkGetRemoteTokenFromMw(m) : 0;
    step("bind_mw", st == STATUS_SUCCESS, st);
    if (st == STATUS_SUCCESS) st = write_to(c0, mt, 8192, 0x77, sbuf.data() + 40960);
    step("write_through_mw", st == STATUS_SUCCESS && same(cbuf, 16384, sbuf, 40960, 8192), st);
    if (st == STATUS_SUCCESS) st = invalidate(&m->Header);
    step("invalidate_mw", st == STATUS_SUCCESS, st);
  }

  // ---- remote invalidate (Send with Invalidate), then the dead token ----------------------
  {
    fill(cbuf, 20000, 64, 9);
    NDK_SGE g = sge_of(cbuf.data() + 20000, 64, clk);
    NTSTATUS d = STATUS_PENDING;
    st = run(ccq, c1->Dispatch->NdkSendAndInvalidate(c1, nullptr, &g, 1, 0, t2), &d);
    if (st == STATUS_SUCCESS) st = d;
    NDK_RESULT_EX r{};
    if (st == STATUS_SUCCESS && !next_result(scq, &r)) st = STATUS_IO_TIMEOUT;
    if (st == STATUS_SUCCESS) st = r.Status;
    step("send_with_invalidate", st == STATUS_SUCCESS, st,
         "\"receive_type\": " + std::to_string(r.Type));
    // The token is dead: the peer's Write fails (the device's protection
    // error, STATUS_ACCESS_VIOLATION, or the connection's end over it).
    NTSTATUS wst = read_from(c1, t2, region);
    if (!degraded) {
      step("read_after_remote_invalidate_fails", wst != STATUS_SUCCESS, wst);
    } else {
      // The degraded mode's token is an ordinary registration: whether the
      // device invalidates it for a peer's Send with Invalidate is the
      // device's (reported, docs/verbs.md).
      step("read_after_remote_invalidate", true, wst,
           std::string("\"refused\": ") + (wst != STATUS_SUCCESS ? "true" : "false"));
    }
  }
  // Re-register and invalidate locally, then the peer's access fails.
  st = fast_register();
  const UINT32 peer_tok = frm->Dispatch->NdkGetRemoteTokenFromMr(frm);
  step("fast_register_after_remote_invalidate", st == STATUS_SUCCESS, st);
  st = invalidate(&frm->Header);
  step("local_invalidate_again", st == STATUS_SUCCESS, st);
  if (!degraded) {
    // Invalidated already: a second NdkInvalidate fails as on the software
    // backend, without reaching the device (rxe of Linux 6.1 panics on a
    // LOCAL_INV of a window that is not bound; docs/verbs.md).
    st = invalidate(&frm->Header);
    step("invalidate_twice_refused", st == STATUS_INVALID_PARAMETER, st);
  }
  // The peer still holds the token it was given (degraded mode: the last
  // registration's; NdkGetRemoteTokenFromMr has none after the invalidate).
  NTSTATUS wst = read_from(c0, peer_tok, region);
  step("read_after_local_invalidate_fails", wst != STATUS_SUCCESS, wst);
  timed_close("close_fr_mr", fr);
  sa->Dispatch->NdkReleaseLAM(sa, lam);
  teardown();

  return g_all_ok ? 0 : 1;
}
