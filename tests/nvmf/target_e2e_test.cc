// SPDX-License-Identifier: Apache-2.0
// ndk-nvmet end to end over loopback: a real target process, an in-test
// NDK initiator sending real capsules. Good paths (Connect, Identify,
// discovery log, keyed and in-capsule I/O, Write Zeroes, deallocate) and
// bad input (the documented NVMe status or RDMA CM reject, and the target
// keeps serving).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <thread>

#include "nvmf_initiator.h"
#include "proc.h"

using namespace nvmf;
using nvmf_test::Initiator;
using nvmf_test::QueueParams;
namespace tools = softndk::tools;

namespace {

constexpr const char* kNqn = "nqn.2026-11.io.softndk:e2e";
constexpr const char* kHost = "nqn.2026-11.io.softndk:host1";
constexpr uint64_t kNsBytes = 4 << 20;  // 8192 blocks

uint16_t sc(const Cqe& c) { return c.status_field() & 0xFF; }
uint16_t sct(const Cqe& c) { return (c.status_field() >> 8) & 7; }

class Target : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/nvmf-e2e-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::string mk = "mkdir -p " + dir_;
    ASSERT_EQ(system(mk.c_str()), 0);
    img_ = dir_ + "/ns1.img";
    ASSERT_EQ(truncate_file(img_, kNsBytes), 0);
    port_ = uint16_t(tools_test::free_port());
    start({});
    tools::AdapterOptions ao;
    ao.name = "127.0.0.1";
    ao.timeout_s = 5;
    ao.disconnect_timeout_s = 1;
    adapter_ = std::make_unique<tools::Adapter>(ao);
  }
  void TearDown() override {
    adapter_.reset();
    if (proc_) proc_->kill_now();
    std::string rm = "rm -rf " + dir_;
    (void)!system(rm.c_str());
  }
  static int truncate_file(const std::string& p, uint64_t n) {
    std::ofstream f(p);
    f.close();
    return ::truncate(p.c_str(), off_t(n));
  }
  void start(std::vector<std::string> extra) {
    std::vector<std::string> argv = {
        NDK_NVMET, "-a",           "127.0.0.1", "-p",     std::to_string(port_), "-n", kNqn,
        "--ns",    "file:" + img_, "--host",    kHost,    "--queue-depth",       "32", "--queues",
        "2",       "--duration",   "60",        "--json", dir_ + "/stats.json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    proc_ = std::make_unique<tools_test::Proc>(argv);
  }
  // Connects (a queue the target must accept), retrying while the target
  // starts listening (slower under the sanitizers: a refusal then means
  // "not listening yet").
  std::unique_ptr<Initiator> queue(const QueueParams& p) {
    std::string last;
    // Up to 60 s: a sanitizer build of the target starts slowly on a busy
    // 2-core host (10 s was the bound before).
    for (int i = 0; i < 600; ++i) {
      try {
        return std::make_unique<Initiator>(*adapter_, port_, p);
      } catch (const std::exception& e) {
        last = e.what();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    throw std::runtime_error("no connection in 60 s: " + last + "; target: " + proc_->err_so_far());
  }
  // An enabled admin queue of a new controller; sets cntlid_.
  std::unique_ptr<Initiator> admin(const std::string& sub = kNqn) {
    auto a = queue({});
    auto c = a->connect(sub, kHost, kCntlidDynamic, 31);
    EXPECT_TRUE(c && c->ok()) << (c ? c->status_field() : -1);
    if (c) cntlid_ = uint16_t(c->result);
    EXPECT_TRUE(a->enable());
    return a;
  }
  std::unique_ptr<Initiator> io_queue(uint16_t qid = 1) {
    QueueParams p;
    p.qid = qid;
    auto q = queue(p);
    auto c = q->connect(kNqn, kHost, cntlid_, 31, qid);
    EXPECT_TRUE(c && c->ok()) << (c ? c->status_field() : -1);
    return q;
  }
  Sqe rw(Initiator& q, uint8_t op, uint16_t cid, uint64_t slba, uint32_t nlb, uint32_t nsid = 1) {
    Sqe s = q.sqe(op, cid, nsid);
    s.cdw10 = uint32_t(slba);
    s.cdw11 = uint32_t(slba >> 32);
    s.cdw12 = nlb - 1;
    return s;
  }
  // The target still serves a fresh association: write + read back.
  void still_serves() {
    auto a = admin();
    auto q = io_queue();
    std::memset(q->data(), 0x5A, 512);
    auto w = q->submit(q->keyed(rw(*q, kNvmWrite, 3, 7, 1), 0, 512));
    ASSERT_TRUE(w && w->ok());
    std::memset(q->data() + 4096, 0, 512);
    auto r = q->submit(q->keyed(rw(*q, kNvmRead, 4, 7, 1), 4096, 512));
    ASSERT_TRUE(r && r->ok());
    EXPECT_EQ(q->data()[4096 + 511], 0x5A);
  }

  std::string dir_, img_;
  uint16_t port_ = 0;
  uint16_t cntlid_ = 0;
  std::unique_ptr<tools_test::Proc> proc_;
  std::unique_ptr<tools::Adapter> adapter_;
};

}  // namespace

TEST_F(Target, AdminBringUpAndIdentify) {
  auto a = admin();
  EXPECT_NE(cntlid_, 0);
  // CAP: MQES = 31 (0's based), CSS NVM.
  Sqe s = a->sqe(kFabricsCommand, 5);
  s.nsid = kFctPropertyGet;
  s.cdw10 = 1;
  s.cdw11 = kPropCap;
  auto c = a->submit(a->bytes(s));
  ASSERT_TRUE(c && c->ok());
  EXPECT_EQ(c->result & 0xFFFF, 31u);
  EXPECT_TRUE(c->result & (1ull << 37));
  s.cdw10 = 0;
  s.cdw11 = kPropCsts;
  c = a->submit(a->bytes(s));
  ASSERT_TRUE(c && c->ok());
  EXPECT_EQ(c->result & 1, 1u);  // ready after CC.EN

  Sqe id = a->sqe(kAdminIdentify, 6);
  id.cdw10 = kCnsController;
  c = a->submit(a->keyed(id, 0, 4096));
  ASSERT_TRUE(c && c->ok());
  const uint8_t* p = a->data();
  EXPECT_STREQ(reinterpret_cast<const char*>(p + idctl::kSubnqn), kNqn);
  uint16_t cnt;
  std::memcpy(&cnt, p + idctl::kCntlid, 2);
  EXPECT_EQ(cnt, cntlid_);
  uint32_t ioccsz, sgls;
  std::memcpy(&ioccsz, p + idctl::kIoccsz, 4);
  std::memcpy(&sgls, p + idctl::kSgls, 4);
  EXPECT_EQ(ioccsz, (64u + 4096) / 16);
  EXPECT_TRUE(sgls & (1u << 2));
  EXPECT_EQ(p[idctl::kMdts], 5);
  EXPECT_EQ(p[idctl::kCntrltype], 1);

  id.nsid = 1;
  id.cdw10 = kCnsNamespace;
  c = a->submit(a->keyed(id, 0, 4096));
  ASSERT_TRUE(c && c->ok());
  uint64_t nsze;
  std::memcpy(&nsze, a->data(), 8);
  EXPECT_EQ(nsze, kNsBytes / 512);

  id.nsid = 0;
  id.cdw10 = kCnsActiveNsList;
  c = a->submit(a->keyed(id, 0, 4096));
  ASSERT_TRUE(c && c->ok());
  uint32_t first, second;
  std::memcpy(&first, a->data(), 4);
  std::memcpy(&second, a->data() + 4, 4);
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(second, 0u);

  id.nsid = 1;
  id.cdw10 = kCnsNsDescriptorList;
  c = a->submit(a->keyed(id, 0, 4096));
  ASSERT_TRUE(c && c->ok());
  EXPECT_EQ(a->data()[0], 2);   // NGUID
  EXPECT_EQ(a->data()[20], 3);  // UUID

  id.nsid = 9;
  id.cdw10 = kCnsNamespace;
  c = a->submit(a->keyed(id, 0, 4096));
  ASSERT_TRUE(c);
  EXPECT_EQ(sc(*c), kScInvalidNamespace);

  // Number of queues: 8 asked, 2 granted (--queues 2).
  Sqe f = a->sqe(kAdminSetFeatures, 7);
  f.cdw10 = kFeatNumberOfQueues;
  f.cdw11 = 7 | (7u << 16);
  c = a->submit(a->bytes(f));
  ASSERT_TRUE(c && c->ok());
  EXPECT_EQ(c->result & 0xFFFF, 1u);

  // Keep Alive, AER held (no completion), Abort answers "not aborted".
  c = a->submit(a->bytes(a->sqe(kAdminKeepAlive, 8)));
  ASSERT_TRUE(c && c->ok());
  c = a->submit(a->bytes(a->sqe(kAdminAsyncEventRequest, 9)), 0.5);
  EXPECT_FALSE(c);
  c = a->submit(a->bytes(a->sqe(kAdminAbort, 10)));
  ASSERT_TRUE(c && c->ok());
  EXPECT_EQ(c->cid, 10);
  EXPECT_EQ(c->result & 1, 1u);
  // Shutdown: the held AER ends with Abort SQ Deleted, CSTS.SHST complete.
  Sqe sh = a->sqe(kFabricsCommand, 11);
  sh.nsid = kFctPropertySet;
  sh.cdw11 = kPropCc;
  sh.cdw12 = 1 | (1u << 14);
  auto two = (a->post(a->bytes(sh)), a->collect(2));
  ASSERT_EQ(two.size(), 2u);
  bool saw_aer = false;
  for (auto& x : two)
    if (x.cid == 9) {
      saw_aer = true;
      EXPECT_EQ(sc(x), kScAbortSqDeleted);
    }
  EXPECT_TRUE(saw_aer);
}

TEST_F(Target, DiscoveryLogPage) {
  auto a = admin(kDiscoveryNqn);
  Sqe g = a->sqe(kAdminGetLogPage, 5);
  // First the header (1 KiB), then the record at LPO 1024.
  g.cdw10 = kLogDiscovery | (255u << 16);
  auto c = a->submit(a->keyed(g, 0, 1024));
  ASSERT_TRUE(c && c->ok());
  uint64_t numrec;
  std::memcpy(&numrec, a->data() + 8, 8);
  EXPECT_EQ(numrec, 1u);
  g.cdw12 = 1024;
  c = a->submit(a->keyed(g, 0, 1024));
  ASSERT_TRUE(c && c->ok());
  EXPECT_EQ(a->data()[0], kTrtypeRdma);
  EXPECT_STREQ(reinterpret_cast<const char*>(a->data() + 256), kNqn);
  EXPECT_STREQ(reinterpret_cast<const char*>(a->data() + 512), "127.0.0.1");
  EXPECT_EQ(a->data()[769], kRdmaPrtypeIwarp);
  g.cdw12 = 2;  // not dword aligned
  c = a->submit(a->keyed(g, 0, 1024));
  ASSERT_TRUE(c);
  EXPECT_EQ(sc(*c), kScInvalidField);
  g.cdw12 = 1u << 20;  // beyond the page
  c = a->submit(a->keyed(g, 0, 1024));
  ASSERT_TRUE(c);
  EXPECT_EQ(sc(*c), kScInvalidField);
  // A discovery controller has no namespaces and no I/O queues.
  Sqe id = a->sqe(kAdminIdentify, 6, 1);
  id.cdw10 = kCnsNamespace;
  c = a->submit(a->keyed(id, 0, 4096));
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->ok());
}

