// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agent/range_query.h"

#include <algorithm>
#include <map>
#include <vector>

#include "src/model/profile_merge.h"

namespace inferscope::agent {
namespace {

// Keeps only device `device` of every process; drops processes left without devices.
void KeepDevice(uint32_t device, model::ProfileWindow* w) {
  for (model::ProcessProfile& p : w->processes)
    std::erase_if(p.devices, [&](const model::DeviceProfile& d) { return d.device != device; });
  std::erase_if(w->processes, [](const model::ProcessProfile& p) { return p.devices.empty(); });
}

// Merges every record of `kind` in the range into `out` (created by the first one).
template <typename Window>
base::Status MergeTelemetry(SqliteStore& store, const char* kind, const RangeQuery& query,
                            std::optional<Window>* out, RangeProfile* profile) {
  ASSIGN_OR_RETURN(std::vector<TelemetryRecord> records,
                   store.QueryTelemetry(kind, query.from_ns, query.to_ns));
  for (const TelemetryRecord& r : records) {
    auto w = Window::FromJson(r.json);
    if (!w.ok()) {
      ++profile->corrupt_telemetry;
      continue;
    }
    ++profile->telemetry_windows;
    if (out->has_value())
      (*out)->Merge(*w);
    else
      *out = std::move(w).value();
  }
  return base::OkStatus();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

base::StatusOr<RangeProfile> QueryRangeProfile(SqliteStore& store, const RangeQuery& query,
                                               const std::string& source) {
  WindowQuery window_query;
  window_query.from_ns = query.from_ns;
  window_query.to_ns = query.to_ns;
  window_query.pid = query.pid;
  window_query.rank = query.rank;
  ASSIGN_OR_RETURN(QueryResult result, store.QueryWindows(window_query));

  RangeProfile out;
  out.corrupt_windows = result.corrupt_windows;
  model::MergeOptions merge;
  merge.top_k = std::max(query.top, merge.top_k);
  std::map<int64_t, model::ProfileWindow> merged;  // by process row
  std::map<int64_t, size_t> window_counts;
  for (StoredWindow& stored : result.windows) {
    if (query.device) KeepDevice(*query.device, &stored.window);
    if (stored.window.processes.empty()) continue;
    model::MergeWindow(stored.window, &merged[stored.process_id], merge);
    ++window_counts[stored.process_id];
    ++out.windows;
  }
  out.processes = merged.size();
  RETURN_IF_ERROR(MergeTelemetry(store, "gpu", query, &out.gpu, &out));
  RETURN_IF_ERROR(MergeTelemetry(store, "engine", query, &out.engine, &out));
  RETURN_IF_ERROR(MergeTelemetry(store, "spans", query, &out.spans, &out));
  if (merged.empty()) return out;

  analyze::AnalysisOptions options;
  options.top = query.top;
  options.bin_ns = 0;
  for (const auto& [id, w] : merged)
    for (const model::ProcessProfile& p : w.processes)
      for (const model::DeviceProfile& d : p.devices)
        if (options.bin_ns == 0 && d.timeline.bin_ns > 0) options.bin_ns = d.timeline.bin_ns;
  if (options.bin_ns == 0) options.bin_ns = 100'000'000;
  std::vector<analyze::AnalysisInput> inputs;
  for (const auto& [id, w] : merged)
    inputs.push_back(
        {source, "inferscope_store, " + std::to_string(window_counts[id]) + " windows", &w});
  out.analysis = analyze::Analyze(inputs, options);
  return out;
}

std::string RenderRangeReport(const RangeProfile& profile, report::ReportFormat format) {
  report::ReportExtras extras;
  if (profile.gpu) {
    std::string text;
    RenderGpuMetricsText(*profile.gpu, &text);
    extras.sections.push_back({"GPU metrics (NVML, same range)", Lines(text)});
  }
  if (profile.engine) {
    std::string text;
    scrape::RenderEngineMetricsText(*profile.engine, &text);
    extras.sections.push_back({"Engine load and stage latency (Prometheus metrics)", Lines(text)});
  }
  if (profile.spans) {
    std::string text;
    otlp::RenderSpanText(*profile.spans, &text);
    extras.sections.push_back({"Requests (OpenTelemetry spans)", Lines(text)});
  }
  extras.json = [&profile](base::JsonWriter& w) {
    auto section = [&w](const char* key, const auto& window) {
      w.Key(key);
      if (window)
        window->WriteJson(w);
      else
        w.Null();
    };
    section("gpu_metrics", profile.gpu);
    section("engine", profile.engine);
    section("requests", profile.spans);
  };
  return report::Render(profile.analysis, format, extras);
}

}  // namespace inferscope::agent
