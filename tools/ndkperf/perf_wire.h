// SPDX-License-Identifier: Apache-2.0
// perf_wire.h - what ndkperf's two ends tell each other.
//
// Connection set-up (MPA private data, at most 252 bytes for siw interop):
//  - the client's NdkConnect carries a Hello: test, size (or "all sizes"),
//    QP count and index, depths, and its RDMA buffer (VA, remote token,
//    length);
//  - the server answers with an Accept in NdkAccept's private data (its own
//    buffer), or NdkReject with a Refusal carrying a one-line reason (a test
//    type or size mismatch), which both sides print.
// During the run, control messages are 64-byte Sends (CtrlMsg), and the end
// of a measured phase is a zero-length Send. All integers little-endian,
// fixed offsets, so two hosts of any kind agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace softndk::ndkperf {

inline constexpr uint32_t kHelloMagic = 0x504b444eu;  // "NDKP"
inline constexpr uint8_t kWireVersion = 1;

// Hello flags
inline constexpr uint8_t kHelloAllSizes = 0x01;
inline constexpr uint8_t kHelloEvents = 0x02;

struct Hello {
  uint8_t test = 0;  // Op * 2 + Metric (see perf_types.h)
  uint8_t flags = 0;
  uint16_t qps = 1;
  uint16_t qp_index = 0;
  uint16_t tx_depth = 1;
  uint32_t rx_depth = 64;  // receives the server must keep posted per QP
  uint64_t size = 0;       // the size of a single-size run; 0 with kHelloAllSizes
  uint64_t max_size = 0;   // largest size of the run (buffers)
  uint64_t buf_va = 0;     // client's RDMA buffer
  uint32_t buf_token = 0;
  uint64_t buf_len = 0;
};

struct AcceptInfo {
  uint64_t buf_va = 0;
  uint32_t buf_token = 0;
  uint64_t buf_len = 0;
};

std::vector<uint8_t> encode_hello(const Hello& h);
std::optional<Hello> decode_hello(const std::vector<uint8_t>& b);
std::vector<uint8_t> encode_accept(const AcceptInfo& a);
std::optional<AcceptInfo> decode_accept(const std::vector<uint8_t>& b);
// A refusal: the reason is cut to fit the 252-byte budget.
std::vector<uint8_t> encode_refusal(const std::string& reason);
std::optional<std::string> decode_refusal(const std::vector<uint8_t>& b);

enum class CtrlType : uint8_t { Begin = 1, Ready = 2, Credit = 3, Report = 4, Done = 5 };

inline constexpr size_t kCtrlSize = 64;
inline constexpr uint32_t kCtrlMagic = 0x43504b4eu;  // "NKPC"

struct CtrlMsg {
  CtrlType type = CtrlType::Begin;
  uint32_t seq = 0;         // per sender and QP, from 1; duplicates are ignored
  uint64_t size = 0;        // Begin: message size of the phase
  uint64_t iters = 0;       // Report: messages completed
  uint64_t bytes = 0;       // Report: bytes counted (receiver) or sent (initiator)
  uint64_t credits = 0;     // Credit: receives re-posted so far (cumulative)
  uint64_t cpu_ns = 0;      // Report: CPU time of the sender's test thread
  uint64_t elapsed_ns = 0;  // Report: the sender's measured interval
};

void encode_ctrl(const CtrlMsg& m, uint8_t* out /* kCtrlSize */);
std::optional<CtrlMsg> decode_ctrl(const uint8_t* in, size_t len);

}  // namespace softndk::ndkperf