TEST_F(Target, KeyedAndInCapsuleIoVerified) {
  auto a = admin();
  auto q = io_queue();
  // 16 KiB keyed write of a pattern, read back into another region.
  for (int i = 0; i < 16384; ++i) q->data()[i] = uint8_t(i * 7 + 3);
  auto c = q->submit(q->keyed(rw(*q, kNvmWrite, 1, 100, 32), 0, 16384));
  ASSERT_TRUE(c && c->ok()) << c->status_field();
  EXPECT_EQ(c->sqid, 1);
  c = q->submit(q->keyed(rw(*q, kNvmRead, 2, 100, 32), 65536, 16384));
  ASSERT_TRUE(c && c->ok());
  EXPECT_EQ(std::memcmp(q->data(), q->data() + 65536, 16384), 0);
  // 4 KiB in-capsule write at LBA 200, read back.
  std::vector<uint8_t> pat(4096);
  for (size_t i = 0; i < pat.size(); ++i) pat[i] = uint8_t(i ^ 0xA5);
  Sqe w = rw(*q, kNvmWrite, 3, 200, 8);
  w.sgl1.set_in_capsule(0, 4096);
  c = q->submit(Initiator::bytes(w, pat.data(), pat.size()));
  ASSERT_TRUE(c && c->ok()) << c->status_field();
  c = q->submit(q->keyed(rw(*q, kNvmRead, 4, 200, 8), 0, 4096));
  ASSERT_TRUE(c && c->ok());
  EXPECT_EQ(std::memcmp(q->data(), pat.data(), 4096), 0);
  // The file holds it where the LBA says.
  std::ifstream f(img_, std::ios::binary);
  std::vector<char> got(4096);
  f.seekg(200 * 512);
  f.read(got.data(), 4096);
  EXPECT_EQ(std::memcmp(got.data(), pat.data(), 4096), 0);
  // Write Zeroes and Dataset Management deallocate read back as zeros.
  c = q->submit(q->bytes(rw(*q, kNvmWriteZeroes, 5, 100, 8)));
  ASSERT_TRUE(c && c->ok());
  DsmRange range{0, 8, 200};
  Sqe d = q->sqe(kNvmDatasetManagement, 6, 1);
  d.cdw10 = 0;
  d.cdw11 = 1u << 2;
  d.sgl1.set_in_capsule(0, sizeof range);
  c = q->submit(Initiator::bytes(d, &range, sizeof range));
  ASSERT_TRUE(c && c->ok());
  c = q->submit(q->keyed(rw(*q, kNvmRead, 7, 100, 8), 0, 4096));
  ASSERT_TRUE(c && c->ok());
  c = q->submit(q->keyed(rw(*q, kNvmRead, 8, 200, 8), 4096, 4096));
  ASSERT_TRUE(c && c->ok());
  std::vector<uint8_t> zeros(8192, 0);
  EXPECT_EQ(std::memcmp(q->data(), zeros.data(), 8192), 0);
  c = q->submit(q->bytes(q->sqe(kNvmFlush, 9, 1)));
  ASSERT_TRUE(c && c->ok());
  // Several outstanding on one queue: SQHD advances in each response.
  for (uint16_t i = 0; i < 16; ++i)
    ASSERT_TRUE(q->post(q->keyed(rw(*q, kNvmRead, uint16_t(20 + i), i, 1), i * 512u, 512)));
  auto all = q->collect(16);
  ASSERT_EQ(all.size(), 16u);
  for (auto& x : all) EXPECT_TRUE(x.ok());
}

