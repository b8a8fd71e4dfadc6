// SPDX-License-Identifier: Apache-2.0
// nvmf_initiator.cc - see nvmf_initiator.h.
#include "nvmf_initiator.h"

#include <cstring>

namespace nvmf_test {

using namespace nvmf;

Initiator::Initiator(tools::Adapter& a, uint16_t port, const QueueParams& p) {
  pd_ = std::make_unique<tools::Pd>(a);
  cq_ = std::make_unique<tools::Cq>(a, 256);
  send_ = std::make_unique<tools::Buffer>(a, *pd_, kSendSlots * kSendSlotSize,
                                          NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
  recv_ = std::make_unique<tools::Buffer>(a, *pd_, kRecvs * 16, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
  data_ = std::make_unique<tools::Buffer>(a, *pd_, 1 << 20,
                                          NDK_MR_FLAG_ALLOW_LOCAL_WRITE |
                                              NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                              NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
  qp_ = std::make_unique<tools::Qp>(a, *pd_, *cq_, *cq_, nullptr, tools::QpConfig{kRecvs, 128, 0});
  for (uint32_t i = 0; i < kRecvs; ++i) {
    NDK_SGE s = recv_->sge(i * 16, 16);
    qp_->receive(reinterpret_cast<void*>(uintptr_t(i)), &s, 1);
  }
  std::vector<uint8_t> pd = p.raw_pdata;
  if (pd.empty()) {
    RdmaCmRequest r{};
    r.qid = p.qid;
    r.hsqsize = p.hsqsize;
    r.hrqsize = p.hrqsize;
    pd.resize(sizeof r);
    std::memcpy(pd.data(), &r, sizeof r);
  }
  tools::SockAddr peer, local;
  std::string e;
  tools::resolve("127.0.0.1", port, peer, e);
  tools::resolve("127.0.0.1", 0, local, e);
  std::vector<uint8_t> acc, rej;
  try {
    conn_ = tools::Connection::connect(a, *qp_, local, peer, 16, 16, pd, &acc, &rej);
  } catch (...) {
    reject_status = parse_cm_reject(rej);
    if (p.reject_out) *p.reject_out = reject_status;
    throw;
  }
  conn_->interrupt_on_disconnect(*cq_);
  if (acc.size() >= sizeof(RdmaCmAccept)) {
    RdmaCmAccept x;
    std::memcpy(&x, acc.data(), sizeof x);
    crqsize_ = x.crqsize;
  }
}

Initiator::~Initiator() {
  if (conn_) conn_->disconnect();
  conn_.reset();
}

bool Initiator::broken() const { return broken_ || (conn_ && conn_->peer_disconnected()); }

Sqe Initiator::sqe(uint8_t opcode, uint16_t cid, uint32_t nsid) const {
  Sqe s{};
  s.opcode = opcode;
  s.flags = kFlagsSgl;
  s.cid = cid;
  s.nsid = nsid;
  s.sgl1.set_keyed(0, 0, 0, false);
  return s;
}

std::vector<uint8_t> Initiator::keyed(Sqe s, uint64_t off, uint32_t len, bool invalidate) {
  s.sgl1.set_keyed(data_va() + off, len, data_token(), invalidate);
  return bytes(s);
}

std::vector<uint8_t> Initiator::bytes(const Sqe& s, const void* icd, size_t n) {
  std::vector<uint8_t> v(sizeof s + n);
  std::memcpy(v.data(), &s, sizeof s);
  if (n) std::memcpy(v.data() + sizeof s, icd, n);
  return v;
}

bool Initiator::post(const std::vector<uint8_t>& capsule) {
  if (capsule.size() > kSendSlotSize) return false;
  uint32_t slot = send_slot_++ % kSendSlots;
  std::memcpy(send_->data() + size_t(slot) * kSendSlotSize, capsule.data(), capsule.size());
  NDK_SGE s = send_->sge(size_t(slot) * kSendSlotSize, capsule.size());
  return qp_->send(reinterpret_cast<void*>(uintptr_t(0x10000 + slot)), &s, 1,
                   NDK_OP_FLAG_SILENT_SUCCESS) == STATUS_SUCCESS;
}

std::vector<Cqe> Initiator::collect(size_t n, double seconds) {
  auto dl = tools::deadline_in(seconds);
  while (pending_.size() < n && !broken_) {
    NDK_RESULT r[16];
    ULONG k = cq_->wait(r, 16, true, dl);
    if (k == 0) break;
    for (ULONG i = 0; i < k; ++i) {
      auto c = reinterpret_cast<uintptr_t>(r[i].RequestContext);
      if (r[i].Status != STATUS_SUCCESS) {
        broken_ = true;
        continue;
      }
      if (c >= 0x10000) continue;  // a send
      Cqe q;
      std::memcpy(&q, recv_->data() + c * 16, 16);
      pending_.push_back(q);
      NDK_SGE s = recv_->sge(c * 16, 16);
      qp_->receive(reinterpret_cast<void*>(c), &s, 1);
    }
  }
  std::vector<Cqe> out;
  size_t m = std::min(n, pending_.size());
  out.assign(pending_.begin(), pending_.begin() + long(m));
  pending_.erase(pending_.begin(), pending_.begin() + long(m));
  return out;
}

std::optional<Cqe> Initiator::submit(const std::vector<uint8_t>& capsule, double seconds) {
  if (!post(capsule)) return std::nullopt;
  auto v = collect(1, seconds);
  if (v.empty()) return std::nullopt;
  return v[0];
}

std::optional<Cqe> Initiator::connect(const std::string& subnqn, const std::string& hostnqn,
                                      uint16_t cntlid, uint16_t sqsize, uint16_t qid,
                                      uint32_t kato_ms) {
  ConnectData cd{};
  cd.cntlid = cntlid;
  std::memcpy(cd.subnqn, subnqn.data(), std::min(subnqn.size(), sizeof cd.subnqn));
  std::memcpy(cd.hostnqn, hostnqn.data(), std::min(hostnqn.size(), sizeof cd.hostnqn));
  std::memcpy(data(), &cd, sizeof cd);
  Sqe s = sqe(kFabricsCommand, 1);
  ConnectFields f{};
  f.qid = qid;
  f.sqsize = sqsize;
  f.kato_ms = kato_ms;
  set_connect_fields(s, f);
  return submit(keyed(s, 0, sizeof cd));
}

bool Initiator::enable() {
  Sqe s = sqe(kFabricsCommand, 2);
  s.nsid = kFctPropertySet;
  s.cdw11 = kPropCc;
  s.cdw12 = 1 | (6u << 16) | (4u << 20);
  auto c = submit(bytes(s));
  return c && c->ok();
}

}  // namespace nvmf_test
