// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The `inferscope` binary: argument parsing (CLI11, whose exceptions stop here) and dispatch.

#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "src/base/duration.h"
#include "src/cli/agent_command.h"
#include "src/cli/analyze_command.h"
#include "src/cli/capture_command.h"
#include "src/cli/classify_command.h"
#include "src/cli/cli_voice.h"
#include "src/cli/context_command.h"
#include "src/cli/diff_command.h"
#include "src/cli/exit_codes.h"
#include "src/cli/export_command.h"
#include "src/cli/run_command.h"
#include "src/cli/status_command.h"
#include "src/cli/top_command.h"
#include "src/cli/ui_command.h"
#include "src/report/report.h"

namespace inferscope::cli {
namespace {

constexpr const char* kExitCodeHelp =
    "Exit codes:\n"
    "  0  success\n"
    "  1  other error (cannot write the output, internal error)\n"
    "  2  usage error (bad flag or value, bad rule file)\n"
    "  3  input not found\n"
    "  4  input is not a trace / unsupported format\n"
    "  5  input is corrupt or truncated\n";

constexpr const char* kAnalyzeFooter =
    "Inputs:\n"
    "  Kineto / torch.profiler Chrome-trace JSON (.json or .json.gz) and Nsight Systems SQLite\n"
    "  exports (nsys export --type sqlite), recognized by content. A directory means every trace\n"
    "  file directly in it (sorted, not recursive); other files are skipped with a note on "
    "stderr.\n"
    "  Each Kineto file is one rank; an Nsight file may hold several processes (ranks).\n"
    "\n"
    "Report:\n"
    "  Per rank (process x GPU): temporal breakdown (busy/idle/compute, HTA definitions), GPU "
    "time\n"
    "  by kernel category, top kernels, idle-gap causes, launch overhead, host syncs, memory\n"
    "  transfers, allocations, communication and its overlap with compute, a timeline and data\n"
    "  quality counters; with several ranks a job summary and a rank comparison (imbalance,\n"
    "  straggler). JSON keys are documented in docs/report-schema.md.\n"
    "  --views adds kernel statistics (nsys cuda_gpu_kern_sum, launch configurations with\n"
    "  registers and shared memory), streams, steps (ProfilerStep#N, NVTX step ranges), NVTX\n"
    "  ranges (nsys nvtx_sum) and GPU time by operator and module (torch.profiler\n"
    "  key_averages, Kineto traces); --format csv --table NAME prints one table for\n"
    "  spreadsheets. PATH - reads a trace from stdin.\n"
    "\n"
    "Durations take a unit: 250ns, 30us, 100ms, 1.5s, 10m, 2h.\n"
    "\n"
    "Examples:\n"
    "  inferscope analyze trace.json.gz\n"
    "  inferscope analyze traces/ --format json -o report.json\n"
    "  inferscope analyze rank0.json rank1.json --top 30 --bin 10ms --format markdown\n"
    "  inferscope analyze trace.json.gz --views all\n"
    "  inferscope analyze run.sqlite --views steps --step-range train_step\n"
    "  inferscope analyze trace.json.gz --format csv --table kernel_stats > kernels.csv\n"
    "\n";

constexpr int64_t kMaxKernelWaitNs = 1'000'000'000;

// The text report's width: the terminal's when the report goes to one (the timeline uses it),
// else 100 columns. Narrow terminals get their width too (the report wraps to fit).
int TerminalWidth(bool to_stdout) {
  struct winsize ws {};
  if (to_stdout && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
      ws.ws_col > 0)
    return std::clamp<int>(ws.ws_col, 60, 300);
  return 100;
}

// "a, b or c".
std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

// JoinNames, broken into lines of at most 60 columns (the help's description column).
std::string WrapNames(const std::vector<std::string>& names) {
  std::string out, line;
  for (const std::string& word : Split(JoinNames(names))) {
    if (!line.empty() && line.size() + 1 + word.size() > 60) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

int UsageError(const std::string& message, const std::string& help_command) {
  std::cerr << "inferscope: error: " << message << "\n"
            << "Run '" << help_command << " --help' for usage.\n";
  return kExitUsage;
}

int Main(int argc, char** argv) {
  CLI::App app(
      "inferscope: where did the GPU time of your LLM inference go?\n"
      "Analyzes Kineto/torch.profiler and Nsight Systems traces: GPU time by category (attention,\n"
      "matmul, communication, ...), idle time and its causes, host waits, launch overhead, and\n"
      "rank imbalance.",
      "inferscope");
  app.formatter(MakeFormatter());  // before the subcommands: they inherit it
  app.footer(std::string("\n") + kExitCodeHelp);
  app.set_version_flag("-V,--version", std::string("inferscope ") + report::ToolVersion());
  app.require_subcommand(0, 1);

  AnalyzeOptions analyze;
  std::string format = "text";
  std::string bin;  // empty: chosen from the span
  std::string kernel_wait = "30us";
  CLI::App* analyze_cmd = app.add_subcommand("analyze", "Analyze trace files and print a report");
  analyze_cmd->footer(std::string("\n") + kAnalyzeFooter + kExitCodeHelp);
  analyze_cmd->add_option("PATH", analyze.paths, "Trace files or directories of trace files")
      ->required()
      ->type_name("PATH...");
  analyze_cmd
      ->add_option("-f,--format", format,
                   "Report format: text, markdown (md), json, or csv (one table, --table)")
      ->capture_default_str()
      ->type_name("FORMAT")
      ->check(OneOf({"text", "markdown", "md", "json", "csv"}));
  std::string views, slice_from, slice_to;
  analyze_cmd
      ->add_option("--from", slice_from,
                   "Only events starting at or after this point: a duration from the\n"
                   "trace's first event (1.5s), or @NS, a timestamp on the trace clock")
      ->type_name("TIME");
  analyze_cmd
      ->add_option("--to", slice_to,
                   "Only events starting before this point (same forms as --from)")
      ->type_name("TIME");
  analyze_cmd
      ->add_option("--views", views,
                   "Also compute these views (comma-separated): kernels (statistics\n"
                   "like nsys cuda_gpu_kern_sum; launch configurations: grid, block,\n"
                   "registers per thread, shared memory), streams\n"
                   "(busy/idle/overlap per stream), steps (ProfilerStep#N / NVTX step\n"
                   "ranges), ranges (NVTX / annotation ranges like nsys nvtx_sum, with\n"
                   "the GPU time they launched), ops (GPU time by the operator and\n"
                   "module that launched it, like torch.profiler key_averages), or all")
      ->type_name("LIST");
  analyze_cmd
      ->add_option("--step-range", analyze.step_prefixes,
                   "A host range whose name starts with PREFIX is a step (repeatable;\n"
                   "default ProfilerStep#, the engines' iteration ranges \"[Executor]\n"
                   "_forward_step\", \"_forward_step\", \"execute_context_\"); implies --views\n"
                   "steps, whose ranges are then also the forward phases' steps")
      ->type_name("PREFIX");
  analyze_cmd
      ->add_option(
          "--table", analyze.csv_table,
          "The table --format csv prints (docs/cli.md):\n" + WrapNames(report::CsvTableNames()))
      ->capture_default_str()
      ->type_name("NAME")
      ->check(OneOf(report::CsvTableNames()));
  analyze_cmd->add_option("--top", analyze.top, "Kernels listed per rank; the rest form one row")
      ->capture_default_str()
      ->type_name("N")
      ->check(IntIn(1, 100000));
  analyze_cmd
      ->add_option("--bin", bin,
                   "Timeline bin width (default: from the trace's span, a few hundred bins)")
      ->type_name("DURATION");
  analyze_cmd
      ->add_option("--kernel-wait-threshold", kernel_wait,
                   "Idle gaps shorter than this between back-to-back GPU operations count as\n"
                   "kernel wait, not host wait")
      ->capture_default_str()
      ->type_name("DURATION");
  analyze_cmd
      ->add_option("--rules", analyze.rules_path,
                   "Extra kernel classification rules (docs/taxonomy.md); they take\n"
                   "precedence over the built-in ones")
      ->type_name("FILE");
  analyze_cmd->add_option("-o,--output", analyze.output_path, "Write the report to FILE")
      ->type_name("FILE");
  analyze_cmd
      ->add_option("--diagnosis-thresholds", analyze.thresholds_path,
                   "Diagnosis thresholds file, `name = value` lines (docs/diagnosis.md)")
      ->type_name("FILE");
  analyze_cmd->add_flag("-v,--verbose", analyze.verbose,
                        "Progress on stderr even when it is not a terminal");

  std::vector<std::string> classify_names;
  std::string classify_rules;
  CLI::App* classify_cmd = app.add_subcommand(
      "classify", "Show how kernel names are classified (category, sub-category)");
  classify_cmd->footer(
      "\nPrints category<TAB>subcategory<TAB>name per name. '-' reads one name per line from\n"
      "stdin. Mangled names are demangled before matching.\n\n"
      "Examples:\n"
      "  inferscope classify 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL'\n"
      "  inferscope classify - --rules my_rules.txt < kernel_names.txt\n");
  classify_cmd->add_option("NAME", classify_names, "Kernel names ('-' = read names from stdin)")
      ->type_name("NAME...");
  classify_cmd
      ->add_option("--rules", classify_rules, "Extra classification rules (docs/taxonomy.md)")
      ->type_name("FILE");

  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand(
      "run", "Profile a command and every CUDA process it starts (no code change, no root)");
  run_cmd->prefix_command();  // everything after the options (or after --) is the command
  run_cmd->allow_extras();
  run_cmd->footer(
      "\nSets CUDA_INJECTION64_PATH to inferscope's injection library (kept as is if you set it),\n"
      "starts the host agent for the state directory if none is running, then replaces itself\n"
      "with the command: same PID, signals and exit code. Profile windows go to the agent; see\n"
      "them with `inferscope report`.\n\n"
      "Examples:\n"
      "  inferscope run -- vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2\n"
      "  inferscope run --state-dir /tmp/prof --window 5s -- python bench.py\n"
      "  inferscope run --enable-otel -- python -m sglang.launch_server --model-path M\n");
  run_cmd
      ->add_option("--state-dir", run.state_dir,
                   "Agent socket and store directory (default: $INFERSCOPE_STATE_DIR or\n"
                   "$XDG_STATE_HOME/inferscope or ~/.local/state/inferscope)")
      ->type_name("DIR");
  run_cmd->add_option("--window", run.window, "Profile window length (default 10s)")
      ->type_name("DURATION");
  run_cmd
      ->add_option("--inject-lib", run.inject_lib,
                   "The injection library (default: found beside this binary)")
      ->type_name("FILE");
  run_cmd
      ->add_option("--cupti-path,--cupti-dir", run.cupti_path,
                   "The libcupti to use (a file or its directory; sets INFERSCOPE_CUPTI_PATH).\n"
                   "Default: the one already in the process, else the Python CUDA wheels',\n"
                   "$CUDA_HOME's, /usr/local/cuda's, then the loader's (CUDA 12 or 13)")
      ->type_name("PATH");
  run_cmd->add_flag("--nvtx", run.nvtx,
                    "Record NVTX ranges (CUPTI marker activity; sets INFERSCOPE_NVTX=1): a range\n"
                    "table per window, in `report`, and the engine's step ranges (ProfilerStep#,\n"
                    "TensorRT-LLM's _forward_step, vLLM's execute_context_) as the steps of the\n"
                    "forward phases. Off by default: every NVTX push/pop then costs a CUPTI\n"
                    "callback");
  bool no_agent = false;
  run_cmd->add_flag("--no-agent", no_agent, "Do not start an agent");
  run_cmd->add_flag("--enable-otel", run.enable_otel,
                    "Send the engine's request spans to the agent (adds vLLM's, SGLang's or\n"
                    "TensorRT-LLM's OTLP flags; docs/request-spans.md)");
  run_cmd
      ->add_option("--metrics-url", run.metrics_url,
                   "The engine's Prometheus /metrics URL, for the agent this starts\n"
                   "(default: found from the command's listening sockets)")
      ->type_name("URL");
  run_cmd
      ->add_option("--sink", run.sink,
                   "Ship the agent's windows to ClickHouse too, clickhouse://HOST[:8123][/DB]\n"
                   "or clickhouses://... over HTTPS (for the agent this starts; docs/fleet.md)")
      ->type_name("URL");
  run_cmd
      ->add_option("--sink-credentials", run.sink_credentials,
                   "Credentials file for --sink (`user = ...`, `password = ...`; mode 600)")
      ->type_name("FILE");
  run_cmd->add_option("--label", run.labels, "KEY=VALUE on every row --sink ships (repeatable)")
      ->type_name("KEY=VALUE");

  AgentAndReportCommands agent_and_report(&app);  // `agent` and `report`
  StatusCommand status(&app);
  UiCommand ui(&app);
  TopCommand top(&app);
  ContextAndMcpCommands context_and_mcp(&app);
  DiffCommand diff(&app);
  ExportCommand export_cmd(&app);
  CaptureCommand capture(&app);

  // `run ... -- CMD ARGS`: everything after the first "--" is the command, whatever it looks like
  // (CLI11 would try to parse the command's own options).
  std::vector<std::string> run_command_after_dashes;
  if (argc > 1 && std::string(argv[1]) == "run") {
    for (int i = 2; i < argc; ++i) {
      if (std::string(argv[i]) == "--") {
        run_command_after_dashes.assign(argv + i + 1, argv + argc);
        argc = i;
        break;
      }
    }
  }

  const std::vector<std::string> args(argv + 1, argv + argc);
  // `inferscope help [COMMAND]`, as git and cargo have it.
  // Help and version are results too: a lost write is an error, as for every command.
  const auto printed = [](int code) {
    return FlushOutput(std::cout, std::cerr) || code != kExitOk ? code : kExitError;
  };
  if (!args.empty() && args[0] == "help")
    return printed(RunHelpCommand(app, args, std::cout, std::cerr));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return printed(app.exit(e, std::cout, std::cerr));
  } catch (const CLI::CallForAllHelp& e) {
    return printed(app.exit(e, std::cout, std::cerr));
  } catch (const CLI::CallForVersion& e) {
    return printed(app.exit(e, std::cout, std::cerr));
  } catch (const CLI::ParseError& e) {
    return ReportParseError(app, e, args, std::cerr);
  }

  if (analyze_cmd->parsed()) {
    analyze.csv = format == "csv";
    if (const base::Status sliced = ParseTimeSlice(slice_from, slice_to, &analyze.slice);
        !sliced.ok())
      return UsageError(sliced.message(), "inferscope analyze");
    if (!views.empty()) {
      const base::Status parsed = ParseViewList(views, &analyze.views);
      if (!parsed.ok()) return UsageError(parsed.message(), "inferscope analyze");
    }
    if (!analyze.csv && !report::ParseReportFormat(format, &analyze.format))
      return UsageError("--format: unknown format '" + format + "'", "inferscope analyze");
    // Durations parse the same in every command: long units too (`--bin 10m` for a long trace).
    analyze.bin_ns = 0;  // automatic
    if (!bin.empty()) {
      auto bin_ns = base::ParseDuration(bin, base::DurationUnits::kWithLongUnits);
      if (!bin_ns.ok())
        return UsageError("--bin: " + bin_ns.status().message(), "inferscope analyze");
      if (*bin_ns <= 0) return UsageError("--bin: must be greater than 0", "inferscope analyze");
      analyze.bin_ns = *bin_ns;
    }
    auto wait_ns = base::ParseDuration(kernel_wait, base::DurationUnits::kWithLongUnits);
    if (!wait_ns.ok())
      return UsageError("--kernel-wait-threshold: " + wait_ns.status().message(),
                        "inferscope analyze");
    // The threshold tells back-to-back GPU work from host waits; a gap of a second is never the
    // former, so a larger value is a mistake (likely a missing "u" or "m").
    if (*wait_ns > kMaxKernelWaitNs)
      return UsageError(
          "--kernel-wait-threshold: at most 1s (it separates back-to-back GPU work "
          "from host waits), got " +
              kernel_wait,
          "inferscope analyze");
    analyze.kernel_wait_threshold_ns = *wait_ns;
    analyze.progress = isatty(STDERR_FILENO) != 0;
    analyze.text_width = TerminalWidth(analyze.output_path.empty());
    return RunAnalyze(analyze, std::cout, std::cerr);
  }
  if (classify_cmd->parsed()) {
    bool read_stdin = false;
    std::vector<std::string> names;
    for (std::string& name : classify_names) {
      if (name == "-") {
        read_stdin = true;
      } else {
        names.push_back(std::move(name));
      }
    }
    return RunClassifyCommand(names, read_stdin, classify_rules, std::cin, std::cout, std::cerr);
  }

  if (run_cmd->parsed()) {
    run.command =
        run_command_after_dashes.empty() ? run_cmd->remaining() : run_command_after_dashes;
    run.start_agent = !no_agent;
    return RunRun(run, std::cerr);
  }

  if (std::optional<int> code = agent_and_report.RunIfParsed()) return *code;
  if (std::optional<int> code = status.RunIfParsed()) return *code;
  if (std::optional<int> code = ui.RunIfParsed()) return *code;
  if (std::optional<int> code = top.RunIfParsed()) return *code;
  if (std::optional<int> code = context_and_mcp.RunIfParsed()) return *code;
  if (std::optional<int> code = diff.RunIfParsed()) return *code;
  if (std::optional<int> code = export_cmd.RunIfParsed()) return *code;
  if (std::optional<int> code = capture.RunIfParsed()) return *code;

  // No subcommand: show what there is.
  std::cerr << app.help();
  return kExitUsage;
}

}  // namespace
}  // namespace inferscope::cli

int main(int argc, char** argv) {
  try {
    return inferscope::cli::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "inferscope: error: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "inferscope: error: internal error\n";
  }
  return inferscope::cli::kExitError;
}