TEST_F(Target, BadCommandsGetTheirStatusAndTheQueueGoesOn) {
  auto a = admin();
  auto q = io_queue();
  auto expect = [&](const std::vector<uint8_t>& cap, uint8_t want_sct, uint8_t want_sc) {
    auto c = q->submit(cap);
    ASSERT_TRUE(c) << "no response";
    EXPECT_EQ(sct(*c), want_sct);
    EXPECT_EQ(sc(*c), want_sc);
    EXPECT_TRUE(c->status_field() & 0x4000);  // DNR
  };
  // LBA beyond the namespace (8192 blocks), and a range that crosses its end.
  expect(q->keyed(rw(*q, kNvmRead, 1, 8192, 1), 0, 512), kSctGeneric, kScLbaOutOfRange);
  expect(q->keyed(rw(*q, kNvmWrite, 2, 8190, 4), 0, 2048), kSctGeneric, kScLbaOutOfRange);
  expect(q->keyed(rw(*q, kNvmRead, 3, ~0ull - 1, 4), 0, 2048), kSctGeneric, kScLbaOutOfRange);
  expect(q->bytes(rw(*q, kNvmWriteZeroes, 4, 8000, 1000)), kSctGeneric, kScLbaOutOfRange);
  // Unknown namespace, unknown opcode.
  expect(q->keyed(rw(*q, kNvmRead, 5, 0, 1, 7), 0, 512), kSctGeneric, kScInvalidNamespace);
  expect(q->bytes(q->sqe(0x7E, 6, 1)), kSctGeneric, kScInvalidOpcode);
  // The SGL does not match the transfer; beyond MDTS.
  expect(q->keyed(rw(*q, kNvmRead, 7, 0, 2), 0, 512), kSctGeneric, kScDataSglLengthInvalid);
  expect(q->keyed(rw(*q, kNvmRead, 8, 0, 512), 0, 262144), kSctGeneric, kScDataSglLengthInvalid);
  // PRP instead of SGL; in-capsule offset past the data; segment descriptor.
  Sqe s = rw(*q, kNvmWrite, 9, 0, 1);
  s.flags = 0;
  expect(q->bytes(s), kSctGeneric, kScInvalidField);
  s = rw(*q, kNvmWrite, 10, 0, 1);
  s.sgl1.set_in_capsule(600, 512);
  std::vector<uint8_t> blk(512, 1);
  expect(Initiator::bytes(s, blk.data(), blk.size()), kSctGeneric, kScInvalidSglOffset);
  s.sgl1.set_in_capsule(0, 1024);
  expect(Initiator::bytes(s, blk.data(), blk.size()), kSctGeneric, kScDataSglLengthInvalid);
  s.sgl1.type_subtype = kSglLastSegment << 4;
  expect(q->bytes(s), kSctGeneric, kScSglDescriptorTypeInvalid);
  // A second Connect on a connected queue, unknown admin opcode.
  auto c = a->submit(a->bytes(a->sqe(0xC5, 12)));
  ASSERT_TRUE(c);
  EXPECT_EQ(sc(*c), kScInvalidOpcode);
  // Deallocate with one range past the end: refused as a whole, the
  // valid range keeps its data.
  std::memset(q->data(), 0x11, 512);
  c = q->submit(q->keyed(rw(*q, kNvmWrite, 13, 1, 1), 0, 512));
  ASSERT_TRUE(c && c->ok());
  DsmRange ranges[2] = {{0, 1, 1}, {0, 16, 8190}};
  Sqe d = q->sqe(kNvmDatasetManagement, 14, 1);
  d.cdw10 = 1;
  d.cdw11 = 1u << 2;
  d.sgl1.set_in_capsule(0, sizeof ranges);
  expect(Initiator::bytes(d, ranges, sizeof ranges), kSctGeneric, kScLbaOutOfRange);
  // Still serving on the same queue, and LBA 1 was not deallocated.
  std::memset(q->data() + 4096, 0, 512);
  c = q->submit(q->keyed(rw(*q, kNvmRead, 15, 1, 1), 4096, 512));
  ASSERT_TRUE(c && c->ok());
  EXPECT_EQ(q->data()[4096 + 100], 0x11);
}

