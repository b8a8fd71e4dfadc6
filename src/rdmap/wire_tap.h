// SPDX-License-Identifier: Apache-2.0
// rdmap/wire_tap.h - one connection's wire traffic into one pcap trace
// (SoftNdkTraceQp, SOFTNDK_MODIFY_ADAPTER_TRACE; docs/observability.md).
//
// The tap writes the bytes exactly as they crossed the socket: what a
// sendmsg accepted, what a recv returned, framed by util::TcpFlow with the
// connection's real addresses and ports. It first writes the conversation's
// opening from what the connection recorded: a synthetic TCP handshake, the
// real MPA Request and Reply, and the RTR the initiator sent before the data
// path started. Wireshark needs the MPA exchange to recognise the stream as
// iWARP and to know whether FPDUs carry a CRC.
//
// A tap attached to a running stream starts each direction at the next
// FPDU boundary (the transmitter's next batch; the receiver's next read
// while its parser waits for a new FPDU, or the first FPDU its parser
// starts among bytes already staged), so the trace never begins in the
// middle of an FPDU and does not miss FPDUs that arrived in one read
// with the end of the previous one. When both ends of a connection trace into one file
// (an adapter trace with both ends in that adapter instance), the first
// tap records it and the other stays silent, so each packet is in the file
// once. Not thread-safe: the stream calls tx() under its
// transmit lock and rx() under its receive lock.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "transport/tcp/connection.h"
#include "util/pcap_writer.h"

namespace softndk::rdmap {

class WireTap {
 public:
  // `from_start`: attached before any FPDU moved (both directions live now).
  WireTap(std::shared_ptr<util::PcapFile> file, const tcp::Connection& conn,
          std::span<const uint8_t> sent_rtr, bool from_start);
  ~WireTap();
  WireTap(const WireTap&) = delete;
  WireTap& operator=(const WireTap&) = delete;

  const util::PcapFile* file() const { return file_.get(); }

  // Bytes sent; `boundary`: they start at an FPDU boundary.
  void tx(const iovec* iov, int niov, size_t n, bool boundary) {
    if (!owner_ || (!tx_live_ && !boundary)) return;
    tx_live_ = true;
    flow_.data(*file_, true, iov, niov, n);
  }
  // Bytes received; `boundary` likewise.
  void rx(const iovec* iov, int niov, size_t n, bool boundary) {
    if (!owner_ || (!rx_live_ && !boundary)) return;
    rx_live_ = true;
    flow_.data(*file_, false, iov, niov, n);
  }
  // Bytes already received (staged before the tap went live) that start at
  // an FPDU boundary: recorded only by a tap still waiting for one, since a
  // live tap recorded them when they were read.
  void rx_staged(const uint8_t* p, size_t n) {
    if (!owner_ || rx_live_) return;
    rx_live_ = true;
    iovec v{const_cast<uint8_t*>(p), n};
    flow_.data(*file_, false, &v, 1, n);
  }

 private:
  std::shared_ptr<util::PcapFile> file_;
  util::TcpFlow flow_;
  std::string key_;
  // This end records the connection into file_ (the other end, if it
  // writes to the same file, does not: PcapFile::claim).
  bool owner_;
  bool tx_live_, rx_live_;
};

}  // namespace softndk::rdmap
