// SPDX-License-Identifier: Apache-2.0
// render.h - ndkinfo's two output forms: text (like ibv_devinfo) and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "report.h"

namespace ndkinfo {

// The JSON schema version; bump it only when a key changes meaning or goes
// away (adding keys is compatible).
inline constexpr int kJsonSchemaVersion = 1;

// Text: one block per adapter; verbose adds every limit, decoded flags and
// the counters.
void render_text(std::ostream& os, const AdapterReport& r, bool verbose);

// JSON: every field, whatever the verbosity (documented in docs/ndkinfo.md).
nlohmann::ordered_json to_json(const AdapterReport& r);

// The flag names set in `flags` (NDK_ADAPTER_FLAG_* without the prefix);
// unknown bits appear as hex.
std::vector<std::string> adapter_flag_names(ULONG flags);
std::vector<std::string> port_cap_names(ULONG caps);
const char* port_state_name(ULONG state);
const char* technology_name(NDK_RDMA_TECHNOLOGY t);

// How an adapter with these SOFTNDK_MPA_* flags negotiates MPA CRC32c: a
// short key ("off_host", "required", "strict_off", "when_asked") and why,
// in words. `loopback_only`: every address of the adapter is a loopback
// one, so every peer is host-local.
struct CrcPolicy {
  const char* key;
  std::string why;
};
CrcPolicy crc_policy(ULONG mpa_flags, bool loopback_only);

}  // namespace ndkinfo
