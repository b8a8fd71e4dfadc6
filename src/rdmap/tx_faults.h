// SPDX-License-Identifier: Apache-2.0
// rdmap/tx_faults.h - the transmit fault queue behind
// SoftNdkInjectConnectionFault(DropTx / DelayTx / CorruptTx).
//
// While a fault is pending, the transmitter's bytes do not go to the socket
// directly: the stream hands each sendmsg's bytes to this queue (all of
// them are "accepted", so completions behave as if TCP took them), the
// queue cuts them into FPDUs, drops, corrupts or holds the ones the faults
// name, and the stream sends the rest in order (stream_hooks.cc). Once
// nothing is pending or held, the queue steps aside again. The stream
// counts what this queue sends when it reaches the socket (RDMAOutOctets,
// RDMAOutFrames); dropped FPDUs never do, so they are in no counter.
//
// The queue only starts at an FPDU boundary (the first sendmsg of a
// transmit batch); FPDU lengths come from the MPA header: 2 + ULPDU + pad
// to 4 + the 4-byte CRC field (present with or without CRC, RFC 5044).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <vector>

#include "rdmap/rdmap_codec.h"

namespace softndk::rdmap {

struct TxFaults {
  using Clock = std::chrono::steady_clock;

  uint32_t drop = 0, corrupt = 0, delay = 0;  // FPDUs still to drop / corrupt / hold
  std::chrono::milliseconds delay_ms{0};
  bool active = false;          // the transmitter's bytes go through the queue
  bool shutdown_after = false;  // FIN once the held bytes are out
  std::vector<uint8_t> in;      // bytes of an FPDU not complete yet
  struct Held {
    std::vector<uint8_t> bytes;
    size_t off = 0;  // already sent
    Clock::time_point due;
    bool frame = true;  // counted in RDMAOutFrames once sent (a Terminate is not)
  };
  std::deque<Held> out;
  uint64_t dropped = 0, corrupted = 0, delayed = 0;  // diagnostics

  bool armed() const { return drop != 0 || corrupt != 0 || delay != 0; }
  bool idle() const { return !armed() && in.empty() && out.empty(); }

  // Moves complete FPDUs from `in` to `out`, applying the faults in the
  // order drop, corrupt, delay.
  void split(Clock::time_point now) {
    size_t pos = 0;
    while (in.size() - pos >= 2) {
      size_t ulpdu = static_cast<size_t>(in[pos]) << 8 | in[pos + 1];
      size_t len = 2 + ulpdu;
      len += (4 - len % 4) % 4;
      len += 4;  // CRC field
      if (in.size() - pos < len) break;
      // Byte 1 of the DDP header is RDMAP control (IWARP.md 3.3).
      const bool terminate = ulpdu >= 2 && (in[pos + 3] & wire::kRdmapOpcodeMask) ==
                                               static_cast<uint8_t>(wire::Opcode::kTerminate);
      if (drop > 0) {
        --drop;
        ++dropped;
      } else {
        Held h;
        h.bytes.assign(in.begin() + static_cast<ptrdiff_t>(pos),
                       in.begin() + static_cast<ptrdiff_t>(pos + len));
        h.due = now;
        h.frame = !terminate;
        if (corrupt > 0 && ulpdu > 0) {
          // The last ULPDU byte (payload when there is any): the header
          // stays parseable, the CRC (if negotiated) no longer matches.
          h.bytes[2 + ulpdu - 1] ^= 0x01;
          --corrupt;
          ++corrupted;
        }
        if (delay > 0) {
          h.due = now + delay_ms;
          --delay;
          ++delayed;
        }
        out.push_back(std::move(h));
      }
      pos += len;
    }
    in.erase(in.begin(), in.begin() + static_cast<ptrdiff_t>(pos));
  }
};

}  // namespace softndk::rdmap
