// SPDX-License-Identifier: Apache-2.0
// host_error.cc - readable NVMe status codes and RDMA CM reject reasons
// (NVMe Base 2.0 "Status Code - Generic Command Status Values" and the
// command specific ones a host meets; NVMe RDMA Transport 1.0, "RDMA_CM_REJECT
// Private Data").
#include "host_error.h"

#include <cstdio>
#include <cstring>

#include "nvmf_wire.h"

namespace nvmf::host {

namespace {

const char* generic_name(uint8_t sc) {
  switch (sc) {
    case kScSuccess:
      return "Successful Completion";
    case kScInvalidOpcode:
      return "Invalid Command Opcode";
    case kScInvalidField:
      return "Invalid Field in Command";
    case kScCommandIdConflict:
      return "Command ID Conflict";
    case kScDataTransferError:
      return "Data Transfer Error";
    case kScInternalError:
      return "Internal Error";
    case kScAbortRequested:
      return "Command Abort Requested";
    case kScAbortSqDeleted:
      return "Command Aborted due to SQ Deletion";
    case kScInvalidNamespace:
      return "Invalid Namespace or Format";
    case kScCommandSequenceError:
      return "Command Sequence Error";
    case kScInvalidSglSegmentDescriptor:
      return "Invalid SGL Segment Descriptor";
    case kScInvalidNumberOfSglDescriptors:
      return "Invalid Number of SGL Descriptors";
    case kScDataSglLengthInvalid:
      return "Data SGL Length Invalid";
    case kScSglDescriptorTypeInvalid:
      return "SGL Descriptor Type Invalid";
    case kScInvalidSglOffset:
      return "Invalid SGL Offset";
    case kScKeepAliveTimerExpired:
      return "Keep Alive Timer Expired";
    case kScLbaOutOfRange:
      return "LBA Out of Range";
    case kScCapacityExceeded:
      return "Capacity Exceeded";
    case kScNamespaceNotReady:
      return "Namespace Not Ready";
    default:
      return nullptr;
  }
}

const char* specific_name(uint8_t sc) {
  switch (sc) {
    case kScInvalidQueueIdentifier:
      return "Invalid Queue Identifier";
    case kScInvalidQueueSize:
      return "Invalid Queue Size";
    case kScInvalidLogPage:
      return "Invalid Log Page";
    case kScFeatureIdNotSaveable:
      return "Feature Identifier Not Saveable";
    case kScFeatureNotChangeable:
      return "Feature Not Changeable";
    case kScConnectIncompatibleFormat:
      return "Connect: Incompatible Format";
    case kScConnectControllerBusy:
      return "Connect: Controller Busy";
    case kScConnectInvalidParameters:
      return "Connect: Invalid Parameters";
    case kScConnectRestartDiscovery:
      return "Connect: Restart Discovery";
    case kScConnectInvalidHost:
      return "Connect: Invalid Host";
    default:
      return nullptr;
  }
}

}  // namespace

std::string nvme_status_text(uint16_t status_field) {
  uint8_t sc = uint8_t(status_field & 0xFF);
  uint8_t sct = uint8_t((status_field >> 8) & 7);
  bool dnr = (status_field & 0x4000) != 0;
  const char* name = nullptr;
  if (sct == kSctGeneric) name = generic_name(sc);
  if (sct == kSctCommandSpecific) name = specific_name(sc);
  if (sct == kSctMediaError) name = "Media or Data Integrity Error";
  if (sct == kSctPath) name = "Path Related Status";
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s (SCT 0x%x, SC 0x%02x%s)", name ? name : "Unknown Status", sct,
                sc, dnr ? ", DNR" : "");
  return buf;
}

std::string cm_reject_text(uint16_t sts) {
  switch (sts) {
    case kCmInvalidLength:
      return "invalid private data length";
    case kCmInvalidRecfmt:
      return "invalid record format (RECFMT)";
    case kCmInvalidQid:
      return "invalid queue ID (QID)";
    case kCmInvalidHsqsize:
      return "invalid host send queue size (HSQSIZE)";
    case kCmInvalidHrqsize:
      return "invalid host receive queue size (HRQSIZE)";
    case kCmNoResources:
      return "no resources";
    case kCmInvalidIrd:
      return "invalid IRD";
    case kCmInvalidOrd:
      return "invalid ORD";
    case kCmInvalidCntlid:
      return "invalid controller ID (CNTLID)";
    default:
      return "unknown reject status " + std::to_string(sts);
  }
}

namespace {
std::string hex_head(std::span<const uint8_t> b) {
  std::string s;
  char h[4];
  for (size_t i = 0; i < b.size() && i < 8; ++i) {
    std::snprintf(h, sizeof h, "%02x", b[i]);
    s += h;
  }
  return s + (b.size() > 8 ? "..." : "");
}
}  // namespace

std::string cm_refusal_text(std::span<const uint8_t> reject, uint16_t qid,
                            const std::string& peer) {
  if (reject.empty()) return "";
  RdmaCmReject rj{};
  if (reject.size() == sizeof rj) std::memcpy(&rj, reject.data(), sizeof rj);
  // NVMe RDMA Transport 1.0: the reject's private data is RECFMT 0 and one of
  // the RDMA_CM_REJECT status codes; anything else came from another service.
  if (reject.size() != sizeof rj || rj.recfmt != 0 || rj.sts < kCmInvalidLength ||
      rj.sts > kCmInvalidCntlid)
    return peer + " is not an NVMe/RDMA target: it refused the connection with " +
           std::to_string(reject.size()) + " bytes of private data (" + hex_head(reject) +
           ") that are no NVMe/RDMA CM reject (another RDMA service on that port?)";
  return "the target rejected queue " + std::to_string(qid) + ": " + cm_reject_text(rj.sts) +
         " (RDMA CM reject status " + std::to_string(rj.sts) + ")";
}

std::string cm_accept_problem(std::span<const uint8_t> accept, const std::string& peer) {
  RdmaCmAccept ac{};
  if (accept.size() >= sizeof ac) std::memcpy(&ac, accept.data(), sizeof ac);
  if (accept.size() >= sizeof ac && ac.recfmt == 0 && ac.crqsize > 0) return "";
  return peer + " is not an NVMe/RDMA target: it accepted the connection with " +
         std::to_string(accept.size()) + " bytes of private data" +
         (accept.empty() ? "" : " (" + hex_head(accept) + ")") +
         " where an NVMe/RDMA CM accept has 32 (RECFMT 0, CRQSIZE)";
}

}  // namespace nvmf::host
