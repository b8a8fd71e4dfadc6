// SPDX-License-Identifier: Apache-2.0
// svg_plot.cc - hand-written SVG: axes, grid, log2 size ticks, one polyline
// per series (solid softndk, dashed TCP), legend at the right.
#include "ndkperf/svg_plot.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace softndk::ndkperf {

namespace {

constexpr double kWidth = 960, kPanelH = 400;
constexpr double kLeft = 80, kRight = 230, kTop = 50, kBottom = 60;
const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&')
      o += "&amp;";
    else if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '"')
      o += "&quot;";
    else
      o += c;
  }
  return o;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string tick_text(double v) {
  char b[32];
  if (v == 0 || std::fabs(v) >= 10)
    std::snprintf(b, sizeof b, "%.0f", v);
  else
    std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

// A round number (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^n) at least v.
double nice_ceiling(double v) {
  if (v <= 0) return 1;
  double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
    if (m * p >= v) return m * p;
  return 10 * p;
}

struct Series {
  std::string label;
  std::string color;
  bool dashed = false;
  std::vector<std::pair<size_t, double>> points;
};

void panel(std::ostringstream& os, double y0, const std::string& ylabel,
           const std::vector<Series>& series) {
  const double pw = kWidth - kLeft - kRight, ph = kPanelH - kTop - kBottom;
  const double top = y0 + kTop;
  size_t smin = SIZE_MAX, smax = 0;
  double vmax = 0;
  for (const auto& s : series)
    for (auto [x, v] : s.points) {
      smin = std::min(smin, x);
      smax = std::max(smax, x);
      if (std::isfinite(v)) vmax = std::max(vmax, v);
    }
  if (smin == SIZE_MAX) return;
  int lo = static_cast<int>(std::floor(std::log2(static_cast<double>(smin))));
  int hi = static_cast<int>(std::ceil(std::log2(static_cast<double>(smax))));
  if (hi <= lo) {
    --lo;
    ++hi;
  }
  double ymax = nice_ceiling(vmax * 1.05);
  auto px = [&](double size) {
    return kLeft + (std::log2(size) - lo) / static_cast<double>(hi - lo) * pw;
  };
  auto py = [&](double v) { return top + ph - std::clamp(v / ymax, 0.0, 1.0) * ph; };

  // Frame, grid and y ticks.
  os << "<rect x=\"" << num(kLeft) << "\" y=\"" << num(top) << "\" width=\"" << num(pw)
     << "\" height=\"" << num(ph) << "\" fill=\"#ffffff\" stroke=\"#333333\"/>\n";
  for (int i = 0; i <= 5; ++i) {
    double v = ymax * i / 5, y = py(v);
    os << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(y) << "\" x2=\"" << num(kLeft + pw)
       << "\" y2=\"" << num(y) << "\" stroke=\"#dddddd\"/>\n";
    os << "<text x=\"" << num(kLeft - 8) << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">"
       << tick_text(v) << "</text>\n";
  }
  int step = std::max(1, (hi - lo + 11) / 12);
  for (int e = lo; e <= hi; ++e) {
    double x = px(std::ldexp(1.0, e));
    os << "<line x1=\"" << num(x) << "\" y1=\"" << num(top) << "\" x2=\"" << num(x) << "\" y2=\""
       << num(top + ph) << "\" stroke=\"#eeeeee\"/>\n";
    if ((e - lo) % step == 0)
      os << "<text x=\"" << num(x) << "\" y=\"" << num(top + ph + 18)
         << "\" text-anchor=\"middle\">" << size_label(size_t{1} << std::max(e, 0)) << "</text>\n";
  }
  os << "<text x=\"" << num(kLeft + pw / 2) << "\" y=\"" << num(top + ph + 42)
     << "\" text-anchor=\"middle\">message size [bytes]</text>\n";
  os << "<text transform=\"translate(" << num(22) << "," << num(top + ph / 2)
     << ") rotate(-90)\" text-anchor=\"middle\">" << esc(ylabel) << "</text>\n";

  // Series and legend.
  double ly = top + 10;
  for (const auto& s : series) {
    if (s.points.empty()) continue;
    std::string dash = s.dashed ? " stroke-dasharray=\"6,4\"" : "";
    os << "<polyline fill=\"none\" stroke=\"" << s.color << "\" stroke-width=\"2\"" << dash
       << " points=\"";
    for (auto [x, v] : s.points) os << num(px(static_cast<double>(x))) << "," << num(py(v)) << " ";
    os << "\"/>\n";
    for (auto [x, v] : s.points)
      os << "<circle cx=\"" << num(px(static_cast<double>(x))) << "\" cy=\"" << num(py(v))
         << "\" r=\"3\" fill=\"" << s.color << "\"/>\n";
    double lx = kLeft + pw + 16;
    os << "<line x1=\"" << num(lx) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(lx + 28)
       << "\" y2=\"" << num(ly) << "\" stroke=\"" << s.color << "\" stroke-width=\"2\"" << dash
       << "/>\n";
    os << "<text x=\"" << num(lx + 34) << "\" y=\"" << num(ly + 4) << "\">" << esc(s.label)
       << "</text>\n";
    ly += 20;
  }
}

}  // namespace

