// SPDX-License-Identifier: Apache-2.0
// svg_plot_test.cc - the --plot writer: a well-formed SVG (parsed as XML by
// python3) with both panels, the legend and power-of-two size ticks.
#include "ndkperf/svg_plot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "proc.h"

namespace softndk::ndkperf {
namespace {

std::vector<PerfResult> synthetic(bool with_lat) {
  std::vector<PerfResult> v;
  for (const char* t : {"send_bw", "write_bw", "read_bw"})
    for (size_t s = 2; s <= (8u << 20); s *= 4) {
      PerfResult r;
      r.test = t;
      r.size = s;
      r.gbps = static_cast<double>(s) / 1e5;
      r.has_baseline = true;
      r.baseline_name = "tcp_stream";
      r.base_gbps = r.gbps * 1.2;
      v.push_back(r);
    }
  if (with_lat)
    for (size_t s : {8, 4096, 65536}) {
      PerfResult r;
      r.test = "send_lat";
      r.latency = true;
      r.size = s;
      r.lat_p50_us = 10 + static_cast<double>(s) / 1000;
      v.push_back(r);
    }
  return v;
}

std::string tmp_svg() { return "/tmp/ndkperf_plot_test_" + std::to_string(getpid()) + ".svg"; }

TEST(SvgPlot, WellFormedWithBothPanels) {
  std::string path = tmp_svg(), err;
  ASSERT_TRUE(write_plot_svg(path, synthetic(true), "softndk vs TCP <loopback> & more", err))
      << err;
  std::string why;
  EXPECT_TRUE(tools_test::xml_well_formed(path, &why)) << why;
  std::string svg = render_plot_svg(synthetic(true), "t");
  EXPECT_NE(svg.find("bandwidth [Gb/s]"), std::string::npos);
  EXPECT_NE(svg.find("latency, median [us]"), std::string::npos);
  EXPECT_NE(svg.find("softndk write_bw"), std::string::npos);
  EXPECT_NE(svg.find("TCP tcp_stream"), std::string::npos);
  EXPECT_NE(svg.find(">8M<"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  std::remove(path.c_str());
}

TEST(SvgPlot, SinglePointAndEmptyAreStillValid) {
  std::string path = tmp_svg(), err;
  PerfResult one;
  one.test = "write_bw";
  one.size = 65536;
  one.gbps = 3;
  ASSERT_TRUE(write_plot_svg(path, {one}, "one", err)) << err;
  EXPECT_TRUE(tools_test::xml_well_formed(path));
  ASSERT_TRUE(write_plot_svg(path, {}, "none", err)) << err;
  EXPECT_TRUE(tools_test::xml_well_formed(path));
  std::remove(path.c_str());
}

TEST(SvgPlot, UnwritablePathIsAnError) {
  std::string err;
  EXPECT_FALSE(write_plot_svg("/nonexistent-dir/x.svg", synthetic(false), "t", err));
  EXPECT_NE(err.find("/nonexistent-dir/x.svg"), std::string::npos);
}

TEST(SvgPlot, SizeLabels) {
  EXPECT_EQ(size_label(2), "2");
  EXPECT_EQ(size_label(512), "512");
  EXPECT_EQ(size_label(4096), "4K");
  EXPECT_EQ(size_label(1 << 20), "1M");
  EXPECT_EQ(size_label(8u << 20), "8M");
}

}  // namespace
}  // namespace softndk::ndkperf
