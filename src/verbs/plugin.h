// SPDX-License-Identifier: Apache-2.0
// verbs/plugin.h - the verbs backend as a plugin: libsoftndk-verbs.so,
// loaded with dlopen the first time an adapter open needs it
// (docs/verbs.md, "Packaging"), so libsoftndk itself never links rdma-core.
//
// The seam is the C++ provider interface, which is not an ABI: the plugin
// must come from the same build. Its one exported symbol (kPluginSymbol)
// returns this table, and the loader refuses a table whose interface
// version or softndk version differs from its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "provider/provider.h"
#include "verbs/backend_choice.h"

namespace softndk::verbs {

inline constexpr const char* kPluginSymbol = "softndk_verbs_plugin";
inline constexpr const char* kPluginFile = "libsoftndk-verbs.so";

struct Plugin {
  uint32_t interface_version = 0;         // provider::kInterfaceVersion of the build
  const char* softndk_version = nullptr;  // SOFTNDK_VERSION_STRING of the build
  // The RDMA device rdma_cm binds the interface's first address to (as
  // rdma_cm chooses for that adapter's connections). Slow (tens of ms).
  RdmaDeviceFacts (*device_of)(const std::string& ifname) = nullptr;
  // Opens the verbs provider for the adapter: STATUS_NO_SUCH_DEVICE,
  // STATUS_NOT_SUPPORTED (no rdma_cm) with *why.
  NTSTATUS(*open)
  (const provider::ProviderConfig& cfg, std::unique_ptr<provider::Provider>* out,
   std::string* why) = nullptr;
};

// The plugin, loaded once per process: null (with *why) when it is not
// installed, cannot load (rdma-core missing) or comes from another build.
// Search: $SOFTNDK_VERBS_PLUGIN (a path), the folder of libsoftndk (and its
// softndk/ subfolder), then the dynamic loader's own search path.
const Plugin* load_plugin(std::string* why);

// Whether any RDMA device exists (/sys/class/infiniband has an entry):
// without one, `auto` needs no plugin at all.
bool any_rdma_device();

}  // namespace softndk::verbs
