// SPDX-License-Identifier: Apache-2.0
// net_util.h - addresses for the tools: resolve "HOST" + port, print
// "addr:port", and find which local address (hence which softndk adapter)
// routes to a peer.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

namespace softndk::tools {

struct SockAddr {
  sockaddr_storage ss{};
  socklen_t len = 0;
  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&ss); }
  sockaddr* sa() { return reinterpret_cast<sockaddr*>(&ss); }
  uint16_t port() const;
  void set_port(uint16_t port);
  std::string ip() const;         // "127.0.0.1", "::1"
  std::string to_string() const;  // "127.0.0.1:18515", "[::1]:18515"
};

// Resolves a numeric address or a host name (first result, IPv4 preferred).
// Returns false and sets `error` to a one-line cause.
bool resolve(const std::string& host, uint16_t port, SockAddr& out, std::string& error);

// The local address the kernel would use to reach `peer` (a UDP connect
// sends nothing). Used to choose the adapter to open for a client.
bool local_address_toward(const SockAddr& peer, SockAddr& out, std::string& error);

}  // namespace softndk::tools

namespace softndk::tools {

// The first IPv4 (else IPv6) address of a Linux interface ("lo", "eth0").
bool interface_address(const std::string& ifname, SockAddr& out);

// A numeric address, or the address of an interface of that name.
bool address_of_device(const std::string& device, uint16_t port, SockAddr& out, std::string& error);

// The address a server should listen on when the user named no device:
// the first active non-loopback IPv4 address softndk can open, else
// 127.0.0.1. Empty string if the library cannot enumerate adapters.
std::string default_server_address();

}  // namespace softndk::tools
