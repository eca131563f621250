// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/analyze/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "src/base/human_format.h"

namespace inferscope::analyze {
namespace {

// A quantity: how to read it from figures (nullopt = undefined there, e.g. no calls) and how to
// weigh a change of it.
struct MetricDef {
  std::string key, group, label, unit;
  size_t name_size = 0;  // MetricChange::name_size
  Better better = Better::kLower;
  std::function<std::optional<double>(const ProfileFigures&)> value;
  // Impact of a change from `base` to `cand` on this side pair (share of GPU time at stake, or
  // relative latency); compared with the per-kind floor.
  enum class Kind { kShare, kPerToken, kMean, kLatency, kRate } kind = Kind::kShare;
  std::function<double(const ProfileFigures&)> weight;  // kMean: the item's share of GPU time
};

std::optional<double> Ratio(double num, double den) {
  if (!(den > 0)) return std::nullopt;
  return num / den;
}

const ProfileFigures::Timed* Find(const std::map<std::string, ProfileFigures::Timed>& m,
                                  const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

// The three definitions every timed item gets: its share of GPU time (or time per generated
// token) and its mean time per call.
using TimedMap = std::map<std::string, ProfileFigures::Timed> ProfileFigures::*;

void AddTimed(std::vector<MetricDef>* defs, bool per_token, const std::string& group,
              const std::string& name, const std::string& what, TimedMap field, bool with_mean,
              bool zero_when_absent, const char* per = "call") {
  // "attention", "idle host_wait", "stream sync wait": what the rows are called.
  auto time_of = [field, name, zero_when_absent](const ProfileFigures& f) -> std::optional<double> {
    const ProfileFigures::Timed* t = Find(f.*field, name);
    if (!t) return zero_when_absent ? std::optional<double>(0.0) : std::nullopt;
    return static_cast<double>(t->time_ns);
  };
  MetricDef share;
  share.group = group;
  share.name_size = what.size();
  share.better = Better::kLower;
  if (per_token) {
    share.key = group + "." + name + ".per_token";
    share.label = what + " per generated token";
    share.unit = "ns/token";
    share.kind = MetricDef::Kind::kPerToken;
    share.value = [time_of](const ProfileFigures& f) -> std::optional<double> {
      auto t = time_of(f);
      if (!t || !f.generation_tokens) return std::nullopt;
      return Ratio(*t, *f.generation_tokens);
    };
  } else {
    share.key = group + "." + name + ".share";
    share.label = what + ": share of GPU time";
    share.unit = "%";
    share.kind = MetricDef::Kind::kShare;
    share.value = [time_of](const ProfileFigures& f) -> std::optional<double> {
      auto t = time_of(f);
      if (!t || f.span_ns <= 0) return std::nullopt;
      return *t * 100.0 / static_cast<double>(f.span_ns);
    };
  }
  defs->push_back(std::move(share));
  if (!with_mean) return;
  MetricDef mean;
  mean.key = group + "." + name + ".mean";
  mean.group = group;
  mean.label = what + ": mean time per " + per;
  mean.name_size = what.size();
  mean.unit = "ns";
  mean.better = Better::kLower;
  mean.kind = MetricDef::Kind::kMean;
  mean.value = [field, name](const ProfileFigures& f) -> std::optional<double> {
    const ProfileFigures::Timed* t = Find(f.*field, name);
    if (!t || t->count == 0) return std::nullopt;
    return static_cast<double>(t->time_ns) / static_cast<double>(t->count);
  };
  mean.weight = [field, name](const ProfileFigures& f) {
    const ProfileFigures::Timed* t = Find(f.*field, name);
    if (!t || f.span_ns <= 0) return 0.0;
    return static_cast<double>(t->time_ns) / static_cast<double>(f.span_ns);
  };
  defs->push_back(std::move(mean));
}

std::vector<MetricDef> Definitions(const ProfileFigures& a, const ProfileFigures& b, bool per_token,
                                   const CompareOptions& options) {
  std::vector<MetricDef> defs;
  MetricDef busy;
  busy.key = "busy";
  busy.group = "busy";
  busy.label = "GPU busy (% of span)";
  busy.unit = "%";
  busy.better = Better::kHigher;
  busy.kind = MetricDef::Kind::kShare;
  busy.value = [](const ProfileFigures& f) -> std::optional<double> {
    if (f.span_ns <= 0) return std::nullopt;
    return f.busy_ns * 100.0 / static_cast<double>(f.span_ns);
  };
  defs.push_back(std::move(busy));

  if (per_token) {
    MetricDef total;
    total.key = "gpu_time.per_token";
    total.group = "busy";
    total.label = "GPU kernel time per generated token";
    total.unit = "ns/token";
    total.kind = MetricDef::Kind::kPerToken;
    total.value = [](const ProfileFigures& f) -> std::optional<double> {
      if (!f.generation_tokens) return std::nullopt;
      return Ratio(static_cast<double>(f.kernel_time_ns), *f.generation_tokens);
    };
    defs.push_back(std::move(total));
  }

  auto names_with_time = [](const std::map<std::string, ProfileFigures::Timed>& x,
                            const std::map<std::string, ProfileFigures::Timed>& y) {
    std::map<std::string, int64_t> time;
    for (const auto& [name, t] : x) time[name] += t.time_ns;
    for (const auto& [name, t] : y) time[name] += t.time_ns;
    std::vector<std::pair<int64_t, std::string>> out;
    for (const auto& [name, t] : time)
      if (t > 0) out.push_back({t, name});
    std::sort(out.begin(), out.end(), [](const auto& l, const auto& r) {
      return l.first != r.first ? l.first > r.first : l.second < r.second;
    });
    return out;
  };
  for (const auto& [t, name] : names_with_time(a.categories, b.categories))
    AddTimed(&defs, per_token, "category", name, name, &ProfileFigures::categories, true, true);
  int kernels = 0;
  for (const auto& [t, name] : names_with_time(a.kernels, b.kernels)) {
    if (kernels++ >= options.top_kernels) break;
    // A kernel missing from a slice's top list may sit in its tail: undefined there, not zero.
    AddTimed(&defs, per_token, "kernel", name, name, &ProfileFigures::kernels, true, false);
  }
  // Forward phases: a phase's share of GPU time and its GPU time per step. Undefined (not zero)
  // on a side without phase data.
  for (const auto& [t, name] : names_with_time(a.phases, b.phases))
    AddTimed(&defs, per_token, "phase", name, name + " steps", &ProfileFigures::phases, true, false,
             "step");
  for (const auto& [t, name] : names_with_time(a.idle_gaps, b.idle_gaps))
    AddTimed(&defs, per_token, "idle", name, "idle " + name, &ProfileFigures::idle_gaps, false,
             true);
  for (const auto& [t, name] : names_with_time(a.syncs, b.syncs))
    AddTimed(&defs, per_token, "sync", name, name + " sync wait", &ProfileFigures::syncs, false,
             true);

  std::set<std::string> stages;
  for (const auto& [k, v] : a.stage_latency_ms)
    if (b.stage_latency_ms.count(k)) stages.insert(k);
  for (const std::string& stage : stages) {
    MetricDef d;
    d.key = "stage." + stage;
    d.group = "stage";
    d.label = stage + " latency";
    d.unit = "ms";
    d.kind = MetricDef::Kind::kLatency;
    d.value = [stage](const ProfileFigures& f) -> std::optional<double> {
      auto it = f.stage_latency_ms.find(stage);
      if (it == f.stage_latency_ms.end()) return std::nullopt;
      return it->second;
    };
    defs.push_back(std::move(d));
  }
  if (a.generation_tokens_per_s && b.generation_tokens_per_s) {
    MetricDef d;
    d.key = "throughput.generation_tokens_per_s";
    d.group = "throughput";
    d.label = "generated tokens per second";
    d.unit = "tokens/s";
    d.better = Better::kHigher;
    d.kind = MetricDef::Kind::kRate;
    d.value = [](const ProfileFigures& f) { return f.generation_tokens_per_s; };
    defs.push_back(std::move(d));
  }
  return defs;
}

// Slices whose GPU span is under half the median are partial (the trace's first and last
// slices, a window where the process started): their ratios are noisy, so they are left out.
std::vector<const ProfileFigures*> FullSlices(const std::vector<ProfileFigures>& slices) {
  std::vector<int64_t> spans;
  for (const ProfileFigures& s : slices)
    if (s.span_ns > 0) spans.push_back(s.span_ns);
  std::vector<const ProfileFigures*> out;
  if (spans.empty()) return out;
  std::nth_element(spans.begin(), spans.begin() + spans.size() / 2, spans.end());
  const int64_t median = spans[spans.size() / 2];
  for (const ProfileFigures& s : slices)
    if (s.span_ns > 0 && s.span_ns * 2 >= median) out.push_back(&s);
  return out;
}

std::vector<double> SliceValues(const MetricDef& def, const std::vector<const ProfileFigures*>& s) {
  std::vector<double> out;
  for (const ProfileFigures* f : s)
    if (auto v = def.value(*f); v && std::isfinite(*v)) out.push_back(*v);
  return out;
}

}  // namespace

ProfileFigures FiguresFromAnalysis(const Analysis& analysis) {
  ProfileFigures f;
  const JobSummary& s = analysis.summary;
  f.span_ns = s.temporal.span_ns;
  f.busy_ns = s.temporal.busy_ns;
  f.kernel_time_ns = s.kernel_time_ns;
  f.kernel_count = s.kernel_count;
  for (const CategoryRow& c : s.categories) f.categories[c.name] = {c.time_ns, c.count};
  for (const KernelRow& k : s.top_kernels) {
    ProfileFigures::Timed& t = f.kernels[k.display_name.empty() ? k.name : k.display_name];
    t.time_ns += k.total_ns;
    t.count += k.count;
  }
  // Gaps are summed over streams, so their total (the stream idle) can exceed the span; each kind
  // takes its share of the GPU's idle time instead, so that its share of GPU time stays one.
  const double stream_idle_ns = static_cast<double>(StreamIdleNs(s.idle_gaps));
  for (const IdleGapRow& g : s.idle_gaps)
    f.idle_gaps[g.kind] = {
        stream_idle_ns > 0 ? std::llround(static_cast<double>(g.total_ns) *
                                          static_cast<double>(s.temporal.idle_ns) / stream_idle_ns)
                           : 0,
        g.count};
  if (!s.phases.empty()) {
    for (const char* phase : model::kPhaseNames) f.phases[phase] = {};
    for (const PhaseSummaryRow& p : s.phases.phases) f.phases[p.phase] = {p.gpu_time_ns, p.steps};
  }
  for (const RankAnalysis& r : analysis.ranks)
    for (const SyncRow& sync : r.syncs) {
      ProfileFigures::Timed& t = f.syncs[sync.type];
      t.time_ns += sync.total_ns;
      t.count += sync.count;
    }
  // The ranges view (live windows' range tables, or a trace's `--views ranges`), host ranges only:
  // the GPU annotations are spans of the same annotations on the GPU.
  auto range = [](const model::RangeRow& r) {
    return ProfileFigures::Range{r.duration.count, r.duration.total_ns, r.gpu.ops, r.gpu.time_ns};
  };
  for (const model::TraceViews& v : analysis.views) {
    if (!v.selection.ranges) continue;
    for (const model::ProcessViews& p : v.processes) {
      if (p.nvtx_ranges == 0) continue;
      f.has_ranges = true;
      for (const model::RangeRow& r : p.ranges) f.ranges[r.name].Add(range(r));
      f.range_tail.Add(range(p.range_tail));
    }
  }
  return f;
}

namespace {

// The bootstrap seed of one metric: the run's seed mixed with the metric's key (FNV-1a), so a
// metric's interval depends on its own slices only, not on which metrics were compared before it
// (a source with more metrics, e.g. a store with phase data beside a fleet without, must give
// the same interval for the metrics both have).
uint64_t MetricSeed(uint64_t seed, std::string_view key) {
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (const char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

std::pair<double, double> BootstrapMeanDifference(const std::vector<double>& a,
                                                  const std::vector<double>& b, double alpha,
                                                  int samples, uint64_t seed) {
  if (a.empty() || b.empty() || samples <= 0) return {0, 0};
  // mt19937_64's output sequence is specified by the standard; taking indices with a modulo
  // (not uniform_int_distribution, whose algorithm is implementation-defined) keeps the verdicts
  // identical on every platform. The modulo bias is negligible for slice counts.
  std::mt19937_64 rng(seed);
  std::vector<double> diffs(static_cast<size_t>(samples));
  for (double& d : diffs) {
    double sa = 0, sb = 0;
    for (size_t i = 0; i < a.size(); ++i) sa += a[rng() % a.size()];
    for (size_t i = 0; i < b.size(); ++i) sb += b[rng() % b.size()];
    d = sb / static_cast<double>(b.size()) - sa / static_cast<double>(a.size());
  }
  std::sort(diffs.begin(), diffs.end());
  auto at = [&diffs](double q) {
    const double pos = q * static_cast<double>(diffs.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, diffs.size() - 1);
    return diffs[lo] + (diffs[hi] - diffs[lo]) * (pos - static_cast<double>(lo));
  };
  return {at(alpha / 2), at(1 - alpha / 2)};
}

void CompareRanges(const ProfileFigures& a, const ProfileFigures& b, const CompareOptions& options,
                   Comparison* out) {
  if (!a.has_ranges || !b.has_ranges) {
    if (a.has_ranges || b.has_ranges)
      out->notes.push_back(fmt::format(
          "NVTX ranges are not compared: only the {} recorded them (live: run --nvtx; traces: "
          "NVTX or user_annotation ranges)",
          a.has_ranges ? "baseline" : "candidate"));
    return;
  }
  out->ranges_compared = true;
  auto pct = [](int64_t ns, const ProfileFigures& f) {
    return f.span_ns > 0 ? static_cast<double>(ns) * 100.0 / static_cast<double>(f.span_ns) : 0.0;
  };
  std::map<std::string, RangeChange> rows;
  for (const auto& [name, r] : a.ranges) rows[name].baseline = r;
  for (const auto& [name, r] : b.ranges) rows[name].candidate = r;
  std::vector<RangeChange> all;
  bool one_sided = false;
  for (auto& [name, row] : rows) {
    row.name = name;
    const bool in_a = a.ranges.count(name) > 0, in_b = b.ranges.count(name) > 0;
    row.status = in_a && in_b ? "changed" : in_b ? "new" : "gone";
    // A name one side lists may sit in the other side's tail (more names than the table keeps).
    if ((!in_a && a.range_tail.count > 0) || (!in_b && b.range_tail.count > 0)) one_sided = true;
    all.push_back(std::move(row));
  }
  auto magnitude = [](int64_t v) { return v < 0 ? -v : v; };
  std::stable_sort(all.begin(), all.end(), [&](const RangeChange& x, const RangeChange& y) {
    if (magnitude(x.gpu_delta_ns()) != magnitude(y.gpu_delta_ns()))
      return magnitude(x.gpu_delta_ns()) > magnitude(y.gpu_delta_ns());
    return magnitude(x.host_delta_ns()) > magnitude(y.host_delta_ns());
  });
  RangeChange other;
  other.baseline = a.range_tail;
  other.candidate = b.range_tail;
  out->ranges_other_tails = a.range_tail.count > 0 || b.range_tail.count > 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i < options.top_ranges) {
      out->ranges.push_back(std::move(all[i]));
    } else {
      other.baseline.Add(all[i].baseline);
      other.candidate.Add(all[i].candidate);
      ++out->ranges_other_names;
    }
  }
  out->ranges_other = std::move(other);
  auto shares = [&](RangeChange& r) {
    r.baseline_gpu_pct = pct(r.baseline.gpu_time_ns, a);
    r.candidate_gpu_pct = pct(r.candidate.gpu_time_ns, b);
  };
  for (RangeChange& r : out->ranges) shares(r);
  shares(out->ranges_other);
  if (one_sided)
    out->notes.push_back(
        "an NVTX range marked new (gone) may have run on the other side too, in its table's other "
        "row (a range table keeps its top names by host time)");
  const double spans =
      a.span_ns > 0 ? static_cast<double>(b.span_ns) / static_cast<double>(a.span_ns) : 0;
  if (spans < 0.9 || spans > 1.1)
    out->notes.push_back(fmt::format(
        "NVTX range counts and times are totals of each side, whose GPU time differs ({} vs {}): "
        "the JSON's gpu_pct gives each range's GPU time as a share of its side's",
        base::FormatSeconds(static_cast<double>(a.span_ns) / 1e9),
        base::FormatSeconds(static_cast<double>(b.span_ns) / 1e9)));
}

Comparison Compare(const ComparisonSide& baseline, const ComparisonSide& candidate,
                   const CompareOptions& options) {
  Comparison out;
  out.baseline_label = baseline.label;
  out.candidate_label = candidate.label;
  out.baseline_slices = baseline.slice_kind;
  out.candidate_slices = candidate.slice_kind;
  const bool per_token = baseline.whole.generation_tokens && candidate.whole.generation_tokens &&
                         *baseline.whole.generation_tokens > 0 &&
                         *candidate.whole.generation_tokens > 0;
  out.normalization = per_token ? "per_token" : "per_gpu_second";
  if (!per_token)
    out.notes.push_back(
        "GPU times are compared as shares of GPU time and per call: generated-token counts are "
        "not known for both sides");

  const auto base_slices = FullSlices(baseline.slices);
  const auto cand_slices = FullSlices(candidate.slices);
  bool used_fixed = false;
  for (const MetricDef& def : Definitions(baseline.whole, candidate.whole, per_token, options)) {
    const auto b = def.value(baseline.whole);
    const auto c = def.value(candidate.whole);
    if (!b || !c || !std::isfinite(*b) || !std::isfinite(*c)) continue;
    MetricChange m;
    m.key = def.key;
    m.group = def.group;
    m.label = def.label;
    m.name_size = def.name_size;
    m.unit = def.unit;
    m.better = def.better;
    m.baseline = *b;
    m.candidate = *c;
    m.delta = *c - *b;
    m.relative = *b != 0 ? m.delta / std::fabs(*b) : (m.delta == 0 ? 0 : (m.delta > 0 ? 1 : -1));
    switch (def.kind) {
      case MetricDef::Kind::kShare:
        m.impact = std::fabs(m.delta) / 100.0;
        break;
      case MetricDef::Kind::kPerToken: {
        // Per-token time as a share of the baseline's GPU time per token.
        const double gpu_per_token =
            baseline.whole.generation_tokens
                ? static_cast<double>(baseline.whole.span_ns) / *baseline.whole.generation_tokens
                : 0;
        m.impact = gpu_per_token > 0 ? std::fabs(m.delta) / gpu_per_token : 0;
        break;
      }
      case MetricDef::Kind::kMean:
        m.impact = std::fabs(m.relative) *
                   std::max(def.weight(baseline.whole), def.weight(candidate.whole));
        break;
      case MetricDef::Kind::kLatency:
      case MetricDef::Kind::kRate:
        m.impact = std::fabs(m.relative);
        break;
    }
    const bool big_enough =
        def.kind == MetricDef::Kind::kLatency ? std::fabs(m.delta) >= options.min_latency_ms
        : def.kind == MetricDef::Kind::kRate  ? true
                                              : m.impact >= options.min_time_share;

    const std::vector<double> bv = SliceValues(def, base_slices);
    const std::vector<double> cv = SliceValues(def, cand_slices);
    m.baseline_slices = bv.size();
    m.candidate_slices = cv.size();
    if (bv.size() >= options.min_slices && cv.size() >= options.min_slices) {
      m.method = "bootstrap";
      auto [lo, hi] = BootstrapMeanDifference(bv, cv, options.alpha, options.bootstrap_samples,
                                              MetricSeed(options.seed, def.key));
      m.ci_low = lo;
      m.ci_high = hi;
      const bool excludes_zero = (lo > 0 && m.delta > 0) || (hi < 0 && m.delta < 0);
      m.significant = excludes_zero && std::fabs(m.relative) >= options.min_relative && big_enough;
    } else {
      m.method = "fixed_threshold";
      used_fixed = true;
      m.significant =
          std::fabs(m.relative) >= std::max(options.fixed_relative, options.min_relative) &&
          big_enough;
    }
    const bool worse = def.better == Better::kLower ? m.delta > 0 : m.delta < 0;
    m.regression = m.significant && worse;
    m.improvement = m.significant && !worse;
    out.changes.push_back(std::move(m));
  }
  if (!per_token) {
    // Per GPU-second, faster kernels in an unchanged host loop show up as a lower busy share,
    // more idle time and larger shares of the unchanged kernels: only what faster kernels cannot
    // account for is a regression. A share whose own per-call time got worse stays one.
    double faster = 0;
    std::set<std::string> slower_means;
    for (const MetricChange& m : out.changes) {
      if (m.group == "category" && m.unit == "ns" && m.improvement) faster += m.impact;
      if (m.unit == "ns" && m.regression) slower_means.insert(m.key);
    }
    bool any = false;
    for (MetricChange& m : out.changes) {
      if (!m.regression || m.unit != "%") continue;
      const std::string stem = m.key.substr(0, m.key.rfind('.'));
      if (faster >= 0.5 * m.impact && !slower_means.count(stem + ".mean")) {
        m.regression = false;
        m.explained = true;
        any = true;
      }
    }
    if (any)
      out.notes.push_back(
          "a worse share of GPU time (busy, idle, sync, or an unchanged kernel's share) that "
          "faster "
          "kernels account for is marked 'explained', not a regression");
  }
  for (const MetricChange& m : out.changes) out.regression = out.regression || m.regression;
  CompareRanges(baseline.whole, candidate.whole, options, &out);
  if (used_fixed) {
    std::string which;
    if (base_slices.size() < options.min_slices) which = "the baseline";
    if (cand_slices.size() < options.min_slices)
      which += which.empty() ? "the candidate" : " and the candidate";
    out.notes.push_back(fmt::format(
        "changes marked 'fixed' were not judged against a slice-to-slice spread ({}): they "
        "count as significant only past a fixed {:.0f}% change",
        which.empty() ? "too few slices with data for them" : which + " has no per-slice data",
        std::max(options.fixed_relative, options.min_relative) * 100));
  }
  std::stable_sort(out.changes.begin(), out.changes.end(),
                   [](const MetricChange& l, const MetricChange& r) {
                     if (l.significant != r.significant) return l.significant;
                     return l.impact > r.impact;
                   });
  return out;
}

namespace {

// The report's duration style (base::FormatDuration), so a diff row reads like the report rows it
// compares.
std::string Duration(double ns) { return base::FormatSeconds(ns / 1e9); }

std::string Value(double v, const std::string& unit) {
  if (unit == "%") return fmt::format("{:.1f}%", v);
  if (unit == "ns") return Duration(v);
  if (unit == "ns/token") return Duration(v) + "/tok";
  if (unit == "ms") return Duration(v * 1e6);
  if (unit == "tokens/s") return fmt::format("{:.1f} tok/s", v);
  return fmt::format("{:.4g} {}", v, unit);
}

std::string Change(const MetricChange& m) {
  if (m.unit == "%") return fmt::format("{:+.1f} pp", m.delta);
  if (m.baseline == 0) return m.delta == 0 ? "0" : "new";
  return fmt::format("{:+.1f}%", m.relative * 100);
}

std::string Status(const MetricChange& m) {
  if (m.regression) return "REGRESSION";
  if (m.improvement) return "improved";
  if (m.explained) return "explained";
  return "-";
}

std::string Test(const MetricChange& m) {
  if (m.method == "bootstrap")
    return fmt::format("{}/{} slices", m.baseline_slices, m.candidate_slices);
  return "fixed";
}

// Word-wraps `text` to `width` columns, continuation lines indented by `indent` spaces.
std::string Wrap(const std::string& text, size_t width, size_t indent) {
  std::string out, line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = std::string(indent, ' ');
    } else if (!line.empty() && line.size() > indent) {
      line += ' ';
    } else if (!line.empty() && out.empty()) {
      line += ' ';
    }
    line += word;
    start = end + 1;
  }
  return out + line + "\n";
}

std::string Cut(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  return s.substr(0, width - 3) + "...";
}

// A label cut to `width`: the quantity ("...: mean time per call") is never cut; the name loses
// its namespaces first (a kernel's function name says most), then its middle.
std::string CutLabel(const MetricChange& m, size_t width) {
  if (m.label.size() <= width) return m.label;
  const size_t name_size = std::min(m.name_size, m.label.size());
  const std::string quantity = m.label.substr(name_size);
  if (name_size == 0 || quantity.size() + 8 > width) return Cut(m.label, width);
  const size_t budget = width - quantity.size();  // for the name, "..." included
  std::string name = m.label.substr(0, name_size);
  if (size_t colons = name.rfind("::"); colons != std::string::npos && colons + 2 < name.size())
    name = name.substr(colons + 2);
  if (name.size() > budget) {
    const size_t head = (budget - 3) / 3;
    const size_t tail = budget - 3 - head;
    name = name.substr(0, head) + "..." + name.substr(name.size() - tail);
  }
  return name + quantity;
}

void WriteRangeSide(const ProfileFigures::Range& r, double gpu_pct, base::JsonWriter& w) {
  w.BeginObject();
  w.Key("count").UInt(r.count);
  w.Key("host_ns").Int(r.host_ns);
  w.Key("gpu_ops").UInt(r.gpu_ops);
  w.Key("gpu_time_ns").Int(r.gpu_time_ns);
  w.Key("gpu_pct").Double(gpu_pct);
  w.EndObject();
}

void WriteRangeChange(const RangeChange& r, base::JsonWriter& w) {
  w.Key("baseline");
  WriteRangeSide(r.baseline, r.baseline_gpu_pct, w);
  w.Key("candidate");
  WriteRangeSide(r.candidate, r.candidate_gpu_pct, w);
  w.Key("delta").BeginObject();
  w.Key("count").Int(static_cast<int64_t>(r.candidate.count) -
                     static_cast<int64_t>(r.baseline.count));
  w.Key("host_ns").Int(r.host_delta_ns());
  w.Key("gpu_time_ns").Int(r.gpu_delta_ns());
  w.EndObject();
}

// `ranges`: null unless both sides carried range tables (docs/diff.md, "JSON").
void WriteRangesJson(const Comparison& c, base::JsonWriter& w) {
  if (!c.ranges_compared) {
    w.Null();
    return;
  }
  w.BeginObject();
  w.Key("list").BeginArray();
  for (const RangeChange& r : c.ranges) {
    w.BeginObject();
    w.Key("name").String(r.name);
    w.Key("status").String(r.status);
    WriteRangeChange(r, w);
    w.EndObject();
  }
  w.EndArray();
  w.Key("other").BeginObject();
  w.Key("names").UInt(c.ranges_other_names);
  w.Key("tails").Bool(c.ranges_other_tails);
  WriteRangeChange(c.ranges_other, w);
  w.EndObject();
  w.EndObject();
}

// The range table's text (markdown: a table) after the changes.
std::string RenderRanges(const Comparison& c, bool markdown) {
  if (!c.ranges_compared) return "";
  std::string out;
  auto change = [](const RangeChange& r) -> std::string {
    if (r.status == "new" || r.status == "gone") return r.status;
    if (r.baseline.gpu_time_ns == 0) return r.candidate.gpu_time_ns == 0 ? "-" : "new gpu";
    return fmt::format("{:+.0f}%", 100.0 * static_cast<double>(r.gpu_delta_ns()) /
                                       static_cast<double>(r.baseline.gpu_time_ns));
  };
  auto d = [](int64_t ns) { return Duration(static_cast<double>(ns)); };
  auto signed_duration = [&d](int64_t ns) {
    return std::string(ns > 0 ? "+" : ns < 0 ? "-" : "") + d(ns < 0 ? -ns : ns);
  };
  std::vector<std::pair<std::string, const RangeChange*>> rows;
  for (const RangeChange& r : c.ranges) rows.push_back({r.name, &r});
  const RangeChange& o = c.ranges_other;
  if (o.baseline.count > 0 || o.candidate.count > 0)
    rows.push_back({c.ranges_other_names > 0
                        ? fmt::format("other ({} names{})", c.ranges_other_names,
                                      c.ranges_other_tails ? " + tails" : "")
                        : "other (tails)",
                    &o});
  const std::string title =
      "NVTX ranges, largest change of the GPU time launched inside them first (count, host and "
      "GPU time per side; not part of the verdict)";
  if (markdown) {
    out += "\n### " + title + "\n\n";
    if (rows.empty()) return out + "no ranges on either side\n";
    out += "| range | count | host time | GPU time | GPU change | |\n";
    out += "| --- | ---: | ---: | ---: | ---: | --- |\n";
    for (const auto& [name, r] : rows)
      out +=
          fmt::format("| {} | {} → {} | {} → {} | {} → {} | {} | {} |\n", name, r->baseline.count,
                      r->candidate.count, d(r->baseline.host_ns), d(r->candidate.host_ns),
                      d(r->baseline.gpu_time_ns), d(r->candidate.gpu_time_ns),
                      signed_duration(r->gpu_delta_ns()), r == &o ? "" : change(*r));
    return out;
  }
  out += "\n" + Wrap(title, 98, 2);
  if (rows.empty()) return out + "  no ranges on either side\n";
  out += fmt::format("  {:<26} {:>7} {:>7} {:>8} {:>8} {:>8} {:>8} {:>10}\n", "range", "n base",
                     "n cand", "host b.", "host c.", "gpu b.", "gpu c.", "gpu change");
  for (const auto& [name, r] : rows) {
    std::string line = fmt::format("  {:<26} {:>7} {:>7} {:>8} {:>8} {:>8} {:>8} {:>10} {:>6}",
                                   Cut(name, 26), r->baseline.count, r->candidate.count,
                                   d(r->baseline.host_ns), d(r->candidate.host_ns),
                                   d(r->baseline.gpu_time_ns), d(r->candidate.gpu_time_ns),
                                   signed_duration(r->gpu_delta_ns()), r == &o ? "" : change(*r));
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

}  // namespace

void WriteComparisonJson(const Comparison& c, base::JsonWriter& w) {
  w.BeginObject();
  w.Key("regression").Bool(c.regression);
  size_t regressions = 0, improvements = 0;
  for (const MetricChange& m : c.changes) {
    regressions += m.regression;
    improvements += m.improvement;
  }
  w.Key("regressions").UInt(regressions);
  w.Key("improvements").UInt(improvements);
  w.Key("normalization").String(c.normalization);
  auto side = [&w](const char* key, const std::string& label, const std::string& slices) {
    w.Key(key).BeginObject();
    w.Key("label").String(label);
    w.Key("slices").String(slices);
    w.EndObject();
  };
  side("baseline", c.baseline_label, c.baseline_slices);
  side("candidate", c.candidate_label, c.candidate_slices);
  w.Key("notes").BeginArray();
  for (const std::string& n : c.notes) w.String(n);
  w.EndArray();
  w.Key("changes").BeginArray();
  for (const MetricChange& m : c.changes) {
    w.BeginObject();
    w.Key("key").String(m.key);
    w.Key("group").String(m.group);
    w.Key("label").String(m.label);
    w.Key("unit").String(m.unit);
    w.Key("better").String(m.better == Better::kLower ? "lower" : "higher");
    w.Key("baseline").Double(m.baseline);
    w.Key("candidate").Double(m.candidate);
    w.Key("delta").Double(m.delta);
    w.Key("relative").Double(m.relative);
    w.Key("impact").Double(m.impact);
    w.Key("method").String(m.method);
    w.Key("baseline_slices").UInt(m.baseline_slices);
    w.Key("candidate_slices").UInt(m.candidate_slices);
    if (m.method == "bootstrap") {
      w.Key("interval").BeginArray();
      w.Double(m.ci_low);
      w.Double(m.ci_high);
      w.EndArray();
    } else {
      w.Key("interval").Null();
    }
    w.Key("significant").Bool(m.significant);
    w.Key("status").String(m.regression    ? "regression"
                           : m.improvement ? "improvement"
                           : m.explained   ? "explained"
                                           : "not_significant");
    w.EndObject();
  }
  w.EndArray();
  w.Key("ranges");
  WriteRangesJson(c, w);
  w.EndObject();
}

std::string RenderComparison(const Comparison& c, bool markdown, bool all, size_t max_rows) {
  std::string out;
  size_t regressions = 0, improvements = 0;
  for (const MetricChange& m : c.changes) {
    regressions += m.regression;
    improvements += m.improvement;
  }
  const std::string verdict =
      regressions > 0
          ? fmt::format("REGRESSION: {} significant regression{}, {} improvement{}", regressions,
                        regressions == 1 ? "" : "s", improvements, improvements == 1 ? "" : "s")
          : fmt::format("no significant regression ({} improvement{})", improvements,
                        improvements == 1 ? "" : "s");
  auto side = [](const std::string& label, const std::string& slices) {
    return slices.empty() ? label + " (no per-slice data)" : label + " (" + slices + ")";
  };
  if (markdown) {
    out += "# inferscope diff\n\n";
    out += "- baseline: " + side(c.baseline_label, c.baseline_slices) + "\n";
    out += "- candidate: " + side(c.candidate_label, c.candidate_slices) + "\n";
    out += "- normalization: " + c.normalization + "\n\n";
    out += "**" + verdict + "**\n\n";
  } else {
    out += "inferscope diff\n";
    out += "  baseline:  " + side(c.baseline_label, c.baseline_slices) + "\n";
    out += "  candidate: " + side(c.candidate_label, c.candidate_slices) + "\n";
    out += "  normalization: " +
           std::string(c.normalization == "per_token" ? "per generated token"
                                                      : "per GPU-second and per call") +
           "\n\n";
    out += verdict + "\n\n";
  }
  size_t shown = 0, hidden = 0;
  std::vector<const MetricChange*> rows;
  for (const MetricChange& m : c.changes) {
    if (all || m.significant || shown < max_rows) {
      rows.push_back(&m);
      ++shown;
    } else {
      ++hidden;
    }
  }
  if (markdown) {
    out += "| status | quantity | baseline | candidate | change | judged by |\n";
    out += "| --- | --- | ---: | ---: | ---: | --- |\n";
    for (const MetricChange* m : rows)
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", Status(*m), m->label,
                         Value(m->baseline, m->unit), Value(m->candidate, m->unit), Change(*m),
                         Test(*m));
  } else {
    out += fmt::format("  {:<10}  {:<38} {:>11} {:>11} {:>9}  {}\n", "status", "quantity",
                       "baseline", "candidate", "change", "judged by");
    for (const MetricChange* m : rows)
      out += fmt::format("  {:<10}  {:<38} {:>11} {:>11} {:>9}  {}\n", Status(*m), CutLabel(*m, 38),
                         Value(m->baseline, m->unit), Value(m->candidate, m->unit), Change(*m),
                         Test(*m));
  }
  if (hidden > 0)
    out += fmt::format("{}({} smaller changes not shown; --all lists them)\n",
                       markdown ? "\n" : "  ", hidden);
  out += RenderRanges(c, markdown);
  if (!c.notes.empty()) {
    out += "\n";
    for (const std::string& n : c.notes)
      out += markdown ? "- note: " + n + "\n" : Wrap("note: " + n, 98, 6);
  }
  return out;
}

}  // namespace inferscope::analyze
