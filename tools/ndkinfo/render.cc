// SPDX-License-Identifier: Apache-2.0
// render.cc - text and JSON output of ndkinfo.
//
// Key names are part of the tool's interface (scripts parse them); they are
// listed in docs/ndkinfo.md and change only with kJsonSchemaVersion.
#include "render.h"

#include <cstdio>
#include <iomanip>
#include <utility>

namespace ndkinfo {

namespace {
// MPA and same-host settings are the software engine's: a device's
// adapter (verbs) has neither.
bool on_device(const AdapterReport& r) {
  return r.backend && r.backend->Backend == SOFTNDK_BACKEND_VERBS;
}
const char* backend_name(ULONG b) {
  switch (b) {
    case SOFTNDK_BACKEND_VERBS:
      return "verbs";
    case SOFTNDK_BACKEND_IWARP_SW:
      return "iwarp-sw";
    default:
      return "unknown";
  }
}
}  // namespace
namespace {

using json = nlohmann::ordered_json;

template <size_t N>
std::vector<std::string> decode(ULONG bits, const std::pair<ULONG, const char*> (&names)[N]) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : names) {
    if (bits & bit) {
      out.emplace_back(name);
      bits &= ~bit;
    }
  }
  if (bits) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%08X", static_cast<unsigned>(bits));
    out.emplace_back(buf);
  }
  return out;
}

constexpr std::pair<ULONG, const char*> kAdapterFlags[] = {
    {NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED, "IN_ORDER_DMA_SUPPORTED"},
    {NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED, "RDMA_READ_SINK_NOT_REQUIRED"},
    {NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED, "CQ_INTERRUPT_MODERATION_SUPPORTED"},
    {NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED, "MULTI_ENGINE_SUPPORTED"},
    {NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED, "RDMA_READ_LOCAL_INVALIDATE_SUPPORTED"},
    {NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED, "CQ_RESIZE_SUPPORTED"},
    {NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED, "LOOPBACK_CONNECTIONS_SUPPORTED"},
};

constexpr std::pair<ULONG, const char*> kPortCaps[] = {
    {SOFTNDK_PORT_CAP_TRACE_OWNER, "TRACE_OWNER"},
    {SOFTNDK_PORT_CAP_FAULT_INJECTOR, "FAULT_INJECTOR"},
};

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string version_text(NDK_VERSION v) {
  return std::to_string(v.Major) + "." + std::to_string(v.Minor);
}

// The NDK_ADAPTER_INFO limits, in header order, with their JSON keys.
std::vector<std::pair<const char*, uint64_t>> limits(const NDK_ADAPTER_INFO& i) {
  return {
      {"max_registration_size", i.MaxRegistrationSize},
      {"max_window_size", i.MaxWindowSize},
      {"frmr_page_count", i.FRMRPageCount},
      {"max_initiator_request_sge", i.MaxInitiatorRequestSge},
      {"max_receive_request_sge", i.MaxReceiveRequestSge},
      {"max_read_request_sge", i.MaxReadRequestSge},
      {"max_transfer_length", i.MaxTransferLength},
      {"max_inline_data_size", i.MaxInlineDataSize},
      {"max_inbound_read_limit", i.MaxInboundReadLimit},
      {"max_outbound_read_limit", i.MaxOutboundReadLimit},
      {"max_receive_queue_depth", i.MaxReceiveQueueDepth},
      {"max_initiator_queue_depth", i.MaxInitiatorQueueDepth},
      {"max_srq_depth", i.MaxSrqDepth},
      {"max_cq_depth", i.MaxCqDepth},
      {"large_request_threshold", i.LargeRequestThreshold},
      {"max_caller_data", i.MaxCallerData},
      {"max_callee_data", i.MaxCalleeData},
  };
}

std::vector<std::pair<const char*, uint64_t>> counter_list(const SOFTNDK_COUNTERS& c) {
  return {
      {"connect", c.Connect},
      {"accept", c.Accept},
      {"connect_failure", c.ConnectFailure},
      {"connection_error", c.ConnectionError},
      {"active_connection", c.ActiveConnection},
      {"cq_error", c.CQError},
      {"rdma_in_octets", c.RDMAInOctets},
      {"rdma_out_octets", c.RDMAOutOctets},
      {"rdma_in_frames", c.RDMAInFrames},
      {"rdma_out_frames", c.RDMAOutFrames},
      {"terminates_sent", c.TerminatesSent},
      {"terminates_received", c.TerminatesReceived},
  };
}

