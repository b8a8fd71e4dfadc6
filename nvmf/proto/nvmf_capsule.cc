// SPDX-License-Identifier: Apache-2.0
// nvmf_capsule.cc - see nvmf_capsule.h.
#include "nvmf_capsule.h"

#include <algorithm>
#include <cstring>

namespace nvmf {

DataDir data_direction(const Sqe& s) {
  uint8_t op = s.opcode == kFabricsCommand ? s.fctype() : s.opcode;
  return static_cast<DataDir>(op & 3);
}

ParsedCapsule parse_capsule(std::span<const uint8_t> capsule) {
  ParsedCapsule p;
  if (capsule.size() < kSqeSize) {
    p.fatal = true;
    p.status = make_status(kSctGeneric, kScInvalidField);
    return p;
  }
  std::memcpy(&p.sqe, capsule.data(), kSqeSize);
  const Sqe& s = p.sqe;
  // Fabrics: SGLs for data, the metadata pointer a plain address (01b).
  if (s.psdt() != kPsdtSgl || s.fuse() != 0) {
    p.status = make_status(kSctGeneric, kScInvalidField);
    return p;
  }
  const SglDescriptor& d = s.sgl1;
  const size_t icd_avail = capsule.size() - kSqeSize;
  switch (d.type()) {
    case kSglKeyedDataBlock:
      if (d.subtype() != kSglSubAddress && d.subtype() != kSglSubInvalidate) {
        p.status = make_status(kSctGeneric, kScSglDescriptorTypeInvalid);
        return p;
      }
      p.length = d.keyed_length();
      if (p.length == 0) return p;  // no data (the key is not used)
      p.kind = DataKind::kKeyed;
      p.address = d.address;
      p.key = d.key();
      p.invalidate = d.subtype() == kSglSubInvalidate;
      return p;
    case kSglDataBlock: {
      if (d.subtype() != kSglSubOffset) {
        p.status = make_status(kSctGeneric, kScSglDescriptorTypeInvalid);
        return p;
      }
      // In-capsule data only carries host-to-controller data.
      if (data_direction(s) != DataDir::kHostToController) {
        p.status = make_status(kSctGeneric, kScInvalidField);
        return p;
      }
      uint64_t off = d.address;
      uint32_t len = d.unkeyed_length();
      if (off > icd_avail) {
        p.status = make_status(kSctGeneric, kScInvalidSglOffset);
        return p;
      }
      if (len > icd_avail - off) {
        p.status = make_status(kSctGeneric, kScDataSglLengthInvalid);
        return p;
      }
      if (len == 0) return p;
      p.kind = DataKind::kInCapsule;
      p.address = kSqeSize + off;
      p.length = len;
      return p;
    }
    default:
      // Segments, bit buckets, transport-specific: not in the RDMA binding
      // (MSDBD = 1, one descriptor in the SQE).
      p.status = make_status(kSctGeneric, kScSglDescriptorTypeInvalid);
      return p;
  }
}

namespace {
// The NQN in a 256-byte field: NUL terminated within it, not empty.
std::optional<std::string> field_nqn(const char* f) {
  const char* end = static_cast<const char*>(std::memchr(f, 0, kNqnMax));
  if (end == nullptr || end == f) return std::nullopt;
  return std::string(f, end);
}
}  // namespace

ConnectDataResult parse_connect_data(std::span<const uint8_t> data) {
  ConnectDataResult r;
  if (data.size() < kConnectDataSize) {
    r.status = make_status(kSctGeneric, kScDataSglLengthInvalid);
    return r;
  }
  ConnectData cd;
  std::memcpy(&cd, data.data(), sizeof cd);
  auto sub = field_nqn(cd.subnqn);
  auto host = field_nqn(cd.hostnqn);
  if (!sub || !host) {
    r.status = make_status(kSctCommandSpecific, kScConnectInvalidParameters);
    r.result =
        connect_ipo(!sub ? offsetof(ConnectData, subnqn) : offsetof(ConnectData, hostnqn), true);
    return r;
  }
  ConnectInfo ci;
  std::memcpy(ci.hostid, cd.hostid, sizeof ci.hostid);
  ci.cntlid = cd.cntlid;
  ci.subnqn = std::move(*sub);
  ci.hostnqn = std::move(*host);
  r.info = std::move(ci);
  return r;
}

CmRequestResult parse_cm_request(std::span<const uint8_t> pdata, const CmLimits& lim) {
  CmRequestResult r;
  if (pdata.size() < sizeof(RdmaCmRequest)) {
    r.reject = kCmInvalidLength;
    return r;
  }
  RdmaCmRequest q;
  std::memcpy(&q, pdata.data(), sizeof q);
  if (q.recfmt != 0) {
    r.reject = kCmInvalidRecfmt;
    return r;
  }
  if (q.qid > lim.max_qid) {
    r.reject = kCmInvalidQid;
    return r;
  }
  // hsqsize is 0's based; a queue needs at least 2 entries (one free slot).
  uint32_t entries = uint32_t(q.hsqsize) + 1;
  uint32_t max = q.qid == 0 ? lim.max_admin_depth : lim.max_io_depth;
  if (q.hsqsize == 0 || entries > max) {
    r.reject = kCmInvalidHsqsize;
    return r;
  }
  // The host must be able to take a response for every command it may send.
  if (q.hrqsize < entries) {
    r.reject = kCmInvalidHrqsize;
    return r;
  }
  r.req = q;
  return r;
}

std::vector<uint8_t> cm_accept_data(uint16_t crqsize) {
  RdmaCmAccept a{};
  a.recfmt = 0;
  a.crqsize = crqsize;
  std::vector<uint8_t> v(sizeof a);
  std::memcpy(v.data(), &a, sizeof a);
  return v;
}

std::vector<uint8_t> cm_reject_data(uint16_t status) {
  RdmaCmReject j{0, status};
  std::vector<uint8_t> v(sizeof j);
  std::memcpy(v.data(), &j, sizeof j);
  return v;
}

uint16_t parse_cm_reject(std::span<const uint8_t> pdata) {
  if (pdata.size() < sizeof(RdmaCmReject)) return 0;
  RdmaCmReject j;
  std::memcpy(&j, pdata.data(), sizeof j);
  return j.sts;
}

GetLogFields get_log_fields(const Sqe& s) {
  GetLogFields f;
  f.lid = uint8_t(s.cdw10);
  f.lsp = uint8_t((s.cdw10 >> 8) & 0x7F);
  f.rae = (s.cdw10 >> 15) & 1;
  // NUMDL = cdw10[31:16], NUMDU = cdw11[15:0]; 0's based.
  f.numd = ((uint64_t(s.cdw11 & 0xFFFF) << 16) | (s.cdw10 >> 16)) + 1;
  f.lpo = s.cdw12 | (uint64_t(s.cdw13) << 32);
  return f;
}

void put_string(uint8_t* field, size_t field_size, std::string_view s, char pad) {
  size_t n = std::min(field_size, s.size());
  std::memcpy(field, s.data(), n);
  std::memset(field + n, pad, field_size - n);
}

std::vector<uint8_t> build_discovery_log(uint64_t genctr, const std::vector<DiscoveryEntry>& e) {
  std::vector<uint8_t> page(kDiscLogHeaderSize + e.size() * kDiscLogEntrySize, 0);
  DiscLogHeader h{};
  h.genctr = genctr;
  h.numrec = e.size();
  h.recfmt = 0;
  std::memcpy(page.data(), &h, sizeof h);
  for (size_t i = 0; i < e.size(); ++i) {
    DiscLogEntry r{};
    r.trtype = kTrtypeRdma;
    r.adrfam = kAdrfamIpv4;
    r.subtype = e[i].subtype;
    r.treq = kTreqNotSpecified;
    r.portid = e[i].portid;
    r.cntlid = kCntlidDynamic;
    r.asqsz = e[i].asqsz;
    put_string(reinterpret_cast<uint8_t*>(r.trsvcid), sizeof r.trsvcid, e[i].trsvcid, '\0');
    put_string(reinterpret_cast<uint8_t*>(r.subnqn), sizeof r.subnqn - 1, e[i].subnqn, '\0');
    put_string(reinterpret_cast<uint8_t*>(r.traddr), sizeof r.traddr - 1, e[i].traddr, '\0');
    r.rdma_qptype = kRdmaQptypeConnected;
    r.rdma_prtype = kRdmaPrtypeIwarp;
    r.rdma_cms = kRdmaCmsRdmaCm;
    std::memcpy(page.data() + kDiscLogHeaderSize + i * kDiscLogEntrySize, &r, sizeof r);
  }
  return page;
}

bool copy_log_slice(std::span<const uint8_t> page, uint64_t lpo, std::span<uint8_t> out) {
  if (lpo > page.size()) return false;
  size_t n = std::min<uint64_t>(out.size(), page.size() - lpo);
  std::memcpy(out.data(), page.data() + lpo, n);
  std::memset(out.data() + n, 0, out.size() - n);
  return true;
}

std::string connect_ipo_text(uint32_t dw0) {
  const bool in_data = (dw0 >> 16) & 1;
  const uint16_t ipo = static_cast<uint16_t>(dw0 & 0xFFFF);
  const char* field = nullptr;
  if (in_data) {
    if (ipo < offsetof(ConnectData, cntlid))
      field = "HOSTID";
    else if (ipo < offsetof(ConnectData, cntlid) + 2)
      field = "CNTLID";
    else if (ipo >= offsetof(ConnectData, subnqn) && ipo < offsetof(ConnectData, hostnqn))
      field = "SUBNQN";
    else if (ipo >= offsetof(ConnectData, hostnqn) && ipo < offsetof(ConnectData, rsvd768))
      field = "HOSTNQN";
  } else {
    // Connect SQE: FCTYPE byte 4, SGL1 bytes 24-39, then CDW10-12.
    if (ipo == 4)
      field = "FCTYPE";
    else if (ipo >= 24 && ipo < 40)
      field = "SGL1";
    else if (ipo == 40 || ipo == 41)
      field = "RECFMT";
    else if (ipo == 42 || ipo == 43)
      field = "QID";
    else if (ipo == 44 || ipo == 45)
      field = "SQSIZE";
    else if (ipo == 46)
      field = "CATTR";
    else if (ipo >= 48 && ipo < 52)
      field = "KATO";
  }
  std::string s =
      std::string(in_data ? "Connect data" : "command") + " byte " + std::to_string(ipo);
  if (field != nullptr) s += std::string(" (") + field + ")";
  return s;
}

}  // namespace nvmf
