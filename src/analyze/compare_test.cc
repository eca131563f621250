// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/analyze/compare.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "src/base/human_format.h"

namespace inferscope::analyze {
namespace {

// One slice of a synthetic serving loop: `attention_ns` and `matmul_ns` per 10 ms of span, each
// call jittered by `jitter` (relative, uniform).
ProfileFigures Slice(std::mt19937_64& rng, double attention_call_ns, double jitter) {
  std::uniform_real_distribution<double> u(1 - jitter, 1 + jitter);
  ProfileFigures f;
  f.span_ns = 10'000'000;
  int64_t att = 0, mm = 0;
  for (int i = 0; i < 40; ++i) att += static_cast<int64_t>(attention_call_ns * u(rng));
  for (int i = 0; i < 40; ++i) mm += static_cast<int64_t>(80'000 * u(rng));
  f.categories["attention"] = {att, 40};
  f.categories["matmul"] = {mm, 40};
  f.kernels["flash_fwd_kernel"] = {att, 40};
  f.kernels["sm90_gemm"] = {mm, 40};
  f.kernel_time_ns = att + mm;
  f.busy_ns = std::min<int64_t>(f.kernel_time_ns, f.span_ns);
  f.idle_gaps["host_wait"] = {f.span_ns - f.busy_ns, 40};
  return f;
}

ProfileFigures Sum(const std::vector<ProfileFigures>& slices) {
  ProfileFigures w;
  for (const ProfileFigures& s : slices) {
    w.span_ns += s.span_ns;
    w.busy_ns += s.busy_ns;
    w.kernel_time_ns += s.kernel_time_ns;
    for (auto m :
         {&ProfileFigures::categories, &ProfileFigures::kernels, &ProfileFigures::idle_gaps})
      for (const auto& [k, t] : s.*m) {
        (w.*m)[k].time_ns += t.time_ns;
        (w.*m)[k].count += t.count;
      }
  }
  return w;
}

ComparisonSide Side(uint64_t seed, double attention_call_ns, double jitter, int slices = 30) {
  std::mt19937_64 rng(seed);
  ComparisonSide side;
  side.label = "synthetic";
  side.slice_kind = "slices";
  for (int i = 0; i < slices; ++i) side.slices.push_back(Slice(rng, attention_call_ns, jitter));
  side.whole = Sum(side.slices);
  return side;
}

const MetricChange* Find(const Comparison& c, const std::string& key) {
  for (const MetricChange& m : c.changes)
    if (m.key == key) return &m;
  return nullptr;
}

TEST(CompareTest, InjectedSlowdownIsARegression) {
  const Comparison c = Compare(Side(1, 100'000, 0.2), Side(2, 130'000, 0.2), {});
  EXPECT_TRUE(c.regression);
  const MetricChange* m = Find(c, "category.attention.mean");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->regression);
  EXPECT_EQ(m->method, "bootstrap");
  EXPECT_NEAR(m->relative, 0.30, 0.03);
  EXPECT_GT(m->ci_low, 0);
  // The untouched category does not move.
  const MetricChange* mm = Find(c, "category.matmul.mean");
  ASSERT_NE(mm, nullptr);
  EXPECT_FALSE(mm->significant);
  // Significant changes come first.
  EXPECT_TRUE(c.changes.front().significant);
  EXPECT_EQ(c.normalization, "per_gpu_second");
}

TEST(CompareTest, PureNoiseIsQuietOverSeeds) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const Comparison c =
        Compare(Side(seed * 2 + 100, 100'000, 0.3), Side(seed * 2 + 101, 100'000, 0.3), {});
    EXPECT_FALSE(c.regression) << "seed " << seed << "\n" << RenderComparison(c, false, true);
  }
}

TEST(CompareTest, SpeedupIsAnImprovementNotARegression) {
  const Comparison c = Compare(Side(1, 130'000, 0.1), Side(2, 100'000, 0.1), {});
  EXPECT_FALSE(c.regression);
  const MetricChange* m = Find(c, "category.attention.mean");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->improvement);
}

TEST(CompareTest, WithoutSlicesAFixedThresholdApplies) {
  ComparisonSide a = Side(1, 100'000, 0.1), b = Side(2, 115'000, 0.1);
  a.slices.clear();
  a.slice_kind.clear();
  Comparison c = Compare(a, b, {});
  const MetricChange* m = Find(c, "category.attention.mean");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->method, "fixed_threshold");
  EXPECT_FALSE(m->significant);  // +15% < the fixed 20%
  ASSERT_FALSE(c.notes.empty());
  EXPECT_NE(c.notes.back().find("fixed 20%"), std::string::npos) << c.notes.back();

  b = Side(2, 130'000, 0.1);
  c = Compare(a, b, {});
  m = Find(c, "category.attention.mean");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->regression);
}

