// SPDX-License-Identifier: Apache-2.0
// nvmf_wire.h - NVMe over Fabrics (RDMA transport) wire formats shared by the
// softndk NVMe-oF target (ndk-nvmet) and host (ndk-nvme).
//
// Sources: NVM Express Base Specification 2.0 (submission/completion queue
// entries, SGL descriptors, Identify, Get Log Page, Features), NVMe over
// Fabrics 1.1 / NVMe Base 2.0 chapter 6 (Fabrics commands, Connect, the
// discovery log) and the NVMe RDMA Transport Specification 1.0 (RDMA CM
// private data, keyed SGL data blocks, remote invalidation).
//
// Everything on the wire is little endian. These structs are the exact
// layouts (static_assert'ed); the pure functions in nvmf_capsule.h check a
// received byte span before anything reads a field through them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace nvmf {

// ---------------------------------------------------------------- sizes ---
inline constexpr size_t kSqeSize = 64;  // submission queue entry
inline constexpr size_t kCqeSize = 16;  // completion queue entry
inline constexpr size_t kConnectDataSize = 1024;
inline constexpr size_t kNqnMax = 256;  // NQN field, NUL padded
inline constexpr size_t kIdentifySize = 4096;
inline constexpr size_t kDiscLogHeaderSize = 1024;
inline constexpr size_t kDiscLogEntrySize = 1024;
inline constexpr uint16_t kDefaultPort = 4420;
inline constexpr const char* kDiscoveryNqn = "nqn.2014-08.org.nvmexpress.discovery";

// ------------------------------------------------------------- opcodes ---
enum AdminOpcode : uint8_t {
  kAdminDeleteSq = 0x00,
  kAdminCreateSq = 0x01,
  kAdminGetLogPage = 0x02,
  kAdminDeleteCq = 0x04,
  kAdminCreateCq = 0x05,
  kAdminIdentify = 0x06,
  kAdminAbort = 0x08,
  kAdminSetFeatures = 0x09,
  kAdminGetFeatures = 0x0A,
  kAdminAsyncEventRequest = 0x0C,
  kAdminKeepAlive = 0x18,
  kFabricsCommand = 0x7F,  // fctype in byte 4 selects the Fabrics command
};

enum NvmOpcode : uint8_t {
  kNvmFlush = 0x00,
  kNvmWrite = 0x01,
  kNvmRead = 0x02,
  kNvmWriteZeroes = 0x08,
  kNvmDatasetManagement = 0x09,
};

enum FabricsType : uint8_t {
  kFctPropertySet = 0x00,
  kFctConnect = 0x01,
  kFctPropertyGet = 0x04,
  kFctAuthSend = 0x05,
  kFctAuthReceive = 0x06,
  kFctDisconnect = 0x08,
};

// Identify CNS values.
enum IdentifyCns : uint8_t {
  kCnsNamespace = 0x00,
  kCnsController = 0x01,
  kCnsActiveNsList = 0x02,
  kCnsNsDescriptorList = 0x03,
};

// Log page identifiers.
enum LogPage : uint8_t {
  kLogError = 0x01,
  kLogSmart = 0x02,
  kLogFirmwareSlot = 0x03,
  kLogChangedNsList = 0x04,
  kLogCommandEffects = 0x05,
  kLogDiscovery = 0x70,
};

// Feature identifiers.
enum FeatureId : uint8_t {
  kFeatArbitration = 0x01,
  kFeatPowerManagement = 0x02,
  kFeatTemperatureThreshold = 0x04,
  kFeatErrorRecovery = 0x05,
  kFeatVolatileWriteCache = 0x06,
  kFeatNumberOfQueues = 0x07,
  kFeatInterruptCoalescing = 0x08,
  kFeatWriteAtomicity = 0x0A,
  kFeatAsyncEventConfig = 0x0B,
  kFeatKeepAliveTimer = 0x0F,
  kFeatHostIdentifier = 0x81,
};

