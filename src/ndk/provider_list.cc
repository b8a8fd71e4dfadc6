// SPDX-License-Identifier: Apache-2.0
// ndk/provider_list.cc - the probe list of engines (provider_list.h).
#include "ndk/provider_list.h"

#include "engine/iwarp_provider.h"

namespace softndk::ndk {

NTSTATUS open_provider(const provider::ProviderConfig& cfg,
                       std::unique_ptr<provider::Provider>* out) {
  const provider::ProviderEntry list[] = {
      engine::iwarp_entry(),
  };
  for (const provider::ProviderEntry& e : list)
    if (e.probe(cfg)) return e.open(cfg, out);
  return STATUS_NOT_SUPPORTED;
}

}  // namespace softndk::ndk
