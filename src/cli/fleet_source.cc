// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/fleet_source.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/analyze/analysis.h"
#include "src/base/time_point.h"
#include "src/fleet/query/fleet_profile.h"
#include "src/model/profile_merge.h"
#include "src/query/range_query.h"

namespace inferscope::cli {

namespace ch = fleet;

namespace {

// An open-ended range also takes windows stamped a little after "now": other hosts' clocks may
// lead this one's (the local store's open ranges take every later window).
constexpr int64_t kOpenEndSlackNs = 86'400'000'000'000;

std::string Pct(double share) { return fmt::format("{:.1f}%", share * 100); }

std::string MetricText(ch::FleetMetric m, double v) {
  return m == ch::FleetMetric::kStep ? fmt::format("{:.2f} ms", v / 1e6) : Pct(v);
}

}  // namespace

base::StatusOr<std::unique_ptr<FleetSource>> FleetSource::Create(const FleetSourceOptions& o) {
  std::unique_ptr<FleetSource> s(new FleetSource());
  s->options_ = o;
  ASSIGN_OR_RETURN(s->target_, ch::ResolveFleetSource(o.url, o.credentials_path));
  for (const std::string& label : o.labels) {
    const base::Status st = ch::ParseLabel(label, &s->base_.labels);
    if (!st.ok()) return base::InvalidArgumentError("--label: " + st.message());
  }
  if (!ch::ParseGroupBy(o.group_by, &s->base_.group_by))
    return base::InvalidArgumentError("--group-by: want host, model, engine or gpu_model");
  if (!ch::ParseFleetMetric(o.rank_by, &s->base_.rank_by))
    return base::InvalidArgumentError("--rank-by: want idle, communication, sync or step");
  s->base_.exact = o.exact;
  s->base_.top = o.top;
  s->last_ = s->base_;
  return s;
}

std::string FleetSource::Describe() const { return target_.ToUrl(); }

base::StatusOr<std::string> FleetSource::ProfileJson(const mcp::ProfileRequest& request) {
  const int64_t now = options_.now_unix_ns ? options_.now_unix_ns : base::UnixNowNs();
  ASSIGN_OR_RETURN(mcp::ResolvedRange range, mcp::ResolveRange(request.range, now));
  ch::FleetProfileQuery q;
  q.selection = base_;
  q.selection.from_ns = range.from_ns;
  q.selection.to_ns = range.open_ended ? now + kOpenEndSlackNs : range.to_ns;
  if (!request.filters.host.empty()) q.selection.hosts = {request.filters.host};
  q.pid = request.filters.pid;
  q.rank = request.filters.rank;
  q.device = request.filters.device;
  // As the store source: at most the report's default top kernels per rank, merged with the
  // aggregator's top-K (model::MergeOptions) per device.
  const int top = std::min(request.top, query::RangeQuery().top);
  q.top_k = std::max(top, model::MergeOptions().top_k);
  last_ = q.selection;
  const ch::ClickHouseClient client(target_, 60'000);
  auto fleet = ch::QueryFleetProfile(client, q);
  if (!fleet.ok()) {
    const std::string& m = fleet.status().message();
    if (m.find("Code: 81,") != std::string::npos || m.find("Code: 60,") != std::string::npos)
      return base::NotFoundError("no fleet tables in " + target_.database +
                                 " yet: start an agent with --sink " + target_.ToUrl());
    return fleet.status();
  }
  if (fleet->windows == 0)
    return base::NotFoundError(
        "no windows matched the range and filters; widen the range or drop a --host/--label");

  query::RangeProfile profile;
  profile.source = Describe();
  profile.from_ns = range.from_ns;
  profile.open_ended = range.open_ended;
  profile.to_ns = range.open_ended ? now : range.to_ns;
  profile.windows = fleet->windows;
  profile.rows_read = fleet->rows;
  profile.processes = fleet->processes;
  profile.timeline_bin_ns = query::RangeBinNs(profile.to_ns - profile.from_ns);
  analyze::AnalysisOptions options;
  options.top = top;
  std::vector<analyze::AnalysisInput> inputs;
  for (const model::ProfileWindow& w : fleet->slices.at(0))
    inputs.push_back({profile.source, "clickhouse", &w});
  profile.analysis = analyze::Analyze(inputs, options);
  if (!query::HasGpuActivity(profile))
    return base::NotFoundError("no GPU activity matched the range and filters");
  return query::RenderRangeReport(profile, report::ReportFormat::kJson);
}

base::StatusOr<std::vector<context::ExtraSection>> FleetSource::ContextSections() const {
  const ch::ClickHouseClient client(target_, 60'000);
  ASSIGN_OR_RETURN(ch::FleetView view, ch::QueryFleet(client, last_));
  std::vector<context::ExtraSection> out;
  const char* group = ch::GroupByName(last_.group_by);
  const auto& t = view.total;
  context::ExtraSection worst;
  const size_t shown = std::min(last_.top, view.groups.size());
  worst.title = fmt::format("Fleet: worst {}s by {} ({} of {}; shares of summed window spans)",
                            group, ch::FleetMetricName(last_.rank_by), shown, view.groups.size());
  worst.head.push_back(fmt::format(
      "fleet: {} GPUs, {} device windows; idle {}, exposed communication {}, sync waits {}, "
      "mean step {}",
      t.gpus, t.windows, Pct(t.Metric(ch::FleetMetric::kIdle)),
      Pct(t.Metric(ch::FleetMetric::kCommunication)), Pct(t.Metric(ch::FleetMetric::kSync)),
      MetricText(ch::FleetMetric::kStep, t.Metric(ch::FleetMetric::kStep))));
  worst.head.push_back(
      fmt::format("median {}: idle {}, exposed communication {}, sync waits {}, mean step {}",
                  group, Pct(view.median[0]), Pct(view.median[1]), Pct(view.median[2]),
                  MetricText(ch::FleetMetric::kStep, view.median[3])));
  worst.rows.push_back({group, "gpus", "windows", "idle", "exp.comm", "sync", "step"});
  for (size_t i = 0; i < shown; ++i) {
    const ch::FleetGroup& g = view.groups[i];
    worst.rows.push_back({g.key, std::to_string(g.gpus), std::to_string(g.windows),
                          Pct(g.Metric(ch::FleetMetric::kIdle)),
                          Pct(g.Metric(ch::FleetMetric::kCommunication)),
                          Pct(g.Metric(ch::FleetMetric::kSync)),
                          MetricText(ch::FleetMetric::kStep, g.Metric(ch::FleetMetric::kStep))});
  }
  worst.right = {false, true, true, true, true, true, true};
  worst.cut_noun = std::string(group) + "s";
  out.push_back(std::move(worst));

  context::ExtraSection outliers;
  outliers.title = "Fleet outliers (>= 1.5x the median and clearly apart)";
  if (view.groups.size() < 3)
    outliers.head.push_back(fmt::format("(fewer than 3 {}s: no median to stand out from)", group));
  else if (view.outliers.empty())
    outliers.head.push_back("none");
  else
    outliers.rows.push_back({group, "metric", "value", "median"});
  for (const ch::FleetOutlier& o : view.outliers)
    outliers.rows.push_back({o.key, ch::FleetMetricName(o.metric), MetricText(o.metric, o.value),
                             MetricText(o.metric, o.median)});
  outliers.right = {false, false, true, true};
  outliers.cut_noun = "outliers";
  out.push_back(std::move(outliers));
  return out;
}

}  // namespace inferscope::cli
