// SPDX-License-Identifier: Apache-2.0
// write.h - MS-SMB2 2.2.21 WRITE request and 2.2.22 WRITE response. Inline
// data follows the fixed part; for an SMB2_CHANNEL_RDMA_V1[_INVALIDATE]
// channel Length is 0, RemainingBytes the bytes the server is to RDMA Read
// and the channel info the client's buffer descriptors. Encoders append the
// body after the message's header (the last 64 bytes of `out`).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "command.h"

namespace smb::smb2 {

struct WriteRequest {
  uint64_t offset = 0;
  FileId file_id;
  uint32_t channel = 0;  // kChannel* of read.h
  uint32_t remaining_bytes = 0;
  uint32_t flags = 0;
  std::span<const uint8_t> data;      // inline data (Length); encode: copied in
  std::vector<uint8_t> channel_info;  // descriptors for an RDMA channel
};

struct WriteResponse {
  uint32_t count = 0;
  uint32_t remaining = 0;
};

void append_write_request(const WriteRequest& r, std::vector<uint8_t>* out);
ParseError parse_write_request(std::span<const uint8_t> msg, WriteRequest* out);
void append_write_response(const WriteResponse& r, std::vector<uint8_t>* out);
ParseError parse_write_response(std::span<const uint8_t> msg, WriteResponse* out);

}  // namespace smb::smb2
