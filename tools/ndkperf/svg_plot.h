// SPDX-License-Identifier: Apache-2.0
// svg_plot.h - ndkperf --plot: bandwidth (Gb/s) and latency (median, us)
// against message size, softndk beside the TCP baseline, as a standalone
// SVG drawn here (no plotting dependency). Pure functions: tests render
// synthetic results and check the XML.
#pragma once

#include <string>
#include <vector>

#include "ndkperf/perf_types.h"

namespace softndk::ndkperf {

// The whole SVG document. One panel for bandwidth tests and one for latency
// tests (only those present); x is log2 of the size with power-of-two ticks.
std::string render_plot_svg(const std::vector<PerfResult>& results, const std::string& title);

// Writes render_plot_svg() to `path` (creating nothing but the file).
// Returns false with a one-line cause.
bool write_plot_svg(const std::string& path, const std::vector<PerfResult>& results,
                    const std::string& title, std::string& error);

// "2", "512", "4K", "1M" - the x tick labels.
std::string size_label(size_t bytes);

}  // namespace softndk::ndkperf
