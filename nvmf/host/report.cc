// SPDX-License-Identifier: Apache-2.0
// report.cc - see report.h. Units follow fio: bw in KiB/s in JSON
// ("bw") and bytes/s ("bw_bytes"), clat in ns with percentiles keyed
// "50.000000"; the text line is fio's "read: IOPS=..., BW=...".
#include "report.h"

#include <cstdio>
#include <cstring>

namespace nvmf::host {

namespace {

constexpr double kPercentiles[] = {50.0, 90.0, 99.0, 99.9};

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string human_iops(double v) {
  if (v >= 1e6) return fmt("%.2fM", v / 1e6);
  if (v >= 1e3) return fmt("%.1fk", v / 1e3);
  return fmt("%.0f", v);
}

std::string dir_text(const char* name, const DirStats& d, double secs) {
  if (d.ios == 0) return "";
  const double iops = secs > 0 ? double(d.ios) / secs : 0;
  const double bw = secs > 0 ? double(d.bytes) / secs : 0;
  std::string s = std::string("  ") + name + ": IOPS=" + human_iops(iops) +
                  ", BW=" + fmt("%.1f", bw / 1048576.0) + "MiB/s (" + fmt("%.1f", bw / 1e6) +
                  "MB/s)(" + fmt("%.1f", double(d.bytes) / 1048576.0) + "MiB/" +
                  fmt("%.0f", secs * 1000) + "msec)\n";
  s += "    clat (usec): min=" + fmt("%.1f", double(d.clat.min_ns()) / 1e3) +
       ", max=" + fmt("%.1f", double(d.clat.max_ns()) / 1e3) +
       ", avg=" + fmt("%.2f", d.clat.mean_ns() / 1e3) + "\n";
  s += "     clat percentiles (usec):";
  for (double p : kPercentiles)
    s += fmt(" %.2fth=[", p) + fmt("%.1f]", d.clat.percentile_ns(p) / 1e3);
  s += "\n";
  return s;
}

nlohmann::json dir_json(const DirStats& d, double secs) {
  nlohmann::json j;
  const double bw = secs > 0 ? double(d.bytes) / secs : 0;
  j["io_bytes"] = d.bytes;
  j["total_ios"] = d.ios;
  j["bw_bytes"] = bw;
  j["bw"] = bw / 1024.0;
  j["iops"] = secs > 0 ? double(d.ios) / secs : 0;
  nlohmann::json clat;
  clat["min"] = d.clat.min_ns();
  clat["max"] = d.clat.max_ns();
  clat["mean"] = d.clat.mean_ns();
  clat["N"] = d.clat.count();
  nlohmann::json pct;
  for (double p : kPercentiles) pct[fmt("%.6f", p)] = d.clat.percentile_ns(p);
  clat["percentile"] = pct;
  j["clat_ns"] = clat;
  return j;
}

std::string nul_str(const char* p, size_t n) { return std::string(p, strnlen(p, n)); }

}  // namespace

std::string job_text(const JobSpec& spec, const JobResult& r) {
  std::string s = std::string("job: rw=") + pattern_name(spec.pattern) +
                  ", bs=" + std::to_string(spec.bs) + ", iodepth=" + std::to_string(spec.iodepth) +
                  (spec.verify ? ", verify=pattern" : "") + "\n";
  s += dir_text("read", r.read, r.seconds);
  s += dir_text("write", r.write, r.seconds);
  s += "  errors=" + std::to_string(r.errors) +
       ", verify mismatches=" + std::to_string(r.mismatches) +
       ", remote invalidations=" + std::to_string(r.remote_invalidations) +
       ", local invalidations=" + std::to_string(r.local_invalidations) + "\n";
  if (!r.first_error.empty()) s += "  first error: " + r.first_error + "\n";
  if (r.interrupted) s += "  interrupted (SIGINT/SIGTERM): the figures cover what ran\n";
  return s;
}

nlohmann::json job_json(const JobSpec& spec, const JobResult& r) {
  nlohmann::json j;
  j["jobname"] = pattern_name(spec.pattern);
  j["job options"] = {
      {"rw", pattern_name(spec.pattern)}, {"bs", spec.bs},         {"iodepth", spec.iodepth},
      {"rwmixread", spec.rwmixread},      {"verify", spec.verify}, {"nsid", spec.nsid}};
  j["job_runtime"] = uint64_t(r.seconds * 1000);
  j["read"] = dir_json(r.read, r.seconds);
  j["write"] = dir_json(r.write, r.seconds);
  j["error"] = r.errors;
  j["verify_errors"] = r.mismatches;
  j["remote_invalidations"] = r.remote_invalidations;
  j["local_invalidations"] = r.local_invalidations;
  j["in_capsule_writes"] = r.in_capsule_writes;
  if (!r.first_error.empty()) j["first_error"] = r.first_error;
  if (r.interrupted) j["interrupted"] = true;
  return j;
}

std::string identify_text(const ControllerInfo& c, const std::vector<NamespaceInfo>& ns) {
  char b[1024];
  std::snprintf(b, sizeof b,
                "controller: cntlid=%u vid=0x%04x sn='%s' mn='%s' fr='%s'\n"
                "  subnqn=%s\n  version=%u.%u.%u mdts=%u (max transfer %u bytes) maxcmd=%u "
                "kas=%u nn=%u\n  ioccsz=%u iorcsz=%u icdoff=%u sgls=0x%08x cap=0x%016llx\n",
                c.cntlid, c.vid, c.sn.c_str(), c.mn.c_str(), c.fr.c_str(), c.subnqn.c_str(),
                c.version >> 16, (c.version >> 8) & 0xFF, c.version & 0xFF, c.mdts, c.max_transfer,
                c.maxcmd, c.kas, c.nn, c.ioccsz, c.iorcsz, c.icdoff, c.sgls,
                static_cast<unsigned long long>(c.cap));
  std::string s = b;
  if (c.mpa_crc >= 0) s += std::string("  MPA CRC ") + (c.mpa_crc ? "on" : "off") + "\n";
  for (const auto& n : ns) {
    std::snprintf(b, sizeof b, "namespace %u: nsze=%llu ncap=%llu lba_size=%u (%.1f MiB)\n", n.nsid,
                  static_cast<unsigned long long>(n.nsze), static_cast<unsigned long long>(n.ncap),
                  n.lba_size, double(n.nsze) * n.lba_size / 1048576.0);
    s += b;
  }
  return s;
}

nlohmann::json identify_json(const ControllerInfo& c, const std::vector<NamespaceInfo>& ns) {
  nlohmann::json j;
  j["cntlid"] = c.cntlid;
  j["vid"] = c.vid;
  j["sn"] = c.sn;
  j["mn"] = c.mn;
  j["fr"] = c.fr;
  j["subnqn"] = c.subnqn;
  j["ver"] = c.version;
  j["mdts"] = c.mdts;
  j["max_transfer"] = c.max_transfer;
  j["maxcmd"] = c.maxcmd;
  j["kas"] = c.kas;
  j["nn"] = c.nn;
  j["ioccsz"] = c.ioccsz;
  j["iorcsz"] = c.iorcsz;
  j["icdoff"] = c.icdoff;
  j["sgls"] = c.sgls;
  j["cap"] = c.cap;
  j["io_queues"] = c.io_queues_granted;
  if (c.mpa_crc >= 0) j["mpa_crc"] = c.mpa_crc == 1;
  nlohmann::json a = nlohmann::json::array();
  for (const auto& n : ns)
    a.push_back({{"nsid", n.nsid}, {"nsze", n.nsze}, {"ncap", n.ncap}, {"lba_size", n.lba_size}});
  j["namespaces"] = a;
  return j;
}

static std::vector<DiscLogEntry> entries_of(const std::vector<uint8_t>& log, DiscLogHeader& h) {
  std::memcpy(&h, log.data(), sizeof h);
  std::vector<DiscLogEntry> out;
  for (size_t off = kDiscLogHeaderSize; off + kDiscLogEntrySize <= log.size();
       off += kDiscLogEntrySize) {
    DiscLogEntry e;
    std::memcpy(&e, log.data() + off, sizeof e);
    out.push_back(e);
  }
  return out;
}

static const char* subtype_name(uint8_t t) {
  switch (t) {
    case kSubtypeReferral:
      return "discovery subsystem referral";
    case kSubtypeNvme:
      return "nvme subsystem";
    case kSubtypeCurrentDiscovery:
      return "current discovery subsystem";
    default:
      return "unknown";
  }
}

std::string discovery_text(const std::vector<uint8_t>& log) {
  DiscLogHeader h;
  auto es = entries_of(log, h);
  std::string s = "Discovery Log Number of Records " + std::to_string(h.numrec) +
                  ", Generation counter " + std::to_string(h.genctr) + "\n";
  int i = 0;
  for (const auto& e : es) {
    s += "=====Discovery Log Entry " + std::to_string(i++) + "======\n";
    s += std::string("trtype:  ") +
         (e.trtype == kTrtypeRdma  ? "rdma"
          : e.trtype == kTrtypeTcp ? "tcp"
                                   : "other") +
         "\n";
    s += std::string("adrfam:  ") +
         (e.adrfam == kAdrfamIpv4   ? "ipv4"
          : e.adrfam == kAdrfamIpv6 ? "ipv6"
                                    : "other") +
         "\n";
    s += std::string("subtype: ") + subtype_name(e.subtype) + "\n";
    s += "portid:  " + std::to_string(e.portid) + "\n";
    s += "trsvcid: " + nul_str(e.trsvcid, sizeof e.trsvcid) + "\n";
    s += "subnqn:  " + nul_str(e.subnqn, sizeof e.subnqn) + "\n";
    s += "traddr:  " + nul_str(e.traddr, sizeof e.traddr) + "\n";
  }
  return s;
}

nlohmann::json discovery_json(const std::vector<uint8_t>& log) {
  DiscLogHeader h;
  auto es = entries_of(log, h);
  nlohmann::json j;
  j["genctr"] = h.genctr;
  j["numrec"] = h.numrec;
  nlohmann::json a = nlohmann::json::array();
  for (const auto& e : es) {
    a.push_back({{"trtype", e.trtype == kTrtypeRdma ? "rdma" : "other"},
                 {"adrfam", e.adrfam == kAdrfamIpv4 ? "ipv4" : "ipv6"},
                 {"subtype", subtype_name(e.subtype)},
                 {"portid", e.portid},
                 {"cntlid", e.cntlid},
                 {"trsvcid", nul_str(e.trsvcid, sizeof e.trsvcid)},
                 {"subnqn", nul_str(e.subnqn, sizeof e.subnqn)},
                 {"traddr", nul_str(e.traddr, sizeof e.traddr)}});
  }
  j["records"] = a;
  return j;
}

}  // namespace nvmf::host
