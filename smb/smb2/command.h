// SPDX-License-Identifier: Apache-2.0
// command.h - the FILE_ID of 2.2.14.1 and
// helpers shared by the per-command codecs (create.h, read.h, ...): each
// codec is a pure function over a byte span holding one whole SMB2 message
// (64-byte header + body; offsets inside a body count from the header).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "header.h"

namespace smb::smb2 {

// The command codes (2.2.1) are in header.h.

// 2.2.37/2.2.39 InfoType of QUERY_INFO and SET_INFO.
inline constexpr uint8_t kInfoFile = 1, kInfoFilesystem = 2, kInfoSecurity = 3, kInfoQuota = 4;

// 2.2.14.1 SMB2_FILEID.
struct FileId {
  uint64_t persistent = 0;
  uint64_t volatile_ = 0;
  bool operator==(const FileId&) const = default;
};

// Body helpers (internal to the codecs, exposed for the tests).
namespace detail {
// The body of `msg` (after the header) when it is at least `fixed` bytes and
// its StructureSize is `structure_size`.
ParseError body(std::span<const uint8_t> msg, uint16_t structure_size, size_t fixed,
                std::span<const uint8_t>* out);
// [offset, offset + length) (offset from the header's start) as a span of
// `msg`; length 0 gives an empty span whatever the offset. Offsets inside the
// header or past the end are kOutOfBounds.
ParseError field(std::span<const uint8_t> msg, uint32_t offset, uint32_t length,
                 std::span<const uint8_t>* out);
void put_file_id(uint8_t* p, const FileId& f);
FileId get_file_id(const uint8_t* p);
// Grows `out` by `n` zero bytes and returns a pointer to them.
uint8_t* grow(std::vector<uint8_t>* out, size_t n);
// Pads `out` with zeros to a multiple of 8 bytes counted from `base`.
void pad8(std::vector<uint8_t>* out, size_t base);
}  // namespace detail

}  // namespace smb::smb2