// Controller properties (Property Get/Set offsets; CAP and ASQ/ACQ are 8 bytes).
enum Property : uint32_t {
  kPropCap = 0x00,
  kPropVs = 0x08,
  kPropCc = 0x14,
  kPropCsts = 0x1C,
};

// ---------------------------------------------------------- status codes ---
// Status field of a CQE (bits 15:1; bit 0 is the phase tag, unused on fabrics):
// SC = bits 8:1, SCT = bits 11:9, CRD = 13:12, More = 14, DNR = 15.
enum StatusCodeType : uint8_t {
  kSctGeneric = 0x0,
  kSctCommandSpecific = 0x1,
  kSctMediaError = 0x2,
  kSctPath = 0x3,
};

enum GenericStatus : uint8_t {
  kScSuccess = 0x00,
  kScInvalidOpcode = 0x01,
  kScInvalidField = 0x02,
  kScCommandIdConflict = 0x03,
  kScDataTransferError = 0x04,
  kScInternalError = 0x06,
  kScAbortRequested = 0x07,
  kScAbortSqDeleted = 0x08,
  kScInvalidNamespace = 0x0B,
  kScCommandSequenceError = 0x0C,
  kScInvalidSglSegmentDescriptor = 0x0D,
  kScInvalidNumberOfSglDescriptors = 0x0E,
  kScDataSglLengthInvalid = 0x0F,
  kScMetadataSglLengthInvalid = 0x10,
  kScSglDescriptorTypeInvalid = 0x11,
  kScInvalidSglOffset = 0x16,
  kScKeepAliveTimerExpired = 0x1C,
  kScCommandAbortedPreemptAbort = 0x1E,
  kScLbaOutOfRange = 0x80,
  kScCapacityExceeded = 0x81,
  kScNamespaceNotReady = 0x82,
};

enum CommandSpecificStatus : uint8_t {
  kScInvalidQueueIdentifier = 0x01,
  kScInvalidQueueSize = 0x02,
  kScAbortCommandLimitExceeded = 0x03,
  kScAsyncEventRequestLimitExceeded = 0x05,
  kScInvalidLogPage = 0x09,
  kScFeatureIdNotSaveable = 0x0D,
  kScFeatureNotChangeable = 0x0E,
  // Fabrics Connect (command specific).
  kScConnectIncompatibleFormat = 0x80,
  kScConnectControllerBusy = 0x81,
  kScConnectInvalidParameters = 0x82,
  kScConnectRestartDiscovery = 0x83,
  kScConnectInvalidHost = 0x84,
};

inline constexpr uint16_t kStatusDnr = 0x8000;  // Do Not Retry

// The 15-bit status as it sits in CQE bits 15:1 (caller shifts left by 1).
constexpr uint16_t make_status(uint8_t sct, uint8_t sc, bool dnr = true) {
  return static_cast<uint16_t>((dnr ? 0x4000u : 0u) | (uint16_t(sct & 7) << 8) | sc);
}

// ------------------------------------------------------- SGL descriptors ---
// Byte 15 of a descriptor: type in bits 7:4, subtype in bits 3:0.
enum SglType : uint8_t {
  kSglDataBlock = 0x0,
  kSglBitBucket = 0x1,
  kSglSegment = 0x2,
  kSglLastSegment = 0x3,
  kSglKeyedDataBlock = 0x4,
};
enum SglSubtype : uint8_t {
  kSglSubAddress = 0x0,     // keyed: address + key; data block: memory address
  kSglSubOffset = 0x1,      // data block: offset into in-capsule data
  kSglSubInvalidate = 0xF,  // keyed: target should remotely invalidate the key
};

#pragma pack(push, 1)
struct SglDescriptor {  // 16 bytes
  uint64_t address;
  // Keyed data block: length in bytes 8..10 (24 bits) and key in 11..14.
  // Unkeyed data block: length in bytes 8..11, bytes 12..14 reserved.
  uint8_t body[7];
  uint8_t type_subtype;

