// SPDX-License-Identifier: Apache-2.0
// perf_types.h - ndkperf's vocabulary: the six tests, the run plan, and the
// figures one measured point produces (softndk and, beside it, the baseline).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace softndk::ndkperf {

enum class Op : uint8_t { Send = 0, Write = 1, Read = 2 };
enum class Metric : uint8_t { Bw = 0, Lat = 1 };

struct Test {
  Op op = Op::Write;
  Metric metric = Metric::Bw;
  bool operator==(const Test&) const = default;
};

// "send_bw", "read_lat", ...
std::string test_name(Test t);
std::optional<Test> parse_test(const std::string& name);
// perftest's banner title: "RDMA_Write BW Test".
std::string test_title(Test t);
const std::vector<std::string>& all_test_names();

// 2 B .. 8 MiB in powers of two (perftest -a).
std::vector<size_t> all_sizes();

// One measured point: a test at one message size.
struct PerfResult {
  std::string test;  // test_name()
  bool latency = false;
  size_t size = 0;
  uint64_t iters = 0;       // messages (bw) or round trips / reads (lat) completed
  uint64_t bytes = 0;       // payload bytes the receiving side counted
  uint64_t bytes_sent = 0;  // payload bytes the initiator posted
  double seconds = 0;
  double gbps = 0, mbps = 0, msg_rate = 0;
  // Latency in microseconds: one way (half a round trip) for send_lat and
  // write_lat, the whole read for read_lat, as perftest reports them.
  double lat_min_us = 0, lat_p50_us = 0, lat_avg_us = 0, lat_p99_us = 0, lat_p999_us = 0,
         lat_max_us = 0;
  double cpu_client_s = 0, cpu_server_s = 0;  // test thread of each side (RUSAGE_THREAD)
  bool crc = false;                           // as negotiated (when the library tells)
  unsigned mpa_revision = 0;
  unsigned ord = 0;  // negotiated outbound read limit (caps Reads in flight); 0 unknown
  // The first connection's TCP at the end of the run (SoftNdkQueryConnection-
  // TcpInfo): its congestion control and what it retransmitted, cumulative
  // over the connection's life. Empty congestion: unknown.
  std::string tcp_congestion;
  uint64_t tcp_retransmits = 0, tcp_bytes_retrans = 0, tcp_out_of_order = 0;
  // The first connection's data path (SoftNdkQueryConnectionPath):
  // "samehost", "samehost (ring)" once the stream moved to the same-host
  // ring, or "tcp (<reason>)"; empty: unknown (docs/samehost.md).
  std::string path;

  // The baseline run beside it (--baseline tcp), if any.
  bool has_baseline = false;
  std::string baseline_name;  // "tcp_stream", "tcp_pingpong"
  double base_gbps = 0, base_mbps = 0, base_msg_rate = 0, base_lat_p50_us = 0;
  double base_cpu_s = 0;
  std::string baseline_error;
  // softndk / baseline: bandwidth ratio for bw tests (higher is better),
  // median latency ratio for lat tests (lower is better). 0 if unknown.
  double ratio = 0;

  std::string error;  // empty on success
};

// Fills gbps/mbps/msg_rate from bytes, iters and seconds.
void finish_rates(PerfResult& r);
// Fills the latency fields from samples in nanoseconds; `halve` for
// half-round-trip reporting.
void finish_latency(PerfResult& r, std::vector<uint64_t>& samples_ns, bool halve);
// Sets r.ratio from the softndk and baseline figures.
void finish_ratio(PerfResult& r);

}  // namespace softndk::ndkperf
