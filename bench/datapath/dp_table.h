// dp_table.h - dp_bench's results: every repetition's raw figure for
// softndk and for each reference of a row, the medians, and the ratio as the
// median of the per-repetition ratios (each repetition's softndk figure over
// the same repetition's reference, measured seconds apart), printed as text
// and as JSON for archiving.
#pragma once

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "baseline/baseline_result.h"

namespace dptable {

// Median of a non-empty sample (mean of the middle two for an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One reference of a row: its BaselineResult and headline figure for every
// repetition (nullopt: that run failed; its error is in the result).
struct RefSeries {
  std::string name;
  std::vector<softndk::baseline::BaselineResult> runs;
  std::vector<std::optional<double>> values;
};

struct Row {
  std::string label;
  std::vector<double> values;           // softndk, one per repetition
  std::vector<nlohmann::json> details;  // per repetition, optional (latency rows)
  std::vector<RefSeries> refs;
};

struct Ratio {
  std::vector<std::optional<double>> per_rep;  // aligned with the repetitions
  int ok = 0;                                  // repetitions with a ratio
  double median = 0, min = 0, max = 0;
};

// A failed reference run drops that repetition's ratio only; the statistics
// are over the rest.
inline Ratio ratio(const Row& r, const RefSeries& f) {
  Ratio q;
  std::vector<double> got;
  for (size_t i = 0; i < f.values.size() && i < r.values.size(); ++i) {
    std::optional<double> x;
    if (f.values[i] && *f.values[i] > 0) x = r.values[i] / *f.values[i];
    q.per_rep.push_back(x);
    if (x) got.push_back(*x);
  }
  q.ok = static_cast<int>(got.size());
  if (got.empty()) return q;
  q.median = median(got);
  q.min = *std::min_element(got.begin(), got.end());
  q.max = *std::max_element(got.begin(), got.end());
  return q;
}

inline std::optional<double> median_of(const std::vector<std::optional<double>>& v) {
  std::vector<double> got;
  for (auto& x : v)
    if (x) got.push_back(*x);
  if (got.empty()) return std::nullopt;
  return median(got);
}

struct Section {
  std::string key;    // the --only group
  std::string title;  // with unit and how to read the ratio
  std::string unit;
  std::vector<Row> rows;
};

inline void print_title(const Section& s) {
  std::printf("\n%s\n", s.title.c_str());
  std::fflush(stdout);
}

// "  label   softndk-median" and one line per reference: its median and the
// ratio's median (min..max over the repetitions).
inline void print_row(const Row& r) {
  std::printf("  %-36s %9.3f\n", r.label.c_str(), median(r.values));
  for (const RefSeries& f : r.refs) {
    Ratio q = ratio(r, f);
    std::optional<double> m = median_of(f.values);
    int failed = static_cast<int>(f.values.size()) - q.ok;
    if (!m || q.ok == 0) {
      std::printf("    vs %-17s %9s  ratio     -\n", f.name.c_str(), "failed");
      continue;
    }
    std::printf("    vs %-17s %9.3f  ratio %5.2f", f.name.c_str(), *m, q.median);
    if (r.values.size() > 1) std::printf(" (%.2f..%.2f)", q.min, q.max);
    if (failed > 0) std::printf("  [%d of %zu runs failed]", failed, f.values.size());
    std::printf("\n");
  }
  std::fflush(stdout);
}

inline nlohmann::json opt_json(const std::optional<double>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

inline nlohmann::json to_json(const Row& r) {
  nlohmann::json j{{"label", r.label},
                   {"softndk", r.values},
                   {"softndk_median", r.values.empty() ? 0.0 : median(r.values)}};
  if (!r.details.empty()) j["softndk_details"] = r.details;
  nlohmann::json refs = nlohmann::json::array();
  for (const RefSeries& f : r.refs) {
    Ratio q = ratio(r, f);
    nlohmann::json values = nlohmann::json::array(), ratios = nlohmann::json::array();
    for (auto& v : f.values) values.push_back(opt_json(v));
    for (auto& v : q.per_rep) ratios.push_back(opt_json(v));
    nlohmann::json jf{{"name", f.name},
                      {"values", values},
                      {"median", opt_json(median_of(f.values))},
                      {"ratios", ratios},
                      {"runs", f.runs}};
    if (q.ok > 0) {
      jf["ratio_median"] = q.median;
      jf["ratio_min"] = q.min;
      jf["ratio_max"] = q.max;
    } else {
      jf["ratio_median"] = nullptr;
    }
    refs.push_back(jf);
  }
  j["refs"] = refs;
  return j;
}

inline nlohmann::json to_json(const Section& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Row& r : s.rows) rows.push_back(to_json(r));
  return {{"group", s.key}, {"title", s.title}, {"unit", s.unit}, {"rows", rows}};
}

}  // namespace dptable
