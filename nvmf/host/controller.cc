// SPDX-License-Identifier: Apache-2.0
// controller.cc - see controller.h. Register and field layouts: NVMe Base
// 2.0 (CAP, CC, CSTS; Identify; Set Features 07h) and NVMe over Fabrics
// (Connect, Property Get/Set).
#include "controller.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "ndkapp/status.h"
#include "nvmf_capsule.h"

namespace nvmf::host {

namespace {

constexpr uint16_t kAdminEntries = 32;  // NVMe-oF admin queue depth the Linux host uses
constexpr uint32_t kAdminMaxIo = 64 * 1024;
constexpr uint32_t kCcEnable = 1u, kCcShnNormal = 1u << 14;
constexpr uint32_t kCcIosqes = 6u << 16, kCcIocqes = 4u << 20;
constexpr uint32_t kCstsRdy = 1u, kCstsCfs = 2u, kCstsShstMask = 3u << 2, kCstsShstDone = 2u << 2;

std::string trimmed(const uint8_t* p, size_t n) {
  std::string s(reinterpret_cast<const char*>(p), n);
  s.resize(strnlen(s.c_str(), n));
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

template <typename T>
T le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

std::string host_nqn_from_id(const uint8_t id[16]) {
  char buf[96];
  std::snprintf(buf, sizeof buf,
                "nqn.2014-08.org.nvmexpress:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                "%02x%02x%02x%02x%02x%02x",
                id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10],
                id[11], id[12], id[13], id[14], id[15]);
  return buf;
}

std::unique_ptr<tools::Adapter> open_adapter(const ConnectOptions& o) {
  std::string err;
  tools::SockAddr peer;
  if (!tools::resolve(o.traddr, o.trsvcid, peer, err)) throw HostError(kExitUsage, err);
  std::string name = o.local;
  if (name.empty()) {
    tools::SockAddr local;
    if (!tools::local_address_toward(peer, local, err))
      throw HostError(kExitConnect, "no route to " + o.traddr + ": " + err);
    name = local.ip();
  }
  tools::AdapterOptions ao;
  ao.name = name;
  ao.crc = o.crc;
  ao.timeout_s = o.timeout_s;
  ao.disconnect_timeout_s = 2;
  if (o.fr_register) ao.open_flags |= SOFTNDK_OPEN_FLAG_FR_REGISTER;
  try {
    return std::make_unique<tools::Adapter>(ao);
  } catch (const tools::ToolError& e) {
    throw HostError(kExitError, e.what());
  }
}

Controller::Controller(tools::Adapter& a, const ConnectOptions& o, bool discovery) : a_(a), o_(o) {
  std::string err;
  if (!tools::resolve(o.traddr, o.trsvcid, peer_, err)) throw HostError(kExitUsage, err);
  // The adapter's own address, port 0.
  if (!o.local.empty()) {
    if (!tools::address_of_device(o.local, 0, local_, err)) throw HostError(kExitUsage, err);
  } else {
    if (!tools::local_address_toward(peer_, local_, err))
      throw HostError(kExitConnect, "no route to " + o.traddr + ": " + err);
    local_.set_port(0);
  }
  if (o_.hostnqn.empty()) o_.hostnqn = host_nqn_from_id(o_.hostid);
  try {
    pd_ = std::make_unique<tools::Pd>(a);
  } catch (const tools::ToolError& e) {
    throw HostError(kExitError, e.what());
  }
  QueueParams ap;
  ap.qid = 0;
  ap.entries = kAdminEntries;
  ap.cntlid = 0;
  ap.max_io = kAdminMaxIo;
  ap.remote_invalidate = o.remote_invalidate;
  admin_ = std::make_unique<Queue>(a, *pd_, local_, peer_, ap, o.timeout_s);
  connect_queue(*admin_, kAdminEntries - 1, discovery ? 0 : o.kato_ms);
  SOFTNDK_CONNECTION_INFO ci{};
  if (admin_->connection() && admin_->connection()->info(ci)) info_.mpa_crc = ci.Crc ? 1 : 0;

  info_.cap = property_get(kPropCap, true);
  info_.version = uint32_t(property_get(kPropVs, false));
  // CAP.TO: worst-case time to ready, in 500 ms units.
  const double ready_s = std::max(1.0, double((info_.cap >> 24) & 0xFF) * 0.5);
  property_set(kPropCc, kCcIosqes | kCcIocqes | kCcEnable);
  auto deadline = tools::deadline_in(std::min(ready_s, 30.0));
  for (;;) {
    uint32_t csts = uint32_t(property_get(kPropCsts, false));
    if (csts & kCstsCfs) throw HostError(kExitNvmeStatus, "controller fatal status (CSTS.CFS)");
    if (csts & kCstsRdy) break;
    if (tools::Clock::now() >= deadline)
      throw HostError(kExitConnectionLost, "the controller did not become ready (CSTS.RDY)");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  identify_controller();
  next_keep_alive_ = tools::Clock::now() + std::chrono::milliseconds(o_.kato_ms / 2);
  if (discovery) return;
  identify_namespaces();
  create_io_queues();
}

Controller::~Controller() {
  if (!shut_down_) {
    try {
      shutdown();
    } catch (const std::exception&) {
      // Going away anyway (an error is already being reported).
    }
  }
}

const NamespaceInfo& Controller::ns(uint32_t nsid) const {
  for (const auto& n : ns_)
    if (n.nsid == nsid) return n;
  throw HostError(kExitUsage,
                  "namespace " + std::to_string(nsid) + " is not active on " + o_.subnqn);
}

Cqe Controller::admin_command(const Sqe& cmd, uint32_t len, DataDir dir, const char* what,
                              std::vector<uint8_t>* in_out, bool allow_error) {
  Queue& q = *admin_;
  int slot = q.acquire();
  if (slot < 0) throw HostError(kExitError, "admin queue full");
  q.sqe(slot) = cmd;
  if (dir == DataDir::kToController && in_out)
    std::memcpy(q.buffer(slot), in_out->data(), std::min<size_t>(len, in_out->size()));
  Cqe c = q.execute(slot, len, dir, o_.timeout_s);
  if (dir == DataDir::kToHost && in_out) {
    in_out->resize(len);
    std::memcpy(in_out->data(), q.buffer(slot), len);
  }
  if (!c.ok() && !allow_error)
    throw HostError(kExitNvmeStatus, std::string(what) + ": " + nvme_status_text(c.status_field()));
  return c;
}

void Controller::connect_queue(Queue& q, uint16_t sqsize, uint32_t kato_ms) {
  Sqe s{};
  set_connect_fields(s, ConnectFields{0, q.qid(), sqsize, 0, kato_ms});
  ConnectData d{};
  std::memcpy(d.hostid, o_.hostid, sizeof d.hostid);
  d.cntlid = q.qid() == 0 ? kCntlidDynamic : info_.cntlid;
  std::strncpy(d.subnqn, o_.subnqn.c_str(), sizeof d.subnqn - 1);
  std::strncpy(d.hostnqn, o_.hostnqn.c_str(), sizeof d.hostnqn - 1);
  int slot = q.acquire();
  q.sqe(slot) = s;
  std::memcpy(q.buffer(slot), &d, sizeof d);
  Cqe c = q.execute(slot, sizeof d, DataDir::kToController, o_.timeout_s);
  if (!c.ok()) {
    std::string why = "Connect of queue " + std::to_string(q.qid()) + " to " + o_.subnqn + ": " +
                      nvme_status_text(c.status_field());
    // Invalid Parameters names the offending byte in DW0 (IATTR/IPO).
    if ((c.status_field() & 0xFF) == kScConnectInvalidParameters)
      why += " (" + connect_ipo_text(c.result) + ")";
    throw HostError(kExitConnect, why);
  }
  if (q.qid() == 0) info_.cntlid = uint16_t(c.result & 0xFFFF);
}

uint64_t Controller::property_get(uint32_t offset, bool eight) {
  Sqe s{};
  s.opcode = kFabricsCommand;
  s.nsid = kFctPropertyGet;
  s.cdw10 = eight ? 1 : 0;
  s.cdw11 = offset;
  return admin_command(s, 0, DataDir::kNone, "Property Get").result;
}

void Controller::property_set(uint32_t offset, uint32_t value) {
  Sqe s{};
  s.opcode = kFabricsCommand;
  s.nsid = kFctPropertySet;
  s.cdw10 = 0;
  s.cdw11 = offset;
  s.cdw12 = value;
  admin_command(s, 0, DataDir::kNone, "Property Set");
}

void Controller::identify_controller() {
  Sqe s{};
  s.opcode = kAdminIdentify;
  s.cdw10 = kCnsController;
  std::vector<uint8_t> id;
  admin_command(s, kIdentifySize, DataDir::kToHost, "Identify Controller", &id);
  const uint8_t* p = id.data();
  info_.vid = le<uint16_t>(p + idctl::kVid);
  info_.sn = trimmed(p + idctl::kSn, 20);
  info_.mn = trimmed(p + idctl::kMn, 40);
  info_.fr = trimmed(p + idctl::kFr, 8);
  info_.mdts = p[idctl::kMdts];
  const uint32_t mps_min = 1u << (12 + ((info_.cap >> 48) & 0xF));
  info_.max_transfer =
      info_.mdts ? uint32_t(std::min<uint64_t>(uint64_t(mps_min) << info_.mdts, 0x80000000ull)) : 0;
  info_.kas = le<uint16_t>(p + idctl::kKas);
  info_.maxcmd = le<uint16_t>(p + idctl::kMaxcmd);
  info_.nn = le<uint32_t>(p + idctl::kNn);
  info_.sgls = le<uint32_t>(p + idctl::kSgls);
  info_.subnqn = trimmed(p + idctl::kSubnqn, 256);
  info_.ioccsz = le<uint32_t>(p + idctl::kIoccsz);
  info_.iorcsz = le<uint32_t>(p + idctl::kIorcsz);
  info_.icdoff = le<uint16_t>(p + idctl::kIcdoff);
  info_.cntrltype = p[idctl::kCntrltype];
}

void Controller::identify_namespaces() {
  Sqe s{};
  s.opcode = kAdminIdentify;
  s.cdw10 = kCnsActiveNsList;
  s.nsid = 0;
  std::vector<uint8_t> list;
  admin_command(s, kIdentifySize, DataDir::kToHost, "Identify Active Namespace List", &list);
  for (size_t off = 0; off + 4 <= list.size(); off += 4) {
    uint32_t nsid = le<uint32_t>(list.data() + off);
    if (nsid == 0) break;
    Sqe n{};
    n.opcode = kAdminIdentify;
    n.cdw10 = kCnsNamespace;
    n.nsid = nsid;
    std::vector<uint8_t> id;
    admin_command(n, kIdentifySize, DataDir::kToHost, "Identify Namespace", &id);
    NamespaceInfo ni;
    ni.nsid = nsid;
    ni.nsze = le<uint64_t>(id.data() + idns::kNsze);
    ni.ncap = le<uint64_t>(id.data() + idns::kNcap);
    const unsigned fmt = id[idns::kFlbas] & 0xF;
    const uint32_t lbaf = le<uint32_t>(id.data() + idns::kLbaf0 + 4 * fmt);
    const unsigned lbads = (lbaf >> 16) & 0xFF;
    if (lbads < 9 || lbads > 16)
      throw HostError(kExitProtocol, "namespace " + std::to_string(nsid) +
                                         " reports an LBA data size of 2^" + std::to_string(lbads));
    ni.lba_size = 1u << lbads;
    ns_.push_back(ni);
  }
}

void Controller::create_io_queues() {
  if (o_.io_queues == 0) return;
  Sqe s{};
  s.opcode = kAdminSetFeatures;
  s.cdw10 = kFeatNumberOfQueues;
  s.cdw11 = ((o_.io_queues - 1) << 16) | (o_.io_queues - 1);
  Cqe c = admin_command(s, 0, DataDir::kNone, "Set Features (Number of Queues)");
  const unsigned granted =
      std::min(unsigned(c.result & 0xFFFF), unsigned((c.result >> 16) & 0xFFFF)) + 1;
  info_.io_queues_granted = uint16_t(granted);
  if (granted < o_.io_queues)
    throw HostError(kExitNvmeStatus, "the controller granted " + std::to_string(granted) +
                                         " I/O queues, " + std::to_string(o_.io_queues) +
                                         " were asked for");
  // MQES (0's based) bounds the I/O queue size.
  const unsigned mqes = unsigned(info_.cap & 0xFFFF) + 1;
  if (o_.queue_size > mqes)
    throw HostError(kExitUsage, "queue size " + std::to_string(o_.queue_size) +
                                    " is above the controller's maximum (CAP.MQES+1 = " +
                                    std::to_string(mqes) + ")");
  uint32_t max_io = o_.max_io;
  if (info_.max_transfer && max_io > info_.max_transfer) max_io = info_.max_transfer;
  uint32_t in_capsule = 0;
  if (o_.in_capsule && info_.icdoff == 0 && info_.ioccsz * 16 > kSqeSize)
    in_capsule = info_.ioccsz * 16 - uint32_t(kSqeSize);
  for (unsigned i = 1; i <= o_.io_queues; ++i) {
    QueueParams qp;
    qp.qid = uint16_t(i);
    qp.entries = uint16_t(o_.queue_size);
    qp.cntlid = info_.cntlid;
    qp.max_io = max_io;
    qp.in_capsule = in_capsule;
    qp.remote_invalidate = o_.remote_invalidate;
    auto q = std::make_unique<Queue>(a_, *pd_, local_, peer_, qp, o_.timeout_s);
    connect_queue(*q, uint16_t(o_.queue_size - 1), 0);
    io_.push_back(std::move(q));
  }
}

std::vector<uint8_t> Controller::discovery_log() {
  auto get = [&](uint32_t bytes) {
    Sqe s{};
    s.opcode = kAdminGetLogPage;
    const uint32_t numd = bytes / 4 - 1;  // dwords, 0's based
    s.cdw10 = kLogDiscovery | ((numd & 0xFFFF) << 16);
    s.cdw11 = numd >> 16;
    std::vector<uint8_t> out;
    admin_command(s, bytes, DataDir::kToHost, "Get Log Page (Discovery)", &out);
    return out;
  };
  std::vector<uint8_t> head = get(kDiscLogHeaderSize);
  DiscLogHeader h;
  std::memcpy(&h, head.data(), sizeof h);
  const uint64_t max_rec = kAdminMaxIo / kDiscLogEntrySize - 1;
  const uint64_t n = std::min<uint64_t>(h.numrec, max_rec);
  if (n == 0) return head;
  return get(uint32_t((n + 1) * kDiscLogEntrySize));
}

void Controller::tick() {
  if (o_.kato_ms == 0) return;
  auto now = tools::Clock::now();
  if (now < next_keep_alive_) return;
  next_keep_alive_ = now + std::chrono::milliseconds(o_.kato_ms / 2);
  Sqe s{};
  s.opcode = kAdminKeepAlive;
  admin_command(s, 0, DataDir::kNone, "Keep Alive");
}

void Controller::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  // Queues first (Linux deletes its I/O queues before shutting down).
  for (auto& q : io_) q->disconnect();
  io_.clear();
  if (admin_ && admin_->connection() && !admin_->connection()->peer_disconnected()) {
    try {
      property_set(kPropCc, kCcIosqes | kCcIocqes | kCcEnable | kCcShnNormal);
      auto deadline = tools::deadline_in(std::min(o_.timeout_s, 5.0));
      while ((property_get(kPropCsts, false) & kCstsShstMask) != kCstsShstDone) {
        if (tools::Clock::now() >= deadline) break;  // disconnect all the same
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    } catch (const HostError&) {
      // A target that went away: nothing to shut down.
    }
  }
  if (admin_) admin_->disconnect();
  admin_.reset();
}

}  // namespace nvmf::host
