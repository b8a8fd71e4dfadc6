// SPDX-License-Identifier: Apache-2.0
// controller.h - one association with an NVMe over Fabrics controller, set
// up the way the Linux RDMA host does it: admin queue (RDMA CM private data,
// Fabrics Connect with CNTLID FFFFh, Property Get CAP/VS, Property Set
// CC.EN=1, wait for CSTS.RDY, Identify), then for an NVM subsystem Set
// Features Number of Queues and one QP per I/O queue (each a Fabrics
// Connect naming the controller's CNTLID). Keep Alive every KATO/2 from
// tick(); shutdown() sets CC.SHN and waits for CSTS.SHST before the queues
// disconnect.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ndkapp/session.h"
#include "rdma_queue.h"

namespace nvmf::host {

struct ConnectOptions {
  std::string traddr;
  uint16_t trsvcid = kDefaultPort;
  std::string local;  // adapter: interface or address; empty = the route toward traddr
  std::string subnqn;
  std::string hostnqn;  // empty: derived from hostid
  uint8_t hostid[16]{};
  uint32_t kato_ms = 5000;  // 0: no keep alive (discovery)
  unsigned io_queues = 1;
  unsigned queue_size = 33;  // I/O queue entries (depth + 1)
  uint32_t max_io = 128 * 1024;
  bool in_capsule = true;  // use in-capsule data for small writes when IOCCSZ allows
  bool remote_invalidate = true;
  int crc = -1;  // -1 library default, 0 off (only if the peer asks), 1 require
  double timeout_s = 10;
  // Open the adapter with SOFTNDK_OPEN_FLAG_FR_REGISTER (--fr-register): on
  // a verbs device without type-2 windows (siw) each fast register then
  // registers the slot anew (a new token each command; docs/verbs.md).
  bool fr_register = false;
};

struct NamespaceInfo {
  uint32_t nsid = 0;
  uint64_t nsze = 0;  // blocks
  uint64_t ncap = 0;
  uint32_t lba_size = 512;
};

struct ControllerInfo {
  uint16_t cntlid = 0, vid = 0;
  std::string sn, mn, fr, subnqn;
  uint32_t version = 0;  // VS property
  uint64_t cap = 0;      // CAP property
  uint8_t mdts = 0;
  uint32_t max_transfer = 0;  // bytes, 0 = no limit
  uint32_t ioccsz = 0, iorcsz = 0;
  uint16_t icdoff = 0, maxcmd = 0, kas = 0;
  uint32_t nn = 0, sgls = 0;
  uint8_t cntrltype = 0;
  uint16_t io_queues_granted = 0;
  int mpa_crc = -1;  // CRC32c negotiated on the admin queue's connection (-1: unknown)
};

class Controller {
 public:
  // Connects the admin queue and enables the controller; `discovery`
  // stops there (no I/O queues, no namespaces). Throws HostError.
  Controller(tools::Adapter& a, const ConnectOptions& o, bool discovery);
  ~Controller();

  const ControllerInfo& info() const { return info_; }
  const std::vector<NamespaceInfo>& namespaces() const { return ns_; }
  const NamespaceInfo& ns(uint32_t nsid) const;  // throws kExitUsage if not active
  std::vector<std::unique_ptr<Queue>>& io_queues() { return io_; }
  Queue& admin() { return *admin_; }

  // An admin command with `len` bytes of data (into/from the returned
  // buffer pointer's slot), synchronous. Non-success status throws
  // HostError(kExitNvmeStatus) naming `what`, unless allow_error.
  Cqe admin_command(const Sqe& cmd, uint32_t len, DataDir dir, const char* what,
                    std::vector<uint8_t>* in_out = nullptr, bool allow_error = false);
  // The Get Log Page 70h discovery log (header + entries).
  std::vector<uint8_t> discovery_log();
  // Sends a Keep Alive when KATO/2 has passed since the last one. Cheap to
  // call often (one clock read).
  void tick();
  // CC.SHN = normal, wait for CSTS.SHST = complete (bounded), disconnect.
  void shutdown();

 private:
  uint64_t property_get(uint32_t offset, bool eight);
  void property_set(uint32_t offset, uint32_t value);
  void connect_queue(Queue& q, uint16_t sqsize, uint32_t kato_ms);
  void identify_controller();
  void identify_namespaces();
  void create_io_queues();

  tools::Adapter& a_;
  ConnectOptions o_;
  tools::SockAddr local_, peer_;
  std::unique_ptr<tools::Pd> pd_;
  std::unique_ptr<Queue> admin_;
  std::vector<std::unique_ptr<Queue>> io_;
  ControllerInfo info_;
  std::vector<NamespaceInfo> ns_;
  tools::Clock::time_point next_keep_alive_{};
  bool shut_down_ = false;
};

// The adapter toward `o.traddr` (o.local, else the local address the route
// uses) with the CRC choice applied.
std::unique_ptr<tools::Adapter> open_adapter(const ConnectOptions& o);

// "nqn.2014-08.org.nvmexpress:uuid:<hostid as a UUID>".
std::string host_nqn_from_id(const uint8_t id[16]);

}  // namespace nvmf::host
