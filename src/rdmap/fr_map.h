// SPDX-License-Identifier: Apache-2.0
// rdmap/fr_map.h - where a fast-registered region lives in the process.
//
// NdkFastRegister names logical pages (process page addresses, NdkBuildLAM)
// and a BaseVirtualAddress the peer uses as tagged offset. The data path
// records, per STag index, the constant that turns a TO into a pointer when
// the pages are contiguous in the process (they are for NdkBuildLAM output);
// other page lists are refused for remote access.
#pragma once

#include <cstdint>

namespace softndk::rdmap {

void fr_set(const void* table, uint32_t stag, int64_t delta, bool contiguous);
bool fr_delta(const void* table, uint32_t stag, int64_t* delta);

}  // namespace softndk::rdmap
