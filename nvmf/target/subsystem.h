// SPDX-License-Identifier: Apache-2.0
// subsystem.h - the target's state above the transport: configuration, the
// namespaces, the controllers (one per association) and the counters.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "nvmf_capsule.h"
#include "target/backend.h"

namespace nvmf::target {

struct TargetConfig {
  std::string subnqn;
  std::vector<std::string> hosts;  // host NQNs allowed (unless allow_any)
  bool allow_any = false;
  uint16_t max_io_queues = 8;         // I/O queues per controller
  uint16_t max_io_depth = 128;        // entries per I/O queue (CAP.MQES + 1)
  uint16_t admin_depth = 32;          // entries of the admin queue
  uint32_t inline_data = 4096;        // in-capsule data per command (IOCCSZ - 64)
  uint32_t kato_default_ms = 120000;  // for hosts that connect with KATO 0
  uint32_t mdts_bytes = 128 * 1024;   // MDTS = 5 (2^5 * 4 KiB)
  std::string traddr;                 // in the discovery log
  uint16_t port = kDefaultPort;
  uint16_t advertise_port = kDefaultPort;  // trsvcid in the discovery log
  bool poll = false;                       // busy-poll the CQs instead of sleeping on events
};

struct Stats {
  std::atomic<uint64_t> connections{0}, cm_rejects{0}, associations{0}, kato_expired{0};
  std::atomic<uint64_t> shutdowns{0};  // CC.SHN writes: hosts that shut a controller down
  std::atomic<uint64_t> admin_cmds{0}, io_cmds{0}, reads{0}, writes{0}, read_bytes{0},
      write_bytes{0}, errors{0}, in_capsule{0}, invalidations{0};
};

inline int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One controller: created by an admin queue's Connect, named by its CNTLID
// in the I/O queues' Connects, gone with the admin queue (or KATO).
class Controller {
 public:
  uint16_t cntlid = 0;
  bool discovery = false;
  std::string hostnqn;
  uint8_t hostid[16]{};
  std::atomic<int64_t> last_cmd_ms{now_ms()};
  std::atomic<uint32_t> kato_ms{0};
  std::atomic<bool> dead{false};

  std::mutex mu;  // guards what follows
  uint32_t cc = 0, csts = 0;
  uint16_t io_queues = 0;  // granted by Set Features (Number of Queues)
  bool queues_set = false;
  uint32_t aec = 0;
  uint32_t vwc = 1;
  std::map<uint8_t, uint32_t> features;                // the ones stored as given
  std::map<uint16_t, std::function<void()>> stoppers;  // qid -> stop that queue

  // Ends the association: every queue stops (its thread tears its QP down).
  void kill();
  bool ready() {
    std::lock_guard lk(mu);
    return (csts & 1) != 0;
  }
};

class Subsystem {
 public:
  Subsystem(TargetConfig cfg, std::vector<std::unique_ptr<Backend>> ns);
  const TargetConfig& cfg() const { return cfg_; }
  size_t ns_count() const { return ns_.size(); }
  Backend* ns(uint32_t nsid) {
    return nsid >= 1 && nsid <= ns_.size() ? ns_[nsid - 1].get() : nullptr;
  }
  const uint8_t* nguid(uint32_t nsid) const { return nguid_[nsid - 1].data(); }
  const std::string& serial() const { return serial_; }
  const std::vector<uint8_t>& discovery_log() const { return disc_log_; }
  bool host_allowed(const std::string& hostnqn) const;
  Stats stats;

  std::shared_ptr<Controller> create_controller(bool discovery, const ConnectInfo& ci);
  std::shared_ptr<Controller> find(uint16_t cntlid);
  void remove(uint16_t cntlid);
  std::vector<std::shared_ptr<Controller>> controllers();

 private:
  TargetConfig cfg_;
  std::vector<std::unique_ptr<Backend>> ns_;
  std::vector<std::array<uint8_t, 16>> nguid_;
  std::string serial_;
  std::vector<uint8_t> disc_log_;
  std::mutex mu_;
  std::map<uint16_t, std::shared_ptr<Controller>> ctrls_;
  uint16_t next_cntlid_ = 1;
};

// The outcome of a command above the transport.
struct Reply {
  uint16_t status = 0;      // make_status(), 0 = success
  uint64_t result = 0;      // CQE DW0..1
  uint32_t data_len = 0;    // bytes of controller-to-host data in the buffer
  bool hold = false;        // AER: no completion now
  bool abort_aers = false;  // complete the held AERs with Abort SQ Deleted
};

// Admin and Fabrics commands other than Connect, for an established
// controller. `out` receives controller-to-host data (at most its size);
// `in` holds the host-to-controller data already fetched.
Reply handle_admin(Subsystem& s, Controller& c, const Sqe& q, std::span<uint8_t> out,
                   std::span<const uint8_t> in);

// Fabrics Connect on a queue (qid, entries from the RDMA CM request).
// On success sets *ctrl (a new controller for qid 0, the named one for I/O
// queues) and registers `stop` with it.
Reply handle_connect(Subsystem& s, const Sqe& q, std::span<const uint8_t> data, uint16_t cm_qid,
                     uint16_t entries, std::function<void()> stop,
                     std::shared_ptr<Controller>* ctrl);

}  // namespace nvmf::target
