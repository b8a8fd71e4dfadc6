// SPDX-License-Identifier: Apache-2.0
// perf_report.cc - table, JSON and CSV renderings of ndkperf results.
#include "ndkperf/perf_report.h"

#include <cstdio>
#include <sstream>

#include "ndkperf/perf_baseline.h"

namespace softndk::ndkperf {

namespace {

const char* kRule =
    "---------------------------------------------------------------------------------------------"
    "\n";

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string crc_text(int crc) { return crc < 0 ? "default" : crc ? "on" : "off"; }

// A test's own TX depth and inline size (they differ between bandwidth and
// latency tests); the run-wide values when the test is not listed.
RunInfo::TestSettings settings_for(const std::string& test, const RunInfo& in) {
  for (const RunInfo::TestSettings& s : in.per_test)
    if (s.test == test) return s;
  return {test, in.tx_depth, in.inline_size, 1};
}

// The header shows what the connection negotiated when the library told
// (`first`: the test's first result; MPA revision 0 = unknown), else what
// was asked, marked so.
void banner(std::ostringstream& os, const std::string& test, const RunInfo& in,
            const PerfResult& first) {
  auto t = parse_test(test);
  const RunInfo::TestSettings set = settings_for(test, in);
  const unsigned depth = set.tx_depth, inl = set.inline_size;
  const bool told = first.mpa_revision != 0;
  std::string tx = std::to_string(depth);
  // Reads in flight are capped by the negotiated ORD (perf_client.cc).
  if (t && t->op == Op::Read && first.ord != 0 && first.ord < depth)
    tx += " (Reads in flight: " + std::to_string(first.ord) + ", the negotiated ORD)";
  std::string crc = told ? (first.crc ? "on" : "off") : crc_text(in.crc) + " (asked)";
  std::string rev = told ? std::to_string(first.mpa_revision)
                         : (in.mpa_revision ? std::to_string(in.mpa_revision) : "2") + " (asked)";
  os << kRule;
  os << "                    " << (t ? test_title(*t) : test) << " (softndk)\n";
  os << " Mode            : " << in.mode << (in.peer.empty() ? "" : " " + in.peer) << "\n";
  os << " Transport       : iWARP (softndk)   Number of qps : " << in.qps << "   TX depth : " << tx
     << "\n";
  os << " Completions     : " << (in.events ? "events (CQ notification)" : "busy-poll")
     << "   Inline : " << inl << "   CRC : " << crc << "   MPA rev : " << rev << "\n";
  // send_lat -Q: most Sends silent (NDK_OP_FLAG_SILENT_SUCCESS).
  if (set.cq_mod > 1)
    os << " CQ moderation   : " << set.cq_mod << " (one Send in " << set.cq_mod << " signaled)\n";
  // The path the data took (Connection::path_text; docs/samehost.md).
  if (!first.path.empty()) os << " Data path       : " << first.path << "\n";
  os << kRule;
}

}  // namespace

std::string format_table(const std::vector<PerfResult>& results, const RunInfo& in, bool footer) {
  std::ostringstream os;
  std::string current;
  bool base = !in.baseline.empty();
  for (const PerfResult& r : results) {
    if (r.test != current) {
      if (!current.empty()) os << kRule;
      current = r.test;
      banner(os, r.test, in, r);
      char h[256];
      if (r.latency) {
        std::snprintf(h, sizeof h, " %-10s %-12s %10s %10s %10s %10s %10s %10s %14s", "#bytes",
                      "#iterations", "t_min[us]", "t_med[us]", "t_avg[us]", "t_p99[us]",
                      "t_p99.9[us]", "t_max[us]", "CPU c/s[s]");
        os << h;
        if (base) os << "  " << baseline_label(in.baseline) << " t_med[us]  ratio";
      } else {
        std::snprintf(h, sizeof h, " %-10s %-12s %18s %14s %14s", "#bytes", "#iterations",
                      in.report_gbits ? "BW average[Gb/s]" : "BW average[MB/s]", "MsgRate[Mpps]",
                      "CPU c/s[s]");
        os << h;
        if (base)
          os << "  " << baseline_label(in.baseline) << (in.report_gbits ? " BW[Gb/s]" : " BW[MB/s]")
             << "  ratio";
      }
      os << "\n";
    }
    char line[512];
    if (!r.error.empty()) {
      std::snprintf(line, sizeof line, " %-10zu failed: %s\n", r.size, r.error.c_str());
      os << line;
      continue;
    }
    std::string cpu = fmt("%.2f", r.cpu_client_s) + "/" + fmt("%.2f", r.cpu_server_s);
    if (r.latency) {
      std::snprintf(line, sizeof line,
                    " %-10zu %-12llu %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %14s", r.size,
                    static_cast<unsigned long long>(r.iters), r.lat_min_us, r.lat_p50_us,
                    r.lat_avg_us, r.lat_p99_us, r.lat_p999_us, r.lat_max_us, cpu.c_str());
      os << line;
      if (base) {
        if (!r.baseline_error.empty())
          os << "  (baseline failed: " << r.baseline_error << ")";
        else
          os << fmt("  %13.2f", r.base_lat_p50_us) << fmt("  %4.2fx", r.ratio);
      }
    } else {
      std::snprintf(line, sizeof line, " %-10zu %-12llu %18.2f %14.6f %14s", r.size,
                    static_cast<unsigned long long>(r.iters), in.report_gbits ? r.gbps : r.mbps,
                    r.msg_rate / 1e6, cpu.c_str());
      os << line;
      if (base) {
        if (!r.baseline_error.empty())
          os << "  (baseline failed: " << r.baseline_error << ")";
        else
          os << fmt("  %12.2f", in.report_gbits ? r.base_gbps : r.base_mbps)
             << fmt("  %4.2fx", r.ratio);
      }
    }
    os << "\n";
  }
  if (!footer) return os.str();
  if (!current.empty()) os << kRule;
  return os.str();
}

nlohmann::json result_json(const PerfResult& r) {
  nlohmann::json j = {{"test", r.test},
                      {"size", r.size},
                      {"iterations", r.iters},
                      {"bytes", r.bytes},
                      {"bytes_sent", r.bytes_sent},
                      {"seconds", r.seconds},
                      {"gbps", r.gbps},
                      {"mbps", r.mbps},
                      {"msg_rate", r.msg_rate},
                      {"cpu_client_s", r.cpu_client_s},
                      {"cpu_server_s", r.cpu_server_s},
                      {"crc", r.crc},
                      {"mpa_revision", r.mpa_revision},
                      {"ord", r.ord}};
  if (r.latency) {
    j["latency_us"] = {{"min", r.lat_min_us}, {"median", r.lat_p50_us}, {"avg", r.lat_avg_us},
                       {"p99", r.lat_p99_us}, {"p99_9", r.lat_p999_us}, {"max", r.lat_max_us}};
  }
  if (!r.path.empty()) j["path"] = r.path;
  if (!r.tcp_congestion.empty()) {
    j["tcp"] = {{"congestion", r.tcp_congestion},
                {"retransmits", r.tcp_retransmits},
                {"bytes_retransmitted", r.tcp_bytes_retrans},
                {"out_of_order_received", r.tcp_out_of_order}};
  }
  if (r.has_baseline) {
    nlohmann::json b = {{"name", r.baseline_name},
                        {"gbps", r.base_gbps},
                        {"mbps", r.base_mbps},
                        {"msg_rate", r.base_msg_rate},
                        {"lat_median_us", r.base_lat_p50_us},
                        {"cpu_s", r.base_cpu_s}};
    if (!r.baseline_error.empty()) b["error"] = r.baseline_error;
    j["baseline"] = b;
    j["ratio"] = r.ratio;
  }
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

nlohmann::json results_json(const std::vector<PerfResult>& results, const RunInfo& in) {
  nlohmann::json arr = nlohmann::json::array();
  nlohmann::json tests = nlohmann::json::array();
  for (const RunInfo::TestSettings& s : in.per_test)
    tests.push_back({{"test", s.test}, {"tx_depth", s.tx_depth}, {"inline_size", s.inline_size}});
  for (const auto& r : results) {
    nlohmann::json j = result_json(r);
    const RunInfo::TestSettings set = settings_for(r.test, in);
    j["tx_depth"] = set.tx_depth;
    j["inline_size"] = set.inline_size;
    j["cq_mod"] = set.cq_mod;
    arr.push_back(std::move(j));
  }
  return {{"tool", "ndkperf"},
          {"format", 1},
          {"config",
           {{"mode", in.mode},
            {"peer", in.peer},
            {"qps", in.qps},
            {"tests", tests},
            {"events", in.events},
            {"crc", crc_text(in.crc)},
            {"mpa_revision", in.mpa_revision ? in.mpa_revision : 2},
            {"baseline", in.baseline},
            {"duration_s", in.duration},
            {"iterations", in.iters}}},
          {"results", arr}};
}

std::string csv_header() {
  return "test,size,iterations,bytes,bytes_sent,seconds,gbps,mbps,msg_rate,lat_min_us,"
         "lat_median_us,lat_avg_us,lat_p99_us,lat_p99_9_us,lat_max_us,cpu_client_s,cpu_server_s,"
         "baseline,base_gbps,base_mbps,base_lat_median_us,ratio,error\n";
}

std::string csv_row(const PerfResult& r) {
  std::ostringstream os;
  auto q = [](const std::string& s) {
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  os << r.test << ',' << r.size << ',' << r.iters << ',' << r.bytes << ',' << r.bytes_sent << ','
     << r.seconds << ',' << r.gbps << ',' << r.mbps << ',' << r.msg_rate << ',' << r.lat_min_us
     << ',' << r.lat_p50_us << ',' << r.lat_avg_us << ',' << r.lat_p99_us << ',' << r.lat_p999_us
     << ',' << r.lat_max_us << ',' << r.cpu_client_s << ',' << r.cpu_server_s << ','
     << (r.has_baseline ? r.baseline_name : "") << ',' << r.base_gbps << ',' << r.base_mbps << ','
     << r.base_lat_p50_us << ',' << r.ratio << ','
     << q(!r.error.empty() ? r.error : r.baseline_error) << '\n';
  return os.str();
}

std::string format_csv(const std::vector<PerfResult>& results) {
  std::string out = csv_header();
  for (const auto& r : results) out += csv_row(r);
  return out;
}

}  // namespace softndk::ndkperf
