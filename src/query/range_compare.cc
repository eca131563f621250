// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/query/range_compare.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "src/analyze/analysis.h"
#include "src/base/time_point.h"
#include "src/model/profile_merge.h"

namespace inferscope::query {

void AddEngineFigures(const telemetry::scrape::EngineMetricsWindow& e, analyze::ProfileFigures* f) {
  using telemetry::scrape::CounterSignal;
  using telemetry::scrape::Stage;
  if (e.has_counter(CounterSignal::kGenerationTokens)) {
    f->generation_tokens = e.counter(CounterSignal::kGenerationTokens);
    f->generation_tokens_per_s = e.Rate(CounterSignal::kGenerationTokens);
  }
  for (size_t i = 0; i < telemetry::scrape::kStageCount; ++i) {
    const Stage s = static_cast<Stage>(i);
    if (!e.has_stage(s) || !e.stage(s).has_buckets()) continue;
    for (auto [name, q] : {std::pair{"p50", 0.5}, std::pair{"p90", 0.9}, std::pair{"p99", 0.99}})
      if (auto v = e.stage(s).Quantile(q))
        f->stage_latency_ms[std::string(telemetry::scrape::StageName(s)) + "." + name] = *v * 1e3;
  }
}

void AddSpanFigures(const telemetry::otlp::SpanWindow& spans, analyze::ProfileFigures* f) {
  for (size_t i = 0; i < telemetry::otlp::kStageCount; ++i) {
    const auto s = static_cast<telemetry::otlp::Stage>(i);
    const telemetry::otlp::LatencyHistogram& h = spans.stage(s);
    if (h.count() == 0) continue;
    for (auto [name, q] : {std::pair{"p50", 0.5}, std::pair{"p90", 0.9}, std::pair{"p99", 0.99}})
      f->stage_latency_ms.try_emplace(std::string(telemetry::otlp::StageName(s)) + "." + name,
                                      static_cast<double>(h.PercentileNs(q)) / 1e6);
  }
  if (!f->generation_tokens && spans.completion_tokens > 0)
    f->generation_tokens = static_cast<double>(spans.completion_tokens);
}

analyze::ProfileFigures SliceFigures(const std::vector<const model::ProfileWindow*>& windows,
                                     int64_t bin_ns) {
  analyze::AnalysisOptions options;
  options.top = kDiffTopK;
  options.bin_ns = bin_ns;
  std::vector<analyze::AnalysisInput> inputs;
  for (const model::ProfileWindow* w : windows) inputs.push_back({"", "", w});
  return analyze::FiguresFromAnalysis(analyze::Analyze(inputs, options));
}

base::StatusOr<analyze::ComparisonSide> LoadRangeSide(store::SqliteStore& store,
                                                      const RangeQuery& range, size_t max_slices,
                                                      const std::string& source) {
  RangeQuery query = range;
  query.top = kDiffTopK;
  ASSIGN_OR_RETURN(RangeProfile profile, QueryRangeProfile(store, query, source));
  if (profile.windows == 0)
    return base::NotFoundError("no profile windows between " +
                               base::FormatLocalTime(query.from_ns) + " and " +
                               base::FormatLocalTime(query.to_ns) + " in " + store.path());
  analyze::ComparisonSide side;
  side.label =
      "store " + base::FormatLocalTime(query.from_ns) + " .. " + base::FormatLocalTime(query.to_ns);
  side.whole = analyze::FiguresFromAnalysis(profile.analysis);
  if (const auto* e = profile.telemetry.Get<telemetry::scrape::EngineMetricsWindow>())
    AddEngineFigures(*e, &side.whole);
  if (const auto* s = profile.telemetry.Get<telemetry::otlp::SpanWindow>())
    AddSpanFigures(*s, &side.whole);

  store::WindowQuery wq = query.Windows();
  ASSIGN_OR_RETURN(store::QueryResult result, store.QueryWindows(wq));
  // Windows of all processes that start together form one slice; past max_slices, neighbouring
  // starts share a slice.
  std::map<int64_t, std::vector<store::StoredWindow*>> by_start;
  for (store::StoredWindow& w : result.windows) by_start[w.window.start_ns].push_back(&w);
  const size_t groups = by_start.size();
  const size_t slices = std::min(groups, max_slices);
  std::vector<std::map<int64_t, model::ProfileWindow>> merged(slices);  // per process row
  std::vector<std::pair<int64_t, int64_t>> bounds(slices, {INT64_MAX, INT64_MIN});
  model::MergeOptions merge;
  merge.top_k = kDiffTopK;
  size_t g = 0;
  int64_t bin_ns = 0;
  for (auto& [start, windows] : by_start) {
    const size_t slice = g++ * slices / groups;
    for (store::StoredWindow* w : windows) {
      model::MergeWindow(w->window, &merged[slice][w->process_id], merge);
      bounds[slice].first = std::min(bounds[slice].first, w->window.start_ns);
      bounds[slice].second = std::max(bounds[slice].second, w->window.end_ns);
      for (const model::ProcessProfile& p : w->window.processes)
        for (const model::DeviceProfile& d : p.devices)
          if (bin_ns == 0 && d.timeline.bin_ns > 0) bin_ns = d.timeline.bin_ns;
    }
  }
  if (bin_ns == 0) bin_ns = 100'000'000;
  // Engine metrics per slice, from the records whose start falls in the slice.
  std::vector<std::optional<telemetry::scrape::EngineMetricsWindow>> engine(slices);
  auto records = store.QueryTelemetry(telemetry::scrape::EngineMetricsKind().record_kind(),
                                      query.from_ns, query.to_ns);
  if (records.ok()) {
    for (const store::TelemetryRecord& r : *records) {
      for (size_t i = 0; i < slices; ++i) {
        if (r.start_ns < bounds[i].first || r.start_ns >= bounds[i].second) continue;
        auto e = telemetry::scrape::EngineMetricsWindow::FromJson(r.json);
        if (!e.ok()) break;
        if (engine[i])
          engine[i]->Merge(*e);
        else
          engine[i] = std::move(e).value();
        break;
      }
    }
  }
  for (size_t i = 0; i < slices; ++i) {
    std::vector<const model::ProfileWindow*> parts;
    for (const auto& [id, w] : merged[i]) parts.push_back(&w);
    if (parts.empty()) continue;
    analyze::ProfileFigures f = SliceFigures(parts, bin_ns);
    if (engine[i]) AddEngineFigures(*engine[i], &f);
    side.slices.push_back(std::move(f));
  }
  side.slice_kind = groups > slices ? std::to_string(slices) + " slices of " +
                                          std::to_string(groups) + " stored windows"
                                    : std::to_string(slices) + " stored windows";
  return side;
}

}  // namespace inferscope::query
