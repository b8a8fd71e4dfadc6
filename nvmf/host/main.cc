// SPDX-License-Identifier: Apache-2.0
// main.cc - ndk-nvme, an NVMe over Fabrics (RDMA) host on softndk's public
// NDK ABI: discover, connect, identify, verified read/write of LBA ranges
// and a load generator (docs/nvmf.md, "The host").
#include <sys/random.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "controller.h"
#include "io_engine.h"
#include "ndkapp/size_text.h"
#include "ndkapp/stop_signal.h"
#include "ndkapp/version.h"
#include "report.h"

using namespace nvmf::host;

namespace {

struct Cli {
  ConnectOptions co;
  std::string hostid_text, crc = "default", rw = "randread";
  bool json = false, no_inline = false, no_invalidate = false, no_verify = false;
  double kato_s = 5;
  uint32_t nsid = 0;
  uint64_t lba = 0, blocks = 1, count = 0, seed = 1;
  std::string size_text = "0", offset_text = "0";
  std::string bs_text = "4k";
  unsigned iodepth = 1, queues = 1, rwmixread = 50;
  double runtime = 0;
  bool verify = false;
};

bool parse_size(const std::string& t, uint64_t& out) {
  auto v = softndk::tools::parse_size(t);  // the tools' one size parser
  if (v) out = *v;
  return v.has_value();
}

bool parse_uuid(const std::string& t, uint8_t out[16]) {
  std::string hex;
  for (char ch : t)
    if (ch != '-') hex += ch;
  if (hex.size() != 32) return false;
  for (int i = 0; i < 16; ++i) {
    unsigned v;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &v) != 1) return false;
    out[i] = uint8_t(v);
  }
  return true;
}

void finish_options(Cli& c) {
  if (c.hostid_text.empty()) {
    if (getrandom(c.co.hostid, sizeof c.co.hostid, 0) != ssize_t(sizeof c.co.hostid))
      throw HostError(kExitError, "getrandom failed");
    c.co.hostid[6] = uint8_t((c.co.hostid[6] & 0x0F) | 0x40);  // a version 4 UUID
    c.co.hostid[8] = uint8_t((c.co.hostid[8] & 0x3F) | 0x80);
  } else if (!parse_uuid(c.hostid_text, c.co.hostid)) {
    throw HostError(kExitUsage, "--hostid: not a UUID: " + c.hostid_text);
  }
  if (c.crc == "on")
    c.co.crc = 1;
  else if (c.crc == "off")
    c.co.crc = 0;
  else
    c.co.crc = -1;
  c.co.kato_ms = uint32_t(c.kato_s * 1000);
  c.co.in_capsule = !c.no_inline;
  c.co.remote_invalidate = !c.no_invalidate;
}

uint32_t pick_nsid(const Cli& c, Controller& ctrl) {
  if (c.nsid) return c.nsid;
  if (ctrl.namespaces().empty())
    throw HostError(kExitUsage, "the subsystem has no active namespace");
  return ctrl.namespaces().front().nsid;
}

void print_job(const Cli& c, const JobSpec& spec, const JobResult& r, nlohmann::json* all) {
  if (c.json) {
    if (all) all->push_back(job_json(spec, r));
  } else {
    std::cout << job_text(spec, r);
  }
}

int job_exit(const JobResult& r) {
  if (r.errors == 0 && r.mismatches == 0) return kExitOk;
  std::cerr << "ndk-nvme: " << r.first_error << "\n";
  return r.first_error_code;
}

// With --json, standard output holds one JSON document: the command's, or
// when it failed before printing it, {"error": ..., "exit_code": ...}.
bool g_json_printed = false;
void json_out(const nlohmann::json& j) {
  std::cout << j.dump(2) << "\n";
  g_json_printed = true;
}

int failed(const Cli& c, int code, const std::string& what) {
  std::cerr << "ndk-nvme: " << what << "\n";
  if (c.json && !g_json_printed) json_out({{"error", what}, {"exit_code", code}});
  return code;
}

