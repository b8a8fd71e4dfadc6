// SPDX-License-Identifier: Apache-2.0
// host_rogue_target_test.cc - ndk-nvme against a scripted in-test target
// that breaks the RDMA transport rules on purpose, to prove the host's
// checks can fail: a response whose Send with Invalidate names another
// command's key must end the host with exit 6 (protocol error), not be
// taken as that command's completion. The same target answering by the
// rules lets the same command line succeed (the control).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "ndkapp/session.h"
#include "nvmf_wire.h"
#include "proc.h"

namespace {

namespace tools = softndk::tools;
using namespace nvmf;

constexpr const char* kNqn = "nqn.2026-11.org.softndk:rogue";
constexpr unsigned kDepth = 64;
constexpr size_t kCapsule = 8192;

// One accepted queue: answers the admin commands a host needs with canned
// values (1 namespace of 2048 x 512 B, MDTS 32 KiB, no in-capsule data)
// and answers Reads without moving data.
class FakeQueue {
 public:
  FakeQueue(tools::Adapter& a, tools::Pd& pd, std::unique_ptr<tools::Connection> c, bool rogue)
      : rogue_(rogue),
        cq_(a, 4 * kDepth),
        qp_(a, pd, cq_, cq_, nullptr, tools::QpConfig{kDepth, kDepth, 0, 1}),
        recv_(a, pd, kDepth * kCapsule, NDK_MR_FLAG_ALLOW_LOCAL_WRITE),
        send_(a, pd, kDepth * kCqeSize, NDK_MR_FLAG_ALLOW_LOCAL_WRITE),
        data_(a, pd, kIdentifySize, NDK_MR_FLAG_ALLOW_LOCAL_WRITE),
        conn_(std::move(c)) {
    for (unsigned i = 0; i < kDepth; ++i) repost(i);
    RdmaCmAccept acc{};
    acc.crqsize = kDepth;
    std::vector<uint8_t> pd_bytes(sizeof acc);
    std::memcpy(pd_bytes.data(), &acc, sizeof acc);
    conn_->accept(qp_, 16, 16, pd_bytes);
  }
  void serve(const std::atomic<bool>& stop) {
    NDK_RESULT r[16];
    while (!stop && !conn_->peer_disconnected()) {
      ULONG n = cq_.wait(r, 16, false, tools::deadline_in(0.1));
      for (ULONG i = 0; i < n; ++i) {
        auto v = reinterpret_cast<uintptr_t>(r[i].RequestContext);
        if (r[i].Status != STATUS_SUCCESS) return;
        if ((v & 1) == 0) continue;  // our Sends and Writes
        unsigned idx = unsigned(v >> 1);
        Sqe s;
        std::memcpy(&s, recv_.data() + size_t(idx) * kCapsule, sizeof s);
        repost(idx);
        handle(s);
      }
    }
  }

 private:
  void repost(unsigned i) {
    NDK_SGE sge = recv_.sge(size_t(i) * kCapsule, kCapsule);
    qp_.receive(reinterpret_cast<void*>(uintptr_t(i) << 1 | 1), &sge, 1);
  }
  void respond(const Sqe& s, uint64_t result, uint32_t invalidate_key = 0, bool inv = false) {
    Cqe c{};
    c.cid = s.cid;
    c.result = result;
    const size_t slot = (next_++ % kDepth) * kCqeSize;
    std::memcpy(send_.data() + slot, &c, sizeof c);
    NDK_SGE sge = send_.sge(slot, kCqeSize);
    NDK_QP* q = qp_.get();
    if (inv)
      q->Dispatch->NdkSendAndInvalidate(q, nullptr, &sge, 1, 0, invalidate_key);
    else
      q->Dispatch->NdkSend(q, nullptr, &sge, 1, 0);
  }
  void to_host(const Sqe& s) {
    NDK_SGE sge = data_.sge(0, std::min<uint32_t>(s.sgl1.keyed_length(), kIdentifySize));
    qp_.write(nullptr, &sge, 1, s.sgl1.address, s.sgl1.key(), 0);
  }
  void handle(const Sqe& s) {
    std::memset(data_.data(), 0, kIdentifySize);
    uint8_t* p = data_.data();
    switch (s.opcode) {
      case kFabricsCommand:
        if (s.fctype() == kFctConnect) return respond(s, 1);
        if (s.fctype() == kFctPropertyGet) {
          if (s.cdw11 == kPropCap) return respond(s, 127u | (2u << 24));  // MQES, TO
          if (s.cdw11 == kPropVs) return respond(s, 0x10300);
          return respond(s, 1u | (2u << 2));  // CSTS: RDY, SHST complete
        }
        return respond(s, 0);
      case kAdminIdentify:
        if ((s.cdw10 & 0xFF) == kCnsController) {
          p[idctl::kMdts] = 3;
          p[idctl::kNn] = 1;
          p[idctl::kIoccsz] = 4;  // 64 bytes: the SQE alone
          p[idctl::kIorcsz] = 1;
        } else if ((s.cdw10 & 0xFF) == kCnsActiveNsList) {
          p[0] = 1;
        } else {
          p[idns::kNsze + 1] = 8;  // 2048 blocks
          p[idns::kNcap + 1] = 8;
          p[idns::kLbaf0 + 2] = 9;  // 512-byte LBAs
        }
        to_host(s);
        return respond(s, 0);
      case kNvmRead:
        if (!rogue_) return respond(s, 0, s.sgl1.key(), true);
        // Hold the first Read; answer it with the second one's key.
        if (!held_) {
          held_ = std::make_unique<Sqe>(s);
          return;
        }
        respond(*held_, 0, s.sgl1.key(), true);
        held_.reset();
        return respond(s, 0);  // its key is gone already
      default:
        return respond(s, 0);
    }
  }

