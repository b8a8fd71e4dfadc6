// ddp/fpdu_builder.h — the sender side: FPDU construction without copying
// payload, and segmentation of one RDMAP message into MSS-sized FPDUs.
// Owns: writing ULPDU_Length + DDP/RDMAP header (+ control body) into a small
// caller-owned scratch, the pad + CRC trailer, and the three iovec-able pieces
// (header, payload in registered memory, trailer) for sendmsg().
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "ddp/ddp_header.h"
#include "mpa/fpdu.h"

namespace softndk::wire {

// Per in-flight FPDU storage for the header and trailer pieces; must outlive
// the sendmsg() that uses the pieces.
struct FpduScratch {
  alignas(8) uint8_t header[2 + kUntaggedHeaderSize + 52 + 2];
  alignas(4) uint8_t trailer[8];
};

struct FpduPieces {
  std::span<const uint8_t> header;   // ULPDU_Length + DDP header (+ control body)
  std::span<const uint8_t> payload;  // caller's payload (not copied); may be empty
  std::span<const uint8_t> trailer;  // pad (0..3 zero bytes) + CRC (4)
  size_t size() const { return header.size() + payload.size() + trailer.size(); }
  // Fills up to 3 iovecs (an empty payload is skipped); returns the count.
  int to_iovec(struct iovec out[3]) const;
};

// Incremental writer for one FPDU whose payload arrives in pieces (e.g. an
// SGE list): begin() -> add_payload()* -> finish().
class FpduWriter {
 public:
  // Writes the header into `s`. `body` is a control body (Read Request,
  // Terminate, atomics) copied into the header piece; `payload_len` is the
  // total of the add_payload() pieces. Returns an empty span if the ULPDU
  // would exceed 65535 or the body is larger than the scratch allows.
  std::span<const uint8_t> begin(const DdpHeader& h, std::span<const uint8_t> body,
                                 size_t payload_len, bool crc, FpduScratch& s);
  // CRCs the payload piece (when CRC is on); nothing is copied.
  void add_payload(std::span<const uint8_t> piece);
  // Writes pad + CRC (zero when CRC is off) and returns the trailer piece.
  // Pad bytes are zero (RFC 5044) unless `pad_bytes` (exactly the pad length)
  // is given: only for reproducing captured traffic, where Linux siw leaves
  // stale bytes in the pad.
  std::span<const uint8_t> finish(std::span<const uint8_t> pad_bytes = {});

 private:
  FpduScratch* s_ = nullptr;
  uint32_t crc_ = 0;
  uint16_t ulpdu_ = 0;
  bool crc_on_ = false;
};

// One FPDU with a contiguous payload. Returns false if too large.
bool build_fpdu(const DdpHeader& h, std::span<const uint8_t> body, std::span<const uint8_t> payload,
                bool crc, FpduScratch& s, FpduPieces& out);

// Contiguous FPDU into `out` (copies payload; for small/control messages and
// tests). Returns the wire size, 0 if `out` is too small or the ULPDU too long.
size_t encode_fpdu(const DdpHeader& h, std::span<const uint8_t> body,
                   std::span<const uint8_t> payload, bool crc, std::span<uint8_t> out,
                   std::span<const uint8_t> pad_bytes = {});

// Splits one RDMAP message into segments of at most `max_payload` bytes:
// TO (tagged) or MO (untagged) advance, L is set on the last one. A zero-
// length message yields one segment. siw sends messages whole and in order;
// so does this.
class MessageSegmenter {
 public:
  // `first`: the header of the first segment (TO = message start, MO = 0);
  // `max_payload`: from FpduSizing::max_payload(first.tagged()).
  MessageSegmenter(const DdpHeader& first, uint64_t length, uint32_t max_payload);

  bool done() const { return done_; }
  uint64_t offset() const { return off_; }  // message offset of the next segment
  // Header and payload length of the next segment; advances.
  struct Segment {
    DdpHeader hdr;
    uint64_t offset;  // within the message
    uint32_t length;
  };
  Segment next();
  // Convenience for a contiguous message buffer: builds the next FPDU.
  bool next_fpdu(std::span<const uint8_t> message, bool crc, FpduScratch& s, FpduPieces& out);

 private:
  DdpHeader first_;
  uint64_t len_;
  uint64_t off_ = 0;
  uint32_t max_;
  bool done_ = false;
};

}  // namespace softndk::wire
