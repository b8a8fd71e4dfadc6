// SPDX-License-Identifier: Apache-2.0
// pattern.h - the data ndk-nvme writes and later checks: every 8-byte word
// is a function of (seed, LBA, word index), so any later read of an LBA,
// from any run with the same seed and block size, can be verified without
// remembering what was written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nvmf::host {

// Fills `nblocks` logical blocks of `block_size` bytes starting at `lba`.
void fill_pattern(uint8_t* buf, uint64_t lba, uint32_t nblocks, uint32_t block_size, uint64_t seed);

// Checks them; on a mismatch returns false and describes the first bad
// word ("LBA 17 byte 4088: read 0x..., expected 0x...").
bool check_pattern(const uint8_t* buf, uint64_t lba, uint32_t nblocks, uint32_t block_size,
                   uint64_t seed, std::string* why);

}  // namespace nvmf::host
