// SPDX-License-Identifier: Apache-2.0
// util/pcap_writer.h - classic pcap files with synthetic TCP framing, for the
// wire traces (docs/observability.md).
//
// softndk talks to TCP through sockets, so it never sees real TCP/IP
// headers. A trace therefore wraps the bytes it sent or received, exactly
// as they crossed the socket, in made-up Ethernet + IPv4/IPv6 + TCP
// headers that carry the connection's real addresses and ports and running
// sequence numbers (one count per direction from a fixed initial number).
// That is all Wireshark/tshark need to reassemble the byte stream and
// decode MPA, DDP and RDMAP on top.
//
// Pure: no knowledge of iWARP; callers decide what bytes go in.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>

namespace softndk::util {

// One pcap file (LINKTYPE_ETHERNET, microsecond timestamps, snaplen 262144).
// Thread-safe: each packet is one locked write, flushed at once so that a
// reader sees whole packets while the file is still open. Closed when the
// last owner lets go.
class PcapFile {
 public:
  // Creates or truncates `path` and writes the file header. nullptr and
  // errno set on failure.
  static std::shared_ptr<PcapFile> create(const char* path);
  ~PcapFile();
  PcapFile(const PcapFile&) = delete;
  PcapFile& operator=(const PcapFile&) = delete;

  // One packet: `hdr` (the link/IP/TCP headers) followed by `n` bytes taken
  // from `iov`, stamped with the current time.
  void packet(std::span<const uint8_t> hdr, const iovec* iov, int niov, size_t n);
  uint64_t packets() const;

  // One recorder per TCP connection and file: when both ends of a
  // connection write to one file (both in one traced adapter instance),
  // the first to claim it records the conversation, which one end sees
  // whole, and the other stays silent; otherwise every packet would be in
  // the file twice. `key` names the connection the same from either end
  // (flow_key). False if another recorder holds it.
  bool claim(const std::string& key);
  void unclaim(const std::string& key);

 private:
  explicit PcapFile(FILE* f) : f_(f) {}
  mutable std::mutex mu_;
  FILE* f_;
  std::set<std::string> claimed_;
  uint64_t packets_ = 0;
  bool failed_ = false;  // a write failed: stop writing, keep the file valid so far
};

// A connection's name for PcapFile::claim: its two endpoints, in an order
// that does not depend on which end asks.
std::string flow_key(const sockaddr_storage& a, const sockaddr_storage& b);

// The synthetic framing of one TCP connection. `local`/`peer` are the
// connection's socket addresses (AF_INET or AF_INET6; v4-mapped IPv6 is
// written as IPv4); `local_is_client` says who sent the SYN.
class TcpFlow {
 public:
  // Each direction (data(outbound=true) / data(false)) from one thread at a
  // time; the two directions may run concurrently.
  TcpFlow(const sockaddr_storage& local, const sockaddr_storage& peer, bool local_is_client);

  // SYN, SYN-ACK, ACK: lets Wireshark start its stream at sequence 0.
  void handshake(PcapFile& f);
  // Payload in one direction (outbound: local -> peer), cut into packets
  // of at most kMaxSegment bytes.
  void data(PcapFile& f, bool outbound, const iovec* iov, int niov, size_t n);
  void data(PcapFile& f, bool outbound, std::span<const uint8_t> bytes);

  // Payload bytes per packet: keeps the IPv4 total length below 65535.
  static constexpr size_t kMaxSegment = 65000;

 private:
  size_t header(bool outbound, uint8_t flags, size_t payload, uint8_t* out);
  void emit(PcapFile& f, bool outbound, uint8_t flags, const iovec* iov, int niov, size_t n);

  bool v6_ = false;
  uint8_t local_addr_[16] = {}, peer_addr_[16] = {};
  uint16_t local_port_ = 0, peer_port_ = 0;
  bool local_is_client_;
  // Next sequence number of each direction. The two directions may be
  // written from two threads (a stream's transmitter and receiver), each
  // reading the other's number for its acknowledgement field: relaxed
  // atomics, any recent value makes a valid ACK.
  std::atomic<uint32_t> seq_out_, seq_in_;
};

}  // namespace softndk::util
