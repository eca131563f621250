// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/analyze_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>

#include "src/aggregate/aggregator.h"
#include "src/aggregate/device_state.h"
#include "src/analyze/analysis.h"
#include "src/base/human_format.h"
#include "src/cli/exit_codes.h"
#include "src/import/pipelined_sink.h"
#include "src/import/trace_importer.h"
#include "src/model/name_table.h"
#include "src/model/taxonomy.h"
#include "src/report/format.h"

namespace inferscope::cli {
namespace {

namespace fs = std::filesystem;

const char* FormatName(import::TraceFormat format) {
  switch (format) {
    case import::TraceFormat::kKinetoJson:
      return "kineto_json";
    case import::TraceFormat::kNsysSqlite:
      return "nsys_sqlite";
    case import::TraceFormat::kUnknown:
      break;
  }
  return "unknown";
}

// Error messages from lower layers usually start with the path already; add it when they do not.
std::string WithPath(const std::string& path, const std::string& message) {
  if (message.rfind(path, 0) == 0) return message;
  return path + ": " + message;
}

int Fail(std::ostream& err, const base::Status& status, const std::string& path) {
  err << "inferscope: error: " << WithPath(path, status.message()) << "\n";
  return ExitCodeFor(status);
}

struct ImportedWindow {
  std::string path;
  std::string format;
  model::ProfileWindow window;
};

base::Status ImportOne(const std::string& path, const AnalyzeOptions& options,
                       const model::KernelClassifier& classifier, ImportedWindow* result,
                       std::ostream& err) {
  result->path = path;
  std::vector<model::ProfileWindow> windows;
  RETURN_IF_ERROR(ImportTraceFile(
      path, options, classifier, /*window_ns=*/0,
      [&windows](model::ProfileWindow&& w) { windows.push_back(std::move(w)); }, &result->format,
      err));
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
int64_t CommonTimelineBin(std::vector<ImportedWindow>* imported) {
  int64_t common = 0;
  for (const ImportedWindow& w : *imported)
    for (const model::ProcessProfile& p : w.window.processes)
      for (const model::DeviceProfile& d : p.devices) common = std::max(common, d.timeline.bin_ns);
  if (common <= 0) return 100'000'000;
  for (ImportedWindow& w : *imported) {
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

// "4ns", "2.6ms": the smallest --bin that holds `span_ns`, rounded up to two digits.
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

// A --bin that cuts a trace's timeline short is a usage error naming the smallest that does not
// (the report would otherwise miss the end of the trace); "" when every timeline fits.
std::string BinTooSmall(const std::vector<ImportedWindow>& imported, int64_t bin_ns) {
  for (const ImportedWindow& w : imported) {
    for (const model::ProcessProfile& p : w.window.processes) {
      for (const model::DeviceProfile& d : p.devices) {
        if (!d.timeline.truncated) continue;
        const int64_t span = d.last_end_ns - d.timeline.origin_ns;
        return fmt::format(
            "--bin {}: too small for the {} span of {}: use at least --bin {} (a timeline holds "
            "at most 100,000 bins)",
            report::FormatDuration(bin_ns), report::FormatDuration(span), w.path,
            MinimumBinText(span));
      }
    }
  }
  return "";
}

int Run(const AnalyzeOptions& options, std::ostream& out, std::ostream& err) {
  if (options.paths.empty()) {
    err << "inferscope: error: analyze: no input files (run 'inferscope analyze --help')\n";
    return kExitUsage;
  }
  model::KernelClassifier classifier;
  if (!options.rules_path.empty()) {
    base::Status status = classifier.LoadRuleFile(options.rules_path);
    if (!status.ok()) return Fail(err, status, options.rules_path);
  }

  std::vector<std::string> files;
  std::string failed_path;
  base::Status status = ExpandTracePaths(options.paths, &files, &failed_path, err);
  if (!status.ok()) return Fail(err, status, failed_path);

  std::vector<ImportedWindow> imported(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    status = ImportOne(files[i], options, classifier, &imported[i], err);
    if (!status.ok()) return Fail(err, status, files[i]);
  }

  int64_t bin_ns = options.bin_ns;
  if (bin_ns <= 0) {
    bin_ns = CommonTimelineBin(&imported);
  } else if (std::string problem = BinTooSmall(imported, bin_ns); !problem.empty()) {
    err << "inferscope: error: " << problem << "\nRun 'inferscope analyze --help' for usage.\n";
    return kExitUsage;
  }

  analyze::AnalysisOptions analysis_options;
  analysis_options.top = options.top;
  analysis_options.bin_ns = bin_ns;
  analysis_options.kernel_wait_threshold_ns = options.kernel_wait_threshold_ns;
  analysis_options.rules_path = options.rules_path;
  std::vector<analyze::AnalysisInput> inputs;
  for (const ImportedWindow& w : imported) inputs.push_back({w.path, w.format, &w.window});
  analyze::Analysis analysis = analyze::Analyze(inputs, analysis_options);
  // No verdict without evidence: without a kernel, copy or memset every finding would be empty and
  // the diagnosis would read "healthy".
  if (analysis.summary.kernel_count == 0 && analysis.summary.temporal.busy_ns == 0) {
    size_t processes = 0;
    for (const ImportedWindow& w : imported) processes += w.window.processes.size();
    err << "inferscope: no GPU activity matched: "
        << (files.size() == 1 ? files[0] + " (" + imported[0].format + ") holds"
                              : std::to_string(files.size()) + " inputs hold")
        << " no kernel, memcpy or memset event";
    if (processes > 0) err << " (" << processes << " processes without any)";
    err << "\n"
        << "  record CUDA activity: torch.profiler with ProfilerActivity.CUDA, or nsys profile "
           "--trace=cuda\n";
    return kExitNotFound;
  }
  if (!options.thresholds_path.empty()) {
    auto thresholds = analyze::LoadThresholdsFile(options.thresholds_path);
    if (!thresholds.ok()) return Fail(err, thresholds.status(), options.thresholds_path);
    analysis.diagnosis = analyze::Diagnose(analysis, {}, *thresholds);
  }
  const std::string rendered = options.format == report::ReportFormat::kText
                                   ? report::RenderText(analysis, options.text_width)
                                   : report::Render(analysis, options.format);

  if (options.output_path.empty()) {
    out << rendered;
    out.flush();
    if (!out) {
      err << "inferscope: error: <stdout>: write failed\n";
      return kExitError;
    }
    return kExitOk;
  }
  std::ofstream file(options.output_path, std::ios::binary | std::ios::trunc);
  if (!file) {
    err << "inferscope: error: " << options.output_path
        << ": cannot write: " << std::strerror(errno) << "\n";
    return kExitError;
  }
  file << rendered;
  file.close();
  if (!file) {
    err << "inferscope: error: " << options.output_path << ": write failed\n";
    return kExitError;
  }
  if (options.verbose || options.progress) err << "wrote " << options.output_path << "\n";
  return kExitOk;
}

}  // namespace

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

base::Status ImportTraceFile(const std::string& path, const AnalyzeOptions& options,
                             const model::KernelClassifier& classifier, int64_t window_ns,
                             const std::function<void(model::ProfileWindow&&)>& on_window,
                             std::string* format, std::ostream& err) {
  const bool show = options.verbose || options.progress;
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
  model::NameTable names;
  aggregate::Aggregator aggregator(
      agg_options, &names, &classifier,
      [&on_window](model::ProfileWindow&& w) { on_window(std::move(w)); });
  // The importer and the aggregator run on two threads (the machine's second core is otherwise
  // idle); PipelinedSink keeps the event order and bounds what is in flight.
  import::PipelinedSink pipeline(&aggregator);
  auto stats = import::ImportTrace(path, &names, &pipeline);
  pipeline.Close();
  if (!stats.ok()) {
    if (show) err << " failed\n";
    return stats.status();
  }
  aggregator.Finish();
  *format = FormatName(stats->format);
  if (show) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    err << " done in " << fmt::format("{:.1f}", seconds) << " s (" << stats->kernels
        << " kernels)\n";
  }
  return base::OkStatus();
}

int RunAnalyze(const AnalyzeOptions& options, std::ostream& out, std::ostream& err) {
  return RunGuarded([&] { return Run(options, out, err); }, err);
}

}  // namespace inferscope::cli
