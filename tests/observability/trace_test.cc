// SPDX-License-Identifier: Apache-2.0
// trace_test.cc - pcap traces (SoftNdkTraceQp, SOFTNDK_MODIFY_ADAPTER_TRACE)
// decoded by tshark: the MPA exchange, the RTR, every RDMAP opcode the
// traffic used, CRCs where negotiated, nothing malformed, and a trace that
// starts on a busy connection beginning at an FPDU boundary.
#include <map>

#include "obs_fixture.h"

namespace obstest {
namespace {

// tshark's heuristic payload dissectors above RDMAP (RPC-over-RDMA, SMB
// Direct) misread our test payloads; the iWARP layers are what we check.
std::string tshark(const std::string& path) {
  return std::string(SOFTNDK_TSHARK) +
         " -n --disable-heuristic rpcrdma_iwarp --disable-heuristic smb_direct_iwarp -r " + path;
}

struct Decoded {
  std::string bad;                 // malformed or expert-error frames
  size_t mpa_frames = 0;           // MPA Request + Reply
  std::map<std::string, int> ops;  // RDMAP opcode -> FPDUs
  size_t fpdus = 0, crc_checked = 0;
  std::vector<std::string> first;  // opcodes in order
  size_t retransmissions = 0;      // frames tshark took for TCP retransmissions
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, sep)) v.push_back(x);
  return v;
}

// One tshark pass over the file, one line per frame. A tshark that fails
// (it once printed nothing at all under TSan at host load 70-100, with its
// stderr discarded, so the test saw an empty trace) is reported with its
// exit status and stderr, and run again, at most 3 times: the file does not
// change, so a deterministic decode failure fails every time. The packets
// in the file are counted without tshark too: an empty trace and a failed
// decode are told apart.
Decoded decode(const std::string& path) {
  Decoded d;
  const long records = pcap_records(path);
  EXPECT_GT(records, 0) << path << ": the trace holds no packets (-1: cut short or missing)";
  const std::string cmd = tshark(path) +
                          " -T fields -E separator='|' -e frame.number -e iwarp_mpa.req"
                          " -e iwarp_mpa.rep -e iwarp_rdma.opcode -e iwarp_mpa.crc_check"
                          " -e _ws.malformed -e _ws.expert.severity"
                          " -e tcp.analysis.retransmission";
  CmdResult r;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    r = run_cmd(cmd);
    if (r.ok()) break;
    std::fprintf(stderr, "tshark on %s failed (attempt %d of 3): %s\n", path.c_str(), attempt,
                 r.how().c_str());
  }
  if (!r.ok()) {
    ADD_FAILURE() << "tshark could not decode " << path << ": " << r.how();
    return d;
  }
  const std::vector<std::string> frames = lines(r.out);
  EXPECT_EQ(static_cast<long>(frames.size()), records) << "tshark decoded every packet";
  constexpr unsigned long kPiError = 0x00800000;  // Wireshark's PI_ERROR severity
  for (const auto& l : frames) {
    std::vector<std::string> f = split(l, '|');
    f.resize(8);
    if (!f[1].empty() || !f[2].empty()) ++d.mpa_frames;
    for (const auto& op : split(f[3], ',')) {
      ++d.ops[op];
      ++d.fpdus;
      d.first.push_back(op);
    }
    d.crc_checked += split(f[4], ',').size();
    bool bad = !f[5].empty();
    for (const auto& sev : split(f[6], ','))
      if (!sev.empty() && std::stoul(sev) >= kPiError) bad = true;
    if (bad) d.bad += "frame " + l + "\n";
    if (!f[7].empty()) ++d.retransmissions;
  }
  return d;
}

constexpr const char* kWrite = "0x00";
constexpr const char* kReadReq = "0x01";
constexpr const char* kReadResp = "0x02";
constexpr const char* kSend = "0x03";

class Trace : public ObsTest, public ::testing::WithParamInterface<ULONG> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(SOFTNDK_TSHARK)) << "tshark not found";
  }
  // Send, a multi-FPDU Write, a multi-FPDU Read, a Send back.
  void traffic() {
    send_ok(c_, s_, 1000);
    write_ok(c_, s_, 150000, 4096);
    read_ok(c_, s_, 100000, 300000, 500000);
    send_ok(s_, c_, 64);
  }
};