  uint8_t type() const { return type_subtype >> 4; }
  uint8_t subtype() const { return type_subtype & 0xF; }
  uint32_t keyed_length() const { return body[0] | (body[1] << 8) | (uint32_t(body[2]) << 16); }
  uint32_t key() const {
    uint32_t k;
    std::memcpy(&k, body + 3, 4);
    return k;
  }
  uint32_t unkeyed_length() const {
    uint32_t l;
    std::memcpy(&l, body, 4);
    return l;
  }
  void set_keyed(uint64_t addr, uint32_t length, uint32_t key_, bool invalidate) {
    address = addr;
    body[0] = uint8_t(length);
    body[1] = uint8_t(length >> 8);
    body[2] = uint8_t(length >> 16);
    std::memcpy(body + 3, &key_, 4);
    type_subtype =
        uint8_t(kSglKeyedDataBlock << 4) | (invalidate ? kSglSubInvalidate : kSglSubAddress);
  }
  void set_in_capsule(uint64_t offset, uint32_t length) {
    address = offset;
    std::memset(body, 0, sizeof body);
    std::memcpy(body, &length, 4);
    type_subtype = uint8_t(kSglDataBlock << 4) | kSglSubOffset;
  }
};
static_assert(sizeof(SglDescriptor) == 16);
inline constexpr uint32_t kKeyedSglMaxLength = 0xFFFFFF;

// Submission queue entry (command capsule header). Fabrics commands reuse the
// layout: byte 4 is fctype, and the command-specific fields are in cdw10..15
// (see the accessors below).
struct Sqe {
  uint8_t opcode;
  uint8_t flags;  // bits 1:0 FUSE, bits 7:6 PSDT (fabrics: must be 01b = SGL)
  uint16_t cid;
  uint32_t nsid;  // fabrics: byte 4 = fctype
  uint32_t cdw2;
  uint32_t cdw3;
  uint64_t mptr;
  SglDescriptor sgl1;  // DPTR
  uint32_t cdw10;
  uint32_t cdw11;
  uint32_t cdw12;
  uint32_t cdw13;
  uint32_t cdw14;
  uint32_t cdw15;

  uint8_t fctype() const { return uint8_t(nsid & 0xFF); }
  uint8_t psdt() const { return flags >> 6; }
  uint8_t fuse() const { return flags & 3; }
};
static_assert(sizeof(Sqe) == kSqeSize);
inline constexpr uint8_t kPsdtSgl = 0x1;  // PSDT 01b: SGL for data (fabrics requires SGL)
inline constexpr uint8_t kFlagsSgl = kPsdtSgl << 6;

// Completion queue entry (response capsule).
struct Cqe {
  uint64_t result;  // DW0..1: command specific (Connect: CNTLID in bits 15:0)
  uint16_t sqhd;    // SQ head pointer (fabrics: flow control)
  uint16_t sqid;
  uint16_t cid;
  uint16_t status;  // bits 15:1 status (make_status() << 1), bit 0 phase

  uint16_t status_field() const { return status >> 1; }
  bool ok() const { return (status >> 1) == 0; }
};
static_assert(sizeof(Cqe) == kCqeSize);

// Connect command fields (in the SQE): recfmt = cdw10[15:0], qid = cdw10[31:16],
// sqsize (0's based) = cdw11[15:0], cattr = cdw11[23:16], kato (ms) = cdw12.
// Not a wire layout: outside the packing, so that kato_ms is aligned (a
// packed one sat at offset 7, and a reference to it is undefined behaviour).
#pragma pack(pop)
struct ConnectFields {
  uint16_t recfmt;
  uint16_t qid;
  uint16_t sqsize;
  uint8_t cattr;
  uint32_t kato_ms;
};
static_assert(alignof(ConnectFields) == 4);
#pragma pack(push, 1)
inline ConnectFields connect_fields(const Sqe& s) {
  return {uint16_t(s.cdw10), uint16_t(s.cdw10 >> 16), uint16_t(s.cdw11), uint8_t(s.cdw11 >> 16),
          s.cdw12};
}
inline void set_connect_fields(Sqe& s, const ConnectFields& f) {
  s.opcode = kFabricsCommand;
  s.nsid = kFctConnect;
  s.cdw10 = f.recfmt | (uint32_t(f.qid) << 16);
  s.cdw11 = f.sqsize | (uint32_t(f.cattr) << 16);
  s.cdw12 = f.kato_ms;
}

