// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/fleet/query/fleet_query.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>

#include "src/analyze/analysis.h"
#include "src/base/human_format.h"
#include "src/base/json_writer.h"
#include "src/fleet/sink/schema.h"
#include "src/model/profile_merge.h"
#include "src/model/taxonomy.h"
#include "src/report/document.h"
#include "src/report/phases_json.h"
#include "src/report/ranges_json.h"
#include "src/report/views.h"

namespace inferscope::fleet {
namespace {

constexpr FleetMetric kMetrics[] = {FleetMetric::kIdle, FleetMetric::kCommunication,
                                    FleetMetric::kSync, FleetMetric::kStep};

// A group is an outlier on a metric when it is at least this many times the fleet median and
// clearly apart in absolute terms (shares: 5 percentage points; steps: 1 ms), so a fleet of
// near-zero values does not flag noise.
// The text width of the sections src/report lays out (the store report's default).
constexpr int kTextWidth = 100;
constexpr double kOutlierRatio = 1.5;
constexpr double kOutlierShareGap = 0.05;
constexpr double kOutlierStepGapNs = 1e6;

template <typename T>
bool ParseNumber(const std::string& s, T* out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string Percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", share * 100);
  return buf;
}

std::string MetricText(FleetMetric m, double v) {
  if (m != FleetMetric::kStep) return Percent(v);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f ms", v / 1e6);
  return buf;
}

}  // namespace

bool ParseGroupBy(std::string_view text, GroupBy* out) {
  static const std::pair<const char*, GroupBy> kNames[] = {{"host", GroupBy::kHost},
                                                           {"model", GroupBy::kModel},
                                                           {"engine", GroupBy::kEngine},
                                                           {"gpu_model", GroupBy::kGpuModel}};
  for (const auto& [name, g] : kNames)
    if (text == name) {
      *out = g;
      return true;
    }
  return false;
}

const char* GroupByName(GroupBy g) {
  switch (g) {
    case GroupBy::kHost:
      return "host";
    case GroupBy::kModel:
      return "model";
    case GroupBy::kEngine:
      return "engine";
    case GroupBy::kGpuModel:
      return "gpu_model";
  }
  return "host";
}

bool ParseFleetMetric(std::string_view text, FleetMetric* out) {
  for (FleetMetric m : kMetrics)
    if (text == FleetMetricName(m)) {
      *out = m;
      return true;
    }
  return false;
}

const char* FleetMetricName(FleetMetric m) {
  switch (m) {
    case FleetMetric::kIdle:
      return "idle";
    case FleetMetric::kCommunication:
      return "communication";
    case FleetMetric::kSync:
      return "sync";
    case FleetMetric::kStep:
      return "step";
  }
  return "idle";
}

double FleetGroup::Metric(FleetMetric m) const {
  switch (m) {
    case FleetMetric::kIdle:
      return Share(idle_ns);
    case FleetMetric::kCommunication:
      return Share(exposed_communication_ns);
    case FleetMetric::kSync:
      return Share(sync_wait_ns);
    case FleetMetric::kStep:
      return step_count ? static_cast<double>(step_total_ns) / static_cast<double>(step_count) : 0;
  }
  return 0;
}

std::string SqlQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string FleetWhereSql(const FleetQuery& q, bool overlap) {
  std::string where = overlap ? "window_end_ns > " + std::to_string(q.from_ns) +
                                    " AND window_start_ns < " + std::to_string(q.to_ns)
                              : "window_start_ns >= " + std::to_string(q.from_ns) +
                                    " AND window_start_ns < " + std::to_string(q.to_ns);
  // The date bounds let ClickHouse skip whole daily partitions. A window overlapping the range
  // may start the day before it (windows are far shorter than a day).
  const int64_t from_s = q.from_ns / 1'000'000'000 - (overlap ? 86'400 : 0);
  where += " AND date >= toDate(" + std::to_string(std::max<int64_t>(0, from_s)) +
           ") AND date <= toDate(" + std::to_string(q.to_ns / 1'000'000'000) + ")";
  if (!q.hosts.empty()) {
    where += " AND host IN (";
    for (size_t i = 0; i < q.hosts.size(); ++i) where += (i ? ", " : "") + SqlQuote(q.hosts[i]);
    where += ")";
  }
  for (const auto& [k, v] : q.labels)
    where += " AND label_values[indexOf(label_keys, " + SqlQuote(k) + ")] = " + SqlQuote(v);
  return where;
}

std::string FleetGroupsSql(const std::string& database, const FleetQuery& q) {
  const std::string where = FleetWhereSql(q, false);
  // Per GPU first, as the store's range merge sees a GPU: its span runs from its first activity
  // in the range to its last (the gaps between its windows are idle), so a group's idle share is
  // the one `report` and `context` of the same host show. Rows of agents older than the
  // first/last-activity columns (they read 0) fall back to their summed window spans.
  // FINAL (--exact, the audit) collapses same-key rows no merge has collapsed yet.
  const std::string per_gpu =
      std::string("SELECT ") + GroupByName(q.group_by) +
      " AS grp, count() AS c_rows, sum(span_ns) AS c_span, "
      "minIf(first_start_ns, last_end_ns > 0) AS c_first, max(last_end_ns) AS c_last, "
      "countIf(last_end_ns = 0 AND span_ns > 0) AS c_nobounds, sum(busy_ns) AS c_busy, "
      "sum(exposed_communication_ns) AS c_comm, sum(sync_wait_ns) AS c_sync, "
      "sum(step_count) AS c_steps, sum(step_total_ns) AS c_step_ns, "
      "sum(kernel_count) AS c_kernels FROM " +
      database + "." + kWindowsTable + (q.exact ? " FINAL" : "") + " WHERE " + where +
      " GROUP BY grp, host, pid, process_start_ns, device";
  const char* range_span = "if(c_nobounds = 0 AND c_last > 0, c_last - c_first, c_span)";
  return std::string("SELECT grp, sum(c_rows), count(), sum(") + range_span +
         "), sum(c_busy), sum(" + range_span +
         " - c_busy), sum(c_comm), sum(c_sync), sum(c_steps), sum(c_step_ns), sum(c_kernels) "
         "FROM (" +
         per_gpu + ") GROUP BY grp ORDER BY grp FORMAT TabSeparated";
}

std::string FleetPhasesSql(const std::string& database, const FleetQuery& q, bool categories) {
  const std::string from =
      " FROM " + database + "." + kPhasesTable + (q.exact ? " FINAL" : "") +
      (categories ? " ARRAY JOIN categories AS category, category_ns AS ns" : "") + " WHERE " +
      FleetWhereSql(q, false);
  const std::string head = std::string("SELECT ") + GroupByName(q.group_by) + " AS grp, phase";
  if (categories)
    return head + ", category, sum(ns)" + from +
           " GROUP BY grp, phase, category ORDER BY grp, phase, category FORMAT TabSeparated";
  return head + ", sum(steps), sum(step_ns), sum(busy_ns), sum(ops)" + from +
         " GROUP BY grp, phase ORDER BY grp, phase FORMAT TabSeparated";
}

namespace {

// The index of a phase row's phase in model::kPhaseNames, -1 for the outside row (the work of
// steps not whole), -2 for a phase this build does not know.
int PhaseIndex(const std::string& name) {
  if (name == kOutsidePhase) return -1;
  for (size_t p = 0; p < model::kPhaseCount; ++p)
    if (name == model::kPhaseNames[p]) return static_cast<int>(p);
  return -2;
}

}  // namespace

RowFold FoldPhaseRow(const std::vector<std::string>& row, size_t at, model::PhaseSplit* split) {
  if (row.size() < at + 5) return RowFold::kBadNumber;
  const int ph = PhaseIndex(row[at]);
  if (ph < -1) return RowFold::kUnknownName;
  model::PhaseSplit in;
  model::PhaseStats p;
  if (!ParseNumber(row[at + 1], &p.steps) || !ParseNumber(row[at + 2], &p.step_ns) ||
      !ParseNumber(row[at + 3], &p.busy_ns) || !ParseNumber(row[at + 4], &p.ops))
    return RowFold::kBadNumber;
  if (ph < 0)
    in.outside_ops = p.ops;
  else
    in.phases[static_cast<size_t>(ph)] = p;
  split->Merge(in);
  return RowFold::kFolded;
}

RowFold FoldPhaseCategoryRow(const std::vector<std::string>& row, size_t at,
                             model::PhaseSplit* split) {
  if (row.size() < at + 3) return RowFold::kBadNumber;
  const int ph = PhaseIndex(row[at]);
  model::Category c;
  if (ph < -1 || !model::ParseCategory(row[at + 1], &c)) return RowFold::kUnknownName;
  int64_t ns = 0;
  if (!ParseNumber(row[at + 2], &ns)) return RowFold::kBadNumber;
  model::PhaseSplit in;
  const auto ci = static_cast<size_t>(c);
  if (ph < 0)
    in.outside_ns[ci] = ns;
  else
    in.phases[static_cast<size_t>(ph)].category_ns[ci] = ns;
  split->Merge(in);
  return RowFold::kFolded;
}

RowFold FoldRangeRow(const std::vector<std::string>& row, size_t at, model::RangeTable* table) {
  if (row.size() < at + 10) return RowFold::kBadNumber;
  model::RangeStats r;
  uint64_t tail_names = 0, late = 0;
  int is_tail = 0;
  if (!ParseNumber(row[at], &is_tail) || !ParseNumber(row[at + 2], &r.duration.count) ||
      !ParseNumber(row[at + 3], &r.duration.total_ns) ||
      !ParseNumber(row[at + 4], &r.duration.min_ns) ||
      !ParseNumber(row[at + 5], &r.duration.max_ns) || !ParseNumber(row[at + 6], &r.gpu_ops) ||
      !ParseNumber(row[at + 7], &r.gpu_time_ns) || !ParseNumber(row[at + 8], &tail_names) ||
      !ParseNumber(row[at + 9], &late))
    return RowFold::kBadNumber;
  // No instance: the min a DurationStats starts with (the rows write min_or_zero).
  if (r.duration.count == 0) r.duration.min_ns = model::DurationStats().min_ns;
  if (!is_tail) {
    r.name = row[at + 1];
    table->rows.push_back(std::move(r));
    return RowFold::kFolded;
  }
  model::RangeTable in;
  in.tail = std::move(r);
  in.tail_names = tail_names;
  in.late = late;
  table->Merge(in, std::numeric_limits<size_t>::max());  // no cut yet: the caller's Trim
  return RowFold::kFolded;
}

std::string FleetRangesSql(const std::string& database, const FleetQuery& q) {
  return std::string("SELECT ") + GroupByName(q.group_by) +
         " AS grp, is_tail, name, sum(instances), sum(total_ns), minIf(min_ns, instances > 0), "
         "max(max_ns), sum(gpu_ops), sum(gpu_time_ns), sum(tail_names), sum(late) FROM " +
         database + "." + kRangesTable + (q.exact ? " FINAL" : "") + " WHERE " +
         FleetWhereSql(q, false) +
         " GROUP BY grp, is_tail, name ORDER BY grp, is_tail, name FORMAT TabSeparated";
}

namespace {

// The group of `key` in `view`, null when the groups query had none (a row of a group whose
// windows the first query did not see).
FleetGroup* FindGroup(FleetView* view, const std::string& key) {
  for (FleetGroup& g : view->groups)
    if (g.key == key) return &g;
  return nullptr;
}

// A statement's failure because `table` does not exist (Code 60): a database of an older schema.
bool MissingTable(const base::StatusOr<std::string>& answer, const char* table) {
  return !answer.ok() && answer.status().message().find("Code: 60,") != std::string::npos &&
         answer.status().message().find(table) != std::string::npos;
}

// Adds the groups' NVTX range tables (FleetRangesSql), each cut to the aggregator's top K by
// host time as the store's range merge cuts a process's (model::RangeTable::Trim).
base::Status AddRanges(const ClickHouseClient& client, const FleetQuery& q, FleetView* view) {
  auto answer = client.Execute(FleetRangesSql(client.target().database, q));
  if (MissingTable(answer, kRangesTable)) {
    view->no_ranges_table = true;
    return base::OkStatus();
  }
  ASSIGN_OR_RETURN(std::string body, std::move(answer));
  ASSIGN_OR_RETURN(auto rows, ParseTabSeparated(body));
  for (const auto& row : rows) {
    if (row.size() != 11)
      return base::DataLossError(client.target().ToUrl() + ": unexpected ranges answer");
    FleetGroup* g = FindGroup(view, row[0]);
    if (g && FoldRangeRow(row, 1, &g->ranges) == RowFold::kBadNumber)
      return base::DataLossError(client.target().ToUrl() + ": unexpected number in answer");
  }
  const auto top = static_cast<size_t>(model::MergeOptions().top_k);
  for (FleetGroup& g : view->groups) {
    g.ranges.Trim(top, /*sort=*/true);
    view->total.ranges.Merge(g.ranges, top);
  }
  return base::OkStatus();
}

// Adds the groups' forward phases (FleetPhasesSql) to `view`'s groups and total. A database
// without the phases table (schema 3: no agent of schema 4 has run on it) has none.
base::Status AddPhases(const ClickHouseClient& client, const FleetQuery& q, FleetView* view) {
  auto answer = client.Execute(FleetPhasesSql(client.target().database, q, false));
  if (MissingTable(answer, kPhasesTable)) {
    view->no_phases_table = true;
    return base::OkStatus();
  }
  for (bool categories : {false, true}) {
    if (categories) answer = client.Execute(FleetPhasesSql(client.target().database, q, true));
    ASSIGN_OR_RETURN(std::string body, std::move(answer));
    ASSIGN_OR_RETURN(auto rows, ParseTabSeparated(body));
    for (const auto& row : rows) {
      FleetGroup* g = FindGroup(view, row[0]);
      if (!g) continue;
      const RowFold f =
          categories ? FoldPhaseCategoryRow(row, 1, &g->phases) : FoldPhaseRow(row, 1, &g->phases);
      if (f == RowFold::kBadNumber)
        return base::DataLossError(client.target().ToUrl() + ": unexpected phases answer");
    }
  }
  for (const FleetGroup& g : view->groups) view->total.phases.Merge(g.phases);
  return base::OkStatus();
}

}  // namespace

base::StatusOr<FleetView> QueryFleet(const ClickHouseClient& client, const FleetQuery& q) {
  ASSIGN_OR_RETURN(std::string body, client.Execute(FleetGroupsSql(client.target().database, q)));
  ASSIGN_OR_RETURN(auto rows, ParseTabSeparated(body));
  FleetView view;
  view.total.key = "fleet";
  for (const auto& row : rows) {
    if (row.size() != 11)
      return base::DataLossError(client.target().ToUrl() + ": unexpected answer (" +
                                 std::to_string(row.size()) + " columns)");
    FleetGroup g;
    g.key = row[0];
    bool ok = ParseNumber(row[1], &g.windows) && ParseNumber(row[2], &g.gpus) &&
              ParseNumber(row[3], &g.span_ns) && ParseNumber(row[4], &g.busy_ns) &&
              ParseNumber(row[5], &g.idle_ns) && ParseNumber(row[6], &g.exposed_communication_ns) &&
              ParseNumber(row[7], &g.sync_wait_ns) && ParseNumber(row[8], &g.step_count) &&
              ParseNumber(row[9], &g.step_total_ns) && ParseNumber(row[10], &g.kernel_count);
    if (!ok) return base::DataLossError(client.target().ToUrl() + ": unexpected number in answer");
    view.total.windows += g.windows;
    view.total.gpus += g.gpus;
    view.total.span_ns += g.span_ns;
    view.total.busy_ns += g.busy_ns;
    view.total.idle_ns += g.idle_ns;
    view.total.exposed_communication_ns += g.exposed_communication_ns;
    view.total.sync_wait_ns += g.sync_wait_ns;
    view.total.step_count += g.step_count;
    view.total.step_total_ns += g.step_total_ns;
    view.total.kernel_count += g.kernel_count;
    view.groups.push_back(std::move(g));
  }
  for (FleetMetric m : kMetrics) {
    std::vector<double> values;
    for (const FleetGroup& g : view.groups) values.push_back(g.Metric(m));
    const double median = Median(values);
    view.median[static_cast<int>(m)] = median;
    const double gap = m == FleetMetric::kStep ? kOutlierStepGapNs : kOutlierShareGap;
    for (const FleetGroup& g : view.groups) {
      const double v = g.Metric(m);
      if (view.groups.size() >= 3 && v >= median * kOutlierRatio && v - median >= gap)
        view.outliers.push_back({g.key, m, v, median});
    }
  }
  std::stable_sort(view.groups.begin(), view.groups.end(),
                   [&](const FleetGroup& a, const FleetGroup& b) {
                     return a.Metric(q.rank_by) > b.Metric(q.rank_by);
                   });
  if (!view.groups.empty()) {
    RETURN_IF_ERROR(AddPhases(client, q, &view));
    RETURN_IF_ERROR(AddRanges(client, q, &view));
  }
  return view;
}

std::string RenderFleetText(const FleetView& view, const FleetQuery& q, const std::string& url,
                            const analyze::Analysis* kernels) {
  std::string out = "Fleet " + url + ": " + std::to_string(view.total.gpus) + " GPUs, " +
                    std::to_string(view.groups.size()) + " " + GroupByName(q.group_by) +
                    (view.groups.size() == 1 ? "" : "s") + ", " +
                    std::to_string(view.total.windows) + " device windows\n";
  out += "fleet: idle " + Percent(view.total.Share(view.total.idle_ns)) +
         ", exposed communication " +
         Percent(view.total.Share(view.total.exposed_communication_ns)) + ", sync waits " +
         Percent(view.total.Share(view.total.sync_wait_ns)) + ", mean step " +
         MetricText(FleetMetric::kStep, view.total.Metric(FleetMetric::kStep)) + "\n\n";
  const size_t shown = std::min(q.top, view.groups.size());
  out += "Worst " + std::to_string(shown) + " by " + FleetMetricName(q.rank_by) + ":\n";
  char line[512];
  std::snprintf(line, sizeof(line), "  %-24s %6s %9s %7s %9s %7s %10s\n", GroupByName(q.group_by),
                "gpus", "windows", "idle", "exp.comm", "sync", "step");
  out += line;
  for (size_t i = 0; i < shown; ++i) {
    const FleetGroup& g = view.groups[i];
    std::snprintf(line, sizeof(line), "  %-24.24s %6llu %9llu %7s %9s %7s %10s\n", g.key.c_str(),
                  static_cast<unsigned long long>(g.gpus),
                  static_cast<unsigned long long>(g.windows),
                  Percent(g.Metric(FleetMetric::kIdle)).c_str(),
                  Percent(g.Metric(FleetMetric::kCommunication)).c_str(),
                  Percent(g.Metric(FleetMetric::kSync)).c_str(),
                  MetricText(FleetMetric::kStep, g.Metric(FleetMetric::kStep)).c_str());
    out += line;
  }
  if (view.outliers.empty()) {
    out += "\nNo outliers against the fleet median.\n";
  } else {
    out += "\nOutliers against the fleet median (>= 1.5x and clearly apart):\n";
    for (const FleetOutlier& o : view.outliers)
      out += "  " + o.key + ": " + FleetMetricName(o.metric) + " " + MetricText(o.metric, o.value) +
             " (median " + MetricText(o.metric, o.median) + ")\n";
  }
  // The store report's "Forward phases" section (src/report renders it), for the whole selection
  // when it has more than one group and each listed group: only when some window had whole steps.
  if (!view.total.phases.empty()) {
    std::vector<report::GroupPhases> groups;
    if (view.groups.size() > 1) groups.push_back({"(fleet)", analyze::Phases(view.total.phases)});
    for (size_t i = 0; i < shown; ++i)
      if (!view.groups[i].phases.empty())
        groups.push_back({view.groups[i].key, analyze::Phases(view.groups[i].phases)});
    out += "\n" + report::RenderSectionText(
                      report::GroupPhasesSection(GroupByName(q.group_by), groups), kTextWidth);
  }
  // The store report's NVTX range table (`run --nvtx`), per listed group: only when some process
  // had one.
  if (!view.total.ranges.empty()) {
    std::vector<report::GroupRanges> groups;
    for (size_t i = 0; i < shown; ++i) {
      const model::RangeTable& t = view.groups[i].ranges;
      if (t.empty()) continue;
      report::GroupRanges& g = groups.emplace_back();
      g.key = view.groups[i].key;
      for (const model::RangeStats& r : t.rows) g.rows.push_back(analyze::RangeRowOf(r));
      g.tail = analyze::RangeRowOf(t.tail);
      g.tail_names = t.tail.duration.count > 0 ? t.tail_names : 0;
    }
    out += "\n" + report::RenderSectionText(
                      report::GroupRangesSection(GroupByName(q.group_by), groups), kTextWidth);
  }
  if (kernels) {
    // The store report's kernels view, of the selection's GPUs taken as one.
    out +=
        "\nKernels of the selection's GPUs summed as one (--views kernels; launch "
        "configurations merged across windows and hosts):\n";
    report::Document doc;
    report::AppendViewSections(*kernels, &doc);
    for (const report::Section& section : doc.sections)
      out += "\n" + report::RenderSectionText(section, kTextWidth);
  }
  return out;
}

std::string RenderFleetJson(const FleetView& view, const FleetQuery& q, const std::string& url,
                            const analyze::Analysis* kernels) {
  base::JsonWriter w;
  auto group = [&](const FleetGroup& g) {
    w.BeginObject();
    w.Key("key").String(g.key);
    w.Key("gpus").UInt(g.gpus);
    w.Key("windows").UInt(g.windows);
    w.Key("span_ns").Int(g.span_ns);
    w.Key("busy_ns").Int(g.busy_ns);
    w.Key("idle_ns").Int(g.idle_ns);
    w.Key("exposed_communication_ns").Int(g.exposed_communication_ns);
    w.Key("sync_wait_ns").Int(g.sync_wait_ns);
    w.Key("step_count").UInt(g.step_count);
    w.Key("step_total_ns").Int(g.step_total_ns);
    w.Key("kernel_count").UInt(g.kernel_count);
    w.Key("idle_share").Double(g.Metric(FleetMetric::kIdle));
    w.Key("exposed_communication_share").Double(g.Metric(FleetMetric::kCommunication));
    w.Key("sync_wait_share").Double(g.Metric(FleetMetric::kSync));
    w.Key("mean_step_ns").Double(g.Metric(FleetMetric::kStep));
    // As a report's `phases` (docs/report-schema.md), summed over the group's GPUs.
    w.Key("phases");
    report::WritePhasesJson(w, analyze::Phases(g.phases));
    // The group's NVTX ranges as the store report's range table (views `ranges`, one writer):
    // live-window durations (count, total, mean, min, max; order statistics null), the GPU work
    // inside them, the tail, and `late`.
    const model::RangeTable& t = g.ranges;
    std::vector<model::RangeRow> rows;
    rows.reserve(t.rows.size());
    for (const model::RangeStats& r : t.rows) rows.push_back(analyze::RangeRowOf(r));
    w.Key("ranges").BeginObject();
    report::WriteRangeTableFields(w, t.instances(), rows, t.tail_names, analyze::RangeRowOf(t.tail),
                                  /*exact=*/false);
    w.Key("late").UInt(t.late);
    w.EndObject();
    w.EndObject();
  };
  w.BeginObject();
  w.Key("source").String(url);
  w.Key("from_ns").Int(q.from_ns);
  w.Key("to_ns").Int(q.to_ns);
  w.Key("group_by").String(GroupByName(q.group_by));
  w.Key("rank_by").String(FleetMetricName(q.rank_by));
  w.Key("total");
  group(view.total);
  w.Key("groups").BeginArray();
  for (const FleetGroup& g : view.groups) group(g);
  w.EndArray();
  w.Key("median").BeginObject();
  for (FleetMetric m : kMetrics) w.Key(FleetMetricName(m)).Double(view.median[static_cast<int>(m)]);
  w.EndObject();
  w.Key("outliers").BeginArray();
  for (const FleetOutlier& o : view.outliers) {
    w.BeginObject();
    w.Key("key").String(o.key);
    w.Key("metric").String(FleetMetricName(o.metric));
    w.Key("value").Double(o.value);
    w.Key("median").Double(o.median);
    w.EndObject();
  }
  w.EndArray();
  if (kernels) {
    w.Key("views");
    report::WriteViewsJson(w, *kernels);
  }
  w.EndObject();
  return w.str() + "\n";
}

base::StatusOr<std::vector<std::vector<std::string>>> ParseTabSeparated(std::string_view body) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool any = false;  // the current line has content
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '\\') {
      if (++i >= body.size()) return base::DataLossError("TabSeparated: escape at the end");
      switch (body[i]) {
        case 't':
          field += '\t';
          break;
        case 'n':
          field += '\n';
          break;
        case 'r':
          field += '\r';
          break;
        case 'b':
          field += '\b';
          break;
        case 'f':
          field += '\f';
          break;
        case '0':
          field += '\0';
          break;
        case 'N':  // \N is NULL; the fleet queries select no Nullable columns
          break;
        case '\\':
        case '\'':
        case '"':
          field += body[i];
          break;
        default:
          return base::DataLossError(
              "TabSeparated: unknown escape \\" +
              std::string(1, std::isprint(static_cast<unsigned char>(body[i])) ? body[i] : '?'));
      }
      any = true;
    } else if (c == '\t') {
      row.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n') {
      row.push_back(std::move(field));
      field.clear();
      if (!rows.empty() && row.size() != rows.front().size())
        return base::DataLossError("TabSeparated: row " + std::to_string(rows.size() + 1) +
                                   " has " + std::to_string(row.size()) + " fields, not " +
                                   std::to_string(rows.front().size()));
      rows.push_back(std::move(row));
      row.clear();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (any) return base::DataLossError("TabSeparated: last row not terminated");
  return rows;
}

}  // namespace inferscope::fleet