std::string if_name(const SOFTNDK_ADAPTER_DESC& d) {
  return std::string(d.IfName, strnlen(d.IfName, sizeof(d.IfName)));
}

void field(std::ostream& os, int indent, const std::string& key, const std::string& value) {
  os << std::string(indent, '\t') << std::left << std::setw(indent > 1 ? 26 : 34)
     << (key.empty() ? key : key + ":") << value << '\n';
}

void list_field(std::ostream& os, int indent, const std::string& key,
                const std::vector<std::string>& values) {
  if (values.empty()) return field(os, indent, key, "(none)");
  for (size_t i = 0; i < values.size(); ++i) field(os, indent, i == 0 ? key : "", values[i]);
}

}  // namespace

std::vector<std::string> adapter_flag_names(ULONG flags) { return decode(flags, kAdapterFlags); }
std::vector<std::string> port_cap_names(ULONG caps) { return decode(caps, kPortCaps); }

const char* port_state_name(ULONG state) {
  switch (state) {
    case SoftNdkPortStateActive:
      return "ACTIVE";
    case SoftNdkPortStateDown:
      return "DOWN";
    default:
      return "UNKNOWN";
  }
}

const char* technology_name(NDK_RDMA_TECHNOLOGY t) {
  switch (t) {
    case NdkiWarp:
      return "iWARP";
    case NdkInfiniBand:
      return "InfiniBand";
    case NdkRoCE:
      return "RoCE";
    case NdkRoCEv2:
      return "RoCEv2";
    default:
      return "undefined";
  }
}

CrcPolicy crc_policy(ULONG f, bool loopback_only) {
  if (f & SOFTNDK_MPA_CRC_REQUIRED)
    return {"required", "on, forced: SOFTNDK_MPA_CRC_REQUIRED (peers without CRC are refused)"};
  if (f & SOFTNDK_MPA_CRC_STRICT_OFF)
    return {"strict_off", "off, forced: SOFTNDK_MPA_CRC_STRICT_OFF (peers that ask are refused)"};
  if (f & SOFTNDK_MPA_CRC_WHEN_ASKED)
    return {"when_asked", "off unless the peer asks: SOFTNDK_MPA_CRC_WHEN_ASKED"};
  if (loopback_only)
    return {"off_host", "off: every peer here is host-local (no wire), unless the peer asks"};
  return {"off_host",
          "requested by default on connections that leave the host; off on host-local ones "
          "(loopback, this host's addresses) unless the peer asks"};
}

namespace {

bool loopback_only(const AdapterReport& r) {
  const auto& list = r.port ? r.port_addresses : r.addresses;
  if (list.empty()) return false;
  for (const auto& a : list)
    if (a.rfind("127.", 0) != 0 && a != "::1") return false;
  return true;
}

}  // namespace

void render_text(std::ostream& os, const AdapterReport& r, bool verbose) {
  const auto& d = r.desc;
  os << "adapter: " << if_name(d) << '\n';
  field(os, 1, "ifindex", std::to_string(d.IfIndex));
  if (r.info) {
    const auto& i = *r.info;
    field(os, 1, "transport",
          std::string(technology_name(i.RdmaTechnology)) + " (" +
              std::to_string(static_cast<int>(i.RdmaTechnology)) + ")");
    field(os, 1, "ndk_version", version_text(i.Version));
    field(os, 1, "vendor_id", hex(i.VendorId));
    field(os, 1, "device_id", hex(i.DeviceId));
    field(os, 1, "adapter_flags", hex(i.AdapterFlags));
    if (verbose) {
      list_field(os, 1, "adapter_flags_decoded", adapter_flag_names(i.AdapterFlags));
      for (const auto& [key, value] : limits(i)) field(os, 1, key, std::to_string(value));
    } else {
      field(os, 1, "max_initiator_queue_depth", std::to_string(i.MaxInitiatorQueueDepth));
      field(os, 1, "max_receive_queue_depth", std::to_string(i.MaxReceiveQueueDepth));
      field(os, 1, "max_cq_depth", std::to_string(i.MaxCqDepth));
    }
  }
  if (r.backend) {
    field(os, 1, "backend", backend_name(r.backend->Backend));
    if (r.backend->Device[0] != '\0') field(os, 2, "device", r.backend->Device);
    field(os, 2, "why", r.backend->Reason);
    if (r.backend->FastRegister[0] != '\0') field(os, 2, "fast register", r.backend->FastRegister);
  }
  const ULONG state = r.port ? r.port->State : d.PortState;
  field(os, 1, "port", std::to_string(SOFTNDK_PORT_NUMBER));
  field(os, 2, "state", std::string(port_state_name(state)) + " (" + std::to_string(state) + ")");
  field(os, 2, "mtu", std::to_string(r.port ? r.port->Mtu : d.Mtu));
  if (r.port) {
    field(os, 2, "link_speed",
          r.port->LinkSpeedMbps ? std::to_string(r.port->LinkSpeedMbps) + " Mb/s" : "unknown");
    if (verbose) {
      field(os, 2, "capabilities", hex(r.port->Capabilities));
      list_field(os, 2, "capabilities_decoded", port_cap_names(r.port->Capabilities));
    }
  }
  list_field(os, 2, "addresses", r.port ? r.port_addresses : r.addresses);
  if (r.mpa_flags && !on_device(r)) {
    field(os, 1, "mpa", "");
    field(os, 2, "mpa_flags", hex(*r.mpa_flags));
    field(os, 2, "crc", crc_policy(*r.mpa_flags, loopback_only(r)).why);
    field(os, 1, "samehost",
          r.samehost ? "on (same-host peers: Write/Read payloads by copy, the stream through "
                       "shared memory, SOFTNDK_SAMEHOST)"
                     : "off (SOFTNDK_SAMEHOST=off; unset it to enable)");
  }
  if (verbose && r.counters) {
    field(os, 1, "counters", "");
    for (const auto& [key, value] : counter_list(*r.counters)) {
      field(os, 2, key, std::to_string(value));
    }
  }
  if (!r.ok()) {
    field(os, 1, "error", r.failed_call + " returned " + status_text(r.failed_status));
  }
}

