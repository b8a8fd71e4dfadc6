// SPDX-License-Identifier: Apache-2.0
// tests/wire/pcap_reader.cc — see pcap_reader.h.
#include "pcap_reader.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <cstring>
#include <tuple>

namespace softndk::wire::test {
namespace {

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

std::string endpoint(const uint8_t* ip, uint16_t port) {
  return std::to_string(ip[0]) + "." + std::to_string(ip[1]) + "." + std::to_string(ip[2]) + "." +
         std::to_string(ip[3]) + ":" + std::to_string(port);
}

struct Seg {
  uint32_t seq;
  std::vector<uint8_t> data;
  uint32_t frame;
};

struct Dir {
  std::string src, dst;
  bool have_isn = false;
  uint32_t isn = 0;
  std::vector<Seg> segs;
};

}  // namespace

bool read_tcp_connections(const std::string& path, std::vector<TcpConnection>& out,
                          std::string& error) {
  char errbuf[PCAP_ERRBUF_SIZE];
  pcap_t* pc = pcap_open_offline(path.c_str(), errbuf);
  if (!pc) {
    error = errbuf;
    return false;
  }
  const int dlt = pcap_datalink(pc);
  std::map<std::string, Dir> dirs;                                   // key "src>dst"
  std::vector<std::tuple<std::string, std::string, uint32_t>> syns;  // initiator, responder, frame
  pcap_pkthdr* h;
  const u_char* pkt;
  uint32_t frame = 0;
  int rc;
  while ((rc = pcap_next_ex(pc, &h, &pkt)) == 1) {
    ++frame;
    if (h->caplen < h->len) {
      error = "truncated frame " + std::to_string(frame);
      pcap_close(pc);
      return false;
    }
    const uint8_t* p = pkt;
    size_t n = h->caplen;
    uint16_t ethertype = 0;
    if (dlt == DLT_EN10MB) {
      if (n < 14) continue;
      ethertype = be16(p + 12);
      p += 14;
      n -= 14;
      if (ethertype == 0x8100 && n >= 4) {  // one VLAN tag
        ethertype = be16(p + 2);
        p += 4;
        n -= 4;
      }
    } else if (dlt == DLT_LINUX_SLL) {
      if (n < 16) continue;
      ethertype = be16(p + 14);
      p += 16;
      n -= 16;
    } else if (dlt == DLT_LINUX_SLL2) {
      if (n < 20) continue;
      ethertype = be16(p);
      p += 20;
      n -= 20;
    } else if (dlt == DLT_RAW || dlt == 12 /* DLT_RAW on some BSDs */) {
      ethertype = 0x0800;
    } else {
      error = "unsupported link type " + std::to_string(dlt);
      pcap_close(pc);
      return false;
    }
    if (ethertype != 0x0800 || n < 20 || (p[0] >> 4) != 4 || p[9] != 6) continue;
    const size_t ihl = (p[0] & 0xF) * 4u;
    const size_t tot = be16(p + 2);
    if (tot > n || ihl + 20 > tot) continue;
    const uint8_t* tcp = p + ihl;
    const size_t thl = (tcp[12] >> 4) * 4u;
    if (ihl + thl > tot) continue;
    const uint16_t sport = be16(tcp), dport = be16(tcp + 2);
    const uint32_t seq = be32(tcp + 4);
    const uint8_t flags = tcp[13];
    const std::string src = endpoint(p + 12, sport), dst = endpoint(p + 16, dport);
    Dir& d = dirs[src + ">" + dst];
    d.src = src;
    d.dst = dst;
    if (flags & 0x02) {  // SYN
      d.have_isn = true;
      d.isn = seq;
      d.segs.clear();
      if (!(flags & 0x10) && std::find_if(syns.begin(), syns.end(), [&](const auto& t) {
                               return std::get<0>(t) == src && std::get<1>(t) == dst;
                             }) == syns.end())
        syns.emplace_back(src, dst, frame);
      continue;
    }
    const size_t len = tot - ihl - thl;
    if (len == 0) continue;
    d.segs.push_back({seq, std::vector<uint8_t>(tcp + thl, tcp + thl + len), frame});
  }
  pcap_close(pc);

  auto assemble = [](Dir& d, TcpDirection& t) {
    t.src = d.src;
    t.dst = d.dst;
    if (!d.have_isn) {
      t.gap = !d.segs.empty();
      return;
    }
    // Relative offsets; stable sort keeps the first transmission first.
    std::stable_sort(d.segs.begin(), d.segs.end(), [&](const Seg& a, const Seg& b) {
      return static_cast<uint32_t>(a.seq - d.isn - 1) < static_cast<uint32_t>(b.seq - d.isn - 1);
    });
    for (const Seg& s : d.segs) {
      const uint64_t off = static_cast<uint32_t>(s.seq - d.isn - 1);
      const uint64_t have = t.bytes.size();
      if (off > have) {
        t.gap = true;
        break;
      }
      if (off + s.data.size() <= have) continue;  // pure retransmission
      const size_t skip = static_cast<size_t>(have - off);
      t.bytes.insert(t.bytes.end(), s.data.begin() + skip, s.data.end());
      t.frame_of.insert(t.frame_of.end(), s.data.size() - skip, s.frame);
      t.segment_ends.push_back(t.bytes.size());
    }
  };
  for (auto& [ini, res, f] : syns) {
    TcpConnection c;
    c.initiator = ini;
    c.responder = res;
    c.first_frame = f;
    assemble(dirs[ini + ">" + res], c.to_responder);
    assemble(dirs[res + ">" + ini], c.to_initiator);
    out.push_back(std::move(c));
  }
  return true;
}

}  // namespace softndk::wire::test