std::string size_label(size_t b) {
  if (b >= (size_t{1} << 30) && b % (size_t{1} << 30) == 0) return std::to_string(b >> 30) + "G";
  if (b >= (size_t{1} << 20) && b % (size_t{1} << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

std::string render_plot_svg(const std::vector<PerfResult>& results, const std::string& title) {
  // Group by test, keeping first-seen order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const PerfResult*>> by_test;
  for (const auto& r : results) {
    if (!r.error.empty()) continue;
    if (!by_test.count(r.test)) order.push_back(r.test);
    by_test[r.test].push_back(&r);
  }
  // softndk: one series per test. TCP: one dashed grey series per baseline
  // kind and panel (every bw test runs the same TCP stream, so separate
  // lines would only overlap), averaged over the tests at each size.
  std::vector<Series> bw, lat;
  std::map<std::string, std::map<size_t, std::pair<double, int>>> base[2];
  size_t color = 0;
  for (const auto& t : order) {
    auto rs = by_test[t];
    std::sort(rs.begin(), rs.end(), [](auto* a, auto* b) { return a->size < b->size; });
    bool is_lat = rs.front()->latency;
    std::string c = kColors[color++ % (sizeof kColors / sizeof *kColors)];
    Series s{"softndk " + t, c, false, {}};
    for (const auto* r : rs) {
      s.points.push_back({r->size, is_lat ? r->lat_p50_us : r->gbps});
      if (r->has_baseline && r->baseline_error.empty()) {
        // "tcp_stream" / "ucx ucp_put_bw": the baseline's own name says which.
        std::string name = r->baseline_name.empty() ? std::string("baseline") : r->baseline_name;
        if (name.rfind("tcp", 0) == 0) name = "TCP " + name;
        if (t == "read_lat" && name.rfind("TCP", 0) == 0) name += " (round trip)";
        auto& slot = base[is_lat][name][r->size];
        slot.first += is_lat ? r->base_lat_p50_us : r->base_gbps;
        slot.second += 1;
      }
    }
    (is_lat ? lat : bw).push_back(std::move(s));
  }
  const char* kGreys[] = {"#555555", "#999999"};
  for (int panel_lat = 0; panel_lat < 2; ++panel_lat) {
    int g = 0;
    for (const auto& [name, pts] : base[panel_lat]) {
      Series b{name, kGreys[g++ % 2], true, {}};
      for (const auto& [size, acc] : pts) b.points.push_back({size, acc.first / acc.second});
      (panel_lat ? lat : bw).push_back(std::move(b));
    }
  }
  int panels = (bw.empty() ? 0 : 1) + (lat.empty() ? 0 : 1);
  double height = 40 + std::max(panels, 1) * kPanelH;
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(kWidth) << "\" height=\""
     << num(height) << "\" viewBox=\"0 0 " << num(kWidth) << " " << num(height)
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  os << "<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n";
  os << "<text x=\"" << num(kWidth / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\""
     << " font-weight=\"bold\">" << esc(title) << "</text>\n";
  double y = 30;
  if (!bw.empty()) {
    panel(os, y, "bandwidth [Gb/s]", bw);
    y += kPanelH;
  }
  if (!lat.empty()) panel(os, y, "latency, median [us]", lat);
  if (panels == 0)
    os << "<text x=\"" << num(kWidth / 2) << "\" y=\"120\" text-anchor=\"middle\">no results"
       << "</text>\n";
  os << "</svg>\n";
  return os.str();
}

bool write_plot_svg(const std::string& path, const std::vector<PerfResult>& results,
                    const std::string& title, std::string& error) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) {
    error = "cannot write plot '" + path + "': " + std::strerror(errno);
    return false;
  }
  f << render_plot_svg(results, title);
  f.close();
  if (!f) {
    error = "cannot write plot '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace softndk::ndkperf
