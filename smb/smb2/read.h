// SPDX-License-Identifier: Apache-2.0
// read.h - MS-SMB2 2.2.19 READ request and 2.2.20 READ response, with the
// SMB2_CHANNEL_RDMA_V1[_INVALIDATE] channel info (an encoded list of
// MS-SMBD 2.2.3.1 buffer descriptors, smbd/buffer_descriptor.h). Encoders
// append the body after the message's header (the last 64 bytes of `out`);
// parsers take the whole message.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "command.h"

namespace smb::smb2 {

inline constexpr uint32_t kChannelNone = 0;
inline constexpr uint32_t kChannelRdmaV1 = 1;
inline constexpr uint32_t kChannelRdmaV1Invalidate = 2;

struct ReadRequest {
  uint8_t padding = 0;  // where the client would like the data (DataOffset)
  uint8_t flags = 0;
  uint32_t length = 0;
  uint64_t offset = 0;
  FileId file_id;
  uint32_t minimum_count = 0;
  uint32_t channel = kChannelNone;
  uint32_t remaining_bytes = 0;
  std::vector<uint8_t> channel_info;  // descriptors for an RDMA channel
};

// For an RDMA channel the server writes the data into the client's buffers
// and answers DataLength 0 with DataRemaining = the bytes written.
struct ReadResponse {
  uint32_t data_remaining = 0;
  uint32_t flags = 0;
  std::span<const uint8_t> data;  // encode: copied in; parse: within the message
};

void append_read_request(const ReadRequest& r, std::vector<uint8_t>* out);
ParseError parse_read_request(std::span<const uint8_t> msg, ReadRequest* out);
void append_read_response(const ReadResponse& r, std::vector<uint8_t>* out);
// The fixed part of a READ response (16 bytes) at p, for data_length bytes
// that follow it (DataOffset 80: right after the fixed part): a response
// whose data is placed in its send buffer directly.
inline constexpr size_t kReadResponseHeadSize = 16;
void store_read_response_head(const ReadResponse& r, uint32_t data_length, uint8_t* p);
ParseError parse_read_response(std::span<const uint8_t> msg, ReadResponse* out);

}  // namespace smb::smb2
