// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/export_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "src/cli/exit_codes.h"
#include "src/model/taxonomy.h"
#include "src/perfetto/trace_export.h"
#include "src/pipeline/trace_pipeline.h"

namespace inferscope::cli {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int Fail(std::ostream& err, const base::Status& status, const std::string& path) {
  std::string message = status.message();
  if (!path.empty() && message.rfind(path, 0) != 0) message = path + ": " + message;
  err << "inferscope: error: " << message << "\n";
  return ExitCodeFor(status);
}

int Run(const ExportOptions& options, std::ostream& err) {
  if (options.paths.empty()) {
    err << "inferscope: error: export: no input files (run 'inferscope export --help')\n";
    return kExitUsage;
  }
  if (options.output_path.empty()) {
    err << "inferscope: error: export: -o FILE.pftrace is required (run 'inferscope export "
           "--help')\n";
    return kExitUsage;
  }
  if (!EndsWith(options.output_path, ".pftrace") && !EndsWith(options.output_path, ".pftrace.gz") &&
      !perfetto::IsChromeJsonPath(options.output_path)) {
    err << "inferscope: error: export: -o must end in .pftrace, .pftrace.gz, .json or .json.gz, "
           "got '"
        << options.output_path << "'\n";
    return kExitUsage;
  }
  model::KernelClassifier classifier;
  if (!options.rules_path.empty()) {
    base::Status status = classifier.LoadRuleFile(options.rules_path);
    if (!status.ok()) return Fail(err, status, options.rules_path);
  }
  std::vector<std::string> files;
  std::string failed_path;
  base::Status expanded = pipeline::ExpandTracePaths(options.paths, &files, &failed_path, err);
  if (!expanded.ok()) return Fail(err, expanded, failed_path);

  const auto started = std::chrono::steady_clock::now();
  auto stats = perfetto::ExportTraces(files, options.output_path, classifier, {}, &failed_path);
  if (!stats.ok()) return Fail(err, stats.status(), failed_path);
  if (options.verbose) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    char line[256];
    std::snprintf(line, sizeof(line),
                  "exported %llu kernels, %llu copies, %llu API calls, %llu flows: %.1f MB in, "
                  "%.1f MB out, %.1f bytes per kernel slice, %.2f s (%.0f MB/s of input)\n",
                  static_cast<unsigned long long>(stats->kernels),
                  static_cast<unsigned long long>(stats->copies),
                  static_cast<unsigned long long>(stats->api_calls),
                  static_cast<unsigned long long>(stats->flows), stats->input_bytes / 1e6,
                  stats->output_bytes / 1e6,
                  stats->kernels ? static_cast<double>(stats->kernel_bytes) / stats->kernels : 0.0,
                  seconds, seconds > 0 ? stats->input_bytes / 1e6 / seconds : 0.0);
    err << line;
  }
  return kExitOk;
}

}  // namespace

int RunExport(const ExportOptions& options, std::ostream& err) {
  return RunGuarded([&] { return Run(options, err); }, err);
}

ExportCommand::ExportCommand(CLI::App* app) {
  cmd_ = app->add_subcommand("export", "Convert traces to a Perfetto trace with kernel categories");
  cmd_->footer(
      "\nReads Kineto / torch.profiler JSON and Nsight Systems SQLite traces (as `analyze`) and\n"
      "writes Perfetto's protobuf trace format (gzipped when -o ends in .gz), for "
      "ui.perfetto.dev:\n"
      "a track group per GPU with a track per stream (kernels by short name, their category,\n"
      "full name, grid, block, correlation and graph ids as arguments; copies and memsets), a\n"
      "track per host thread with its CUDA API calls and one with its sync waits, flows from each\n"
      "launch to its GPU work, and per-GPU counter tracks of each category's busy share.\n\n"
      "Exit codes:\n"
      "  0  success\n"
      "  1  other error (cannot write the output, internal error)\n"
      "  2  usage error (bad flag or value, bad rule file)\n"
      "  3  input not found\n"
      "  4  input is not a trace / unsupported format\n"
      "  5  input is corrupt or truncated\n\n"
      "Examples:\n"
      "  inferscope export trace.json.gz -o trace.pftrace\n"
      "  inferscope export rank0.json rank1.json -o job.pftrace.gz --rules my_rules.txt\n");
  cmd_->add_option("PATH", options_.paths, "Trace files or directories of trace files")
      ->required()
      ->type_name("PATH...");
  cmd_->add_option("-o,--output", options_.output_path, "The Perfetto trace to write")
      ->required()
      ->type_name("FILE.pftrace");
  cmd_->add_option("--rules", options_.rules_path,
                   "Extra kernel classification rules (docs/taxonomy.md)")
      ->type_name("FILE");
  cmd_->add_flag("-v,--verbose", options_.verbose, "A summary line on stderr (sizes, speed)");
}

std::optional<int> ExportCommand::RunIfParsed() {
  if (!cmd_->parsed()) return std::nullopt;
  return RunExport(options_, std::cerr);
}

}  // namespace inferscope::cli
