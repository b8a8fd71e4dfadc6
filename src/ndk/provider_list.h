// SPDX-License-Identifier: Apache-2.0
// ndk/provider_list.h - which engine serves an adapter: the probe list.
//
// Like UCX's transports: each entry of the list probes the adapter's
// configuration (cheap, no side effects) and the first that can serve it is
// opened. The list holds the software iWARP engine; the verbs backend
// (issue 30) is a plugin (verbs/plugin.h) that Adapter::open chooses before
// this list by the rule of docs/verbs.md ("Choosing the backend").
#pragma once

#include <memory>

#include "provider/provider.h"

namespace softndk::ndk {

// Opens the first engine of the list whose probe accepts `cfg`.
// STATUS_NOT_SUPPORTED if none does, else the engine's open status.
NTSTATUS open_provider(const provider::ProviderConfig& cfg,
                       std::unique_ptr<provider::Provider>* out);

}  // namespace softndk::ndk
