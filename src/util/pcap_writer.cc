// SPDX-License-Identifier: Apache-2.0
// util/pcap_writer.cc - see pcap_writer.h.
#include "util/pcap_writer.h"

#include <netinet/in.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "util/bytes.h"

namespace softndk::util {

using wire::store_be16;
using wire::store_be32;

namespace {
constexpr uint32_t kPcapMagic = 0xa1b2c3d4;  // microsecond stamps, host order
constexpr uint32_t kSnapLen = 262144;
constexpr uint32_t kLinkEthernet = 1;
constexpr uint8_t kSyn = 0x02, kAck = 0x10, kPsh = 0x08;
// Fixed initial sequence numbers: the client's and the server's.
constexpr uint32_t kClientIsn = 1000, kServerIsn = 500000;

void put32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void put16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }
}  // namespace

std::shared_ptr<PcapFile> PcapFile::create(const char* path) {
  if (path == nullptr || *path == '\0') {
    errno = EINVAL;
    return nullptr;
  }
  FILE* f = std::fopen(path, "wb");
  if (f == nullptr) return nullptr;
  uint8_t h[24] = {};
  put32(h, kPcapMagic);
  put16(h + 4, 2);  // version 2.4
  put16(h + 6, 4);
  put32(h + 16, kSnapLen);
  put32(h + 20, kLinkEthernet);
  if (std::fwrite(h, 1, sizeof h, f) != sizeof h || std::fflush(f) != 0) {
    int e = errno;
    std::fclose(f);
    errno = e;
    return nullptr;
  }
  return std::shared_ptr<PcapFile>(new PcapFile(f));
}

PcapFile::~PcapFile() { std::fclose(f_); }

bool PcapFile::claim(const std::string& key) {
  std::lock_guard lk(mu_);
  return claimed_.insert(key).second;
}

void PcapFile::unclaim(const std::string& key) {
  std::lock_guard lk(mu_);
  claimed_.erase(key);
}

std::string flow_key(const sockaddr_storage& a, const sockaddr_storage& b) {
  std::string x(reinterpret_cast<const char*>(&a), sizeof a);
  std::string y(reinterpret_cast<const char*>(&b), sizeof b);
  return x < y ? x + y : y + x;
}

uint64_t PcapFile::packets() const {
  std::lock_guard lk(mu_);
  return packets_;
}

void PcapFile::packet(std::span<const uint8_t> hdr, const iovec* iov, int niov, size_t n) {
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  const size_t len = hdr.size() + n;
  const uint32_t cap = static_cast<uint32_t>(std::min<size_t>(len, kSnapLen));
  uint8_t rec[16];
  put32(rec, static_cast<uint32_t>(tv.tv_sec));
  put32(rec + 4, static_cast<uint32_t>(tv.tv_usec));
  put32(rec + 8, cap);
  put32(rec + 12, static_cast<uint32_t>(len));
  std::lock_guard lk(mu_);
  if (failed_) return;
  bool ok = std::fwrite(rec, 1, sizeof rec, f_) == sizeof rec &&
            std::fwrite(hdr.data(), 1, hdr.size(), f_) == hdr.size();
  size_t left = n;
  for (int i = 0; ok && i < niov && left > 0; ++i) {
    size_t k = std::min(left, iov[i].iov_len);
    ok = std::fwrite(iov[i].iov_base, 1, k, f_) == k;
    left -= k;
  }
  ok = ok && std::fflush(f_) == 0;
  if (!ok) failed_ = true;
  ++packets_;
}

TcpFlow::TcpFlow(const sockaddr_storage& local, const sockaddr_storage& peer, bool local_is_client)
    : local_is_client_(local_is_client) {
  auto take = [](const sockaddr_storage& ss, uint8_t* addr, uint16_t* port) {
    if (ss.ss_family == AF_INET6) {
      const auto* s6 = reinterpret_cast<const sockaddr_in6*>(&ss);
      std::memcpy(addr, &s6->sin6_addr, 16);
      *port = ntohs(s6->sin6_port);
    } else {
      const auto* s4 = reinterpret_cast<const sockaddr_in*>(&ss);
      // Stored as v4-mapped so both kinds share one representation.
      static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
      std::memcpy(addr, kMapped, 12);
      std::memcpy(addr + 12, &s4->sin_addr, 4);
      *port = ntohs(s4->sin_port);
    }
  };
  take(local, local_addr_, &local_port_);
  take(peer, peer_addr_, &peer_port_);
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  v6_ = std::memcmp(local_addr_, kMapped, 12) != 0 || std::memcmp(peer_addr_, kMapped, 12) != 0;
  seq_out_.store(local_is_client ? kClientIsn : kServerIsn, std::memory_order_relaxed);
  seq_in_.store(local_is_client ? kServerIsn : kClientIsn, std::memory_order_relaxed);
}

