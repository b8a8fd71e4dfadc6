// SPDX-License-Identifier: Apache-2.0
// verbs/plugin_loader.cc - see plugin.h. Part of libsoftndk; needs no
// rdma-core (dlopen only).
#include <dirent.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "softndk/version.h"
#include "verbs/plugin.h"

namespace softndk::verbs {

namespace {

struct Loaded {
  const Plugin* plugin = nullptr;
  std::string why;
};

std::string folder_of_this_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&load_plugin), &info) == 0 || info.dli_fname == nullptr)
    return {};
  std::string f = info.dli_fname;
  size_t slash = f.rfind('/');
  return slash == std::string::npos ? std::string{} : f.substr(0, slash + 1);
}

Loaded load_once() {
  Loaded r;
  std::vector<std::string> tries;
  if (const char* p = std::getenv("SOFTNDK_VERBS_PLUGIN"); p != nullptr && *p != '\0') {
    tries.emplace_back(p);
  } else {
    std::string dir = folder_of_this_library();
    if (!dir.empty()) {
      tries.push_back(dir + kPluginFile);
      tries.push_back(dir + "softndk/" + kPluginFile);
    }
    tries.emplace_back(kPluginFile);
  }
  std::string errors;
  for (const std::string& t : tries) {
    void* h = dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      errors += (errors.empty() ? "" : "; ") + std::string(e != nullptr ? e : t.c_str());
      continue;
    }
    using Entry = const Plugin* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(h, kPluginSymbol));
    const Plugin* p = entry != nullptr ? entry() : nullptr;
    if (p == nullptr) {
      r.why = t + " has no " + kPluginSymbol;
      dlclose(h);
      return r;
    }
    if (p->interface_version != provider::kInterfaceVersion || p->softndk_version == nullptr ||
        std::strcmp(p->softndk_version, SOFTNDK_VERSION_STRING) != 0) {
      r.why = t + " is from another softndk build (interface " +
              std::to_string(p->interface_version) + ", version " +
              (p->softndk_version ? p->softndk_version : "?") + "; this library: interface " +
              std::to_string(provider::kInterfaceVersion) + ", " + SOFTNDK_VERSION_STRING + ")";
      dlclose(h);
      return r;
    }
    r.plugin = p;  // never unloaded: providers of open adapters run its code
    return r;
  }
  r.why = "the verbs backend plugin is not installed or cannot load (" + errors + ")";
  return r;
}

}  // namespace

const Plugin* load_plugin(std::string* why) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load_once(); });
  if (loaded.plugin == nullptr && why != nullptr) *why = loaded.why;
  return loaded.plugin;
}

bool any_rdma_device() {
  DIR* d = opendir("/sys/class/infiniband");
  if (d == nullptr) return false;
  bool any = false;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') {
      any = true;
      break;
    }
  }
  closedir(d);
  return any;
}

}  // namespace softndk::verbs
