// SPDX-License-Identifier: Apache-2.0
// io.h - NVM commands (Read, Write, Flush, Write Zeroes, Dataset Management)
// against a subsystem's namespaces.
#pragma once

#include <span>

#include "target/subsystem.h"

namespace nvmf::target {

// Checks that need no data (namespace, opcode, LBA range, transfer length
// against the SGL): 0 or the status to complete with, before any data moves.
uint16_t io_precheck(Subsystem& s, const ParsedCapsule& p);

// Runs a command that passed io_precheck. `in`: host-to-controller data;
// `out`: where Read data goes (Reply::data_len bytes).
Reply io_execute(Subsystem& s, const ParsedCapsule& p, std::span<const uint8_t> in,
                 std::span<uint8_t> out);

}  // namespace nvmf::target