// Property Get/Set: attrib = cdw10[2:0] (0 = 4 bytes, 1 = 8 bytes),
// offset = cdw11, Set value = cdw12..13. Get returns the value in Cqe::result.

// Connect data (1024 bytes, sent as the command's data: in-capsule or keyed).
struct ConnectData {
  uint8_t hostid[16];
  uint16_t cntlid;  // 0xFFFF: dynamic controller (admin queue); I/O queues name it
  uint8_t rsvd18[238];
  char subnqn[kNqnMax];
  char hostnqn[kNqnMax];
  uint8_t rsvd768[256];
};
static_assert(sizeof(ConnectData) == kConnectDataSize);
static_assert(offsetof(ConnectData, subnqn) == 256);
static_assert(offsetof(ConnectData, hostnqn) == 512);
inline constexpr uint16_t kCntlidDynamic = 0xFFFF;

// ------------------------------------------------ RDMA CM private data ---
// On iWARP the RDMA CM private data is the MPA private data (after the
// RFC 6581 IRD/ORD words, which the MPA layer handles).
enum RdmaCmStatus : uint16_t {
  kCmInvalidLength = 0x01,
  kCmInvalidRecfmt = 0x02,
  kCmInvalidQid = 0x03,
  kCmInvalidHsqsize = 0x04,
  kCmInvalidHrqsize = 0x05,
  kCmNoResources = 0x06,
  kCmInvalidIrd = 0x07,
  kCmInvalidOrd = 0x08,
  kCmInvalidCntlid = 0x09,
};

struct RdmaCmRequest {  // host -> target
  uint16_t recfmt;      // 0
  uint16_t qid;         // 0 = admin queue
  uint16_t hrqsize;     // host receive queue size (number of response capsules)
  uint16_t hsqsize;     // host send queue size, 0's based (== Connect sqsize)
  uint16_t cntlid;      // I/O queues: the controller (optional, may be 0)
  uint8_t rsvd[22];
};
static_assert(sizeof(RdmaCmRequest) == 32);

struct RdmaCmAccept {  // target -> host
  uint16_t recfmt;
  uint16_t crqsize;  // controller receive queue size
  uint8_t rsvd[28];
};
static_assert(sizeof(RdmaCmAccept) == 32);

struct RdmaCmReject {  // target -> host, in the MPA reject's private data
  uint16_t recfmt;
  uint16_t sts;  // RdmaCmStatus
};
static_assert(sizeof(RdmaCmReject) == 4);

// --------------------------------------------------------- discovery log ---
enum TransportType : uint8_t { kTrtypeRdma = 1, kTrtypeTcp = 3 };
enum AddressFamily : uint8_t { kAdrfamIpv4 = 1, kAdrfamIpv6 = 2 };
enum SubsystemType : uint8_t {
  kSubtypeReferral = 1,
  kSubtypeNvme = 2,
  kSubtypeCurrentDiscovery = 3,
};
enum TransportRequirements : uint8_t {
  kTreqNotSpecified = 0,
  kTreqRequired = 1,
  kTreqNotRequired = 2,
  kTreqSqFlowControlDisable = 0x4,
};

struct DiscLogHeader {
  uint64_t genctr;
  uint64_t numrec;
  uint16_t recfmt;
  uint8_t rsvd[1006];
};
static_assert(sizeof(DiscLogHeader) == kDiscLogHeaderSize);