TEST_F(Target, ConnectErrors) {
  // Commands before Connect: Command Sequence Error.
  auto a = queue({});
  auto c = a->submit(a->bytes(a->sqe(kAdminKeepAlive, 1)));
  ASSERT_TRUE(c);
  EXPECT_EQ(sc(*c), kScCommandSequenceError);
  // Unknown subsystem: Connect Invalid Parameters naming SUBNQN in the data.
  c = a->connect("nqn.2026-11.io.softndk:nope", kHost, kCntlidDynamic, 31);
  ASSERT_TRUE(c);
  EXPECT_EQ(sct(*c), kSctCommandSpecific);
  EXPECT_EQ(sc(*c), kScConnectInvalidParameters);
  EXPECT_EQ(c->result, (1u << 16) | 256u);
  // Host not allowed.
  c = a->connect(kNqn, "nqn.2026-11.io.softndk:stranger", kCntlidDynamic, 31);
  ASSERT_TRUE(c);
  EXPECT_EQ(sc(*c), kScConnectInvalidHost);
  // sqsize larger than the queue the CM request set up; zero.
  c = a->connect(kNqn, kHost, kCntlidDynamic, 40);
  ASSERT_TRUE(c);
  EXPECT_EQ(sc(*c), kScConnectInvalidParameters);
  EXPECT_EQ(c->result, 44u);
  c = a->connect(kNqn, kHost, kCntlidDynamic, 0);
  ASSERT_TRUE(c);
  EXPECT_EQ(sc(*c), kScConnectInvalidParameters);
  // An I/O queue naming a controller that does not exist.
  QueueParams p;
  p.qid = 1;
  auto q = queue(p);
  c = q->connect(kNqn, kHost, 999, 31, 1);
  ASSERT_TRUE(c);
  EXPECT_EQ(sc(*c), kScConnectInvalidParameters);
  EXPECT_EQ(c->result, (1u << 16) | 16u);
  still_serves();
}

