// SPDX-License-Identifier: Apache-2.0
// ndkinfo - list softndk adapters with their NDK_ADAPTER_INFO and port
// state, the way ibv_devinfo and `rdma link` do for verbs devices.
//
// Uses only the public C API: SoftNdkEnumerateAdapters, SoftNdkOpenAdapter,
// NdkQueryAdapterInfo through the dispatch table, SoftNdkQueryPort,
// SoftNdkQueryAdapterCounters, SoftNdkCloseAdapter. docs/ndkinfo.md is the
// manual (options, fields, JSON keys, exit codes).
#include <CLI/CLI.hpp>
#include <cstring>
#include <iostream>
#include <string>

#include "ndkapp/version.h"
#include "render.h"
#include "report.h"

namespace {

// Exit codes (docs/ndkinfo.md).
enum ExitCode {
  kOk = 0,            // every selected adapter was opened and queried
  kNoAdapter = 1,     // -d matched nothing, or there are no adapters
  kUsage = 2,         // bad command line
  kEnumFailed = 3,    // SoftNdkEnumerateAdapters failed
  kAdapterError = 4,  // an adapter could not be opened or queried
};

std::string name_of(const SOFTNDK_ADAPTER_DESC& d) {
  return std::string(d.IfName, strnlen(d.IfName, sizeof(d.IfName)));
}

// -d takes an interface name or one of its addresses, like SoftNdkOpenAdapter.
bool matches(const SOFTNDK_ADAPTER_DESC& d, const std::string& want) {
  if (name_of(d) == want) return true;
  for (ULONG i = 0; i < d.AddressCount && i < SOFTNDK_MAX_ADAPTER_ADDRESSES; ++i) {
    const std::string text = ndkinfo::address_text(d.Addresses[i]);
    if (text == want || text.substr(0, text.find('%')) == want) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "List softndk adapters (one per addressed network interface) with their "
      "NDK_ADAPTER_INFO and port state."};
  std::string device;
  bool verbose = false, as_json = false, list_only = false;
  app.add_option("-d,--device", device, "Only this adapter (interface name or IP address)");
  app.add_flag("-v,--verbose", verbose, "Every limit, decoded flags and counters");
  app.add_flag("--json", as_json, "Machine-readable JSON (stable keys, see docs/ndkinfo.md)");
  app.add_flag("-l,--list", list_only, "Adapter names only (no adapter is opened)");
  app.set_version_flag("--version", softndk::tools::version_text("ndkinfo"),
                       "Print the softndk version and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help or the error
    return rc == 0 ? kOk : kUsage;
  }

  std::vector<SOFTNDK_ADAPTER_DESC> descs;
  NTSTATUS st = STATUS_SUCCESS;
  if (!ndkinfo::enumerate(descs, &st)) {
    std::cerr << "ndkinfo: SoftNdkEnumerateAdapters failed: " << ndkinfo::status_text(st) << '\n';
    return kEnumFailed;
  }
  if (!device.empty()) {
    std::erase_if(descs, [&](const auto& d) { return !matches(d, device); });
  }

  int rc = kOk;
  if (descs.empty()) {
    std::cerr << "ndkinfo: " << (device.empty() ? "no adapters" : "no adapter matches " + device)
              << '\n';
    rc = kNoAdapter;
  }

  nlohmann::ordered_json doc;
  doc["schema_version"] = ndkinfo::kJsonSchemaVersion;
  doc["adapters"] = nlohmann::ordered_json::array();
  for (const auto& d : descs) {
    if (list_only) {
      if (!as_json) {
        std::cout << name_of(d) << '\n';
        continue;
      }
      auto a = nlohmann::ordered_json::object();
      a["name"] = name_of(d);
      a["ifindex"] = d.IfIndex;
      a["port_state"] = ndkinfo::port_state_name(d.PortState);
      a["mtu"] = d.Mtu;
      auto addrs = nlohmann::ordered_json::array();
      for (ULONG i = 0; i < d.AddressCount && i < SOFTNDK_MAX_ADAPTER_ADDRESSES; ++i) {
        addrs.push_back(ndkinfo::address_text(d.Addresses[i]));
      }
      a["addresses"] = std::move(addrs);
      doc["adapters"].push_back(std::move(a));
      continue;
    }
    const ndkinfo::AdapterReport r = ndkinfo::collect(d);
    if (!r.ok()) rc = kAdapterError;
    if (as_json) {
      doc["adapters"].push_back(ndkinfo::to_json(r));
    } else {
      if (&d != &descs.front()) std::cout << '\n';
      ndkinfo::render_text(std::cout, r, verbose);
    }
  }
  if (as_json) std::cout << doc.dump(2) << '\n';
  return rc;
}
