// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/diff_command.h"

#include <fmt/format.h>
#include <simdjson.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <tuple>
#include <utility>

#include "src/analyze/analysis.h"
#include "src/base/human_format.h"
#include "src/base/state_dir.h"
#include "src/base/time_point.h"
#include "src/cli/cli_voice.h"
#include "src/cli/exit_codes.h"
#include "src/cli/fleet_diff.h"
#include "src/context/report_view.h"
#include "src/fleet/query/fleet_profile.h"
#include "src/model/profile_merge.h"
#include "src/model/taxonomy.h"
#include "src/pipeline/trace_pipeline.h"
#include "src/query/range_compare.h"
#include "src/query/range_query.h"
#include "src/store/sqlite_store.h"
#include "src/telemetry/otlp/span_window.h"
#include "src/telemetry/scrape/engine_window.h"

namespace inferscope::cli {
namespace {

namespace dom = simdjson::dom;
using analyze::ComparisonSide;
using analyze::ProfileFigures;

using query::AddEngineFigures;
using query::AddSpanFigures;
using query::kDiffTopK;

std::string Duration(int64_t ns) { return base::FormatDuration(ns); }

// ---- Traces: imported in base windows, coarsened into at most max_slices slices ----

// Folds a trace's windows (in time order) into equal slices, doubling the slice width whenever
// there would be more than `max_slices`, so memory stays bounded whatever the trace length.
class SliceCollector {
 public:
  SliceCollector(int64_t width_ns, size_t max_slices) : width_ns_(width_ns), max_(max_slices) {
    merge_.top_k = kDiffTopK;
  }

  void Add(model::ProfileWindow&& w) {
    if (w.processes.empty()) return;
    if (slices_.empty()) origin_ns_ = w.start_ns;
    const int64_t offset = std::max<int64_t>(w.start_ns - origin_ns_, 0);
    size_t index = static_cast<size_t>(offset / width_ns_);
    while (index >= max_) {
      Coarsen();
      index = static_cast<size_t>(offset / width_ns_);
    }
    if (index >= slices_.size()) slices_.resize(index + 1);
    model::MergeWindow(w, &slices_[index], merge_);
  }

  std::vector<model::ProfileWindow>& slices() { return slices_; }
  int64_t width_ns() const { return width_ns_; }

 private:
  void Coarsen() {
    std::vector<model::ProfileWindow> coarse((slices_.size() + 1) / 2);
    for (size_t i = 0; i < slices_.size(); ++i)
      if (!slices_[i].processes.empty()) model::MergeWindow(slices_[i], &coarse[i / 2], merge_);
    slices_ = std::move(coarse);
    width_ns_ *= 2;
  }

