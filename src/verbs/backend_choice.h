// SPDX-License-Identifier: Apache-2.0
// verbs/backend_choice.h - which engine serves an adapter (issue 30):
// softndk's software iWARP engine ("iwarp-sw") or rdma-core ("verbs").
//
// The request comes from SOFTNDK_OPEN_PARAMETERS.Backend (when the
// caller's structure is large enough to hold it and the value is not 0),
// else from the environment variable SOFTNDK_BACKEND (auto|iwarp-sw|verbs,
// unset or empty = auto). The rule (docs/verbs.md, "Choosing the backend"):
//   iwarp-sw  always the software engine;
//   verbs     the RDMA device of the interface, or the open fails
//             (STATUS_NOT_SUPPORTED: no verbs backend in this process;
//             STATUS_NO_SUCH_DEVICE: the interface has no RDMA device);
//   auto      verbs only for a hardware RNIC on the interface; a software
//             device (siw, rxe) keeps the software engine, because loading
//             siw or rxe must not silently change what an adapter does.
// Pure: no libibverbs here; the facts come from the device probe.
#pragma once

#include <cstdint>
#include <string>

#include "softndk/softndk.h"

namespace softndk::verbs {

enum class Backend : uint32_t {
  kAuto = SOFTNDK_BACKEND_AUTO,  // SOFTNDK_BACKEND_DEFAULT resolves to one of these
  kIwarpSw = SOFTNDK_BACKEND_IWARP_SW,
  kVerbs = SOFTNDK_BACKEND_VERBS,
};

const char* backend_name(Backend b);

// The requested backend and where the request came from ("open
// parameters", "SOFTNDK_BACKEND", "default"). An unknown value in either
// place: STATUS_INVALID_PARAMETER (`source` names the place).
NTSTATUS requested_backend(ULONG param, const char* env, Backend* out, std::string* source);

// What the probe found on the interface.
struct RdmaDeviceFacts {
  bool probed = false;   // false: no probe ran (no verbs backend in this process)
  bool present = false;  // an RDMA device serves the interface's address
  std::string name;      // "siw0"
  std::string driver;    // "siw", "rxe", "mlx5", ...
};

// siw and rxe: the kernel's software RDMA devices.
bool is_software_device(const std::string& driver);

struct BackendChoice {
  NTSTATUS status = STATUS_SUCCESS;
  Backend backend = Backend::kIwarpSw;
  std::string why;  // one line for ndkinfo and error messages
};

// verbs_available: the verbs backend can serve adapters in this process
// (built, loaded, rdma-core present); unavailable_reason says why not.
BackendChoice choose_backend(Backend requested, const std::string& source,
                             const RdmaDeviceFacts& dev, bool verbs_available,
                             const std::string& unavailable_reason, const std::string& ifname);

}  // namespace softndk::verbs
