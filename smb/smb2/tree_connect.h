// SPDX-License-Identifier: Apache-2.0
// tree_connect.h - MS-SMB2 2.2.9/2.2.10 TREE_CONNECT and 2.2.11/2.2.12
// TREE_DISCONNECT: builders and pure parsers, both directions. The share
// path is UTF-16LE on the wire (\\server\share) and returned as its bytes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "header.h"

namespace smb::smb2 {

inline constexpr uint8_t kShareTypeDisk = 0x01;
inline constexpr uint8_t kShareTypePipe = 0x02;
inline constexpr uint16_t kTreeConnectFlagExtensionPresent = 0x0004;

struct TreeConnectRequest {
  uint16_t flags = 0;
  std::span<const uint8_t> path;  // UTF-16LE
};
void append_tree_connect_request(const TreeConnectRequest& r, std::vector<uint8_t>* out);
// The 3.1.1 extension (flag 0x0004) is refused as kBadStructureSize: no
// client this codec serves sends it without asking for it.
ParseError parse_tree_connect_request(std::span<const uint8_t> msg, TreeConnectRequest* out);

struct TreeConnectResponse {
  uint8_t share_type = kShareTypeDisk;
  uint32_t share_flags = 0;
  uint32_t capabilities = 0;
  uint32_t maximal_access = 0;
};
void append_tree_connect_response(const TreeConnectResponse& r, std::vector<uint8_t>* out);
ParseError parse_tree_connect_response(std::span<const uint8_t> msg, TreeConnectResponse* out);

// TREE_DISCONNECT request and response: StructureSize 4, a reserved u16.
void append_tree_disconnect(std::vector<uint8_t>* out);
ParseError parse_tree_disconnect(std::span<const uint8_t> msg);

}  // namespace smb::smb2
