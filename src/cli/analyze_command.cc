// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/analyze_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "src/analyze/analysis.h"
#include "src/analyze/diagnose.h"
#include "src/base/duration.h"
#include "src/cli/cli_voice.h"
#include "src/cli/exit_codes.h"
#include "src/model/taxonomy.h"
#include "src/report/report.h"

namespace inferscope::cli {
namespace {

// Error messages from lower layers usually start with the path already; add it when they do not.
std::string WithPath(const std::string& path, const std::string& message) {
  if (message.rfind(path, 0) == 0) return message;
  return path + ": " + message;
}

int Fail(std::ostream& err, const base::Status& status, const std::string& path) {
  err << "inferscope: error: " << WithPath(path, status.message()) << "\n";
  return ExitCodeFor(status);
}

// `-` (a trace on stdin) as a file the importers can open: the Nsight format is a SQLite database,
// which needs a file, and Kineto detection reads the first bytes before streaming. Removed when
// the command ends.
class StdinTrace {
 public:
  ~StdinTrace() {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  // Copies all of `in` into a temporary file; the error is one line.
  base::Status Spool(std::istream& in) {
    const char* dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/inferscope_stdin_XXXXXX";
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0)
      return base::UnavailableError(std::string("cannot spool stdin: ") + std::strerror(errno));
    ::close(fd);
    path_ = pattern;
    std::ofstream file(path_, std::ios::binary | std::ios::trunc);
    file << in.rdbuf();
    file.close();
    if (!file) return base::UnavailableError("cannot spool stdin to " + path_);
    return base::OkStatus();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

int Run(const AnalyzeOptions& options_in, std::ostream& out, std::ostream& err) {
  if (options_in.paths.empty()) {
    err << "inferscope: error: analyze: no input files (run 'inferscope analyze --help')\n";
    return kExitUsage;
  }
  AnalyzeOptions options = options_in;
  StdinTrace stdin_trace;
  size_t stdin_index = options.paths.size();
  for (size_t i = 0; i < options.paths.size(); ++i) {
    if (options.paths[i] != "-") continue;
    if (stdin_index != options.paths.size()) {
      err << "inferscope: error: analyze: '-' (stdin) given more than once\n";
      return kExitUsage;
    }
    stdin_index = i;
    const base::Status spooled = stdin_trace.Spool(std::cin);
    if (!spooled.ok()) return Fail(err, spooled, "-");
    options.paths[i] = stdin_trace.path();
  }
  model::KernelClassifier classifier;
  if (!options.rules_path.empty()) {
    base::Status status = classifier.LoadRuleFile(options.rules_path);
    if (!status.ok()) return Fail(err, status, options.rules_path);
  }

  // Read before the traces (a bad file is reported after the no-activity check, as before), so
  // the one diagnosis of the analysis uses them.
  base::StatusOr<analyze::DiagnosisThresholds> thresholds = analyze::DiagnosisThresholds{};
  if (!options.thresholds_path.empty())
    thresholds = analyze::LoadThresholdsFile(options.thresholds_path);

  const pipeline::TraceOptions trace_options = TraceOptionsOf(options);
  std::string failed_path;
  auto traces = pipeline::ImportTraces(options.paths, trace_options, classifier, &failed_path, err);
  if (!traces.ok()) {
    if (!failed_path.empty() && failed_path == stdin_trace.path()) {
      std::string message = traces.status().message();
      for (size_t at; (at = message.find(failed_path)) != std::string::npos;)
        message.replace(at, failed_path.size(), "-");
      return Fail(err, base::Status(traces.status().code(), message), "-");
    }
    if (!failed_path.empty()) return Fail(err, traces.status(), failed_path);
    err << "inferscope: error: " << traces.status().message()
        << "\nRun 'inferscope analyze --help' for usage.\n";
    return kExitUsage;
  }

  if (!traces->job_warning.empty()) err << "inferscope: warning: " << traces->job_warning << "\n";
  // The report names stdin "-", not the spool file.
  for (pipeline::ImportedTrace& t : traces->traces)
    if (!stdin_trace.path().empty() && t.path == stdin_trace.path()) t.path = "-";

  const analyze::Analysis analysis = pipeline::AnalyzeTraces(
      *traces, trace_options, thresholds.ok() ? *thresholds : analyze::DiagnosisThresholds{});
  // No verdict without evidence: without a kernel, copy or memset every finding would be empty and
  // the diagnosis would read "healthy".
  if (!pipeline::HasGpuActivity(analysis)) {
    const std::vector<pipeline::ImportedTrace>& imported = traces->traces;
    size_t processes = 0;
    for (const pipeline::ImportedTrace& w : imported) processes += w.window.processes.size();
    err << "inferscope: no GPU activity matched: "
        << (imported.size() == 1 ? imported[0].path + " (" + imported[0].format + ") holds"
                                 : std::to_string(imported.size()) + " inputs hold")
        << " no kernel, memcpy or memset event";
    if (processes > 0) err << " (" << processes << " processes without any)";
    err << "\n"
        << "  record CUDA activity: torch.profiler with ProfilerActivity.CUDA, or nsys profile "
           "--trace=cuda\n";
    return kExitNotFound;
  }
  if (!thresholds.ok()) return Fail(err, thresholds.status(), options.thresholds_path);
  std::string rendered;
  if (options.csv) {
    if (!report::RenderCsv(analysis, options.csv_table, &rendered)) {
      err << "inferscope: error: --table: unknown table '" << options.csv_table << "'\n";
      return kExitUsage;
    }
  } else if (options.format == report::ReportFormat::kText) {
    rendered = report::RenderText(analysis, options.text_width);
  } else {
    rendered = report::Render(analysis, options.format);
  }

  if (options.output_path.empty()) {
    out << rendered;
    return FlushOutput(out, err) ? kExitOk : kExitError;
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

pipeline::TraceOptions TraceOptionsOf(const AnalyzeOptions& options) {
  pipeline::TraceOptions t;
  t.top = options.top;
  t.bin_ns = options.bin_ns;
  t.kernel_wait_threshold_ns = options.kernel_wait_threshold_ns;
  t.rules_path = options.rules_path;
  t.progress = options.verbose || options.progress;
  t.slice = options.slice;
  t.views = options.views;
  t.step_prefixes = options.step_prefixes;
  if (!options.step_prefixes.empty()) t.views.steps = true;
  if (options.csv) {
    // The table's view, so that `--format csv --table streams` needs no --views.
    const std::string& table = options.csv_table;
    if (table == "kernel_stats" || table == "launch_configs") t.views.kernels = true;
    if (table == "streams") t.views.streams = true;
    if (table == "steps") t.views.steps = true;
    if (table == "ranges" || table == "gpu_ranges") t.views.ranges = true;
    if (table == "ops" || table == "modules") t.views.ops = true;
  }
  return t;
}

base::Status ParseTimeSlice(const std::string& from, const std::string& to,
                            aggregate::TimeSlice* slice) {
  aggregate::TimeSlice s;
  int absolute = 0, relative = 0;
  auto parse = [&](const std::string& flag, const std::string& text, int64_t* ns) {
    if (text.empty()) return base::OkStatus();
    if (text[0] == '@') {
      ++absolute;
      const std::string digits = text.substr(1);
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(digits.c_str(), &end, 10);
      if (digits.empty() || *end != '\0' || errno == ERANGE || v < 0)
        return base::InvalidArgumentError(flag + ": '" + text +
                                          "' is not @NS (a timestamp in integer nanoseconds)");
      *ns = v;
      return base::OkStatus();
    }
    ++relative;
    auto d = base::ParseDuration(text, base::DurationUnits::kWithLongUnits);
    if (!d.ok()) return base::InvalidArgumentError(flag + ": " + d.status().message());
    if (*d < 0) return base::InvalidArgumentError(flag + ": must not be negative");
    *ns = *d;
    return base::OkStatus();
  };
  RETURN_IF_ERROR(parse("--from", from, &s.from_ns));
  RETURN_IF_ERROR(parse("--to", to, &s.to_ns));
  if (absolute > 0 && relative > 0)
    return base::InvalidArgumentError(
        "--from/--to: both offsets (durations) or both timestamps (@NS), not one of each");
  s.relative = relative > 0;
  if (!from.empty() && !to.empty() && s.from_ns >= s.to_ns)
    return base::InvalidArgumentError("--from/--to: --from must be before --to");
  *slice = s;
  return base::OkStatus();
}

base::Status ParseViewList(std::string_view list, model::ViewSelection* views) {
  model::ViewSelection v;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    const std::string_view name = list.substr(start, end - start);
    if (name == "kernels") {
      v.kernels = true;
    } else if (name == "streams") {
      v.streams = true;
    } else if (name == "steps") {
      v.steps = true;
    } else if (name == "ranges") {
      v.ranges = true;
    } else if (name == "ops") {
      v.ops = true;
    } else if (name == "all") {
      v = {true, true, true, true, true};
    } else {
      return base::InvalidArgumentError("--views: unknown view '" + std::string(name) +
                                        "' (kernels, streams, steps, ranges, ops or all)");
    }
    start = end + 1;
  }
  *views = v;
  return base::OkStatus();
}

int RunAnalyze(const AnalyzeOptions& options, std::ostream& out, std::ostream& err) {
  return RunGuarded([&] { return Run(options, out, err); }, err);
}

}  // namespace inferscope::cli
