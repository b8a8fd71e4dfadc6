// SPDX-License-Identifier: Apache-2.0
// subsystem.cc - the subsystem, its controllers and Fabrics Connect.
#include "target/subsystem.h"

#include <cstring>
#include <random>

namespace nvmf::target {

void Controller::kill() {
  std::vector<std::function<void()>> stops;
  {
    // Under the lock: an I/O queue's Connect either registers its stopper
    // before this (and is stopped) or sees `dead` (and is refused).
    std::lock_guard lk(mu);
    dead = true;
    for (auto& [qid, f] : stoppers) stops.push_back(f);
  }
  for (auto& f : stops) f();
}

Subsystem::Subsystem(TargetConfig cfg, std::vector<std::unique_ptr<Backend>> ns)
    : cfg_(std::move(cfg)), ns_(std::move(ns)) {
  // A serial number and namespace GUIDs unique to this run, so that a host
  // never takes two target runs for one device (multipath would merge them).
  std::random_device rd;
  std::mt19937_64 rng((uint64_t(rd()) << 32) ^ rd());
  char sn[21];
  std::snprintf(sn, sizeof sn, "SNDK%016llx", static_cast<unsigned long long>(rng()));
  serial_ = sn;
  for (size_t i = 0; i < ns_.size(); ++i) {
    std::array<uint8_t, 16> g;
    uint64_t a = rng(), b = rng();
    std::memcpy(g.data(), &a, 8);
    std::memcpy(g.data() + 8, &b, 8);
    nguid_.push_back(g);
  }
  DiscoveryEntry e;
  e.subnqn = cfg_.subnqn;
  e.traddr = cfg_.traddr;
  e.trsvcid = std::to_string(cfg_.advertise_port);
  e.asqsz = cfg_.admin_depth;
  disc_log_ = build_discovery_log(1, {e});
}

bool Subsystem::host_allowed(const std::string& hostnqn) const {
  if (cfg_.allow_any) return true;
  for (auto& h : cfg_.hosts)
    if (h == hostnqn) return true;
  return false;
}

std::shared_ptr<Controller> Subsystem::create_controller(bool discovery, const ConnectInfo& ci) {
  auto c = std::make_shared<Controller>();
  c->discovery = discovery;
  c->io_queues = discovery ? 0 : cfg_.max_io_queues;
  c->hostnqn = ci.hostnqn;
  std::memcpy(c->hostid, ci.hostid, sizeof c->hostid);
  std::lock_guard lk(mu_);
  // Dynamic controller IDs 1..0xFFEF, skipping the ones in use.
  for (int tries = 0; tries < 0xFFEF; ++tries) {
    uint16_t id = next_cntlid_;
    next_cntlid_ = next_cntlid_ >= 0xFFEF ? 1 : next_cntlid_ + 1;
    if (!ctrls_.count(id)) {
      c->cntlid = id;
      ctrls_[id] = c;
      return c;
    }
  }
  return nullptr;
}

std::shared_ptr<Controller> Subsystem::find(uint16_t cntlid) {
  std::lock_guard lk(mu_);
  auto it = ctrls_.find(cntlid);
  return it == ctrls_.end() ? nullptr : it->second;
}

void Subsystem::remove(uint16_t cntlid) {
  std::lock_guard lk(mu_);
  ctrls_.erase(cntlid);
}

std::vector<std::shared_ptr<Controller>> Subsystem::controllers() {
  std::lock_guard lk(mu_);
  std::vector<std::shared_ptr<Controller>> v;
  for (auto& [id, c] : ctrls_) v.push_back(c);
  return v;
}

namespace {
// Byte offsets of Connect SQE fields for the IPO of an invalid parameter.
constexpr uint16_t kSqeQidOffset = 42, kSqeSqsizeOffset = 44;
Reply invalid_param(uint16_t offset, bool in_data) {
  Reply r;
  r.status = make_status(kSctCommandSpecific, kScConnectInvalidParameters);
  r.result = connect_ipo(offset, in_data);
  return r;
}
}  // namespace

Reply handle_connect(Subsystem& s, const Sqe& q, std::span<const uint8_t> data, uint16_t cm_qid,
                     uint16_t entries, std::function<void()> stop,
                     std::shared_ptr<Controller>* ctrl) {
  ConnectFields f = connect_fields(q);
  if (f.recfmt != 0) {
    Reply r;
    r.status = make_status(kSctCommandSpecific, kScConnectIncompatibleFormat);
    return r;
  }
  auto cd = parse_connect_data(data);
  if (!cd.info) {
    Reply r;
    r.status = cd.status;
    r.result = cd.result;
    return r;
  }
  const ConnectInfo& ci = *cd.info;
  // The queue named in the Connect is the one the RDMA CM request named.
  if (f.qid != cm_qid) return invalid_param(kSqeQidOffset, false);
  if (f.sqsize == 0 || uint32_t(f.sqsize) + 1 > entries)
    return invalid_param(kSqeSqsizeOffset, false);
  bool disc = ci.subnqn == kDiscoveryNqn;
  if (!disc && ci.subnqn != s.cfg().subnqn)
    return invalid_param(offsetof(ConnectData, subnqn), true);
  if (!disc && !s.host_allowed(ci.hostnqn)) {
    Reply r;
    r.status = make_status(kSctCommandSpecific, kScConnectInvalidHost);
    r.result = connect_ipo(offsetof(ConnectData, hostnqn), true);
    return r;
  }
  Reply r;
  if (f.qid == 0) {
    if (ci.cntlid != kCntlidDynamic && ci.cntlid != 0xFFFE)
      return invalid_param(offsetof(ConnectData, cntlid), true);
    auto c = s.create_controller(disc, ci);
    if (!c) {
      r.status = make_status(kSctCommandSpecific, kScConnectControllerBusy);
      return r;
    }
    uint32_t kato = f.kato_ms ? f.kato_ms : s.cfg().kato_default_ms;
    c->kato_ms = kato;
    c->last_cmd_ms = now_ms();
    {
      std::lock_guard lk(c->mu);
      c->stoppers[0] = std::move(stop);
    }
    s.stats.associations++;
    r.result = c->cntlid;
    *ctrl = c;
    return r;
  }
  auto c = s.find(ci.cntlid);
  if (!c || c->dead || c->discovery || c->hostnqn != ci.hostnqn)
    return invalid_param(offsetof(ConnectData, cntlid), true);
  std::lock_guard lk(c->mu);
  if (c->dead) return invalid_param(offsetof(ConnectData, cntlid), true);
  if (!(c->csts & 1)) {
    r.status = make_status(kSctGeneric, kScCommandSequenceError);
    return r;
  }
  if (f.qid > c->io_queues || c->stoppers.count(f.qid)) return invalid_param(kSqeQidOffset, false);
  c->stoppers[f.qid] = std::move(stop);
  r.result = c->cntlid;
  *ctrl = c;
  return r;
}

}  // namespace nvmf::target