TEST(CompareTest, TinyButConsistentChangeIsBelowTheMinimumEffect) {
  // 3% slower with almost no jitter: statistically clear, but under the 10% minimum effect.
  const Comparison c = Compare(Side(1, 100'000, 0.001), Side(2, 103'000, 0.001), {});
  const MetricChange* m = Find(c, "category.attention.mean");
  ASSERT_NE(m, nullptr);
  EXPECT_GT(m->ci_low, 0);
  EXPECT_FALSE(m->significant);
  EXPECT_FALSE(c.regression);
}

TEST(CompareTest, PerTokenNormalizationWhenBothSidesHaveTokens) {
  ComparisonSide a = Side(1, 100'000, 0.1), b = Side(2, 100'000, 0.1);
  a.whole.generation_tokens = 1000;
  b.whole.generation_tokens = 700;  // same GPU time for fewer tokens: worse per token
  const Comparison c = Compare(a, b, {});
  EXPECT_EQ(c.normalization, "per_token");
  const MetricChange* m = Find(c, "category.attention.per_token");
  ASSERT_NE(m, nullptr);
  EXPECT_NEAR(m->relative, 1000.0 / 700 - 1, 0.05);
  EXPECT_EQ(m->method, "fixed_threshold");  // slices carry no token counts
  EXPECT_TRUE(m->regression);
}

TEST(CompareTest, StageLatencyAndThroughput) {
  ComparisonSide a = Side(1, 100'000, 0.1), b = Side(2, 100'000, 0.1);
  a.whole.stage_latency_ms["ttft.p90"] = 120;
  b.whole.stage_latency_ms["ttft.p90"] = 180;
  a.whole.stage_latency_ms["e2e.p50"] = 1000;  // only on one side: not compared
  a.whole.generation_tokens_per_s = 2000;
  b.whole.generation_tokens_per_s = 1500;
  const Comparison c = Compare(a, b, {});
  const MetricChange* ttft = Find(c, "stage.ttft.p90");
  ASSERT_NE(ttft, nullptr);
  EXPECT_TRUE(ttft->regression);
  EXPECT_EQ(Find(c, "stage.e2e.p50"), nullptr);
  const MetricChange* tput = Find(c, "throughput.generation_tokens_per_s");
  ASSERT_NE(tput, nullptr);
  EXPECT_TRUE(tput->regression);  // lower throughput is worse
}

TEST(CompareTest, BootstrapIsDeterministicAndCoversTheTruth) {
  std::vector<double> a, b;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> n(0, 1);
  for (int i = 0; i < 40; ++i) a.push_back(10 + n(rng));
  for (int i = 0; i < 40; ++i) b.push_back(12 + n(rng));
  auto [lo, hi] = BootstrapMeanDifference(a, b, 0.01, 2000, 1);
  auto again = BootstrapMeanDifference(a, b, 0.01, 2000, 1);
  EXPECT_EQ(lo, again.first);
  EXPECT_EQ(hi, again.second);
  EXPECT_LT(lo, 2.0);
  EXPECT_GT(hi, 2.0);
  EXPECT_GT(lo, 1.0);  // the difference is clear
}

TEST(CompareTest, RenderingNamesTheRegression) {
  const Comparison c = Compare(Side(1, 100'000, 0.2), Side(2, 130'000, 0.2), {});
  const std::string text = RenderComparison(c, false, false);
  EXPECT_NE(text.find("REGRESSION"), std::string::npos) << text;
  EXPECT_NE(text.find("attention: mean time per call"), std::string::npos) << text;
  for (size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    EXPECT_LE(end - start, 100u) << text.substr(start, end - start);
  }
  const std::string md = RenderComparison(c, true, false);
  EXPECT_NE(md.find("| REGRESSION | attention: mean time per call |"), std::string::npos) << md;
  base::JsonWriter w;
  WriteComparisonJson(c, w);
  EXPECT_NE(w.str().find("\"regression\": true"), std::string::npos) << w.str();
  EXPECT_NE(w.str().find("\"key\": \"category.attention.mean\""), std::string::npos);
}

