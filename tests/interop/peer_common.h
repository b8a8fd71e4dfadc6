// SPDX-License-Identifier: Apache-2.0
// peer_common.h - command line, JSON output and small helpers shared by the
// interop drivers (ndk_peer: public C ABI; mpa_peer: connection engine).
//
// Both drivers take the same options and print one JSON object per
// connection on stdout, so tests/interop/run.sh can run a case with either
// driver and assert on the same fields.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace interop {

using Bytes = std::vector<uint8_t>;

inline std::string hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}
inline std::string hex(const Bytes& b) { return hex(b.data(), b.size()); }

inline std::optional<Bytes> unhex(const std::string& s) {
  if (s.size() % 2) return std::nullopt;
  Bytes b;
  for (size_t i = 0; i < s.size(); i += 2) {
    char* end = nullptr;
    std::string byte = s.substr(i, 2);
    long v = std::strtol(byte.c_str(), &end, 16);
    if (*end != 0) return std::nullopt;
    b.push_back(static_cast<uint8_t>(v));
  }
  return b;
}

// Deterministic private data of a given length, so the guest side and the
// capture can be checked byte for byte: byte i = (0xA0 + i) & 0xff.
inline Bytes pattern_pd(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(0xA0 + i);
  return b;
}

struct Options {
  std::string mode;  // connect | listen
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  bool crc = false;     // SOFTNDK_MPA_CRC_REQUIRED
  std::string p2p;      // "" (default), none, write, read, both: P2P offer and RTRs
  unsigned rev = 0;     // MPA revision we send (0: default)
  Bytes pd;             // private data of the Request / accepting Reply
  bool reject = false;  // listen: reject with `reject_pd`
  Bytes reject_pd;
  unsigned ird = 1, ord = 1;  // rping's values
  unsigned count = 1;         // listen: connections to serve
  unsigned hold_ms = 200;     // keep the connection this long before disconnecting
  unsigned holdoff_ms = 0;    // mpa_peer: initiator hold-off after the MPA Reply
  unsigned timeout_ms = 60000;
  std::string ready_file;  // listen: touched once listening
};

[[noreturn]] inline void usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s connect HOST:PORT | listen HOST:PORT  [options]\n"
               "  --crc              require CRC (SOFTNDK_MPA_CRC_REQUIRED)\n"
               "  --p2p none|write|read|both  offer RFC 6581 peer-to-peer with these RTRs\n"
               "                    (none: no offer; default: the driver's own default)\n"
               "  --rev 1|2          MPA revision to send\n"
               "  --pd HEX | --pd-len N   private data (pattern 0xA0+i for --pd-len)\n"
               "  --reject HEX | --reject-len N   listen: reject with this private data\n"
               "  --ird N --ord N    read limits (default 1/1, as rping)\n"
               "  --count N          listen: connections to serve (default 1)\n"
               "  --hold-ms N        connected time before disconnecting (default 200)\n"
               "  --holdoff-ms N     mpa_peer: silence after the MPA Reply before the RTR\n"
               "  --timeout-ms N     overall bound (default 60000)\n"
               "  --ready-file F     listen: create F once listening\n",
               prog);
  std::exit(2);
}

inline Options parse(int argc, char** argv) {
  Options o;
  if (argc < 3) usage(argv[0]);
  o.mode = argv[1];
  if (o.mode != "connect" && o.mode != "listen") usage(argv[0]);
  std::string hp = argv[2];
  auto colon = hp.rfind(':');
  if (colon == std::string::npos) usage(argv[0]);
  o.host = hp.substr(0, colon);
  o.port = static_cast<uint16_t>(std::atoi(hp.c_str() + colon + 1));
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage(argv[0]);
      return argv[++i];
    };
    auto bytes = [&](const std::string& s) {
      auto b = unhex(s);
      if (!b) usage(argv[0]);
      return *b;
    };
    if (a == "--crc")
      o.crc = true;
    else if (a == "--p2p")
      o.p2p = val();
    else if (a == "--rev")
      o.rev = static_cast<unsigned>(std::atoi(val().c_str()));
    else if (a == "--pd")
      o.pd = bytes(val());
    else if (a == "--pd-len")
      o.pd = pattern_pd(std::strtoul(val().c_str(), nullptr, 0));
    else if (a == "--reject")
      o.reject = true, o.reject_pd = bytes(val());
    else if (a == "--reject-len")
      o.reject = true, o.reject_pd = pattern_pd(std::strtoul(val().c_str(), nullptr, 0));
    else if (a == "--ird")
      o.ird = static_cast<unsigned>(std::atoi(val().c_str()));
    else if (a == "--ord")
      o.ord = static_cast<unsigned>(std::atoi(val().c_str()));
    else if (a == "--count")
      o.count = static_cast<unsigned>(std::atoi(val().c_str()));
    else if (a == "--hold-ms")
      o.hold_ms = static_cast<unsigned>(std::atoi(val().c_str()));
    else if (a == "--holdoff-ms")
      o.holdoff_ms = static_cast<unsigned>(std::atoi(val().c_str()));
    else if (a == "--timeout-ms")
      o.timeout_ms = static_cast<unsigned>(std::atoi(val().c_str()));
    else if (a == "--ready-file")
      o.ready_file = val();
    else
      usage(argv[0]);
  }
  if (!o.p2p.empty() && o.p2p != "write" && o.p2p != "read" && o.p2p != "both" && o.p2p != "none")
    usage(argv[0]);
  return o;
}

// A flat JSON object built field by field (strings, numbers, booleans).
class Json {
 public:
  Json& s(const char* k, const std::string& v) {
    std::string e;
    for (char c : v) {
      if (c == '"' || c == '\\') e += '\\';
      if (static_cast<unsigned char>(c) < 0x20) continue;
      e += c;
    }
    return raw(k, "\"" + e + "\"");
  }
  Json& n(const char* k, long long v) { return raw(k, std::to_string(v)); }
  Json& b(const char* k, bool v) { return raw(k, v ? "true" : "false"); }
  void print() const {
    std::printf("{%s}\n", body_.c_str());
    std::fflush(stdout);
  }

 private:
  Json& raw(const char* k, const std::string& v) {
    if (!body_.empty()) body_ += ", ";
    // Appended piece by piece: `"\"" + std::string(k)` trips a GCC 12 -O3
    // -Wrestrict false positive inside std::string (GCC bug 105329).
    body_ += '"';
    body_ += k;
    body_ += "\": ";
    body_ += v;
    return *this;
  }
  std::string body_;
};

inline sockaddr_in make_addr(const std::string& host, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
    std::fprintf(stderr, "not an IPv4 address: %s\n", host.c_str());
    std::exit(2);
  }
  return a;
}

inline const char* rtr_name(unsigned rtr_bits) {
  switch (rtr_bits) {
    case 0:
      return "none";
    case 1:
      return "write";
    case 2:
      return "read";
    case 4:
      return "send";
    default:
      return "several";
  }
}

using Clock = std::chrono::steady_clock;
inline long long ms_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

}  // namespace interop
