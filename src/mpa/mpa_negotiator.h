// SPDX-License-Identifier: Apache-2.0
// mpa/mpa_negotiator.h - MPA connection negotiation policy (RFC 5044 7.1,
// RFC 6581), no sockets: what to put in our Request/Reply and what to accept
// in the peer's, following Linux siw's rules (IWARP.md 9.2, 9.3, 9.8).
//
// The transport (src/tcp) moves bytes; this file decides. Frame encode and
// decode are delegated to the wire codec (mpa/mpa_frame.h) and only the
// "codec glue" functions in mpa_negotiator.cc call it.
//
// Initiator:  build_request() -> send -> parse_frame(kReply) ->
//             evaluate_reply() -> NegotiatedParams or a failure.
// Responder:  parse_frame(kRequest) -> evaluate_request() -> PeerRequest
//             (shown to the upper layer) -> build_reply() or build_reject().
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace softndk::mpa {

// RTR types as bits; equal to SOFTNDK_MPA_RTR_* >> 4 (softndk.h), which is
// also SOFTNDK_CONNECTION_INFO.RtrType.
inline constexpr uint8_t kRtrWrite = 0x1;  // zero-length RDMA Write (ORD word C)
inline constexpr uint8_t kRtrRead = 0x2;   // zero-length RDMA Read (ORD word D)
inline constexpr uint8_t kRtrSend = 0x4;   // zero-length Send/FPDU (IRD word B)

// siw's per-QP maxima (SIW_MAX_IRD_QP / SIW_MAX_ORD_QP, IWARP.md 9.1).
inline constexpr uint16_t kDefaultMaxIrd = 128;
inline constexpr uint16_t kDefaultMaxOrd = 128;
// Private-data limits (IWARP.md 2.1): RFC 5044 allows 512; Linux caps the
// total at 256 including the 4-byte RFC 6581 block.
inline constexpr size_t kMaxPrivateDataRfc = 512;
inline constexpr size_t kMaxPrivateDataSiw = 256;
inline constexpr size_t kIrdOrdBlock = 4;
inline constexpr size_t kHeaderSize = 20;

// How this side negotiates (SOFTNDK_OPEN_PARAMETERS.MpaRevision/MpaFlags).
struct Settings {
  uint8_t revision = 2;         // revision we send as initiator (1 or 2)
  bool crc_required = false;    // set C; refuse a peer that does not use CRC
  bool crc_strict_off = false;  // refuse a peer that asks for CRC
  // Ask for CRC (C in our Request or Reply) without refusing a peer that
  // does not use it: an initiator follows the Reply's C. The transport sets
  // it per connection (ConnSettings::crc_off_host).
  bool crc_request = false;
  bool peer_to_peer = false;                 // initiator: offer RFC 6581 P2P + RTR
  uint8_t rtr_types = kRtrWrite | kRtrRead;  // offered (initiator) / accepted (responder)
  uint16_t max_ird = kDefaultMaxIrd;         // adapter maxima
  uint16_t max_ord = kDefaultMaxOrd;
  // Largest total private data (block + ULP data) we send; 256 keeps siw
  // happy. What we accept from a peer is the RFC's 512.
  size_t send_pd_limit = kMaxPrivateDataSiw;
  size_t recv_pd_limit = kMaxPrivateDataRfc;
};

// Why a negotiation step failed. kRejected is the peer's R=1, not an error.
enum class Status : uint8_t {
  kOk,
  kNeedMore,              // parse_frame: not a whole frame yet
  kRejected,              // peer's Reply had R=1 (private data in `peer_private_data`)
  kBadKey,                // not "MPA ID Req/Rep Frame" (incl. a Reply where a Request belongs)
  kBadRevision,           // rev > 2, or a Reply rev above what we asked
  kPrivateDataTooLong,    // PD_Length above the limit
  kEnhancedBlockMissing,  // enhanced flag with PD_Length < 4
  kNotEnhanced,           // we sent rev 2 enhanced; the Reply is not (siw: no fallback)
  kMarkers,               // M=1: markers are never supported (siw refuses them)
  kCrcRequired,           // we require CRC, the peer did not set C
  kCrcRefused,            // CRC strictly off and the peer set C
  kInsufficientIrd,       // peer's ORD above our IRD and the adapter maximum (LLP 0x06)
  kNoMatchingRtr,         // P2P RTR types do not overlap (LLP 0x07)
  kTrailingData,          // bytes behind a Request before our Reply (initiator spoke early)
  kBadArgument,           // local: PD too long for our limit, bad revision setting
};
const char* to_string(Status s);

// MPA Terminate (layer LLP, EType MPA) code siw sends for this failure when
// it is the initiator evaluating a Reply, or 0 for "just close" (IWARP.md
// 9.2: bad key 0x04, IRD 0x06, RTR 0x07).
uint8_t terminate_llp_code(Status s);

enum class FrameType : uint8_t { kRequest, kReply };

// A decoded Request or Reply. private_data is the whole PD (block included)
// and is owned (copied out of the stream buffer).
struct Frame {
  FrameType type = FrameType::kRequest;
  uint8_t flags = 0;
  uint8_t rev = 0;
  std::vector<uint8_t> private_data;
};

struct ParseResult {
  Status status = Status::kOk;
  size_t consumed = 0;  // frame bytes when kOk
  size_t needed = 0;    // total bytes needed when kNeedMore
};
// Decodes one frame of the expected type from the start of `in`. Garbage is
// reported as soon as the first key byte differs, so a peer sending junk
// fails at once rather than after a timeout.
ParseResult parse_frame(std::span<const uint8_t> in, FrameType expect, Frame& out,
                        size_t max_private_data = kMaxPrivateDataRfc);

// The negotiated outcome of one connection (SOFTNDK_CONNECTION_INFO).
struct NegotiatedParams {
  uint8_t revision = 0;
  bool enhanced = false;  // RFC 6581 block exchanged
  bool crc = false;       // CRC32c both directions
  bool markers = false;   // always false
  bool p2p = false;
  uint8_t rtr = 0;                         // one of kRtr*, 0 if no P2P
  uint16_t ird = 0;                        // inbound read limit (Read Requests we serve at once)
  uint16_t ord = 0;                        // outbound read limit (Read Requests we issue at once)
  std::vector<uint8_t> peer_private_data;  // ULP data only (block stripped)
};

// ---- initiator ----
struct RequestArgs {
  uint16_t ird = 0;  // consumer's inbound/outbound read limits (capped at max)
  uint16_t ord = 0;
  std::span<const uint8_t> private_data;  // ULP private data
};
// Appends the Request frame to `out`. kBadArgument if the PD does not fit
// send_pd_limit (252 ULP bytes with the v2 block toward siw).
Status build_request(const Settings& s, const RequestArgs& a, std::vector<uint8_t>& out);

struct ReplyOutcome {
  Status status = Status::kOk;
  NegotiatedParams params;  // valid for kOk; peer_private_data also for kRejected
};
ReplyOutcome evaluate_reply(const Settings& s, const RequestArgs& sent, const Frame& reply);

// ---- responder ----
// What the initiator asked for, after siw's checks (IWARP.md 9.3).
struct PeerRequest {
  uint8_t rev = 0;
  uint8_t flags = 0;  // raw flags byte
  bool enhanced = false;
  bool crc = false;  // peer set C
  bool markers = false;
  bool p2p = false;  // IRD word A
  uint8_t rtr_offered = 0;
  uint16_t ird = 0;  // peer's IRD/ORD (0/0 without the v2 block)
  uint16_t ord = 0;
  // siw's proposal: our ORD = min(peer IRD, max), our IRD = min(peer ORD, max).
  uint16_t proposed_ird = 0;
  uint16_t proposed_ord = 0;
  std::vector<uint8_t> private_data;  // ULP data only
  // A failure that must be answered with a reject Reply (M=1, CRC policy,
  // short enhanced block, no acceptable RTR) rather than shown to the ULP.
  Status must_reject = Status::kOk;
};
// kOk: present the request to the upper layer, unless must_reject != kOk
// (then send build_reject() without ULP data and close, as siw does).
// Any other status: drop the connection without a Reply (siw).
Status evaluate_request(const Settings& s, const Frame& req, PeerRequest& out);

// Builds the accepting Reply; reconciles the ULP's read limits with the
// proposal the relaxed way siw does, picks the RTR type, fills `params`.
Status build_reply(const Settings& s, const PeerRequest& req, uint16_t ulp_ird, uint16_t ulp_ord,
                   std::span<const uint8_t> private_data, std::vector<uint8_t>& out,
                   NegotiatedParams& params);
// Builds a reject Reply (R=1, v2 block if the Request was enhanced, then the
// ULP data). Rev 0 peers get no Reply (siw closes): returns kOk with `out`
// left empty.
Status build_reject(const Settings& s, const PeerRequest& req,
                    std::span<const uint8_t> private_data, std::vector<uint8_t>& out);

// Largest ULP private data we may send given the peer's request (responder)
// or our own revision (initiator): send_pd_limit minus the v2 block.
size_t max_ulp_private_data(const Settings& s, bool enhanced);

}  // namespace softndk::mpa
