// SPDX-License-Identifier: Apache-2.0
// ioctl.h - MS-SMB2 2.2.31/2.2.32 IOCTL request and response, and the
// 2.2.31.4/2.2.32.6 FSCTL_VALIDATE_NEGOTIATE_INFO payloads: builders and
// pure parsers, both directions. Input/output buffers are spans inside the
// parsed message.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "command.h"

namespace smb::smb2 {

inline constexpr uint32_t kFsctlValidateNegotiateInfo = 0x00140204;
inline constexpr uint32_t kFsctlDfsGetReferrals = 0x00060194;
inline constexpr uint32_t kFsctlQueryNetworkInterfaceInfo = 0x001401FC;
inline constexpr uint32_t kFsctlDfsGetReferralsEx = 0x000601B0;
inline constexpr uint32_t kFsctlPipeWait = 0x00110018;
inline constexpr uint32_t kIoctlIsFsctl = 0x00000001;

// The FileId of an FSCTL that names no file (2.2.31).
inline constexpr FileId kNoFileId = {~uint64_t{0}, ~uint64_t{0}};

struct IoctlRequest {
  uint32_t ctl_code = 0;
  FileId file_id = kNoFileId;
  std::span<const uint8_t> input;
  uint32_t max_input_response = 0;
  uint32_t max_output_response = 0;
  uint32_t flags = kIoctlIsFsctl;
};
void append_ioctl_request(const IoctlRequest& r, std::vector<uint8_t>* out);
ParseError parse_ioctl_request(std::span<const uint8_t> msg, IoctlRequest* out);

struct IoctlResponse {
  uint32_t ctl_code = 0;
  FileId file_id = kNoFileId;
  std::span<const uint8_t> output;
  uint32_t flags = 0;
};
void append_ioctl_response(const IoctlResponse& r, std::vector<uint8_t>* out);
ParseError parse_ioctl_response(std::span<const uint8_t> msg, IoctlResponse* out);

struct ValidateNegotiateRequest {
  uint32_t capabilities = 0;
  std::array<uint8_t, 16> guid{};
  uint16_t security_mode = 0;
  std::vector<uint16_t> dialects;
};
std::vector<uint8_t> validate_negotiate_request_data(const ValidateNegotiateRequest& r);
ParseError parse_validate_negotiate_request(std::span<const uint8_t> d,
                                            ValidateNegotiateRequest* out);

struct ValidateNegotiateResponse {
  uint32_t capabilities = 0;
  std::array<uint8_t, 16> guid{};
  uint16_t security_mode = 0;
  uint16_t dialect = 0;
};
std::vector<uint8_t> validate_negotiate_response_data(const ValidateNegotiateResponse& r);
ParseError parse_validate_negotiate_response(std::span<const uint8_t> d,
                                             ValidateNegotiateResponse* out);

}  // namespace smb::smb2
