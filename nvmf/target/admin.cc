// SPDX-License-Identifier: Apache-2.0
// admin.cc - admin and Fabrics commands (other than Connect) of a
// controller: Property Get/Set, Identify, Get Log Page, Get/Set Features,
// Keep Alive, Asynchronous Event Request, Abort.
#include <cstring>

#include "target/subsystem.h"

namespace nvmf::target {

namespace {

constexpr uint32_t kVersion = 0x00010300;  // NVMe 1.3
constexpr uint16_t kMaxAers = 4;           // AERL + 1

Reply status(uint8_t sct, uint8_t sc) {
  Reply r;
  r.status = make_status(sct, sc);
  return r;
}
Reply invalid_field() { return status(kSctGeneric, kScInvalidField); }

template <typename T>
void put(std::span<uint8_t> b, size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof v);
}

uint64_t cap_value(const Subsystem& s, const Controller& c) {
  uint64_t mqes = (c.discovery ? s.cfg().admin_depth : s.cfg().max_io_depth) - 1;
  uint64_t cap = mqes;
  cap |= 1ull << 16;   // CQR: contiguous queues required
  cap |= 15ull << 24;  // TO: 7.5 s to ready
  cap |= 1ull << 37;   // CSS: NVM command set
  return cap;          // MPSMIN = MPSMAX = 0 (4 KiB)
}

Reply property_get(Subsystem& s, Controller& c, const Sqe& q) {
  uint8_t size8 = q.cdw10 & 7;
  uint32_t off = q.cdw11;
  Reply r;
  std::lock_guard lk(c.mu);
  switch (off) {
    case kPropCap:
      r.result = cap_value(s, c);
      break;
    case kPropVs:
      r.result = kVersion;
      break;
    case kPropCc:
      r.result = c.cc;
      break;
    case kPropCsts:
      r.result = c.csts;
      break;
    default:
      return invalid_field();
  }
  if (size8 == 0 && off == kPropCap) r.result &= 0xFFFFFFFF;  // a 4-byte read of CAP's low half
  return r;
}

Reply property_set(Controller& c, const Sqe& q) {
  if (q.cdw11 != kPropCc) return invalid_field();  // CC is the only writable one here
  uint32_t v = q.cdw12;
  Reply r;
  std::lock_guard lk(c.mu);
  bool was_en = c.cc & 1, en = v & 1;
  uint32_t shn = (v >> 14) & 3;
  c.cc = v;
  if (en && !was_en) c.csts = (c.csts & ~1u) | 1u;  // ready at once
  if (!en && was_en) {
    c.csts &= ~1u;  // reset: not ready; held AERs end
    r.abort_aers = true;
  }
  if (shn != 0) {
    c.csts = (c.csts & ~0xCu) | (2u << 2);  // SHST: shutdown complete
    r.abort_aers = true;
  } else {
    c.csts &= ~0xCu;
  }
  return r;
}

void identify_controller(Subsystem& s, Controller& c, std::span<uint8_t> p) {
  using namespace idctl;
  std::memset(p.data(), 0, p.size());
  put_string(&p[kSn], 20, s.serial(), ' ');
  put_string(&p[kMn], 40, c.discovery ? "softndk ndk-nvmet discovery" : "softndk ndk-nvmet", ' ');
  put_string(&p[kFr], 8, "0.1", ' ');
  p[kRab] = 6;
  p[kCmic] = 1 << 1;  // several controllers (hosts) may share the namespaces
  uint32_t mdts = 0;
  while ((4096u << (mdts + 1)) <= s.cfg().mdts_bytes) ++mdts;
  p[kMdts] = uint8_t(mdts);
  put<uint16_t>(p, kCntlid, c.cntlid);
  put<uint32_t>(p, kVer, kVersion);
  p[kCntrltype] = c.discovery ? 2 : 1;
  p[kAcl] = 3;
  p[kAerl] = kMaxAers - 1;
  p[kFrmw] = 0x3;             // slot 1 read only, one slot
  p[kLpa] = 0x4;              // extended Get Log Page (NUMDU, LPO)
  put<uint16_t>(p, kKas, 1);  // 100 ms granularity
  p[kSqes] = 0x66;
  p[kCqes] = 0x44;
  put<uint16_t>(p, kMaxcmd, c.discovery ? s.cfg().admin_depth : s.cfg().max_io_depth);
  put<uint32_t>(p, kNn, c.discovery ? 0 : uint32_t(s.ns_count()));
  if (!c.discovery) {
    put<uint16_t>(p, kOncs, (1 << 2) | (1 << 3));  // Dataset Management, Write Zeroes
    p[kVwc] = 1;
  }
  // SGLs supported (no alignment), keyed data blocks, data block offsets.
  put<uint32_t>(p, kSgls, (1u << 0) | (1u << 2) | (1u << 20));
  put_string(&p[kSubnqn], 256, c.discovery ? kDiscoveryNqn : s.cfg().subnqn, '\0');
  put<uint32_t>(p, kIoccsz, (uint32_t(kSqeSize) + s.cfg().inline_data) / 16);
  put<uint32_t>(p, kIorcsz, kCqeSize / 16);
  put<uint16_t>(p, kIcdoff, 0);
  p[kFcatt] = 0;  // dynamic controller model
  p[kMsdbd] = 1;
}

Reply identify(Subsystem& s, Controller& c, const Sqe& q, std::span<uint8_t> out) {
  if (out.size() < kIdentifySize) return invalid_field();
  auto f = identify_fields(q);
  auto p = out.first(kIdentifySize);
  Reply r;
  r.data_len = kIdentifySize;
  std::memset(p.data(), 0, p.size());
  switch (f.cns) {
    case kCnsController:
      identify_controller(s, c, p);
      return r;
    case kCnsNamespace: {
      if (c.discovery) return invalid_field();
      Backend* b = s.ns(q.nsid);
      if (!b) return status(kSctGeneric, kScInvalidNamespace);
      using namespace idns;
      put<uint64_t>(p, kNsze, b->blocks());
      put<uint64_t>(p, kNcap, b->blocks());
      put<uint64_t>(p, kNuse, b->blocks());
      p[kNsfeat] = 0;
      p[kNlbaf] = 0;
      p[kFlbas] = 0;
      p[kDlfeat] = 0x9;  // deallocated blocks read as zeros; Write Zeroes may deallocate
      p[30] = 1;         // NMIC: may be shared by several controllers
      std::memcpy(&p[kNguid], s.nguid(q.nsid), 16);
      put<uint32_t>(p, kLbaf0, uint32_t(kBlockShift) << 16);
      return r;
    }
    case kCnsActiveNsList: {
      if (c.discovery) return invalid_field();
      // NSIDs greater than the one given, ascending, up to 1024.
      size_t k = 0;
      for (uint32_t id = q.nsid + 1; id <= s.ns_count() && k < 1024 && q.nsid < 0xFFFFFFFE; ++id)
        put<uint32_t>(p, 4 * k++, id);
      return r;
    }
    case kCnsNsDescriptorList: {
      if (c.discovery) return invalid_field();
      if (!s.ns(q.nsid)) return status(kSctGeneric, kScInvalidNamespace);
      // NGUID (type 2) and a UUID (type 3) made from it, then the end.
      p[0] = 2;
      p[1] = 16;
      std::memcpy(&p[4], s.nguid(q.nsid), 16);
      p[20] = 3;
      p[21] = 16;
      std::memcpy(&p[24], s.nguid(q.nsid), 16);
      p[24 + 6] = uint8_t((p[24 + 6] & 0x0F) | 0x40);  // version 4
      p[24 + 8] = uint8_t((p[24 + 8] & 0x3F) | 0x80);  // variant 1
      return r;
    }
    case 0x06:  // I/O command set specific controller (NVM): no extra limits
      if (f.csi != 0 || c.discovery) return invalid_field();
      return r;
    default:
      return invalid_field();
  }
}

Reply get_log(Subsystem& s, Controller& c, const Sqe& q, std::span<uint8_t> out) {
  auto f = get_log_fields(q);
  if (f.bytes() > out.size()) return status(kSctGeneric, kScDataSglLengthInvalid);
  if (f.lpo & 3) return invalid_field();
  std::vector<uint8_t> page;
  switch (f.lid) {
    case kLogDiscovery:
      if (!c.discovery) return status(kSctCommandSpecific, kScInvalidLogPage);
      page = s.discovery_log();
      break;
    case kLogError:
      page.assign(64, 0);  // one empty entry
      break;
    case kLogSmart: {
      if (c.discovery) return status(kSctCommandSpecific, kScInvalidLogPage);
      page.assign(512, 0);
      uint16_t kelvin = 300;
      std::memcpy(&page[1], &kelvin, 2);
      page[3] = 100;  // available spare %
      page[4] = 10;   // spare threshold
      // Data units (1000 x 512 B) read and written, host commands.
      uint64_t rd = s.stats.read_bytes / 512000, wr = s.stats.write_bytes / 512000;
      uint64_t nr = s.stats.reads, nw = s.stats.writes;
      std::memcpy(&page[32], &rd, 8);
      std::memcpy(&page[48], &wr, 8);
      std::memcpy(&page[64], &nr, 8);
      std::memcpy(&page[80], &nw, 8);
      break;
    }
    case kLogFirmwareSlot:
      if (c.discovery) return status(kSctCommandSpecific, kScInvalidLogPage);
      page.assign(512, 0);
      page[0] = 1;  // active slot 1
      put_string(&page[8], 8, "0.1", ' ');
      break;
    case kLogChangedNsList:
      if (c.discovery) return status(kSctCommandSpecific, kScInvalidLogPage);
      page.assign(4096, 0);
      break;
    default:
      return status(kSctCommandSpecific, kScInvalidLogPage);
  }
  if (!copy_log_slice(page, f.lpo, out.first(f.bytes()))) return invalid_field();
  Reply r;
  r.data_len = uint32_t(f.bytes());
  return r;
}

Reply features(Subsystem& s, Controller& c, const Sqe& q, bool set) {
  uint8_t fid = uint8_t(q.cdw10);
  if (set && (q.cdw10 >> 31)) return status(kSctCommandSpecific, kScFeatureIdNotSaveable);
  uint8_t sel = uint8_t((q.cdw10 >> 8) & 7);  // Get: 0 current, 1 default, 2 saved, 3 caps
  Reply r;
  std::lock_guard lk(c.mu);
  switch (fid) {
    case kFeatNumberOfQueues: {
      if (c.discovery) return invalid_field();
      if (set) {
        uint32_t nsqr = q.cdw11 & 0xFFFF, ncqr = q.cdw11 >> 16;
        if (nsqr == 0xFFFF || ncqr == 0xFFFF) return invalid_field();
        if (c.stoppers.size() > 1) return status(kSctGeneric, kScCommandSequenceError);
        c.io_queues = uint16_t(std::min<uint32_t>(std::min(nsqr, ncqr) + 1, s.cfg().max_io_queues));
        c.queues_set = true;
      }
      uint32_t n = c.io_queues ? c.io_queues - 1u : 0u;
      r.result = n | (n << 16);
      return r;
    }
    case kFeatKeepAliveTimer:
      if (set) {
        c.kato_ms = q.cdw11 ? q.cdw11 : s.cfg().kato_default_ms;
        c.last_cmd_ms = now_ms();
      }
      r.result = c.kato_ms;
      return r;
    case kFeatAsyncEventConfig:
      if (set) c.aec = q.cdw11;
      r.result = c.aec;
      return r;
    case kFeatVolatileWriteCache:
      if (c.discovery) return invalid_field();
      if (set) c.vwc = q.cdw11 & 1;
      r.result = sel == 3 ? 0x4 /* changeable */ : c.vwc;
      return r;
    case kFeatArbitration:
    case kFeatPowerManagement:
    case kFeatTemperatureThreshold:
    case kFeatErrorRecovery:
    case kFeatInterruptCoalescing:
    case kFeatWriteAtomicity:
      if (set) {
        c.features[fid] = q.cdw11;
      } else {
        auto it = c.features.find(fid);
        uint32_t def = fid == kFeatTemperatureThreshold ? 0x0157 : 0;  // 343 K
        r.result = (sel == 0 && it != c.features.end()) ? it->second : def;
      }
      return r;
    default:
      return invalid_field();
  }
}

}  // namespace