TEST_F(Target, RdmaCmRejects) {
  // Wait for the listener with a good queue first.
  queue({});
  // The NVMe/RDMA CM status from the MPA reject's private data.
  auto rejected = [&](QueueParams p) -> uint16_t {
    uint16_t st = 0xFFFF;
    p.reject_out = &st;
    try {
      Initiator i(*adapter_, port_, p);
      return 0;
    } catch (const std::exception&) {
    }
    return st;
  };
  QueueParams big;
  big.hsqsize = 200;  // admin queue: at most 32 entries
  big.hrqsize = 201;
  EXPECT_EQ(rejected(big), kCmInvalidHsqsize);
  QueueParams io;
  io.qid = 3;  // --queues 2
  EXPECT_EQ(rejected(io), kCmInvalidQid);
  QueueParams shortpd;
  shortpd.raw_pdata = {0, 0, 0, 0};
  EXPECT_EQ(rejected(shortpd), kCmInvalidLength);
  QueueParams fmt;
  fmt.raw_pdata.assign(32, 0);
  fmt.raw_pdata[0] = 1;
  EXPECT_EQ(rejected(fmt), kCmInvalidRecfmt);
  try {
    Initiator i(*adapter_, port_, big);
  } catch (...) {
  }
  ASSERT_TRUE(proc_->wait_for_err("NVMe/RDMA CM status 4", 5));
  ASSERT_TRUE(proc_->wait_for_err("NVMe/RDMA CM status 3", 5));
  ASSERT_TRUE(proc_->wait_for_err("NVMe/RDMA CM status 1", 5));
  ASSERT_TRUE(proc_->wait_for_err("NVMe/RDMA CM status 2", 5));
  still_serves();
}

