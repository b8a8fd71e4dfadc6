// SPDX-License-Identifier: Apache-2.0
// nvmf_initiator.h - a minimal NVMe/RDMA initiator for the target's tests:
// connects one queue with chosen RDMA CM private data, sends raw capsules
// (well formed or not) and waits for their completions. Its data buffer is
// registered once for remote read and write; commands name it in keyed
// SGLs (subtype 0: no invalidation).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ndkapp/session.h"
#include "nvmf_capsule.h"

namespace nvmf_test {

namespace tools = softndk::tools;

struct QueueParams {
  uint16_t qid = 0;
  uint16_t hsqsize = 31;  // 0's based
  uint16_t hrqsize = 32;
  std::vector<uint8_t> raw_pdata;  // if not empty: sent instead of the above
  uint16_t* reject_out = nullptr;  // the CM reject's NVMe/RDMA status, if refused
};

class Initiator {
 public:
  // Connects; throws tools::ToolError if refused (reject_status then holds
  // the NVMe/RDMA CM status from the reject's private data, if any).
  Initiator(tools::Adapter& a, uint16_t port, const QueueParams& qp);
  ~Initiator();

  // Sends `capsule` and waits for a response (nullopt: none within the time
  // or the connection broke).
  std::optional<nvmf::Cqe> submit(const std::vector<uint8_t>& capsule, double seconds = 5);
  // Sends without waiting; then collect() gathers `n` responses.
  bool post(const std::vector<uint8_t>& capsule);
  std::vector<nvmf::Cqe> collect(size_t n, double seconds = 5);

  // Capsule builders.
  nvmf::Sqe sqe(uint8_t opcode, uint16_t cid, uint32_t nsid = 0) const;
  std::vector<uint8_t> keyed(nvmf::Sqe s, uint64_t off, uint32_t len, bool invalidate = false);
  static std::vector<uint8_t> bytes(const nvmf::Sqe& s, const void* icd = nullptr, size_t n = 0);

  // Fabrics helpers over the above: Connect (returns the CQE), Property
  // Set CC.EN = 1.
  std::optional<nvmf::Cqe> connect(const std::string& subnqn, const std::string& hostnqn,
                                   uint16_t cntlid, uint16_t sqsize, uint16_t qid = 0,
                                   uint32_t kato_ms = 0);
  bool enable();

  uint8_t* data() { return data_->data(); }
  uint32_t data_token() const { return data_->remote_token(); }
  uint64_t data_va() const { return data_->va(); }
  bool broken() const;
  uint16_t accepted_crqsize() const { return crqsize_; }

  uint16_t reject_status = 0;

 private:
  std::unique_ptr<tools::Pd> pd_;
  std::unique_ptr<tools::Cq> cq_;
  std::unique_ptr<tools::Buffer> send_, recv_, data_;
  std::unique_ptr<tools::Qp> qp_;
  std::unique_ptr<tools::Connection> conn_;
  std::vector<nvmf::Cqe> pending_;
  uint32_t send_slot_ = 0;
  uint16_t crqsize_ = 0;
  bool broken_ = false;
  static constexpr uint32_t kRecvs = 64;
  static constexpr uint32_t kSendSlots = 64;
  static constexpr uint32_t kSendSlotSize = 64 + 8192;
};

}  // namespace nvmf_test
