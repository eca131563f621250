// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/pipeline/trace_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "src/aggregate/aggregator.h"
#include "src/aggregate/device_state.h"
#include "src/aggregate/view_collector.h"
#include "src/base/human_format.h"
#include "src/import/pipelined_sink.h"
#include "src/import/trace_importer.h"
#include "src/model/name_table.h"
#include "src/report/format.h"

namespace inferscope::pipeline {
namespace {

namespace fs = std::filesystem;

base::StatusOr<import::ImportStats> ImportFile(
    const std::string& path, const TraceOptions& options, const model::KernelClassifier& classifier,
    int64_t window_ns, const std::function<void(model::ProfileWindow&&)>& on_window,
    model::TraceViews* views, std::ostream& err);

base::Status ImportWhole(const std::string& path, const TraceOptions& options,
                         const model::KernelClassifier& classifier, ImportedTrace* result,
                         std::ostream& err) {
  result->path = path;
  std::vector<model::ProfileWindow> windows;
  ASSIGN_OR_RETURN(result->stats,
                   ImportFile(
                       path, options, classifier, /*window_ns=*/0,
                       [&windows](model::ProfileWindow&& w) { windows.push_back(std::move(w)); },
                       &result->views, err));
  result->format = import::TraceFormatName(result->stats.format);
  if (!windows.empty()) {
    result->window = std::move(windows.front());
    // Whole-trace mode yields one window; should there be more, keep their processes too.
    for (size_t i = 1; i < windows.size(); ++i)
      for (model::ProcessProfile& p : windows[i].processes)
        result->window.processes.push_back(std::move(p));
  }
  return base::OkStatus();
}

// Automatic bins differ per trace (each from its own span) but each divides every larger one
// (AutoBinNs): bring every timeline to the widest, so the ranks' timelines line up. Returns it.
int64_t CommonTimelineBin(std::vector<ImportedTrace>* imported) {
  int64_t common = 0;
  for (const ImportedTrace& w : *imported)
    for (const model::ProcessProfile& p : w.window.processes)
      for (const model::DeviceProfile& d : p.devices) common = std::max(common, d.timeline.bin_ns);
  if (common <= 0) return 100'000'000;
  for (ImportedTrace& w : *imported) {
    for (model::ProcessProfile& p : w.window.processes) {
      for (model::DeviceProfile& d : p.devices) {
        model::Timeline& t = d.timeline;
        if (t.bin_ns <= 0 || t.bin_ns == common || common % t.bin_ns != 0) continue;
        const auto factor = static_cast<size_t>(common / t.bin_ns);
        const size_t n = (t.busy_ns.size() + factor - 1) / factor;
        std::vector<int64_t> busy(n, 0);
        std::vector<std::array<int64_t, model::kCategoryCount>> category(n);
        for (size_t i = 0; i < t.busy_ns.size(); ++i) {
          busy[i / factor] += t.busy_ns[i];
          for (size_t c = 0; c < model::kCategoryCount; ++c)
            category[i / factor][c] += t.category_ns[i][c];
        }
        t.busy_ns = std::move(busy);
        t.category_ns = std::move(category);
        t.bin_ns = common;
      }
    }
  }
  return common;
}

// "4ns", "2.6ms": the smallest bin width that holds `span_ns`, rounded up to two digits.
std::string MinimumBinText(int64_t span_ns) {
  const int64_t min_ns = span_ns / aggregate::kMaxTimelineBins + 1;
  const std::pair<int64_t, const char*> kUnits[] = {
      {1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}, {1, "ns"}};
  for (const auto& [scale, unit] : kUnits) {
    if (min_ns < scale && scale > 1) continue;
    const double tenths = std::ceil(static_cast<double>(min_ns) * 10 / static_cast<double>(scale));
    return fmt::format("{:g}{}", tenths / 10, unit);
  }
  return std::to_string(min_ns) + "ns";
}

static_assert(aggregate::kMaxTimelineBins == 100'000, "the message below names the limit");

// What tells one job from another in a trace (or in a group of traces).
struct JobKey {
  std::string format;  // import::TraceFormatName; "" when unknown
  std::set<int32_t> ranks;
  int32_t world_size = -1;
  // Every process names its rank and world size: a distributed job, whose ranks may run on
  // several hosts.
  bool distributed = false;
  size_t members = 0;                                    // traces joined (groups only)
  std::set<std::string> hosts;                           // named hosts only
  std::set<std::pair<std::string, uint32_t>> processes;  // (hostname, pid), named hosts only
  int64_t first_ns = std::numeric_limits<int64_t>::max(), last_ns = 0;  // GPU activity
};

// Timestamps from here on are on the wall clock (ns since the epoch, 2001 or later): Kineto's own,
// or plus its baseTimeNanoseconds. Others count from a boot or a session (Nsight) and say nothing
// about when runs on different hosts happened.
constexpr int64_t kWallClockNs = 1'000'000'000'000'000'000;
constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max();

JobKey KeyOf(const ImportedTrace& trace) {
  JobKey key;
  key.format = trace.format == "unknown" ? "" : trace.format;
  // Timestamps already on the wall clock need no offset; others need the trace's own.
  const int64_t offset = trace.stats.wall_clock_offset_ns;
  key.distributed = !trace.window.processes.empty();
  for (const model::ProcessProfile& p : trace.window.processes) {
    if (p.rank >= 0) key.ranks.insert(p.rank);
    if (p.world_size > 0) key.world_size = p.world_size;
    key.distributed = key.distributed && p.rank >= 0 && p.world_size > 0;
    if (!p.hostname.empty()) key.hosts.insert(p.hostname);
    if (!p.hostname.empty()) key.processes.insert({p.hostname, p.pid});
    for (const model::DeviceProfile& d : p.devices) {
      if (d.last_end_ns <= d.first_start_ns) continue;
      // Saturating: a corrupt trace's timestamps must not overflow the sum.
      const int64_t to_wall = d.first_start_ns >= kWallClockNs
                                  ? 0
                                  : std::min(offset, kMaxNs - std::max<int64_t>(d.last_end_ns, 0));
      key.first_ns = std::min(key.first_ns, d.first_start_ns + to_wall);
      key.last_ns = std::max(key.last_ns, d.last_end_ns + to_wall);
    }
  }
  return key;
}

// "45 min", "3.1 h", "1.8 d": how far apart runs were (FormatDuration stops at seconds).
std::string Apart(int64_t ns) {
  const double s = static_cast<double>(ns) / 1e9;
  if (s >= 2 * 86400) return fmt::format("{:.1f} d", s / 86400);
  if (s >= 2 * 3600) return fmt::format("{:.1f} h", s / 3600);
  if (s >= 120) return fmt::format("{:.0f} min", s / 60);
  return report::FormatDuration(ns);
}

bool Timed(const JobKey& key) { return key.first_ns <= key.last_ns; }
bool OnWallClock(const JobKey& key) { return Timed(key) && key.first_ns >= kWallClockNs; }

// Why `trace` is not of the job `group` holds; "" when it may be.
std::string Conflict(const JobKey& group, const JobKey& trace) {
  // One job is profiled with one tool: a Kineto trace and an Nsight export of "the same" ranks
  // would count every kernel twice, or compare two runs.
  if (!group.format.empty() && !trace.format.empty() && group.format != trace.format)
    return fmt::format("{}, not {}", trace.format, group.format);
  // Ranks of one job share a clock kind: one on the wall clock and one on a session or boot clock
  // come from different tools or setups.
  if (Timed(group) && Timed(trace) && OnWallClock(group) != OnWallClock(trace))
    return OnWallClock(trace) ? "on the wall clock, the others not" : "not on the wall clock";
  // Processes on different hosts are one job only as ranks of a distributed job.
  if (!group.hosts.empty() && !trace.hosts.empty() && !(group.distributed && trace.distributed)) {
    bool shared = false;
    for (const std::string& host : trace.hosts) shared = shared || group.hosts.count(host) > 0;
    if (!shared) return fmt::format("host {}, not {}", *trace.hosts.begin(), *group.hosts.begin());
  }
  for (int32_t rank : trace.ranks)
    if (group.ranks.count(rank)) return fmt::format("rank {} again", rank);
  if (group.world_size > 0 && trace.world_size > 0 && group.world_size != trace.world_size)
    return fmt::format("world size {}, not {}", trace.world_size, group.world_size);
  for (const auto& [host, pid] : trace.processes)
    if (group.processes.count({host, pid})) return fmt::format("pid {} on {} again", pid, host);
  if (OnWallClock(group) && OnWallClock(trace)) {
    const int64_t gap = std::max(trace.first_ns - group.last_ns, group.first_ns - trace.last_ns);
    const int64_t longer = std::max(group.last_ns - group.first_ns, trace.last_ns - trace.first_ns);
    if (gap > longer)
      return fmt::format("ran {} {}", Apart(gap),
                         trace.first_ns > group.last_ns ? "later" : "earlier");
  }
  return "";
}

void Join(const JobKey& trace, JobKey* group) {
  if (group->format.empty()) group->format = trace.format;
  group->distributed =
      group->members == 0 ? trace.distributed : group->distributed && trace.distributed;
  ++group->members;
  group->hosts.insert(trace.hosts.begin(), trace.hosts.end());
  group->ranks.insert(trace.ranks.begin(), trace.ranks.end());
  if (group->world_size <= 0) group->world_size = trace.world_size;
  group->processes.insert(trace.processes.begin(), trace.processes.end());
  group->first_ns = std::min(group->first_ns, trace.first_ns);
  group->last_ns = std::max(group->last_ns, trace.last_ns);
}

std::string FileName(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  return name.empty() ? path : name;
}

// "the inputs are 2 separate jobs, not one (...): job 1 = a.json, b.json (analyzed); job 2 =
// c.json (rank 0 again). Only job 1 is analyzed: give each job's files on their own for the
// others."
std::string JobWarning(const std::vector<ImportedTrace>& traces,
                       const std::vector<JobGroup>& groups, size_t kept) {
  std::string text = fmt::format(
      "the inputs are {} separate jobs, not one (ranks of different runs would be "
      "compared as one job's):",
      groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    text += fmt::format("{} job {} =", g == 0 ? "" : ";", g + 1);
    for (size_t i = 0; i < groups[g].traces.size(); ++i)
      text += (i == 0 ? " " : ", ") + FileName(traces[groups[g].traces[i]].path);
    if (g == kept) text += " (analyzed)";
    if (!groups[g].why_separate.empty()) text += " (" + groups[g].why_separate + ")";
  }
  return text + fmt::format(
                    ". Only job {} is analyzed: give each job's files on their own for "
                    "the others.",
                    kept + 1);
}

}  // namespace

std::vector<JobGroup> GroupTracesByJob(const std::vector<ImportedTrace>& traces) {
  std::vector<JobGroup> groups;
  std::vector<JobKey> keys;
  for (size_t i = 0; i < traces.size(); ++i) {
    const JobKey key = KeyOf(traces[i]);
    size_t g = 0;
    while (g < groups.size() && !Conflict(keys[g], key).empty()) ++g;
    if (g == groups.size()) {
      groups.push_back({{}, groups.empty() ? "" : Conflict(keys[0], key)});
      keys.emplace_back();
    }
    groups[g].traces.push_back(i);
    Join(key, &keys[g]);
  }
  return groups;
}

base::Status ExpandTracePaths(const std::vector<std::string>& paths,
                              std::vector<std::string>* files, std::string* failed_path,
                              std::ostream& err) {
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) {
      *failed_path = path;
      return base::NotFoundError(path + ": no such file or directory");
    }
    if (!fs::is_directory(st)) {
      files->push_back(path);
      continue;
    }
    std::vector<std::string> entries;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
      entries.push_back(it->path().string());
    if (ec) {
      *failed_path = path;
      return base::NotFoundError(path + ": cannot read directory: " + ec.message());
    }
    std::sort(entries.begin(), entries.end());
    size_t accepted = 0;
    for (const std::string& entry : entries) {
      std::error_code entry_ec;
      if (!fs::is_regular_file(entry, entry_ec)) {
        err << "inferscope: skipping " << entry << ": not a regular file\n";
        continue;
      }
      auto format = import::DetectTraceFormat(entry);
      if (!format.ok()) {
        err << "inferscope: skipping " << entry << ": not a trace file\n";
        continue;
      }
      files->push_back(entry);
      ++accepted;
    }
    if (accepted == 0) {
      *failed_path = path;
      return base::UnsupportedError(path + ": directory holds no trace files");
    }
  }
  return base::OkStatus();
}

