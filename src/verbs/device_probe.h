// SPDX-License-Identifier: Apache-2.0
// verbs/device_probe.h - find the RDMA device that serves an interface or
// address (rdma_bind_addr -> id->verbs, as rdma_cm itself chooses) and
// learn what the verbs backend needs from it: ibv_query_device_ex and
// ibv_query_port, and the facts only trying tells (largest inline size a
// QP takes, CQ resize, type-2 memory windows), with every object the
// backend would create (PD, completion channel with a non-blocking fd,
// armed CQ, RC QP, SRQ, ibv_reg_mr_iova) created once and destroyed.
// Blocking and slow (tens of ms): run it at adapter open, never in a
// consumer's call or callback.
#pragma once

#include <infiniband/verbs.h>

#include <string>
#include <vector>

#include "verbs/backend_choice.h"
#include "verbs/verbs_map.h"

namespace softndk::verbs {

struct ProbeStep {
  std::string what;  // "alloc_pd", "create_cq", ...
  bool ok = false;
  std::string detail;  // errno text, or what was learned
};

struct ProbeResult {
  NTSTATUS status = STATUS_SUCCESS;  // NO_SUCH_DEVICE: nothing serves it
  std::string error;                 // why, when status is not SUCCESS
  std::string ifname;
  std::string address;  // the address bound (text)
  RdmaDeviceFacts device;
  DeviceFacts facts;
  ibv_device_attr_ex attr{};
  ibv_port_attr port{};
  uint8_t port_num = 0;
  std::vector<ProbeStep> steps;
};

// name_or_address: an interface name ("eth0": its first IPv4, else IPv6
// address) or an IP address in text form.
ProbeResult probe_device(const std::string& name_or_address);

}  // namespace softndk::verbs
