// SPDX-License-Identifier: Apache-2.0
// host_error.h - how ndk-nvme fails: one exception type carrying the exit
// code that tells a script what happened (docs/nvmf.md, "Exit status").
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace nvmf::host {

enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,           // local failure: adapter, resources, internal
  kExitUsage = 2,           // bad command line
  kExitConnect = 3,         // could not connect: refused, RDMA CM reject, unreachable, timeout
  kExitNvmeStatus = 4,      // the controller completed a command with an error status
  kExitVerify = 5,          // data read back differs from the pattern written
  kExitProtocol = 6,        // the target broke the transport rules (wrong invalidated key, bad CQE)
  kExitConnectionLost = 7,  // the association broke or a command timed out during I/O
  kExitPeerSilent = 8,      // a command timed out and the target never sent a byte on that queue
  kExitInterrupted = 130,   // SIGINT/SIGTERM (load: after its report and the controller shutdown)
};

struct HostError : std::runtime_error {
  HostError(ExitCode c, const std::string& what) : std::runtime_error(what), code(c) {}
  ExitCode code;
};

// "LBA Out of Range (SCT 0x0, SC 0x80, DNR)" for a CQE status field
// (bits 15:1 of the CQE's status word, i.e. Cqe::status_field()).
std::string nvme_status_text(uint16_t status_field);

// "invalid host send queue size (HSQSIZE)" for an RDMA CM reject status.
std::string cm_reject_text(uint16_t sts);

// The private data of a refused queue connection (the MPA Reject's): the
// reason an NVMe/RDMA target gives ("the target rejected queue 1: ..."), or,
// when it is not an NVMe/RDMA CM reject (another length, RECFMT not 0, a
// status no target sends: an ndkperf server's refusal, say), "<peer> is not
// an NVMe/RDMA target: ...". Empty data: "" (no reason given).
std::string cm_refusal_text(std::span<const uint8_t> reject, uint16_t qid, const std::string& peer);
// "" when an accept's private data is an NVMe/RDMA CM accept (32 bytes,
// RECFMT 0, CRQSIZE > 0); else "<peer> is not an NVMe/RDMA target: ...".
std::string cm_accept_problem(std::span<const uint8_t> accept, const std::string& peer);

}  // namespace nvmf::host