Reply handle_admin(Subsystem& s, Controller& c, const Sqe& q, std::span<uint8_t> out,
                   std::span<const uint8_t> in) {
  (void)in;
  if (q.opcode == kFabricsCommand) {
    switch (q.fctype()) {
      case kFctPropertyGet:
        return property_get(s, c, q);
      case kFctPropertySet:
        // CC.SHN set: a host shutting its controller down in order.
        if (q.cdw11 == kPropCc && ((q.cdw12 >> 14) & 3) != 0) s.stats.shutdowns++;
        return property_set(c, q);
      case kFctDisconnect:
        return Reply{};
      case kFctConnect:
        return status(kSctGeneric, kScCommandSequenceError);  // already connected
      default:
        return invalid_field();
    }
  }
  // Everything but the Fabrics commands needs CC.EN = 1 and CSTS.RDY.
  if (!c.ready()) return status(kSctGeneric, kScCommandSequenceError);
  switch (q.opcode) {
    case kAdminIdentify:
      return identify(s, c, q, out);
    case kAdminGetLogPage:
      return get_log(s, c, q, out);
    case kAdminSetFeatures:
      return features(s, c, q, true);
    case kAdminGetFeatures:
      return features(s, c, q, false);
    case kAdminKeepAlive:
      return Reply{};
    case kAdminAsyncEventRequest: {
      Reply r;
      r.hold = true;  // the queue counts them against AERL
      return r;
    }
    case kAdminAbort: {
      Reply r;
      r.result = 1;  // bit 0: the command was not aborted
      return r;
    }
    default:
      return status(kSctGeneric, kScInvalidOpcode);
  }
}

}  // namespace nvmf::target
