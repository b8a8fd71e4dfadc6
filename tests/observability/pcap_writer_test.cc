// SPDX-License-Identifier: Apache-2.0
// pcap_writer_test.cc - util::PcapFile / util::TcpFlow: the file header, the
// synthetic headers (addresses, ports, sequence numbers per direction),
// packet splitting, IPv6, and a path that cannot be created.
#include "util/pcap_writer.h"

#include <fstream>

#include "obs_fixture.h"
#include "util/bytes.h"

namespace obstest {
namespace {

using softndk::util::PcapFile;
using softndk::util::TcpFlow;
using softndk::wire::load_be16;
using softndk::wire::load_be32;

struct Packet {
  std::vector<uint8_t> b;
};

std::vector<Packet> read_pcap(const std::string& path, uint32_t* link) {
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<Packet> out;
  if (all.size() < 24) return out;
  uint32_t magic;
  std::memcpy(&magic, all.data(), 4);
  EXPECT_EQ(magic, 0xa1b2c3d4u);
  std::memcpy(link, all.data() + 20, 4);
  size_t pos = 24;
  while (pos + 16 <= all.size()) {
    uint32_t cap, len;
    std::memcpy(&cap, all.data() + pos + 8, 4);
    std::memcpy(&len, all.data() + pos + 12, 4);
    EXPECT_EQ(cap, len);
    pos += 16;
    if (pos + cap > all.size()) break;
    out.push_back({std::vector<uint8_t>(all.begin() + static_cast<ptrdiff_t>(pos),
                                        all.begin() + static_cast<ptrdiff_t>(pos + cap))});
    pos += cap;
  }
  EXPECT_EQ(pos, all.size()) << "no trailing partial record";
  return out;
}

sockaddr_storage ss4(const char* ip, uint16_t port) {
  sockaddr_storage s{};
  auto a = v4(ip, port);
  std::memcpy(&s, &a, sizeof a);
  return s;
}

TEST(PcapWriter, Ipv4FlowHeadersAndSequenceNumbers) {
  const std::string path = temp_path("writer4");
  {
    auto f = PcapFile::create(path.c_str());
    ASSERT_NE(f, nullptr);
    // We are the server 10.1.2.3:7174; the client 10.9.8.7:40000 connected.
    TcpFlow flow(ss4("10.1.2.3", 7174), ss4("10.9.8.7", 40000), false);
    flow.handshake(*f);
    std::vector<uint8_t> big(150000, 0x5a);
    flow.data(*f, false, std::span<const uint8_t>(big.data(), 10));  // in: 10 bytes
    flow.data(*f, true, big);                                        // out: 3 packets
    EXPECT_EQ(f->packets(), 3u + 1 + 3);
  }
  uint32_t link = 0;
  auto p = read_pcap(path, &link);
  EXPECT_EQ(link, 1u);  // Ethernet
  ASSERT_EQ(p.size(), 7u);
  auto ip = [&](size_t i) { return p[i].b.data() + 14; };
  auto tcp = [&](size_t i) { return p[i].b.data() + 34; };
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(load_be16(p[i].b.data() + 12), 0x0800);
    EXPECT_EQ(ip(i)[9], 6);  // TCP
    EXPECT_EQ(load_be16(ip(i) + 2), p[i].b.size() - 14);
  }
  // SYN from the client (the peer): source 10.9.8.7:40000.
  EXPECT_EQ(tcp(0)[13], 0x02);
  EXPECT_EQ(load_be32(ip(0) + 12), 0x0a090807u);
  EXPECT_EQ(load_be16(tcp(0)), 40000);
  EXPECT_EQ(load_be16(tcp(0) + 2), 7174);
  EXPECT_EQ(tcp(1)[13], 0x12);  // SYN-ACK from us
  EXPECT_EQ(load_be32(ip(1) + 12), 0x0a010203u);
  const uint32_t cisn = load_be32(tcp(0) + 4), sisn = load_be32(tcp(1) + 4);
  EXPECT_EQ(load_be32(tcp(1) + 8), cisn + 1);
  // Client data at cisn+1; our three packets at sisn+1, +65000, +130000.
  EXPECT_EQ(load_be32(tcp(3) + 4), cisn + 1);
  EXPECT_EQ(p[3].b.size(), 54u + 10);
  EXPECT_EQ(load_be32(tcp(4) + 4), sisn + 1);
  EXPECT_EQ(load_be32(tcp(5) + 4), sisn + 1 + 65000);
  EXPECT_EQ(load_be32(tcp(6) + 4), sisn + 1 + 130000);
  EXPECT_EQ(load_be32(tcp(6) + 8), cisn + 1 + 10);  // acknowledges the client's bytes
  EXPECT_EQ(p[6].b.size(), 54u + 20000);
  if (!HasFailure()) std::filesystem::remove(path);
}

TEST(PcapWriter, Ipv6AndMappedAddresses) {
  const std::string path = temp_path("writer6");
  {
    auto f = PcapFile::create(path.c_str());
    ASSERT_NE(f, nullptr);
    static const uint8_t kFour[4] = {1, 2, 3, 4};
    sockaddr_storage a{}, b{};
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&a);
    auto* b6 = reinterpret_cast<sockaddr_in6*>(&b);
    a6->sin6_family = b6->sin6_family = AF_INET6;
    inet_pton(AF_INET6, "fd00::1", &a6->sin6_addr);
    inet_pton(AF_INET6, "fd00::2", &b6->sin6_addr);
    a6->sin6_port = htons(1);
    b6->sin6_port = htons(2);
    TcpFlow(a, b, true).data(*f, true, std::span<const uint8_t>(kFour, 4));
    // v4-mapped IPv6 on both ends is written as IPv4.
    inet_pton(AF_INET6, "::ffff:127.0.0.1", &a6->sin6_addr);
    inet_pton(AF_INET6, "::ffff:127.0.0.2", &b6->sin6_addr);
    TcpFlow(a, b, true).data(*f, true, std::span<const uint8_t>(kFour, 4));
  }
  uint32_t link;
  auto p = read_pcap(path, &link);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(load_be16(p[0].b.data() + 12), 0x86dd);
  EXPECT_EQ(p[0].b.size(), 14u + 40 + 20 + 4);
  EXPECT_EQ(load_be16(p[0].b.data() + 14 + 4), 24);  // IPv6 payload length
  EXPECT_EQ(load_be16(p[1].b.data() + 12), 0x0800);
  EXPECT_EQ(load_be32(p[1].b.data() + 14 + 16), 0x7f000002u);
  if (!HasFailure()) std::filesystem::remove(path);
}

TEST(PcapWriter, UnwritablePathFails) {
  EXPECT_EQ(PcapFile::create("/nonexistent-dir/x.pcap"), nullptr);
  EXPECT_EQ(PcapFile::create(""), nullptr);
  EXPECT_EQ(PcapFile::create(nullptr), nullptr);
}

}  // namespace
}  // namespace obstest