// One duration style. The diff prints durations as the report does
// (base::FormatDuration: three significant digits), not its own "100.3 us".
TEST(CompareTest, DurationsInTheReportsStyle) {
  const Comparison c = Compare(Side(1, 100'000, 0.2), Side(2, 130'000, 0.2), {});
  const MetricChange* mean = Find(c, "category.attention.mean");
  ASSERT_NE(mean, nullptr);
  ASSERT_EQ(mean->unit, "ns");
  const std::string text = RenderComparison(c, false, true);
  const std::string baseline = base::FormatSeconds(mean->baseline / 1e9);
  const std::string candidate = base::FormatSeconds(mean->candidate / 1e9);
  EXPECT_EQ(baseline.size(), std::string("100 us").size()) << baseline;  // three digits, no more
  EXPECT_NE(text.find(baseline), std::string::npos) << baseline << "\n" << text;
  EXPECT_NE(text.find(candidate), std::string::npos) << candidate << "\n" << text;
  EXPECT_EQ(text.find(fmt::format("{:.1f} us", mean->baseline / 1e3)), std::string::npos) << text;
}

// `diff` cut "<long kernel name>: mean time per call" at 38 columns, losing which
// quantity changed. The name is cut (in its middle), the quantity never.
TEST(CompareTest, LongNamesAreCutNotTheQuantity) {
  const std::string name = "vllm::fused_add_rms_norm_kernel_with_a_long_suffix";
  auto rename = [&](ComparisonSide side) {
    for (ProfileFigures* f : {&side.whole}) f->kernels[name] = f->kernels["flash_fwd_kernel"];
    for (ProfileFigures& f : side.slices) f.kernels[name] = f.kernels["flash_fwd_kernel"];
    return side;
  };
  const Comparison c = Compare(rename(Side(1, 100'000, 0.2)), rename(Side(2, 130'000, 0.2)), {});
  const MetricChange* mean = Find(c, "kernel." + name + ".mean");
  ASSERT_NE(mean, nullptr);
  ASSERT_TRUE(mean->regression);
  EXPECT_EQ(mean->label.substr(0, mean->name_size), name);
  const std::string text = RenderComparison(c, false, false);
  // 18 columns left for the name beside ": mean time per call": namespaces go, then the middle.
  const std::string want_mean = "  fused...ong_suffix: mean time per call  ";
  const std::string want_share = "  fused...long_suffix: share of GPU time  ";
  EXPECT_NE(text.find(want_mean), std::string::npos) << text;
  EXPECT_NE(text.find(want_share), std::string::npos) << text;
  for (size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    EXPECT_LE(end - start, 100u) << text.substr(start, end - start);
  }
  // Markdown has room: the whole label.
  EXPECT_NE(RenderComparison(c, true, false).find(name + ": mean time per call"),
            std::string::npos);
}

}  // namespace
}  // namespace inferscope::analyze

namespace inferscope::analyze {
namespace {

// Forward phases in the diff: a phase's share of GPU time and its GPU time per step, from an
// analysis of windows with phase data; a side without phase data compares no phase.
TEST(CompareTest, PhaseSplitIsCompared) {
  auto window = [](int64_t prefill_step_ns, bool with_phases) {
    model::ProfileWindow w;
    w.end_ns = 1'000'000'000;
    model::ProcessProfile& p = w.processes.emplace_back();
    p.pid = 1;
    model::DeviceProfile& d = p.devices.emplace_back();
    d.first_start_ns = 0;
    d.last_end_ns = 1'000'000'000;
    d.busy_ns = 900'000'000;
    d.kernel_count = 1000;
    d.categories[static_cast<size_t>(model::Category::kMatmul)] = {1000, 800'000'000};
    if (with_phases) {
      model::PhaseStats& prefill = d.phases.phases[static_cast<size_t>(model::Phase::kPrefill)];
      prefill.steps = 10;
      prefill.category_ns[static_cast<size_t>(model::Category::kMatmul)] = 10 * prefill_step_ns;
      model::PhaseStats& decode = d.phases.phases[static_cast<size_t>(model::Phase::kDecode)];
      decode.steps = 100;
      decode.category_ns[static_cast<size_t>(model::Category::kMatmul)] = 300'000'000;
    }
    return w;
  };
  auto side = [](const model::ProfileWindow& w) {
    ComparisonSide s;
    s.label = "window";
    s.whole = FiguresFromAnalysis(Analyze({{"w", "inferscope_store", &w}}, {}));
    return s;
  };
  const model::ProfileWindow base = window(20'000'000, true);
  const model::ProfileWindow slower = window(40'000'000, true);
  const model::ProfileWindow none = window(20'000'000, false);
  const ComparisonSide a = side(base);
  ASSERT_EQ(a.whole.phases.size(), 4u);
  EXPECT_EQ(a.whole.phases.at("prefill").time_ns, 200'000'000);
  EXPECT_EQ(a.whole.phases.at("prefill").count, 10u);
  EXPECT_EQ(a.whole.phases.at("mixed").count, 0u);

  const Comparison c = Compare(a, side(slower), {});
  const MetricChange* m = Find(c, "phase.prefill.mean");
  ASSERT_NE(m, nullptr) << RenderComparison(c, false, true);
  EXPECT_EQ(m->label, "prefill steps: mean time per step");
  EXPECT_DOUBLE_EQ(m->baseline, 20'000'000);
  EXPECT_DOUBLE_EQ(m->candidate, 40'000'000);
  EXPECT_TRUE(m->regression);
  EXPECT_NE(Find(c, "phase.prefill.share"), nullptr);
  const MetricChange* decode = Find(c, "phase.decode.mean");
  ASSERT_NE(decode, nullptr);
  EXPECT_FALSE(decode->significant);
  EXPECT_EQ(Find(c, "phase.mixed.share"), nullptr);  // no time on either side

  const Comparison without = Compare(a, side(none), {});
  for (const MetricChange& change : without.changes) EXPECT_NE(change.group, "phase") << change.key;
}

}  // namespace
}  // namespace inferscope::analyze

