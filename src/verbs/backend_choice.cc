// SPDX-License-Identifier: Apache-2.0
// verbs/backend_choice.cc - see backend_choice.h.
#include "verbs/backend_choice.h"

namespace softndk::verbs {

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::kAuto:
      return "auto";
    case Backend::kIwarpSw:
      return "iwarp-sw";
    case Backend::kVerbs:
      return "verbs";
  }
  return "?";
}

NTSTATUS requested_backend(ULONG param, const char* env, Backend* out, std::string* source) {
  if (param != SOFTNDK_BACKEND_DEFAULT) {
    *source = "open parameters";
    if (param != SOFTNDK_BACKEND_AUTO && param != SOFTNDK_BACKEND_IWARP_SW &&
        param != SOFTNDK_BACKEND_VERBS)
      return STATUS_INVALID_PARAMETER;
    *out = static_cast<Backend>(param);
    return STATUS_SUCCESS;
  }
  if (env != nullptr && *env != '\0') {
    *source = "SOFTNDK_BACKEND";
    std::string v = env;
    if (v == "auto") {
      *out = Backend::kAuto;
    } else if (v == "iwarp-sw") {
      *out = Backend::kIwarpSw;
    } else if (v == "verbs") {
      *out = Backend::kVerbs;
    } else {
      return STATUS_INVALID_PARAMETER;
    }
    return STATUS_SUCCESS;
  }
  *source = "default";
  *out = Backend::kAuto;
  return STATUS_SUCCESS;
}

bool is_software_device(const std::string& driver) { return driver == "siw" || driver == "rxe"; }

BackendChoice choose_backend(Backend requested, const std::string& source,
                             const RdmaDeviceFacts& dev, bool verbs_available,
                             const std::string& unavailable_reason, const std::string& ifname) {
  BackendChoice c;
  const std::string asked = std::string(backend_name(requested)) + " (" + source + ")";
  const std::string where = dev.name + (dev.driver.empty() ? "" : " [" + dev.driver + "]");
  switch (requested) {
    case Backend::kIwarpSw:
      c.backend = Backend::kIwarpSw;
      c.why = asked;
      return c;
    case Backend::kVerbs:
      if (!verbs_available) {
        c.status = STATUS_NOT_SUPPORTED;
        c.why = asked + ": verbs backend unavailable: " + unavailable_reason;
      } else if (!dev.present) {
        c.status = STATUS_NO_SUCH_DEVICE;
        c.why = asked + ": no RDMA device serves " + ifname;
      } else {
        c.backend = Backend::kVerbs;
        c.why = asked + ": " + where + " on " + ifname;
      }
      return c;
    case Backend::kAuto:
      break;
  }
  c.backend = Backend::kIwarpSw;
  if (!verbs_available) {
    c.why = asked + ": software iWARP; verbs backend unavailable: " + unavailable_reason;
  } else if (!dev.present) {
    c.why = asked + ": software iWARP; no RDMA device serves " + ifname;
  } else if (is_software_device(dev.driver)) {
    c.why = asked + ": software iWARP; " + where + " on " + ifname +
            " is a software device (SOFTNDK_BACKEND=verbs uses it)";
  } else {
    c.backend = Backend::kVerbs;
    c.why = asked + ": RNIC " + where + " on " + ifname;
  }
  return c;
}

}  // namespace softndk::verbs