// QP trace set before connecting: the whole conversation, from the client.
TEST_P(Trace, QpTraceFromBeforeTheConnectionDecodes) {
  const bool crc = GetParam() & SOFTNDK_MPA_CRC_REQUIRED;
  prepare(GetParam());
  const std::string path = temp_path(crc ? "qp-crc" : "qp");
  ASSERT_EQ(SoftNdkTraceQp(c_.qp, path.c_str()), STATUS_SUCCESS);
  connect();
  EXPECT_EQ(c_.info().Crc, crc);
  traffic();
  const int wakes_before = static_cast<int>(c_.wake_ups());
  ASSERT_EQ(SoftNdkTraceQp(c_.qp, nullptr), STATUS_SUCCESS);  // stop: the file is complete
  SOFTNDK_COUNTERS k = c_.qp_counters();
  const int wakes = static_cast<int>(c_.wake_ups());
  Decoded d = decode(path);
  EXPECT_TRUE(d.bad.empty()) << d.bad;
  EXPECT_EQ(d.mpa_frames, 2u);
  EXPECT_EQ(d.ops[kSend], 3);  // write_ok's Send behind the Write included
  // 150000 B in FPDUs of at most 65520 B, and the P2P Write RTR that
  // NdkCompleteConnect sent (the default: NDK connection semantics); and
  // any wake-up (Side::wake_ups) that went out while the trace ran.
  EXPECT_GE(d.ops[kWrite], 4 + wakes_before);
  EXPECT_LE(d.ops[kWrite], 4 + wakes);
  EXPECT_EQ(d.ops[kReadReq], 1);
  EXPECT_EQ(d.ops[kReadResp], 2);
  EXPECT_EQ(d.fpdus, 10u + static_cast<unsigned>(d.ops[kWrite] - 4))
      << "every FPDU of the counters, nothing else";
  EXPECT_EQ(d.crc_checked, crc ? d.fpdus : 0u);
  // The FPDU count matches the QP counters of this end (which also count a
  // wake-up sent after the trace stopped).
  EXPECT_GE(k.RDMAOutFrames + k.RDMAInFrames, d.fpdus);
  EXPECT_LE(k.RDMAOutFrames + k.RDMAInFrames,
            d.fpdus + static_cast<unsigned>(4 + wakes - d.ops[kWrite]));
  if (!HasFailure()) std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Crc, Trace, ::testing::Values(0u, ULONG{SOFTNDK_MPA_CRC_REQUIRED}),
                         [](const auto& i) { return i.param ? "crc" : "nocrc"; });

class AdapterTrace : public Trace {};

// Adapter trace on before connecting, P2P with a Write RTR: the RTR (a
// zero-length Write) is the client's first FPDU in the file.
TEST_F(AdapterTrace, BeforeConnectingShowsMpaAndRtr) {
  prepare(SOFTNDK_MPA_PEER_TO_PEER | SOFTNDK_MPA_RTR_WRITE | SOFTNDK_MPA_CRC_REQUIRED);
  const std::string path = temp_path("adapter-rtr");
  SOFTNDK_MODIFY_ADAPTER m{path.c_str()};
  SOFTNDK_REQUEST req{};
  ASSERT_EQ(SoftNdkModifyAdapter(c_.a, SOFTNDK_MODIFY_ADAPTER_TRACE, &m, &req), STATUS_SUCCESS);
  connect();
  send_ok(c_, s_, 100);
  m.TracePath = nullptr;
  ASSERT_EQ(SoftNdkModifyAdapter(c_.a, SOFTNDK_MODIFY_ADAPTER_TRACE, &m, &req), STATUS_SUCCESS);
  Decoded d = decode(path);
  EXPECT_TRUE(d.bad.empty()) << d.bad;
  EXPECT_EQ(d.mpa_frames, 2u);
  ASSERT_EQ(d.first.size(), 2u);
  EXPECT_EQ(d.first[0], kWrite);  // the RTR
  EXPECT_EQ(d.first[1], kSend);
  EXPECT_EQ(d.crc_checked, 2u);
  if (!HasFailure()) std::filesystem::remove(path);
}