  int64_t width_ns_;
  size_t max_;
  int64_t origin_ns_ = 0;
  model::MergeOptions merge_;
  std::vector<model::ProfileWindow> slices_;
};

ProfileFigures Figures(const std::vector<const model::ProfileWindow*>& windows, int64_t bin_ns) {
  return query::SliceFigures(windows, bin_ns);
}

base::StatusOr<ComparisonSide> LoadTraces(const std::vector<std::string>& files,
                                          const DiffOptions& options, std::string* failed_path,
                                          std::ostream& err) {
  model::KernelClassifier classifier;
  if (!options.rules_path.empty()) {
    *failed_path = options.rules_path;
    RETURN_IF_ERROR(classifier.LoadRuleFile(options.rules_path));
  }
  pipeline::TraceOptions import_options;
  import_options.top = kDiffTopK;
  import_options.bin_ns = options.base_slice_ns;
  import_options.progress = options.verbose || options.progress;
  import_options.window_ranges = true;  // NVTX / annotation ranges, compared as a table
  std::vector<SliceCollector> collectors;
  for (const std::string& file : files) {
    *failed_path = file;
    collectors.emplace_back(options.base_slice_ns, options.max_slices);
    SliceCollector& collector = collectors.back();
    RETURN_IF_ERROR(pipeline::ImportTraceFile(
                        file, import_options, classifier, options.base_slice_ns,
                        [&collector](model::ProfileWindow&& w) { collector.Add(std::move(w)); },
                        err)
                        .status());
  }
  ComparisonSide side;
  side.label = files.size() == 1 ? "trace " + files[0]
                                 : fmt::format("{} traces ({}, ...)", files.size(), files[0]);
  model::MergeOptions merge;
  merge.top_k = kDiffTopK;
  std::vector<model::ProfileWindow> wholes(collectors.size());
  size_t slice_count = 0;
  int64_t width_ns = 0;
  for (size_t i = 0; i < collectors.size(); ++i) {
    for (const model::ProfileWindow& s : collectors[i].slices())
      if (!s.processes.empty()) model::MergeWindow(s, &wholes[i], merge);
    slice_count = std::max(slice_count, collectors[i].slices().size());
    width_ns = std::max(width_ns, collectors[i].width_ns());
  }
  std::vector<const model::ProfileWindow*> whole_ptrs;
  for (const model::ProfileWindow& w : wholes)
    if (!w.processes.empty()) whole_ptrs.push_back(&w);
  if (whole_ptrs.empty()) {
    *failed_path = files[0];
    return base::InvalidArgumentError(files[0] + ": no GPU activity to compare");
  }
  side.whole = Figures(whole_ptrs, width_ns);
  // Slice i of every file (files need not share a clock: slices are matched by position).
  for (size_t i = 0; i < slice_count; ++i) {
    std::vector<const model::ProfileWindow*> parts;
    for (SliceCollector& c : collectors)
      if (i < c.slices().size() && !c.slices()[i].processes.empty())
        parts.push_back(&c.slices()[i]);
    if (!parts.empty()) side.slices.push_back(Figures(parts, width_ns));
  }
  side.slice_kind = fmt::format("{} time slices of {}", side.slices.size(), Duration(width_ns));
  return side;
}

// ---- Saved JSON reports ----

// A saved report starts with `{"schema_version"` (render_json writes that key first); a Kineto
// trace never does.
bool IsSavedReport(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char buf[256] = {};
  in.read(buf, sizeof(buf));
  std::string head(buf, static_cast<size_t>(in.gcount()));
  head.erase(std::remove_if(head.begin(), head.end(),
                            [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }),
             head.end());
  return head.rfind("{\"schema_version\"", 0) == 0;
}

// Reads `r` into `*out` when it holds a T; leaves `*out` alone otherwise.
template <typename T>
void Get(simdjson::simdjson_result<dom::element> r, T* out) {
  T value;
  if (r.get(value) == simdjson::SUCCESS) *out = value;
}

void ReadTimedMap(dom::element parent, const char* time_key,
                  std::map<std::string, ProfileFigures::Timed>* out) {
  dom::object obj;
  if (parent.get(obj) != simdjson::SUCCESS) return;
  for (auto [key, value] : obj) {
    int64_t time = 0;
    uint64_t count = 0;
    if (value[time_key].get(time) != simdjson::SUCCESS) continue;
    Get(value["count"], &count);
    ProfileFigures::Timed& t = (*out)[std::string(key)];
    t.time_ns += time;
    t.count += count;
  }
}

base::StatusOr<ComparisonSide> LoadReport(const std::string& path) {
  dom::parser parser;
  dom::element doc;
  if (parser.load(path).get(doc) != simdjson::SUCCESS)
    return base::DataLossError(path + ": not a valid JSON report");
  int64_t version = 0;
  dom::object summary;
  if (doc["schema_version"].get(version) != simdjson::SUCCESS ||
      doc["summary"].get(summary) != simdjson::SUCCESS)
    return base::UnsupportedError(path + ": not an inferscope JSON report (no summary)");
  if (version != report::kJsonSchemaVersion)
    return base::UnsupportedError(fmt::format("{}: report schema version {} (this build reads {})",
                                              path, version, report::kJsonSchemaVersion));
  ComparisonSide side;
  side.label = "report " + path;
  ProfileFigures& f = side.whole;
  auto temporal = summary["temporal_breakdown"];
  Get(temporal["span_ns"], &f.span_ns);
  Get(temporal["busy_ns"], &f.busy_ns);
  Get(summary["kernel_time_ns"], &f.kernel_time_ns);
  Get(summary["kernel_count"], &f.kernel_count);
  ReadTimedMap(summary["categories"], "time_ns", &f.categories);
  ReadTimedMap(summary["idle_gaps"], "total_ns", &f.idle_gaps);
  // As FiguresFromAnalysis: each gap kind takes its share of the GPU's idle time (the gaps are
  // summed over streams and can exceed the span).
  int64_t idle_ns = 0, stream_idle_ns = 0;
  Get(temporal["idle_ns"], &idle_ns);
  for (const auto& [kind, t] : f.idle_gaps) stream_idle_ns += t.time_ns;
  for (auto& [kind, t] : f.idle_gaps)
    t.time_ns = stream_idle_ns > 0
                    ? std::llround(static_cast<double>(t.time_ns) * static_cast<double>(idle_ns) /
                                   static_cast<double>(stream_idle_ns))
                    : 0;
  // Forward phases (reports since window format 1.3): all four when the list has any.
  dom::array phases;
  if (summary["phases"]["list"].get(phases) == simdjson::SUCCESS && phases.size() > 0) {
    for (const char* phase : model::kPhaseNames) f.phases[phase] = {};
    for (dom::element p : phases) {
      std::string_view name;
      int64_t time = 0;
      uint64_t steps = 0;
      Get(p["phase"], &name);
      Get(p["gpu_time_ns"], &time);
      Get(p["steps"], &steps);
      f.phases[std::string(name)] = {time, steps};
    }
  }
  dom::array kernels;
  if (summary["top_kernels"].get(kernels) == simdjson::SUCCESS) {
    for (dom::element k : kernels) {
      std::string_view name, display;
      int64_t total = 0;
      uint64_t count = 0;
      Get(k["name"], &name);
      Get(k["display_name"], &display);
      Get(k["total_ns"], &total);
      Get(k["count"], &count);
      ProfileFigures::Timed& t = f.kernels[std::string(display.empty() ? name : display)];
      t.time_ns += total;
      t.count += count;
    }
  }
  // NVTX ranges: the views' host range tables (analyze --views ranges, a store range's report),
  // read as the MCP `compare` tool reads them.
  dom::element views;
  if (doc["views"].get(views) == simdjson::SUCCESS) {
    auto ranges = context::ParseViewRangeTables(simdjson::to_string(views));
    if (!ranges.ok()) return base::DataLossError(path + ": " + ranges.status().message());
    context::AddRangeFigures(*ranges, &f);
  }
  dom::array ranks;
  if (doc["ranks"].get(ranks) == simdjson::SUCCESS)
    for (dom::element r : ranks) ReadTimedMap(r["sync_waits"], "total_ns", &f.syncs);
  // The telemetry kinds' sections, under the keys the report wrote them with.
  const std::string& engine_key = telemetry::scrape::EngineMetricsKind().report_key();
  dom::object engine;
  if (doc[engine_key].get(engine) == simdjson::SUCCESS) {
    auto e = telemetry::scrape::EngineMetricsWindow::FromJson(simdjson::to_string(engine));
    if (!e.ok()) return base::DataLossError(path + ": " + engine_key + ": " + e.status().message());
    AddEngineFigures(*e, &f);
  }
  const std::string& spans_key = telemetry::otlp::SpanKind().report_key();
  dom::object requests;
  if (doc[spans_key].get(requests) == simdjson::SUCCESS) {
    auto s = telemetry::otlp::SpanWindow::FromJson(simdjson::to_string(requests));
    if (!s.ok()) return base::DataLossError(path + ": " + spans_key + ": " + s.status().message());
    AddSpanFigures(*s, &f);
  }
  if (f.span_ns <= 0) return base::InvalidArgumentError(path + ": no GPU activity to compare");
  return side;
}

// ---- Store ranges: one slice per stored window start ----

base::StatusOr<std::pair<int64_t, int64_t>> ParseRangeFlag(const std::string& flag,
                                                           const std::string& range,
                                                           const DiffOptions& options) {
  const size_t dots = range.find("..");
  if (dots == std::string::npos)
    return base::InvalidArgumentError(flag + ": expected FROM..TO (e.g. -2h..-1h), got '" + range +
                                      "'");
  const int64_t now = options.now_unix_ns ? options.now_unix_ns : base::UnixNowNs();
  auto from = base::ParseTimePoint(range.substr(0, dots), now);
  if (!from.ok()) return base::InvalidArgumentError(flag + ": " + from.status().message());
  auto to = base::ParseTimePoint(range.substr(dots + 2), now);
  if (!to.ok()) return base::InvalidArgumentError(flag + ": " + to.status().message());
  if (*to <= *from) return base::InvalidArgumentError(flag + ": TO must be after FROM");
  return std::pair{*from, *to};
}

base::StatusOr<ComparisonSide> LoadRange(const std::string& flag, const std::string& range,
                                         const DiffOptions& options) {
  ASSIGN_OR_RETURN(auto bounds, ParseRangeFlag(flag, range, options));
  const auto [from, to] = bounds;
  ASSIGN_OR_RETURN(
      auto store, store::SqliteStore::Open(options.state_dir, store::SqliteStore::Mode::kReadOnly));
  query::RangeQuery query;
  query.from_ns = from;
  query.to_ns = to;
  auto side = query::LoadRangeSide(*store, query, options.max_slices, "store:" + options.state_dir);
  if (!side.ok() && side.status().code() == base::StatusCode::kNotFound)
    return base::NotFoundError(flag + ": " + side.status().message());
  return side;
}

base::StatusOr<ComparisonSide> LoadSide(const char* which, const std::vector<std::string>& paths,
                                        const std::string& range, const DiffOptions& options,
                                        std::string* failed_path, std::ostream& err) {
  const std::string flag = std::string("--") + which + "-range";
  if (!range.empty()) {
    if (!paths.empty())
      return base::InvalidArgumentError(std::string(which) + ": give files or " + flag +
                                        ", not both");
    return LoadRange(flag, range, options);
  }
  if (paths.empty())
    return base::InvalidArgumentError(std::string("no ") + which +
                                      " (give a trace, a JSON report "
                                      "or " +
                                      flag + ")");
  std::vector<std::string> files;
  RETURN_IF_ERROR(pipeline::ExpandTracePaths(paths, &files, failed_path, err));
  bool any_report = false;
  for (const std::string& f : files) any_report = any_report || IsSavedReport(f);
  if (any_report) {
    if (files.size() != 1)
      return base::InvalidArgumentError(std::string(which) +
                                        ": a saved JSON report must be the only input of its side");
    *failed_path = files[0];
    return LoadReport(files[0]);
  }
  return LoadTraces(files, options, failed_path, err);
}

// ---- The fleet in ClickHouse: each side a range and a host/label selection ----

// Both sides' specs from the flags (the baseline's selection defaults to the candidate's, a
// missing range to the other side's, no range at all to the last hour).
base::StatusOr<std::pair<FleetSideSpec, FleetSideSpec>> FleetSides(DiffOptions o) {
  // One "now" for both sides, so that equal range texts are equal ranges.
  if (o.now_unix_ns == 0) o.now_unix_ns = base::UnixNowNs();
  if (!o.baseline_paths.empty() || !o.candidate_paths.empty())
    return base::InvalidArgumentError(
        "with --source, the sides are ranges and host/label selections of the fleet, not files");
  std::string baseline_range = o.baseline_range, candidate_range = o.candidate_range;
  if (baseline_range.empty() && candidate_range.empty())
    baseline_range = candidate_range = "-1h..now";
  if (baseline_range.empty()) baseline_range = candidate_range;
  if (candidate_range.empty()) candidate_range = baseline_range;
  FleetSideSpec b, c;
  b.flag = "--baseline-range";
  c.flag = "--candidate-range";
  // A range borrowed from the other side is named by the flag that gave it.
  ASSIGN_OR_RETURN(
      auto cr,
      ParseRangeFlag(o.candidate_range.empty() && !o.baseline_range.empty() ? b.flag : c.flag,
                     candidate_range, o));
  ASSIGN_OR_RETURN(
      auto br,
      ParseRangeFlag(o.baseline_range.empty() && !o.candidate_range.empty() ? c.flag : b.flag,
                     baseline_range, o));
  std::tie(b.selection.from_ns, b.selection.to_ns) = br;
  std::tie(c.selection.from_ns, c.selection.to_ns) = cr;
  for (const std::string& label : o.labels) {
    const base::Status s = fleet::ParseLabel(label, &c.selection.labels);
    if (!s.ok()) return base::InvalidArgumentError("--label: " + s.message());
  }
  for (const std::string& label : o.baseline_labels) {
    const base::Status s = fleet::ParseLabel(label, &b.selection.labels);
    if (!s.ok()) return base::InvalidArgumentError("--baseline-label: " + s.message());
  }
  c.selection.hosts = o.hosts;
  b.selection.hosts = o.baseline_hosts;
  if (o.baseline_hosts.empty() && o.baseline_labels.empty()) {
    b.selection.hosts = c.selection.hosts;
    b.selection.labels = c.selection.labels;
  }
  b.selection.exact = c.selection.exact = o.exact;
  if (b.selection.from_ns == c.selection.from_ns && b.selection.to_ns == c.selection.to_ns &&
      b.selection.hosts == c.selection.hosts && b.selection.labels == c.selection.labels)
    return base::InvalidArgumentError(
        "both sides select the same windows: give --baseline-range/--candidate-range, or "
        "--baseline-host/--baseline-label against --host/--label");
  if (b.selection.hosts != c.selection.hosts || b.selection.labels != c.selection.labels) {
    // A selection side is named by its selection flags in errors.
    b.flag = o.baseline_range.empty() ? "--baseline-host/--baseline-label" : b.flag;
    c.flag = o.candidate_range.empty() ? "--host/--label" : c.flag;
  }
  return std::pair{b, c};
}

base::StatusOr<std::pair<ComparisonSide, ComparisonSide>> LoadFleetSides(const DiffOptions& o) {
  ASSIGN_OR_RETURN(auto specs, FleetSides(o));
  ASSIGN_OR_RETURN(auto target, fleet::ResolveFleetSource(o.source, o.source_credentials));
  const fleet::ClickHouseClient client(target, 60'000);
  auto wrap = [&](base::Status s) {
    if (s.message().find("Code: 81,") != std::string::npos ||
        s.message().find("Code: 60,") != std::string::npos)
      return base::NotFoundError(target.ToUrl() + ": no fleet tables in " + target.database +
                                 " yet: start an agent with --sink " + target.ToUrl());
    return s;
  };
  auto baseline = LoadFleetSide(client, specs.first, o.max_slices);
  if (!baseline.ok()) return wrap(baseline.status());
  auto candidate = LoadFleetSide(client, specs.second, o.max_slices);
  if (!candidate.ok()) return wrap(candidate.status());
  return std::pair{std::move(baseline).value(), std::move(candidate).value()};
}

int Run(const DiffOptions& options, std::ostream& out, std::ostream& err) {
  auto fail = [&err](const base::Status& status, const std::string& path) {
    std::string message = status.message();
    if (!path.empty() && message.rfind(path, 0) != 0) message = path + ": " + message;
    err << "inferscope: error: " << message << "\n";
    return kDiffError;
  };
  std::optional<ComparisonSide> baseline, candidate;
  if (!options.source.empty()) {
    auto sides = LoadFleetSides(options);
    if (!sides.ok()) return fail(sides.status(), "");
    baseline = std::move(sides->first);
    candidate = std::move(sides->second);
  } else {
    std::string failed_path;
    auto b = LoadSide("baseline", options.baseline_paths, options.baseline_range, options,
                      &failed_path, err);
    if (!b.ok()) return fail(b.status(), failed_path);
    failed_path.clear();
    auto c = LoadSide("candidate", options.candidate_paths, options.candidate_range, options,
                      &failed_path, err);
    if (!c.ok()) return fail(c.status(), failed_path);
    baseline = std::move(b).value();
    candidate = std::move(c).value();
  }

  const analyze::Comparison comparison = analyze::Compare(*baseline, *candidate, options.compare);
  if (options.format == report::ReportFormat::kJson) {
    base::JsonWriter w;
    analyze::WriteComparisonJson(comparison, w);
    out << w.str() << "\n";
  } else {
    out << analyze::RenderComparison(comparison, options.format == report::ReportFormat::kMarkdown,
                                     options.all);
  }
  if (!FlushOutput(out, err)) return kDiffError;
  return comparison.regression ? kDiffRegression : kDiffNoRegression;
}

const char* Getenv(const char* name) { return std::getenv(name); }

}  // namespace

int RunDiff(const DiffOptions& options, std::ostream& out, std::ostream& err) {
  return RunGuarded([&] { return Run(options, out, err); }, err, kDiffError);
}

DiffCommand::DiffCommand(CLI::App* app) {
  cmd_ = app->add_subcommand("diff", "Compare two profiles and flag significant regressions");
  cmd_->footer(
      "\nEach side is trace files (Kineto JSON, Nsight SQLite; a directory or a comma-separated\n"
      "list for several ranks), a saved JSON report (`analyze|report --format json`), or a time\n"
      "range of the agent's store (--baseline-range/--candidate-range FROM..TO). Every change is\n"
      "judged against the slice-to-slice spread of that quantity (traces are cut into time\n"
      "slices, store ranges into their windows); a saved report has no slices, so a fixed\n"
      "threshold applies. When both sides carry NVTX / annotation ranges (run --nvtx, Kineto\n"
      "user_annotation, Nsight NVTX), a table of the ranges with the largest GPU-time changes\n"
      "follows (not part of the verdict). Method: docs/diff.md.\n\n"
      "Exit codes:\n"
      "  0  no significant regression\n"
      "  1  significant regression\n"
      "  2  error (bad input, unreadable file, empty range)\n\n"
      "Examples:\n"
      "  inferscope diff before.sqlite after.sqlite\n"
      "  inferscope diff base_report.json new_trace.json.gz --format markdown\n"
      "  inferscope diff --baseline-range -2h..-1h --candidate-range -1h..now\n"
      "\nThe fleet in ClickHouse (--source clickhouse://HOST:8123/DB, docs/fleet.md): each side "
      "is\n"
      "a range (default: the other side's, else -1h..now) and a host/label selection (the\n"
      "baseline's defaults to the candidate's), summed by ClickHouse per GPU and per window "
      "start:\n"
      "  inferscope diff --source clickhouse://ch1:8123/fleet --baseline-range -2h..-1h \\\n"
      "      --candidate-range -1h..now --label replica=r3\n"
      "  inferscope diff --source clickhouse://ch1:8123/fleet --baseline-label replica=a \\\n"
      "      --label replica=b --candidate-range -1h..now\n");
  cmd_->add_option("INPUTS", positional_,
                   "Baseline then candidate: trace files, directories or saved JSON reports")
      ->expected(0, 2)
      ->type_name("BASELINE CANDIDATE");
  cmd_->add_option("--baseline-range", options_.baseline_range,
                   "Baseline = this time range of the store: FROM..TO (-2h..-1h, ISO times)")
      ->type_name("FROM..TO");
  cmd_->add_option("--candidate-range", options_.candidate_range,
                   "Candidate = this time range of the store")
      ->type_name("FROM..TO");
  cmd_->add_option("--state-dir", state_dir_,
                   "The store for the ranges (default: as `inferscope report`)")
      ->type_name("DIR");
  CLI::Option* source =
      AddFleetSourceOptions(cmd_, "Compare slices of the fleet in ClickHouse",
                            {&options_.source, &options_.source_credentials, &options_.exact});
  cmd_->add_option("--host", options_.hosts, "With --source: the candidate's hosts (repeatable)")
      ->type_name("HOST")
      ->needs(source);
  cmd_->add_option("--label", options_.labels,
                   "With --source: the candidate's label selection (repeatable)")
      ->type_name("KEY=VALUE")
      ->needs(source);
  cmd_->add_option("--baseline-host", options_.baseline_hosts,
                   "With --source: the baseline's hosts (default: the candidate's selection)")
      ->type_name("HOST")
      ->needs(source);
  cmd_->add_option("--baseline-label", options_.baseline_labels,
                   "With --source: the baseline's label selection")
      ->type_name("KEY=VALUE")
      ->needs(source);
  cmd_->add_option("-f,--format", format_, "Output format: text, markdown (md) or json")
      ->capture_default_str()
      ->type_name("FORMAT")
      ->check(OneOf({"text", "markdown", "md", "json"}));
  cmd_->add_option("--min-change", min_change_pct_,
                   "Smallest relative change (percent) that can count as significant")
      ->capture_default_str()
      ->type_name("PCT")
      ->check(NumberIn(0.0, 1000.0));
  cmd_->add_flag("--all", options_.all, "List every compared quantity");
  cmd_->add_option("--rules", options_.rules_path, "Extra kernel classification rules (traces)")
      ->type_name("FILE");
  cmd_->add_flag("-v,--verbose", options_.verbose, "Progress on stderr");
}

std::optional<int> DiffCommand::RunIfParsed() {
  if (!cmd_->parsed()) return std::nullopt;
  DiffOptions options = options_;
  if (!report::ParseReportFormat(format_, &options.format)) {
    std::cerr << "inferscope: error: --format: unknown format '" << format_ << "'\n";
    return kDiffError;
  }
  options.state_dir = state_dir_.empty() ? base::DefaultStateDir(&Getenv) : state_dir_;
  options.compare.min_relative = min_change_pct_ / 100.0;
  // Positionals fill the sides that have no range, baseline first. A comma-separated argument
  // is several files of one side.
  std::vector<std::vector<std::string>*> open_sides;
  if (options.source.empty() && options.baseline_range.empty())
    open_sides.push_back(&options.baseline_paths);
  if (options.source.empty() && options.candidate_range.empty())
    open_sides.push_back(&options.candidate_paths);
  if (positional_.size() != open_sides.size()) {
    std::cerr << "inferscope: error: diff: expected " << open_sides.size()
              << " input path(s) besides the ranges, got " << positional_.size()
              << " (run 'inferscope diff --help')\n";
    return kDiffError;
  }
  for (size_t i = 0; i < positional_.size(); ++i) {
    const std::string& arg = positional_[i];
    for (size_t start = 0, end; start <= arg.size(); start = end + 1) {
      end = arg.find(',', start);
      if (end == std::string::npos) end = arg.size();
      if (end > start) open_sides[i]->push_back(arg.substr(start, end - start));
    }
  }
  options.progress = isatty(STDERR_FILENO) != 0;
  return RunDiff(options, std::cout, std::cerr);
}

}  // namespace inferscope::cli