namespace inferscope::analyze {
namespace {

// NVTX ranges in the diff: from an analysis of live windows' range tables (RangeViewsOf), every
// name of either side, the largest |GPU time change| first, new / gone for names on one side, the
// top-K + tail rule (the rest and both sides' own tails in one other row), text and JSON; not part
// of the verdict.
TEST(CompareTest, RangeTablesAreCompared) {
  auto window = [](std::vector<std::tuple<std::string, uint64_t, int64_t, int64_t>> rows,
                   model::RangeStats tail) {
    model::ProfileWindow w;
    w.end_ns = 1'000'000'000;
    model::ProcessProfile& p = w.processes.emplace_back();
    p.pid = 1;
    model::DeviceProfile& d = p.devices.emplace_back();
    d.first_start_ns = 0;
    d.last_end_ns = 1'000'000'000;
    d.busy_ns = 900'000'000;
    d.kernel_count = 1000;
    d.categories[static_cast<size_t>(model::Category::kMatmul)] = {1000, 800'000'000};
    for (const auto& [name, count, host_ns, gpu_ns] : rows) {
      model::RangeStats& r = p.ranges.rows.emplace_back();
      r.name = name;
      r.duration.count = count;
      r.duration.total_ns = host_ns;
      r.gpu_ops = count * 2;
      r.gpu_time_ns = gpu_ns;
    }
    p.ranges.tail = tail;
    p.ranges.tail_names = tail.duration.count > 0 ? 3 : 0;
    return w;
  };
  auto side = [](const model::ProfileWindow& w) {
    ComparisonSide s;
    s.label = "window";
    s.whole = FiguresFromAnalysis(Analyze({{"w", "inferscope_store", &w}}, {}));
    return s;
  };
  model::RangeStats tail;
  tail.duration.count = 7;
  tail.duration.total_ns = 70;
  tail.gpu_time_ns = 700;
  const model::ProfileWindow base = window({{"forward", 100, 5'000'000, 400'000'000},
                                            {"sample", 100, 1'000'000, 10'000'000},
                                            {"prepare_inputs", 100, 2'000'000, 0}},
                                           tail);
  const model::ProfileWindow cand = window({{"forward", 100, 5'000'000, 600'000'000},
                                            {"sample", 100, 1'000'000, 12'000'000},
                                            {"spec_decode", 50, 3'000'000, 50'000'000}},
                                           {});
  const ComparisonSide a = side(base);
  ASSERT_TRUE(a.whole.has_ranges);
  EXPECT_EQ(a.whole.ranges.at("forward").gpu_time_ns, 400'000'000);
  EXPECT_EQ(a.whole.ranges.at("forward").gpu_ops, 200u);
  EXPECT_EQ(a.whole.range_tail.count, 7u);

  CompareOptions options;
  options.top_ranges = 2;
  const Comparison c = Compare(a, side(cand), options);
  ASSERT_TRUE(c.ranges_compared);
  ASSERT_EQ(c.ranges.size(), 2u);
  EXPECT_EQ(c.ranges[0].name, "forward");  // +200 ms of GPU time
  EXPECT_EQ(c.ranges[0].status, "changed");
  EXPECT_EQ(c.ranges[0].gpu_delta_ns(), 200'000'000);
  EXPECT_DOUBLE_EQ(c.ranges[0].baseline_gpu_pct, 40.0);
  EXPECT_EQ(c.ranges[1].name, "spec_decode");  // +50 ms
  EXPECT_EQ(c.ranges[1].status, "new");
  EXPECT_EQ(c.ranges[1].baseline.count, 0u);
  // sample (+2 ms) and prepare_inputs (gone, no GPU time) and the baseline's tail: other.
  EXPECT_EQ(c.ranges_other_names, 2u);
  EXPECT_EQ(c.ranges_other.baseline.count, 207u);
  EXPECT_EQ(c.ranges_other.baseline.gpu_time_ns, 10'000'700);
  EXPECT_EQ(c.ranges_other.candidate.count, 100u);
  // The candidate's missing names may be in the baseline's tail: said once.
  size_t notes = 0;
  for (const std::string& n : c.notes) notes += n.find("may have run on the other side") != n.npos;
  EXPECT_EQ(notes, 1u);
  // Ranges alone decide nothing.
  for (const MetricChange& m : c.changes) EXPECT_NE(m.group, "range") << m.key;

  const std::string text = RenderComparison(c, false, false);
  EXPECT_NE(text.find("NVTX ranges, largest change"), std::string::npos) << text;
  EXPECT_NE(text.find("other (2 names + tails)"), std::string::npos) << text;
  EXPECT_LT(text.find("  forward "), text.find("  spec_decode ")) << text;
  base::JsonWriter w;
  WriteComparisonJson(c, w);
  EXPECT_NE(w.str().find("\"gpu_pct\": 40.0"), std::string::npos) << w.str();
  EXPECT_NE(w.str().find("\"status\": \"new\""), std::string::npos) << w.str();

  // All listed with the default K; gone with no GPU time last.
  const Comparison all = Compare(a, side(cand), {});
  ASSERT_EQ(all.ranges.size(), 4u);
  EXPECT_EQ(all.ranges[3].name, "prepare_inputs");
  EXPECT_EQ(all.ranges[3].status, "gone");

  // One side without a range table: no table, a note; JSON null.
  model::ProfileWindow plain = base;
  plain.processes[0].ranges = {};
  const Comparison none = Compare(side(plain), side(cand), {});
  EXPECT_FALSE(none.ranges_compared);
  EXPECT_TRUE(none.ranges.empty());
  base::JsonWriter nw;
  WriteComparisonJson(none, nw);
  EXPECT_NE(nw.str().find("\"ranges\": null"), std::string::npos) << nw.str();
  bool noted = false;
  for (const std::string& n : none.notes) noted = noted || n.find("only the candidate") != n.npos;
  EXPECT_TRUE(noted);
}

// Gaps summed over two streams idle at once are twice the GPU's idle time: each kind's share of
// GPU time is its part of the idle time, never above it (it read 250% on HTA trace_diff control).
TEST(CompareTest, IdleGapSharesStayWithinTheIdleTime) {
  model::ProfileWindow w;
  w.end_ns = 1'000'000'000;
  model::ProcessProfile& p = w.processes.emplace_back();
  p.pid = 1;
  model::DeviceProfile& d = p.devices.emplace_back();
  d.first_start_ns = 0;
  d.last_end_ns = 1'000'000'000;
  d.busy_ns = 600'000'000;
  d.compute_ns = d.busy_ns;
  d.kernel_count = 1000;
  d.categories[static_cast<size_t>(model::Category::kMatmul)] = {1000, 600'000'000};
  for (int i = 0; i < 2; ++i) {  // two streams, each idle 400 ms
    d.idle_gaps.host_wait.Add(300'000'000);
    d.idle_gaps.other.Add(100'000'000);
  }
  ComparisonSide s;
  s.label = "window";
  s.whole = FiguresFromAnalysis(Analyze({{"w", "inferscope_store", &w}}, {}));
  EXPECT_EQ(s.whole.idle_gaps.at("host_wait").time_ns, 300'000'000);  // 75% of 400 ms
  EXPECT_EQ(s.whole.idle_gaps.at("other").time_ns, 100'000'000);
  EXPECT_EQ(s.whole.idle_gaps.at("host_wait").count, 2u);
  const Comparison c = Compare(s, s, {});
  const MetricChange* m = Find(c, "idle.host_wait.share");
  ASSERT_NE(m, nullptr);
  EXPECT_DOUBLE_EQ(m->baseline, 30);
}

}  // namespace
}  // namespace inferscope::analyze
