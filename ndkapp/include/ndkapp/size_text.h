// SPDX-License-Identifier: Apache-2.0
// size_text.h - the one parser of sizes on every tool's command line
// (ndkperf -s, ndk-nvmet --ns ram:SIZE, ndk-nvme --bs/--size/--offset), so
// that "64K" means the same everywhere (issue 28: the tools' suffixes
// differed, `T` and `KB` were taken by some and refused by others).
//
// Accepted: decimal digits, then optionally one of K, M, G, T (any case;
// powers of 1024, as perftest, fio and nvme-cli use them), optionally
// followed by "B" or "iB": 4096, 4K, 4k, 4KB, 4KiB, 1T, 512B. Nothing else:
// no sign, no blanks, no fraction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace softndk::tools {

// The size `text` names, or nullopt with *why ("bad size suffix in '12X'",
// "'…' is too large") when it names none. Pure: no locale, no allocation
// besides the message.
std::optional<uint64_t> parse_size(std::string_view text, std::string* why = nullptr);

}  // namespace softndk::tools