size_t TcpFlow::header(bool outbound, uint8_t flags, size_t payload, uint8_t* p) {
  // Ethernet: locally administered MACs, 02:..:01 for the client side.
  const bool from_client = outbound == local_is_client_;
  for (int i = 0; i < 6; ++i) {
    p[i] = i == 0 ? 0x02 : 0;
    p[6 + i] = i == 0 ? 0x02 : 0;
  }
  p[5] = from_client ? 2 : 1;   // destination
  p[11] = from_client ? 1 : 2;  // source
  const uint8_t* src = outbound ? local_addr_ : peer_addr_;
  const uint8_t* dst = outbound ? peer_addr_ : local_addr_;
  uint8_t* ip = p + 14;
  size_t iph;
  if (v6_) {
    store_be16(p + 12, 0x86dd);
    iph = 40;
    std::memset(ip, 0, iph);
    ip[0] = 0x60;
    store_be16(ip + 4, static_cast<uint16_t>(20 + payload));
    ip[6] = 6;  // TCP
    ip[7] = 64;
    std::memcpy(ip + 8, src, 16);
    std::memcpy(ip + 24, dst, 16);
  } else {
    store_be16(p + 12, 0x0800);
    iph = 20;
    std::memset(ip, 0, iph);
    ip[0] = 0x45;
    store_be16(ip + 2, static_cast<uint16_t>(iph + 20 + payload));
    ip[6] = 0x40;  // DF
    ip[8] = 64;
    ip[9] = 6;
    std::memcpy(ip + 12, src + 12, 4);
    std::memcpy(ip + 16, dst + 12, 4);
    uint32_t sum = 0;
    for (size_t i = 0; i < iph; i += 2) sum += wire::load_be16(ip + i);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    store_be16(ip + 10, static_cast<uint16_t>(~sum));
  }
  uint8_t* t = ip + iph;
  std::memset(t, 0, 20);
  store_be16(t, outbound ? local_port_ : peer_port_);
  store_be16(t + 2, outbound ? peer_port_ : local_port_);
  std::atomic<uint32_t>& seq_ref = outbound ? seq_out_ : seq_in_;
  const uint32_t seq = seq_ref.load(std::memory_order_relaxed);
  const uint32_t ack = (outbound ? seq_in_ : seq_out_).load(std::memory_order_relaxed);
  store_be32(t + 4, seq);
  store_be32(t + 8, (flags & kAck) ? ack : 0);
  t[12] = 0x50;  // 20-byte header
  t[13] = flags;
  store_be16(t + 14, 65535);
  // Checksum left 0: Wireshark does not verify TCP checksums by default.
  seq_ref.store(seq + static_cast<uint32_t>(payload) + ((flags & kSyn) ? 1 : 0),
                std::memory_order_relaxed);
  return 14 + iph + 20;
}

void TcpFlow::emit(PcapFile& f, bool outbound, uint8_t flags, const iovec* iov, int niov,
                   size_t n) {
  uint8_t h[14 + 40 + 20];
  size_t hl = header(outbound, flags, n, h);
  f.packet({h, hl}, iov, niov, n);
}

void TcpFlow::handshake(PcapFile& f) {
  const bool client_out = local_is_client_;
  emit(f, client_out, kSyn, nullptr, 0, 0);
  emit(f, !client_out, kSyn | kAck, nullptr, 0, 0);
  emit(f, client_out, kAck, nullptr, 0, 0);
}

void TcpFlow::data(PcapFile& f, bool outbound, std::span<const uint8_t> bytes) {
  iovec v{const_cast<uint8_t*>(bytes.data()), bytes.size()};
  data(f, outbound, &v, 1, bytes.size());
}

void TcpFlow::data(PcapFile& f, bool outbound, const iovec* iov, int niov, size_t n) {
  // Walk the vector in packets of at most kMaxSegment bytes.
  std::vector<iovec> part;
  int i = 0;
  size_t off = 0;  // into iov[i]
  while (n > 0) {
    size_t want = std::min(n, kMaxSegment), got = 0;
    part.clear();
    while (got < want && i < niov) {
      size_t k = std::min(iov[i].iov_len - off, want - got);
      if (k > 0) part.push_back({static_cast<uint8_t*>(iov[i].iov_base) + off, k});
      got += k;
      off += k;
      if (off == iov[i].iov_len) {
        ++i;
        off = 0;
      }
    }
    if (got == 0) break;  // fewer bytes in iov than n claimed
    emit(f, outbound, kPsh | kAck, part.data(), static_cast<int>(part.size()), got);
    n -= got;
  }
}

}  // namespace softndk::util