TEST_F(Target, WrongKeyBreaksOnlyThatQueue) {
  auto a = admin();
  auto q = io_queue();
  // A write whose SGL names a key the host never registered: the target's
  // RDMA Read fails at the host (remote access error); that queue ends.
  Sqe w = rw(*q, kNvmWrite, 1, 0, 1);
  w.sgl1.set_keyed(q->data_va(), 512, q->data_token() ^ 0x5A5A0000u, false);
  auto c = q->submit(q->bytes(w), 3);
  EXPECT_FALSE(c && c->ok());
  // A read into a range beyond the host's buffer: the RDMA Write is
  // refused by the host; no byte lands outside the buffer.
  auto q2 = io_queue(2);
  Sqe r = rw(*q2, kNvmRead, 2, 0, 8);
  r.sgl1.set_keyed(q2->data_va() + (1 << 20) - 1024, 4096, q2->data_token(), false);
  c = q2->submit(q2->bytes(r), 3);
  EXPECT_FALSE(c && c->ok());
  still_serves();
}

TEST_F(Target, HostBeyondItsQueueDepth) {
  auto a = admin();
  QueueParams p;
  p.qid = 1;
  p.hsqsize = 3;  // 4 entries
  p.hrqsize = 4;
  auto q = queue(p);
  auto c = q->connect(kNqn, kHost, cntlid_, 3, 1);
  ASSERT_TRUE(c && c->ok());
  // 24 commands at once into 4 posted receives: the connection breaks (an
  // iWARP Send with no receive posted), the target drops that queue.
  for (uint16_t i = 0; i < 24; ++i) q->post(q->keyed(rw(*q, kNvmRead, i, i, 1), i * 512u, 512));
  auto got = q->collect(24, 3);
  EXPECT_LT(got.size(), 24u);
  still_serves();
}

TEST_F(Target, KeepAliveTimeoutEndsTheAssociation) {
  auto a = queue({});
  auto c = a->connect(kNqn, kHost, kCntlidDynamic, 31, 0, /*kato_ms=*/500);
  ASSERT_TRUE(c && c->ok()) << (c ? c->status_field() : -1) << " " << proc_->err_so_far();
  ASSERT_TRUE(a->enable());
  ASSERT_TRUE(proc_->wait_for_err("keep alive timeout", 5));
  auto k = a->submit(a->bytes(a->sqe(kAdminKeepAlive, 9)), 2);
  EXPECT_FALSE(k && k->ok());
  still_serves();
}