  bool rogue_;
  tools::Cq cq_;
  tools::Qp qp_;
  tools::Buffer recv_, send_, data_;
  std::unique_ptr<tools::Connection> conn_;
  std::unique_ptr<Sqe> held_;
  uint64_t next_ = 0;
};

class RogueTarget {
 public:
  // reject_sts != 0: every connection is refused with that RDMA CM reject
  // status in the MPA Reject's private data.
  explicit RogueTarget(bool rogue, uint16_t reject_sts = 0) : rogue_(rogue), reject_(reject_sts) {
    tools::AdapterOptions ao;
    ao.name = "127.0.0.1";
    ao.timeout_s = 5;
    ao.disconnect_timeout_s = 1;
    adapter_ = std::make_unique<tools::Adapter>(ao);
    pd_ = std::make_unique<tools::Pd>(*adapter_);
    tools::SockAddr at;
    std::string err;
    tools::resolve("127.0.0.1", 0, at, err);
    listener_ = std::make_unique<tools::Listener>(*adapter_, at);
    accept_thread_ = std::thread([this] {
      while (!stop_) {
        auto c = listener_->next(tools::deadline_in(0.1));
        if (!c) continue;
        if (reject_) {
          RdmaCmReject rj{0, reject_};
          std::vector<uint8_t> pd_bytes(sizeof rj);
          std::memcpy(pd_bytes.data(), &rj, sizeof rj);
          c->reject(pd_bytes);
          continue;
        }
        threads_.emplace_back([this, c = c.release()]() mutable {
          try {
            FakeQueue q(*adapter_, *pd_, std::unique_ptr<tools::Connection>(c), rogue_);
            q.serve(stop_);
          } catch (const std::exception&) {
          }
        });
      }
    });
  }
  ~RogueTarget() {
    stop_ = true;
    listener_->cancel();
    accept_thread_.join();
    for (auto& t : threads_) t.join();
  }
  uint16_t port() const { return listener_->port(); }

 private:
  bool rogue_;
  uint16_t reject_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<tools::Adapter> adapter_;
  std::unique_ptr<tools::Pd> pd_;
  std::unique_ptr<tools::Listener> listener_;
  std::thread accept_thread_;
  std::vector<std::thread> threads_;
};

tools_test::ProcResult read_two(uint16_t port, const char* timeout = "5") {
  return tools_test::run(
      {NDK_NVME, "-a", "127.0.0.1", "-s", std::to_string(port), "-n", kNqn, "--timeout", timeout,
       "read", "--lba", "0", "-c", "16", "--bs", "4k", "--iodepth", "2", "--no-verify"},
      60);
}

TEST(HostRogueTarget, AnswersByTheRulesAreAccepted) {
  RogueTarget t(false);
  auto r = read_two(t.port());
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(HostRogueTarget, InvalidatingAnotherCommandsKeyIsAProtocolError) {
  RogueTarget t(true);
  auto r = read_two(t.port());
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_NE(r.err.find("invalidated key"), std::string::npos) << r.err;
}

TEST(HostRogueTarget, RdmaCmRejectStatusIsNamed) {
  RogueTarget t(false, kCmInvalidHsqsize);
  auto t0 = std::chrono::steady_clock::now();
  auto r = read_two(t.port(), "30");
  // A refusal ends the host at once, not at its connect timeout (30 s
  // here: a 3 s bound under a 5 s timeout left a sanitizer build's slow
  // process start on a busy 2-core host little room).
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(15));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("rejected queue 0: invalid host send queue size (HSQSIZE)"),
            std::string::npos)
      << r.err;
}

}  // namespace