// Started on a running connection, with a large Write in flight both ways:
// each direction starts at an FPDU boundary, so nothing is malformed.
TEST_F(AdapterTrace, StartedMidStreamStartsAtFpduBoundaries) {
  prepare(SOFTNDK_MPA_CRC_REQUIRED);
  connect();
  send_ok(c_, s_, 10);
  const std::string path = temp_path("adapter-late");
  // Writes both ways keep both directions busy while the trace starts.
  fill(c_, 0, 400000, 1);
  fill(s_, 0, 400000, 2);
  NDK_SGE cs = c_.sge(0, 400000), ss = s_.sge(0, 400000);
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(c_.qp->Dispatch->NdkWrite(c_.qp, nullptr, &cs, 1, s_.addr(500000), s_.token, 0),
              STATUS_SUCCESS);
    ASSERT_EQ(s_.qp->Dispatch->NdkWrite(s_.qp, nullptr, &ss, 1, c_.addr(500000), c_.token, 0),
              STATUS_SUCCESS);
  }
  SOFTNDK_MODIFY_ADAPTER m{path.c_str()};
  SOFTNDK_REQUEST req{};
  ASSERT_EQ(SoftNdkModifyAdapter(c_.a, SOFTNDK_MODIFY_ADAPTER_TRACE, &m, &req), STATUS_SUCCESS);
  auto a = poll(c_.cq, 4), b = poll(s_.cq, 4);
  EXPECT_EQ(a.size(), 4u);
  EXPECT_EQ(b.size(), 4u);
  send_ok(c_, s_, 100);
  send_ok(s_, c_, 100);
  m.TracePath = nullptr;
  ASSERT_EQ(SoftNdkModifyAdapter(c_.a, SOFTNDK_MODIFY_ADAPTER_TRACE, &m, &req), STATUS_SUCCESS);
  Decoded d = decode(path);
  EXPECT_TRUE(d.bad.empty()) << d.bad;
  EXPECT_EQ(d.mpa_frames, 2u);  // the recorded exchange opens the trace
  EXPECT_EQ(d.ops[kSend], 2);   // both final Sends
  EXPECT_EQ(d.crc_checked, d.fpdus);
  if (!HasFailure()) std::filesystem::remove(path);
}

// Both ends of the connection in the traced adapter instance: each end
// would record the whole conversation (identical packets, which Wireshark
// took for retransmissions); the first end's tap records it, the other's
// stays silent, so every packet is in the file once.
TEST_F(AdapterTrace, BothEndsInOneAdapterRecordTheConnectionOnce) {
  prepare_one_adapter(SOFTNDK_MPA_CRC_REQUIRED);
  const std::string path = temp_path("adapter-both-ends");
  SOFTNDK_MODIFY_ADAPTER m{path.c_str()};
  SOFTNDK_REQUEST req{};
  ASSERT_EQ(SoftNdkModifyAdapter(c_.a, SOFTNDK_MODIFY_ADAPTER_TRACE, &m, &req), STATUS_SUCCESS);
  connect();
  traffic();
  const int wakes_before = static_cast<int>(c_.wake_ups());
  m.TracePath = nullptr;
  ASSERT_EQ(SoftNdkModifyAdapter(c_.a, SOFTNDK_MODIFY_ADAPTER_TRACE, &m, &req), STATUS_SUCCESS);
  const int wakes = static_cast<int>(c_.wake_ups());
  Decoded d = decode(path);
  EXPECT_TRUE(d.bad.empty()) << d.bad;
  EXPECT_EQ(d.mpa_frames, 2u);
  EXPECT_EQ(d.ops[kSend], 3);
  // With the P2P Write RTR, and any wake-up (Side::wake_ups) sent while
  // the trace ran (a CI run under ASan at load 20 had one: 5 Writes, 11
  // FPDUs); a packet recorded by both ends would double far more.
  EXPECT_GE(d.ops[kWrite], 4 + wakes_before);
  EXPECT_LE(d.ops[kWrite], 4 + wakes);
  EXPECT_EQ(d.ops[kReadReq], 1);
  EXPECT_EQ(d.ops[kReadResp], 2);
  EXPECT_EQ(d.fpdus, 10u + static_cast<unsigned>(d.ops[kWrite] - 4)) << "every FPDU once";
  EXPECT_EQ(d.crc_checked, d.fpdus);
  EXPECT_EQ(d.retransmissions, 0u);
  if (!HasFailure()) std::filesystem::remove(path);
}

TEST_F(AdapterTrace, BadPathsChangeNothing) {
  prepare();
  EXPECT_EQ(SoftNdkTraceQp(c_.qp, "/nonexistent-dir/x.pcap"), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkTraceQp(c_.qp, nullptr), STATUS_SUCCESS);  // stopping nothing is fine
  EXPECT_NE(SoftNdkTraceQp(reinterpret_cast<NDK_QP*>(c_.cq), nullptr), STATUS_SUCCESS);
  SOFTNDK_MODIFY_ADAPTER m{"/nonexistent-dir/x.pcap"};
  SOFTNDK_REQUEST req{};
  EXPECT_EQ(SoftNdkModifyAdapter(c_.a, SOFTNDK_MODIFY_ADAPTER_TRACE, &m, &req),
            STATUS_INVALID_PARAMETER);
  connect();
  send_ok(c_, s_, 10);  // no trace anywhere: the data path is unaffected
}

}  // namespace
}  // namespace obstest