int run(const std::string& cmd, Cli& c) {
  finish_options(c);
  if (cmd == "discover") {
    if (c.co.subnqn.empty()) c.co.subnqn = nvmf::kDiscoveryNqn;
    c.co.io_queues = 0;
    auto a = open_adapter(c.co);
    Controller ctrl(*a, c.co, true);
    auto log = ctrl.discovery_log();
    if (c.json)
      json_out(discovery_json(log));
    else
      std::cout << discovery_text(log);
    ctrl.shutdown();
    return kExitOk;
  }
  if (c.co.subnqn.empty()) throw HostError(kExitUsage, "--nqn: the subsystem NQN is required");
  uint64_t bs = 0;
  if (!parse_size(c.bs_text, bs) || bs == 0 || bs > (1u << 30))
    throw HostError(kExitUsage, "--bs: not a size: " + c.bs_text);
  c.co.io_queues = (cmd == "load") ? c.queues : 1;
  c.co.queue_size = std::max(2u, c.iodepth + 1);
  c.co.max_io = uint32_t(std::max<uint64_t>(bs, 4096));
  if (cmd == "connect" || cmd == "identify") c.co.max_io = 4096;
  auto a = open_adapter(c.co);
  Controller ctrl(*a, c.co, false);

  if (cmd == "connect" || cmd == "identify") {
    if (c.json) {
      json_out(identify_json(ctrl.info(), ctrl.namespaces()));
    } else if (cmd == "connect") {
      std::printf("connected to %s: controller %u, %zu namespace(s), %u I/O queue(s), MPA CRC %s\n",
                  ctrl.info().subnqn.c_str(), ctrl.info().cntlid, ctrl.namespaces().size(),
                  unsigned(ctrl.io_queues().size()),
                  ctrl.info().mpa_crc < 0 ? "unknown"
                  : ctrl.info().mpa_crc   ? "on"
                                          : "off");
    } else {
      std::cout << identify_text(ctrl.info(), ctrl.namespaces());
    }
    ctrl.shutdown();
    return kExitOk;
  }

  JobSpec spec;
  spec.nsid = pick_nsid(c, ctrl);
  const NamespaceInfo& ns = ctrl.ns(spec.nsid);
  // Commands carry whole logical blocks: --bs 1000 on 512-byte blocks is
  // refused, not rounded down in silence.
  if (bs % ns.lba_size != 0) {
    ctrl.shutdown();
    throw HostError(kExitUsage, "--bs " + c.bs_text + ": not a multiple of namespace " +
                                    std::to_string(spec.nsid) + "'s " +
                                    std::to_string(ns.lba_size) + "-byte blocks");
  }
  spec.seed = c.seed;
  spec.iodepth = std::max(1u, c.iodepth);
  nlohmann::json jobs = nlohmann::json::array();
  int rc = kExitOk;
  if (cmd == "read" || cmd == "write") {
    // One sequential pass over [lba, lba + blocks), commands of up to --bs.
    spec.pattern = cmd == "read" ? Pattern::kSeqRead : Pattern::kSeqWrite;
    spec.first_lba = c.lba;
    spec.nblocks = c.blocks;
    spec.bs = uint32_t(std::min<uint64_t>(bs, c.blocks * ns.lba_size));
    spec.bs -= spec.bs % ns.lba_size;
    spec.passes = 1;
    spec.verify = cmd == "read" && !c.no_verify;
    spec.fill_writes = cmd == "write";
    JobResult r = run_job(ctrl, spec);
    print_job(c, spec, r, &jobs);
    rc = job_exit(r);
  } else {
    if (!pattern_from_name(c.rw, spec.pattern))
      throw HostError(kExitUsage, "--rw: unknown " + c.rw);
    spec.bs = uint32_t(bs);
    spec.rwmixread = std::min(100u, c.rwmixread);
    spec.runtime_s = c.runtime;
    spec.count = c.count;
    if (spec.runtime_s <= 0 && spec.count == 0) spec.runtime_s = 10;
    uint64_t offset = 0, size = 0;
    if (!parse_size(c.offset_text, offset)) throw HostError(kExitUsage, "--offset: not a size");
    if (!parse_size(c.size_text, size)) throw HostError(kExitUsage, "--size: not a size");
    spec.first_lba = offset / ns.lba_size;
    const uint64_t ns_bytes = ns.nsze * ns.lba_size;
    if (size == 0 && offset < ns_bytes) size = std::min<uint64_t>(ns_bytes - offset, 1ull << 30);
    // A region past the namespace is refused before any I/O (it failed
    // later with LBA Out of Range).
    if (offset >= ns_bytes || size > ns_bytes - offset) {
      ctrl.shutdown();
      throw HostError(kExitUsage, "--offset " + c.offset_text + " --size " + c.size_text +
                                      ": past the end of namespace " + std::to_string(spec.nsid) +
                                      " (" + std::to_string(ns_bytes) + " bytes)");
    }
    spec.nblocks = size / ns.lba_size;
    spec.verify = c.verify;
    spec.max_errors = 1;
    if (c.verify) {
      // Every block of the region carries the pattern before reads check it.
      JobSpec fill = spec;
      fill.pattern = Pattern::kSeqWrite;
      fill.passes = 1;
      fill.count = 0;
      fill.runtime_s = 0;
      fill.verify = false;
      fill.fill_writes = true;
      JobResult fr = run_job(ctrl, fill);
      if (!c.json) std::cout << "prefill:\n";
      print_job(c, fill, fr, &jobs);
      rc = job_exit(fr);
    }
    if (rc == kExitOk) {
      // Ctrl-C ends the load in order: what ran is reported, the controller
      // shut down; a second Ctrl-C quits at once (stop_signal.h).
      static std::atomic<bool> interrupted{false};
      softndk::tools::install_stop_signals("ndk-nvme", &interrupted, kExitInterrupted);
      spec.interrupt = &interrupted;
      spec.progress = true;
      JobResult r = run_job(ctrl, spec);
      print_job(c, spec, r, &jobs);
      rc = job_exit(r);
      if (rc == kExitOk && r.interrupted) rc = kExitInterrupted;
    }
  }
  if (c.json) {
    nlohmann::json out{{"jobs", jobs}};
    if (ctrl.info().mpa_crc >= 0) out["mpa_crc"] = ctrl.info().mpa_crc == 1;
    json_out(out);
  }
  ctrl.shutdown();
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Cli c;
  CLI::App app{"ndk-nvme: NVMe over Fabrics (RDMA) host on softndk"};
  app.set_version_flag("--version", softndk::tools::version_text("ndk-nvme"));
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("-a,--traddr", c.co.traddr, "target address")->required();
  app.add_option("-s,--trsvcid", c.co.trsvcid, "target port (4420)");
  app.add_option("-n,--nqn", c.co.subnqn, "subsystem NQN (discover: the discovery NQN)");
  app.add_option("-q,--hostnqn", c.co.hostnqn, "host NQN (default: from the host ID)");
  app.add_option("-I,--hostid", c.hostid_text, "host identifier UUID (default: random)");
  app.add_option("--local", c.co.local, "local interface or address (default: the route's)");
  app.add_option("--crc", c.crc, "MPA CRC: on, off or default")
      ->check(CLI::IsMember({"on", "off", "default"}));
  app.add_option("--timeout", c.co.timeout_s,
                 "seconds to wait for a connect or an admin command (10)")
      ->check(CLI::Range(0.001, 86400.0));
  app.add_option("-k,--keep-alive-tmo", c.kato_s, "keep alive timeout in seconds, 0 = none (5)");
  app.add_flag("--fr-register", c.co.fr_register,
               "verbs backend on a device without type-2 memory windows (siw): fast register "
               "by registering each command's buffer (SOFTNDK_OPEN_FLAG_FR_REGISTER, a new "
               "token per command)");
  app.add_flag("--no-inline", c.no_inline, "never send write data in the capsule");
  app.add_flag("--no-invalidate", c.no_invalidate,
               "do not ask the target to invalidate keys (the host invalidates them)");
  app.add_flag("-j,--json", c.json, "JSON output");
  app.add_subcommand("discover", "read the discovery log page");
  app.add_subcommand("connect", "connect (admin + I/O queue), report, shut down");
  app.add_subcommand("identify", "print Identify Controller and the namespaces");
  for (const char* name : {"read", "write"}) {
    auto* s =
        app.add_subcommand(name, std::string(name) == "read" ? "read LBAs and verify the pattern"
                                                             : "write the pattern to LBAs");
    s->add_option("--nsid", c.nsid, "namespace (default: the first active)");
    s->add_option("-l,--lba", c.lba, "first LBA")->required();
    s->add_option("-c,--blocks", c.blocks, "number of logical blocks (1)");
    s->add_option("--bs", c.bs_text, "bytes per command (4k)");
    s->add_option("--iodepth", c.iodepth, "commands in flight (1)")->check(CLI::Range(1u, 65535u));
    s->add_option("--seed", c.seed, "pattern seed (1)");
    if (std::string(name) == "read") s->add_flag("--no-verify", c.no_verify, "do not check data");
  }
  auto* l = app.add_subcommand("load", "load generator (fio-like report)");
  l->add_option("--rw", c.rw, "read, write, randread, randwrite, randrw, rw (randread)");
  l->add_option("--bs", c.bs_text, "block size (4k)");
  l->add_option("--iodepth", c.iodepth, "commands in flight per queue (1)")
      ->check(CLI::Range(1u, 65535u));
  l->add_option("--queues", c.queues, "I/O queues, one QP each (1)")->check(CLI::Range(1u, 65535u));
  l->add_option("--runtime", c.runtime, "seconds (10 unless --number-ios)")
      ->check(CLI::Range(0.001, 31536000.0));
  l->add_option("--number-ios", c.count, "stop after this many I/Os")
      ->check(CLI::Range(uint64_t{1}, UINT64_MAX));
  l->add_option("--size", c.size_text, "bytes of the namespace to use (min(namespace, 1 GiB))");
  l->add_option("--offset", c.offset_text, "first byte of the region (0)");
  l->add_option("--rwmixread", c.rwmixread, "percent reads for randrw/rw (50)")
      ->check(CLI::Range(0u, 100u));
  l->add_option("--nsid", c.nsid, "namespace (default: the first active)");
  l->add_flag("--verify", c.verify, "prefill the region with the pattern, check every read");
  l->add_option("--seed", c.seed, "pattern seed (1)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  std::string cmd = app.get_subcommands().front()->get_name();
  try {
    return run(cmd, c);
  } catch (const HostError& e) {
    return failed(c, e.code, e.what());
  } catch (const std::exception& e) {
    return failed(c, kExitError, e.what());
  }
}
