// SPDX-License-Identifier: Apache-2.0
// The --pcap hook (adapter_pcap.h).
#include "net/adapter_pcap.h"

#include <softndk/softndk.h>

#include <cstdio>
#include <mutex>

namespace softndk::wdk::net {
namespace {

std::mutex g_mutex;
std::string g_path;
unsigned g_opened = 0;

std::string NthPath(const std::string& path, unsigned n) {
  if (n == 1) return path;
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  std::string suffix = "." + std::to_string(n);
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + suffix;
  return path.substr(0, dot) + suffix + path.substr(dot);
}

}  // namespace

bool ConfigureAdapterPcap(const std::string& path) {
  if (!path.empty()) {
    // Refuse at start what would fail at the first adapter.
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
      std::perror(("softndk-wdk-run: --pcap " + path).c_str());
      return false;
    }
    std::fclose(f);
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_path = path;
  g_opened = 0;
  return true;
}

void StartAdapterPcap(NDK_ADAPTER* a, const char* ifname) {
  std::string file;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_path.empty()) return;
    file = NthPath(g_path, ++g_opened);
  }
  SOFTNDK_MODIFY_ADAPTER m{file.c_str()};
  SOFTNDK_REQUEST req{};
  NTSTATUS st = SoftNdkModifyAdapter(a, SOFTNDK_MODIFY_ADAPTER_TRACE, &m, &req);
  if (st == STATUS_SUCCESS) {
    std::fprintf(stderr, "softndk-wdk-run: pcap of adapter %p (%s) -> %s\n", static_cast<void*>(a),
                 ifname, file.c_str());
  } else {
    std::fprintf(stderr, "softndk-wdk-run: --pcap: cannot trace adapter %p (%s) to %s: 0x%08x\n",
                 static_cast<void*>(a), ifname, file.c_str(), static_cast<unsigned>(st));
  }
}

}  // namespace softndk::wdk::net