base::StatusOr<import::ImportStats> ImportTraceFile(
    const std::string& path, const TraceOptions& options, const model::KernelClassifier& classifier,
    int64_t window_ns, const std::function<void(model::ProfileWindow&&)>& on_window,
    std::ostream& err) {
  return ImportFile(path, options, classifier, window_ns, on_window, /*views=*/nullptr, err);
}

namespace {

// ImportTraceFile, and the views options.views selects into `*views` when `views` is given.
base::StatusOr<import::ImportStats> ImportFile(
    const std::string& path, const TraceOptions& options, const model::KernelClassifier& classifier,
    int64_t window_ns, const std::function<void(model::ProfileWindow&&)>& on_window,
    model::TraceViews* views, std::ostream& err) {
  const bool show = options.progress;
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (show)
    err << "analyzing " << path << " (" << base::FormatBytes(ec ? 0 : size) << ")..." << std::flush;
  const auto start = std::chrono::steady_clock::now();

  aggregate::AggregatorOptions agg_options;
  agg_options.window_ns = window_ns;  // 0: whole-trace mode, one window
  // Importers deliver events in file order, not time order: with windows, buffer everything
  // (as whole-trace mode does) so that no event is late.
  if (window_ns > 0) agg_options.lateness_ns = std::numeric_limits<int64_t>::max() / 4;
  agg_options.bin_ns = options.bin_ns;
  if (options.bin_ns <= 0 && window_ns == 0) agg_options.auto_bins = kAutoTimelineBins;
  agg_options.top_k = std::max(options.top, 1);
  agg_options.kernel_wait_threshold_ns = options.kernel_wait_threshold_ns;
  // With the steps view the windows' steps (and the forward phases) are the step ranges too, so
  // the summary's phases and the steps view agree, as the live windows do under `run --nvtx`;
  // without it, the host-turn heuristic (as live without --nvtx).
  agg_options.step_ranges = options.views.steps;
  agg_options.ranges = options.window_ranges;
  if (!options.step_prefixes.empty()) agg_options.step_prefixes = options.step_prefixes;
  model::NameTable names;
  aggregate::Aggregator aggregator(
      agg_options, &names, &classifier,
      [&on_window](model::ProfileWindow&& w) { on_window(std::move(w)); });
  // The importer and the aggregator run on two threads (the machine's second core is otherwise
  // idle); PipelinedSink keeps the event order and bounds what is in flight.
  // The views, when selected, sit in front of the aggregator on its thread (off: no extra hop).
  std::unique_ptr<aggregate::ViewCollector> collector;
  if (views != nullptr && options.views.any()) {
    aggregate::ViewOptions view_options;
    view_options.selection = options.views;
    view_options.top = std::max(options.top, 1);
    if (!options.step_prefixes.empty()) view_options.step_prefixes = options.step_prefixes;
    collector =
        std::make_unique<aggregate::ViewCollector>(view_options, &names, &classifier, &aggregator);
  }
  model::EventSink* first =
      collector ? static_cast<model::EventSink*>(collector.get()) : &aggregator;
  std::unique_ptr<aggregate::SliceSink> slice;
  if (options.slice.active()) {
    slice = std::make_unique<aggregate::SliceSink>(options.slice, first);
    first = slice.get();
  }
  import::PipelinedSink pipeline(first);
  import::ImportOptions import_options;
  // Operators and modules, GPU annotations: only for the view that reads them.
  import_options.host_ops = collector && options.views.ops;
  import_options.gpu_annotations = collector && options.views.ranges;
  // Registers and shared memory: only for the kernel statistics' launch configurations.
  import_options.kernel_resources = collector && options.views.kernels;
  auto stats = import::ImportTrace(path, &names, &pipeline, import_options);
  pipeline.Close();
  if (!stats.ok()) {
    if (show) err << " failed\n";
    return stats.status();
  }
  if (slice) slice->Finish();
  // The views and the Aggregator finish on two threads: neither reads the other (the collector
  // only forwards events, all delivered by now), both only read `names` and `classifier`, and
  // between the import's end and the report the machine's second core is otherwise idle (run
  // serially, the ops view's join would follow the Aggregator's finish on the critical path;
  // measured: docs/benchmarks.md, "Views"). The collector is destroyed on its thread too (its
  // memory freed there).
  std::thread view_thread;
  if (collector) {
    view_thread = std::thread([&collector, views] {
      *views = collector->Finish();
      collector.reset();
    });
  }
  aggregator.Finish();
  if (view_thread.joinable()) view_thread.join();
  if (show) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    err << " done in " << fmt::format("{:.1f}", seconds) << " s (" << stats->kernels
        << " kernels)\n";
  }
  return *stats;
}

}  // namespace

