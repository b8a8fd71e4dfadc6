// SPDX-License-Identifier: Apache-2.0
// nvmf_capsule.h - pure parsers over received NVMe/RDMA byte spans: command
// capsules (size, PSDT, SGL classification with bounds checks), Connect data,
// RDMA CM private data, Get Log Page / Identify fields, and the discovery log
// page builder. No I/O, no allocation on the command path: the target calls
// them on every capsule and the fuzz harness (fuzz/nvmf_capsule_fuzz.cc)
// calls them on arbitrary bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nvmf_wire.h"

namespace nvmf {

// Where a command's data is.
enum class DataKind : uint8_t {
  kNone,       // no data (keyed descriptor of length 0: the Linux host's "null" SGL)
  kKeyed,      // in the host's memory: RDMA Read/Write with (address, key, length)
  kInCapsule,  // after the SQE in the received capsule
};

// Direction of a command's data from its opcode (bits 1:0; for Fabrics
// commands, of its fctype).
enum class DataDir : uint8_t { kNone = 0, kHostToController = 1, kControllerToHost = 2, kBidi = 3 };
DataDir data_direction(const Sqe& s);

struct ParsedCapsule {
  Sqe sqe{};  // a copy: the receive buffer may be reposted before the command ends
  DataKind kind = DataKind::kNone;
  // kKeyed: host memory; kInCapsule: address = offset of the data from the
  // start of the capsule (64 + the descriptor's offset), key = 0.
  uint64_t address = 0;
  uint32_t length = 0;
  uint32_t key = 0;
  bool invalidate = false;  // keyed subtype 0xF: answer with Send with Invalidate(key)
  // 0 when the capsule is usable; else the 15-bit status (make_status) for
  // the completion of this command.
  uint16_t status = 0;
  // The capsule is shorter than an SQE: no command identifier to answer, the
  // queue is broken (the target tears the queue down).
  bool fatal = false;
};

// Parses a received command capsule of `capsule.size()` bytes. Checks: the
// size (>= 64), PSDT = 01b (fabrics uses SGLs only), FUSE = 0, the SGL1
// descriptor type and subtype, and for in-capsule data that offset and
// length lie within the bytes actually received. Keyed lengths are returned
// as sent; the caller checks them against the command and its limits.
ParsedCapsule parse_capsule(std::span<const uint8_t> capsule);

// Connect data (1024 bytes). NQNs must be NUL terminated within their
// 256-byte fields and not empty.
struct ConnectInfo {
  uint8_t hostid[16];
  uint16_t cntlid;
  std::string subnqn;
  std::string hostnqn;
};
struct ConnectDataResult {
  std::optional<ConnectInfo> info;
  uint16_t status = 0;  // make_status(...) when !info
  uint32_t result = 0;  // Connect response DW0: IATTR/IPO naming the bad field
};
ConnectDataResult parse_connect_data(std::span<const uint8_t> data);
// DW0 of a Connect "invalid parameters" completion: the byte offset of the
// bad field (IPO) and whether it is in the Connect data (IATTR bit 16) or in
// the SQE.
constexpr uint32_t connect_ipo(uint16_t offset, bool in_data) {
  return (in_data ? 1u << 16 : 0u) | offset;
}
// The reverse, for the host: "Connect data byte 256 (SUBNQN)" or "command
// byte 42 (QID)" from DW0 (NVMe-oF: IPO bits 15:0, IATTR bits 23:16 with
// bit 16 set when the offset is into the Connect data, clear for the SQE).
std::string connect_ipo_text(uint32_t dw0);

// RDMA CM connect request private data (host -> target).
struct CmLimits {
  uint16_t max_admin_depth = 32;  // admin/discovery queue entries (hsqsize + 1)
  uint16_t max_io_depth = 128;    // I/O queue entries
  uint16_t max_qid = 8;           // highest I/O queue identifier accepted
};
struct CmRequestResult {
  std::optional<RdmaCmRequest> req;
  uint16_t reject = 0;  // RdmaCmStatus when !req
};
CmRequestResult parse_cm_request(std::span<const uint8_t> pdata, const CmLimits& lim);
std::vector<uint8_t> cm_accept_data(uint16_t crqsize);
std::vector<uint8_t> cm_reject_data(uint16_t status);
// The host side: decodes the target's reject private data (status or 0).
uint16_t parse_cm_reject(std::span<const uint8_t> pdata);

// Get Log Page fields (NVMe Base 2.0 figure "Get Log Page - Command Dword 10"
// ..13): LID, NUMD (dwords, 1's based here), LPO (bytes).
struct GetLogFields {
  uint8_t lid;
  uint8_t lsp;
  bool rae;
  uint64_t numd;  // number of dwords (1's based)
  uint64_t lpo;   // byte offset
  uint64_t bytes() const { return numd * 4; }
};
GetLogFields get_log_fields(const Sqe& s);

// Identify fields: CNS = cdw10[7:0], CNTID = cdw10[31:16], CSI = cdw11[31:24].
struct IdentifyFields {
  uint8_t cns;
  uint16_t cntid;
  uint8_t csi;
};
inline IdentifyFields identify_fields(const Sqe& s) {
  return {uint8_t(s.cdw10), uint16_t(s.cdw10 >> 16), uint8_t(s.cdw11 >> 24)};
}

// One subsystem entry of a discovery log page.
struct DiscoveryEntry {
  std::string subnqn;
  std::string traddr;   // IPv4 dotted quad
  std::string trsvcid;  // port
  uint16_t portid = 1;
  uint16_t asqsz = 32;
  uint8_t subtype = kSubtypeNvme;
};
// The whole log page: header + one 1024-byte record per entry.
std::vector<uint8_t> build_discovery_log(uint64_t genctr, const std::vector<DiscoveryEntry>& e);
// Copies page[lpo, lpo + out.size()) into out, zero-filling what lies past
// the page's end (a host may ask for more than there is). Returns false if
// lpo is beyond the page (Invalid Field in the Get Log Page command).
bool copy_log_slice(std::span<const uint8_t> page, uint64_t lpo, std::span<uint8_t> out);

// Copies an ASCII string into a fixed field, padded with `pad` (spaces for
// Identify SN/MN/FR, NULs for NQNs).
void put_string(uint8_t* field, size_t field_size, std::string_view s, char pad);

}  // namespace nvmf