json to_json(const AdapterReport& r) {
  const auto& d = r.desc;
  json a;
  a["name"] = if_name(d);
  a["ifindex"] = d.IfIndex;
  a["port_state"] = port_state_name(r.port ? r.port->State : d.PortState);
  a["mtu"] = r.port ? r.port->Mtu : d.Mtu;
  a["addresses"] = r.addresses;
  if (r.info) {
    const auto& i = *r.info;
    json info;
    info["ndk_version"] = version_text(i.Version);
    info["vendor_id"] = i.VendorId;
    info["device_id"] = i.DeviceId;
    info["rdma_technology"] = technology_name(i.RdmaTechnology);
    for (const auto& [key, value] : limits(i)) info[key] = value;
    info["adapter_flags"] = i.AdapterFlags;
    info["adapter_flags_decoded"] = adapter_flag_names(i.AdapterFlags);
    a["info"] = std::move(info);
  } else {
    a["info"] = nullptr;
  }
  if (r.port) {
    const auto& p = *r.port;
    json port;
    port["number"] = p.PortNumber;
    port["state"] = port_state_name(p.State);
    port["state_code"] = p.State;
    port["mtu"] = p.Mtu;
    port["link_speed_mbps"] = p.LinkSpeedMbps;
    port["ifindex"] = p.IfIndex;
    port["ifname"] = std::string(p.IfName, strnlen(p.IfName, sizeof(p.IfName)));
    port["capabilities"] = p.Capabilities;
    port["capabilities_decoded"] = port_cap_names(p.Capabilities);
    port["addresses"] = r.port_addresses;
    a["ports"] = json::array({std::move(port)});
  } else {
    a["ports"] = json::array();
  }
  if (r.backend) {
    a["backend"] = {{"name", backend_name(r.backend->Backend)},
                    {"device", std::string(r.backend->Device)},
                    {"why", std::string(r.backend->Reason)},
                    {"fast_register", std::string(r.backend->FastRegister)}};
  } else {
    a["backend"] = nullptr;
  }
  if (r.mpa_flags && !on_device(r)) {
    const CrcPolicy p = crc_policy(*r.mpa_flags, loopback_only(r));
    a["mpa"] = {{"flags", *r.mpa_flags}, {"crc", p.key}, {"crc_why", p.why}};
    a["samehost"] = r.samehost;
  } else {
    a["mpa"] = nullptr;
  }
  if (r.counters) {
    json c = json::object();
    for (const auto& [key, value] : counter_list(*r.counters)) c[key] = value;
    a["counters"] = std::move(c);
  } else {
    a["counters"] = nullptr;
  }
  if (r.ok()) {
    a["error"] = nullptr;
  } else {
    a["error"] = {{"call", r.failed_call},
                  {"status", status_text(r.failed_status)},
                  {"status_code", static_cast<uint32_t>(r.failed_status)}};
  }
  return a;
}

}  // namespace ndkinfo