base::StatusOr<TraceSet> ImportTraces(const std::vector<std::string>& paths,
                                      const TraceOptions& options,
                                      const model::KernelClassifier& classifier,
                                      std::string* failed_path, std::ostream& err) {
  std::vector<std::string> files;
  RETURN_IF_ERROR(ExpandTracePaths(paths, &files, failed_path, err));
  TraceSet set;
  set.traces.resize(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    *failed_path = files[i];
    RETURN_IF_ERROR(ImportWhole(files[i], options, classifier, &set.traces[i], err));
  }
  failed_path->clear();
  const std::vector<JobGroup> groups = GroupTracesByJob(set.traces);
  if (groups.size() > 1) {
    // The largest job by processes (ranks), not files: one Nsight export may hold a whole job.
    std::vector<size_t> processes(groups.size(), 0);
    for (size_t g = 0; g < groups.size(); ++g)
      for (size_t i : groups[g].traces) processes[g] += set.traces[i].window.processes.size();
    size_t kept = 0;
    for (size_t g = 1; g < groups.size(); ++g)
      if (processes[g] > processes[kept]) kept = g;
    set.job_warning = JobWarning(set.traces, groups, kept);
    std::vector<ImportedTrace> job;
    for (size_t i : groups[kept].traces) job.push_back(std::move(set.traces[i]));
    for (size_t g = 0; g < groups.size(); ++g) {
      if (g == kept) continue;
      analyze::OtherJob& other = set.other_jobs.emplace_back();
      // Why it is apart from the analyzed job, not from the first (kept may be another).
      JobKey kept_key, first_key;
      for (size_t i : groups[kept].traces) Join(KeyOf(set.traces[i]), &kept_key);
      first_key = KeyOf(set.traces[groups[g].traces.front()]);
      other.why = Conflict(kept_key, first_key);
      if (other.why.empty()) other.why = groups[g].why_separate;
      for (size_t i : groups[g].traces) {
        set.left_out.push_back(set.traces[i].path);
        other.inputs.push_back(set.traces[i].path);
      }
    }
    set.traces = std::move(job);
  }
  if (options.bin_ns <= 0) {
    set.bin_ns = CommonTimelineBin(&set.traces);
    return set;
  }
  // A bin that cuts a trace's timeline short would leave the end of the trace out of the report.
  for (const ImportedTrace& w : set.traces) {
    for (const model::ProcessProfile& p : w.window.processes) {
      for (const model::DeviceProfile& d : p.devices) {
        if (!d.timeline.truncated) continue;
        const int64_t span = d.last_end_ns - d.timeline.origin_ns;
        return base::InvalidArgumentError(fmt::format(
            "--bin {}: too small for the {} span of {}: use at least --bin {} (a timeline holds "
            "at most 100,000 bins)",
            report::FormatDuration(options.bin_ns), report::FormatDuration(span), w.path,
            MinimumBinText(span)));
      }
    }
  }
  set.bin_ns = options.bin_ns;
  return set;
}

analyze::Analysis AnalyzeTraces(const TraceSet& traces, const TraceOptions& options,
                                const analyze::DiagnosisThresholds& thresholds) {
  analyze::AnalysisOptions analysis_options;
  analysis_options.top = options.top;
  analysis_options.bin_ns = traces.bin_ns;
  analysis_options.kernel_wait_threshold_ns = options.kernel_wait_threshold_ns;
  analysis_options.rules_path = options.rules_path;
  analysis_options.slice = aggregate::DescribeSlice(options.slice);
  std::vector<analyze::AnalysisInput> inputs;
  inputs.reserve(traces.traces.size());
  for (const ImportedTrace& w : traces.traces)
    inputs.push_back({w.path, w.format, &w.window, options.views.any() ? &w.views : nullptr});
  analyze::Analysis analysis =
      analyze::Analyze(inputs, analysis_options, analyze::HostSignals{}, thresholds);
  analysis.job_warning = traces.job_warning;
  analysis.other_jobs = traces.other_jobs;
  return analysis;
}

bool HasGpuActivity(const analyze::Analysis& analysis) {
  return analysis.summary.kernel_count != 0 || analysis.summary.temporal.busy_ns != 0;
}

}  // namespace inferscope::pipeline