TEST_F(Target, StopsOnSigtermWithStats) {
  {
    auto a = admin();
    auto q = io_queue();
    auto c = q->submit(q->keyed(rw(*q, kNvmRead, 1, 0, 8), 0, 4096));
    ASSERT_TRUE(c && c->ok());
  }
  ASSERT_TRUE(proc_->signal(SIGTERM));
  auto r = proc_->wait(20);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::ifstream f(dir_ + "/stats.json");
  std::string js((std::istreambuf_iterator<char>(f)), {});
  EXPECT_NE(js.find("\"reads\": 1"), std::string::npos) << js;
}

TEST(TargetCli, BadUsageAndBadNamespace) {
  auto r = tools_test::run({NDK_NVMET, "-n", kNqn, "--ns", "ram:1M"}, 10);
  EXPECT_EQ(r.exit_code, 2) << r.err;  // no --host / --allow-any-host
  r = tools_test::run({NDK_NVMET, "-n", kNqn, "--allow-any-host", "--ns", "file:/nonexistent/x"},
                      10);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/x"), std::string::npos);
  // An unknown namespace kind is a usage error (exit 2, ndk-nvmet(1)).
  r = tools_test::run({NDK_NVMET, "-n", kNqn, "--allow-any-host", "--ns", "tape:1"}, 10);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = tools_test::run({NDK_NVMET, "--version"}, 10);
  EXPECT_EQ(r.exit_code, 0);
}

TEST_F(Target, TwoHostsAtOnceAndOneLeavesMidIo) {
  // Host A: admin + 2 I/O queues; host B: admin + 1 I/O queue.
  auto a = admin();
  uint16_t ca = cntlid_;
  auto a1 = io_queue(1);
  auto a2 = io_queue(2);
  auto b = admin();
  uint16_t cb = cntlid_;
  EXPECT_NE(ca, cb);
  auto b1 = io_queue(1);
  // Both write their own block ranges with commands outstanding on every queue.
  for (uint16_t i = 0; i < 8; ++i) {
    std::memset(a1->data() + i * 4096, 0xA0 + i, 4096);
    std::memset(a2->data() + i * 4096, 0xB0 + i, 4096);
    std::memset(b1->data() + i * 4096, 0xC0 + i, 4096);
    ASSERT_TRUE(a1->post(a1->keyed(rw(*a1, kNvmWrite, i, 1000 + i * 8, 8), i * 4096u, 4096)));
    ASSERT_TRUE(a2->post(a2->keyed(rw(*a2, kNvmWrite, i, 2000 + i * 8, 8), i * 4096u, 4096)));
    ASSERT_TRUE(b1->post(b1->keyed(rw(*b1, kNvmWrite, i, 3000 + i * 8, 8), i * 4096u, 4096)));
  }
  for (auto* q : {a1.get(), a2.get(), b1.get()}) {
    auto got = q->collect(8);
    ASSERT_EQ(got.size(), 8u);
    for (auto& c : got) EXPECT_TRUE(c.ok());
  }
  // Host A vanishes with reads outstanding (its connections close).
  for (uint16_t i = 0; i < 8; ++i)
    a1->post(a1->keyed(rw(*a1, kNvmRead, uint16_t(100 + i), 1000 + i * 8, 8), i * 4096u, 4096));
  a1.reset();
  a2.reset();
  a.reset();
  // Host B goes on and sees host A's data where A wrote it.
  for (uint16_t i = 0; i < 8; ++i) {
    auto c =
        b1->submit(b1->keyed(rw(*b1, kNvmRead, uint16_t(50 + i), 1000 + i * 8, 8), 65536, 4096));
    ASSERT_TRUE(c && c->ok());
    EXPECT_EQ(b1->data()[65536], 0xA0 + i);
    EXPECT_EQ(b1->data()[65536 + 4095], 0xA0 + i);
  }
  // A new association of host A gets a controller again.
  still_serves();
}
