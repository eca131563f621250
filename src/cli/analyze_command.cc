// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/analyze_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>

#include "src/aggregate/aggregator.h"
#include "src/analyze/analysis.h"
#include "src/cli/exit_codes.h"
#include "src/import/pipelined_sink.h"
#include "src/import/trace_importer.h"
#include "src/model/name_table.h"
#include "src/model/taxonomy.h"

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

std::string HumanBytes(uint64_t bytes) {
  if (bytes >= 1'000'000'000) return fmt::format("{:.1f} GB", static_cast<double>(bytes) / 1e9);
  if (bytes >= 1'000'000) return fmt::format("{:.0f} MB", static_cast<double>(bytes) / 1e6);
  if (bytes >= 1'000) return fmt::format("{:.0f} KB", static_cast<double>(bytes) / 1e3);
  return fmt::format("{} B", bytes);
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

  analyze::AnalysisOptions analysis_options;
  analysis_options.top = options.top;
  analysis_options.bin_ns = options.bin_ns;
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
  const std::string rendered = report::Render(analysis, options.format);

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
    err << "analyzing " << path << " (" << HumanBytes(ec ? 0 : size) << ")..." << std::flush;
  const auto start = std::chrono::steady_clock::now();

  aggregate::AggregatorOptions agg_options;
  agg_options.window_ns = window_ns;  // 0: whole-trace mode, one window
  // Importers deliver events in file order, not time order: with windows, buffer everything
  // (as whole-trace mode does) so that no event is late.
  if (window_ns > 0) agg_options.lateness_ns = std::numeric_limits<int64_t>::max() / 4;
  agg_options.bin_ns = options.bin_ns;
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
