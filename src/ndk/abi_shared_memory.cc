// SPDX-License-Identifier: Apache-2.0
// abi_shared_memory.cc - SoftNdkAllocateSharedMemory / SoftNdkFreeSharedMemory
// (softndk/softndk.h; the registry is the same-host transport's,
// transport/samehost/samehost_segments.h, reached through the engine).
#include <cerrno>

#include "engine/iwarp_provider.h"
#include "ndk/abi_common.h"
#include "softndk/softndk.h"

using softndk::ndk::abi::guarded;

extern "C" {

NTSTATUS SoftNdkAllocateSharedMemory(SIZE_T Bytes, PVOID* Address) {
  return guarded([&]() -> NTSTATUS {
    if (Address == nullptr) return STATUS_INVALID_PARAMETER;
    *Address = nullptr;
    void* p = nullptr;
    const int e = softndk::engine::iwarp_shared_segment_alloc(Bytes, &p);
    if (e == EINVAL) return STATUS_INVALID_PARAMETER;
    if (e != 0) return STATUS_INSUFFICIENT_RESOURCES;
    *Address = p;
    return STATUS_SUCCESS;
  });
}

NTSTATUS SoftNdkFreeSharedMemory(PVOID Address) {
  return guarded([&]() -> NTSTATUS {
    if (Address == nullptr) return STATUS_INVALID_PARAMETER;
    return softndk::engine::iwarp_shared_segment_free(Address) == 0 ? STATUS_SUCCESS
                                                                    : STATUS_INVALID_PARAMETER;
  });
}

}  // extern "C"
