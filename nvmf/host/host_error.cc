// SPDX-License-Identifier: Apache-2.0
// host_error.cc - readable NVMe status codes and RDMA CM reject reasons
// (NVMe Base 2.0 "Status Code - Generic Command Status Values" and the
// command specific ones a host meets; NVMe RDMA Transport 1.0, "RDMA_CM_REJECT
// Private Data").
#include "host_error.h"

#include <cstdio>

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

}  // namespace nvmf::host
