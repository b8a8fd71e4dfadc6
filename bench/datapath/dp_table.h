// SPDX-License-Identifier: Apache-2.0
// dp_table.h - dp_bench's results: every raw figure of softndk and of each
// reference of a row, the medians, and the ratio as the median of the
// per-repetition ratios, printed as text and as JSON for archiving.
//
// Each reference run is bracketed by two softndk runs (softndk, ref,
// softndk, next ref, softndk, ...): its ratio takes the geometric mean of
// the two. These machines switch between two speeds (~3x apart) every few
// seconds to minutes; a switch between the runs of a pair made single
// ratios of 0.3 or 3. A repetition whose brackets differ by more than
// kStableSpread saw such a switch: its ratio is kept in the JSON but left
// out of the median, unless no repetition was stable.
#pragma once

#include <algorithm>
#include <cmath>
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
  // Per repetition: softndk's runs just before and just after this one.
  std::vector<double> before, after;
};

// Brackets further apart than this: the machine changed speed meanwhile.
inline constexpr double kStableSpread = 1.25;

struct Row {
  std::string label;
  std::vector<double> values;           // softndk, every run in order
  std::vector<nlohmann::json> details;  // per repetition, optional (latency rows)
  std::vector<RefSeries> refs;
};

struct Ratio {
  std::vector<std::optional<double>> per_rep;  // aligned with the repetitions
  std::vector<bool> stable;                    // brackets within kStableSpread
  int ok = 0;                                  // repetitions with a ratio
  int unstable = 0;                            // ... of which left out
  double median = 0, min = 0, max = 0;
};

inline bool stable_pair(double a, double b) {
  return a > 0 && b > 0 && std::max(a, b) / std::min(a, b) <= kStableSpread;
}

// A failed reference run drops that repetition's ratio only; the statistics
// are over the rest (the stable ones, if any).
inline Ratio ratio(const RefSeries& f) {
  Ratio q;
  std::vector<double> all, steady;
  for (size_t i = 0; i < f.values.size() && i < f.before.size() && i < f.after.size(); ++i) {
    std::optional<double> x;
    const bool st = stable_pair(f.before[i], f.after[i]);
    if (f.values[i] && *f.values[i] > 0) x = std::sqrt(f.before[i] * f.after[i]) / *f.values[i];
    q.per_rep.push_back(x);
    q.stable.push_back(st);
    if (!x) continue;
    all.push_back(*x);
    if (st) steady.push_back(*x);
  }
  q.ok = static_cast<int>(all.size());
  if (all.empty()) return q;
  std::vector<double>& got = steady.empty() ? all : steady;
  q.unstable = steady.empty() ? 0 : q.ok - static_cast<int>(steady.size());
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
    Ratio q = ratio(f);
    std::optional<double> m = median_of(f.values);
    int failed = static_cast<int>(f.values.size()) - q.ok;
    if (!m || q.ok == 0) {
      std::printf("    vs %-17s %9s  ratio     -\n", f.name.c_str(), "failed");
      continue;
    }
    std::printf("    vs %-17s %9.3f  ratio %5.2f", f.name.c_str(), *m, q.median);
    if (f.values.size() > 1) std::printf(" (%.2f..%.2f)", q.min, q.max);
    if (failed > 0) std::printf("  [%d of %zu runs failed]", failed, f.values.size());
    if (q.unstable > 0) std::printf("  [%d of %d left out: speed changed]", q.unstable, q.ok);
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
    Ratio q = ratio(f);
    nlohmann::json values = nlohmann::json::array(), ratios = nlohmann::json::array();
    for (auto& v : f.values) values.push_back(opt_json(v));
    for (auto& v : q.per_rep) ratios.push_back(opt_json(v));
    nlohmann::json jf{{"name", f.name},
                      {"values", values},
                      {"median", opt_json(median_of(f.values))},
                      {"ratios", ratios},
                      {"softndk_before", f.before},
                      {"softndk_after", f.after},
                      {"stable", q.stable},
                      {"unstable_left_out", q.unstable},
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