struct DiscLogEntry {
  uint8_t trtype;
  uint8_t adrfam;
  uint8_t subtype;
  uint8_t treq;
  uint16_t portid;
  uint16_t cntlid;
  uint16_t asqsz;
  uint16_t eflags;
  uint8_t rsvd12[20];
  char trsvcid[32];
  uint8_t rsvd64[192];
  char subnqn[kNqnMax];
  char traddr[256];
  // Transport specific address subtype, RDMA: qptype (1 = reliable
  // connected), prtype (1 = not specified, 2 = InfiniBand, 3 = RoCE, 4 = RoCE v2, 5 = iWARP), cms
  // (1 = RDMA CM), pkey.
  uint8_t rdma_qptype;
  uint8_t rdma_prtype;
  uint8_t rdma_cms;
  uint8_t rsvd771[5];
  uint16_t rdma_pkey;
  uint8_t rsvd778[246];
};
static_assert(sizeof(DiscLogEntry) == kDiscLogEntrySize);
static_assert(offsetof(DiscLogEntry, trsvcid) == 32);
static_assert(offsetof(DiscLogEntry, subnqn) == 256);
static_assert(offsetof(DiscLogEntry, traddr) == 512);
static_assert(offsetof(DiscLogEntry, rdma_qptype) == 768);
inline constexpr uint8_t kRdmaQptypeConnected = 1;
inline constexpr uint8_t kRdmaPrtypeIwarp = 5;
inline constexpr uint8_t kRdmaCmsRdmaCm = 1;

// Dataset Management range (16 bytes each; NR = cdw10[7:0] is 0's based,
// AD (deallocate) = cdw11 bit 2).
struct DsmRange {
  uint32_t attributes;
  uint32_t nlb;  // 1's based here (number of logical blocks)
  uint64_t slba;
};
static_assert(sizeof(DsmRange) == 16);
#pragma pack(pop)

// Read/Write/Write Zeroes: slba = cdw10 | cdw11 << 32, nlb = cdw12[15:0] (0's based).
inline uint64_t io_slba(const Sqe& s) { return s.cdw10 | (uint64_t(s.cdw11) << 32); }
inline uint32_t io_nlb(const Sqe& s) { return (s.cdw12 & 0xFFFF) + 1u; }

// Identify controller field offsets used by both sides (NVMe Base 2.0, figure
// "Identify Controller Data Structure"); the target builds the 4096-byte page
// and the host reads it through these.
namespace idctl {
inline constexpr size_t kVid = 0, kSsvid = 2, kSn = 4 /*20*/, kMn = 24 /*40*/, kFr = 64 /*8*/;
inline constexpr size_t kRab = 72, kIeee = 73, kCmic = 76, kMdts = 77, kCntlid = 78, kVer = 80;
inline constexpr size_t kOaes = 92, kCtratt = 96, kCntrltype = 111;
inline constexpr size_t kOacs = 256, kAcl = 258, kAerl = 259, kFrmw = 260, kLpa = 261, kElpe = 262;
inline constexpr size_t kKas = 320, kSqes = 512, kCqes = 513, kMaxcmd = 514, kNn = 516;
inline constexpr size_t kOncs = 520, kVwc = 525, kSgls = 536, kSubnqn = 768;
inline constexpr size_t kIoccsz = 1792, kIorcsz = 1796, kIcdoff = 1800, kFcatt = 1802;
inline constexpr size_t kMsdbd = 1803;
}  // namespace idctl

// Identify namespace field offsets.
namespace idns {
inline constexpr size_t kNsze = 0, kNcap = 8, kNuse = 16, kNsfeat = 24, kNlbaf = 25, kFlbas = 26;
inline constexpr size_t kDlfeat = 33, kNguid = 104 /*16*/, kEui64 = 120 /*8*/, kLbaf0 = 128;
}  // namespace idns

}  // namespace nvmf
