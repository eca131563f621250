// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/agent_command.h"

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "src/base/duration.h"
#include "src/base/state_dir.h"
#include "src/cli/cli_voice.h"
#include "src/cli/exit_codes.h"
#include "src/fleet/sink/clickhouse_sink.h"
#include "src/query/range_query.h"
#include "src/report/report.h"

namespace inferscope::cli {
namespace {

std::atomic<agentd::Agent*> g_agent{nullptr};
std::atomic<bool> g_stop_requested{false};

// Async-signal-safe: Agent::Stop is one write(2) to an eventfd. A signal that arrives while the
// agent is still starting (its socket may already exist: a test or `run` may signal then) is
// remembered and acted on once it has started.
void OnStopSignal(int) {
  g_stop_requested.store(true);
  if (agentd::Agent* a = g_agent.load()) a->Stop();
}

const char* Getenv(const char* name) { return std::getenv(name); }

// "1GiB", "500MB", "0" (no limit): binary (KiB, MiB, GiB, TiB) and decimal (KB, MB, GB, TB) units.
base::StatusOr<uint64_t> ParseBytes(const std::string& text) {
  size_t i = 0;
  uint64_t value = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (value > (UINT64_MAX - 9) / 10) return base::InvalidArgumentError("too large: " + text);
    value = value * 10 + static_cast<uint64_t>(text[i++] - '0');
  }
  const std::string unit = text.substr(i);
  static const std::pair<const char*, uint64_t> kUnits[] = {{"", 1},
                                                            {"B", 1},
                                                            {"KB", 1000},
                                                            {"MB", 1000'000},
                                                            {"GB", 1000'000'000},
                                                            {"TB", 1000'000'000'000},
                                                            {"KiB", 1ull << 10},
                                                            {"MiB", 1ull << 20},
                                                            {"GiB", 1ull << 30},
                                                            {"TiB", 1ull << 40}};
  if (i == 0)
    return base::InvalidArgumentError("invalid size '" + text + "' (use e.g. 1GiB, 500MB)");
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    if (unit.empty() && value != 0)
      return base::InvalidArgumentError("invalid size '" + text + "': missing unit (e.g. 1GiB)");
    if (value > UINT64_MAX / scale) return base::InvalidArgumentError("too large: " + text);
    return value * scale;
  }
  return base::InvalidArgumentError("invalid size '" + text + "' (use e.g. 1GiB, 500MB)");
}

int Usage(const std::string& message, const char* command) {
  std::cerr << "inferscope: error: " << message << "\nRun 'inferscope " << command
            << " --help' for usage.\n";
  return kExitUsage;
}

constexpr const char* kStateDirHelp =
    "Agent socket and store directory (default: $INFERSCOPE_STATE_DIR, else\n"
    "$XDG_STATE_HOME/inferscope, else ~/.local/state/inferscope)";

}  // namespace

AgentAndReportCommands::AgentAndReportCommands(CLI::App* app) {
  agent_cmd_ = app->add_subcommand(
      "agent", "Run the host agent in the foreground: receive and store profile windows");
  agent_cmd_->footer(
      "\nListens on <state-dir>/agent.sock for processes profiled by the injection library and\n"
      "stores their windows in <state-dir>/inferscope.db (see them with `inferscope report`).\n"
      "Logs one line per session start/end on stderr. SIGTERM/SIGINT stop it cleanly: what was\n"
      "received is stored. One agent per state dir. Serves a JSON API on loopback\n"
      "(http://127.0.0.1:9470/api/v1 by default; <state-dir>/agent.json has the bound URLs).\n"
      "Every route but /metrics needs the access token <state-dir>/agent.token (0600, made at\n"
      "the first start) as `Authorization: Bearer`; the CLI sends it, `inferscope ui` prints a\n"
      "sign-in link for the dashboard. The state dir must be yours and not writable by others.\n"
      "Details: docs/agent.md.\n\n"
      "Exit codes: 0 stopped cleanly, 1 error, 2 usage error, 6 another agent is running for the\n"
      "state dir.\n\n"
      "Examples:\n"
      "  inferscope agent\n"
      "  inferscope agent --state-dir /var/tmp/prof --retention 2d --max-store 5GiB\n"
      "  inferscope agent --sink clickhouse://ch1:8123/fleet --sink-credentials ~/.ch --label "
      "replica=r3\n");
  agent_cmd_->add_option("--state-dir", state_dir_, kStateDirHelp)->type_name("DIR");
  agent_cmd_->add_option("--retention", retention_, "Delete windows older than this (e.g. 7d, 12h)")
      ->type_name("DURATION")
      ->capture_default_str();
  agent_cmd_
      ->add_option("--max-store", max_store_,
                   "Keep the stored windows under this size, deleting the oldest")
      ->type_name("SIZE")
      ->capture_default_str();
  agent_cmd_
      ->add_option("--rollup-retention", rollup_retention_,
                   "Keep rollup tiers this long, e.g. 10m=90d,1h=730d (defaults 10m=30d,\n"
                   "1h=365d; never shorter than --retention)")
      ->type_name("TIER=AGE,...");
  agent_cmd_
      ->add_option("--exit-when-idle", exit_when_idle_,
                   "Exit once no process has been connected (and no --watch-pid process\n"
                   "has been alive) for this long (e.g. 30s)")
      ->type_name("DURATION");
  agent_cmd_
      ->add_option("--watch-pid", watch_pids_,
                   "With --exit-when-idle: stay while this process lives (repeatable)")
      ->type_name("PID");
  agent_cmd_
      ->add_option("--http-port", http_port_,
                   "Loopback port of the HTTP API (JSON API, /metrics, OTLP); 0 = any free\n"
                   "port, -1 = none. The default falls back to a free port when taken; the\n"
                   "bound endpoints are written to <state-dir>/agent.json")
      ->type_name("PORT")
      ->capture_default_str()
      ->check(IntIn(-1, 65535));
  agent_cmd_
      ->add_option("--metrics-token", metrics_token_,
                   "/metrics needs `Authorization: Bearer <the content of FILE>` (a file of\n"
                   "yours, mode 600; Prometheus: authorization.credentials_file). Default:\n"
                   "/metrics is open to local users, as scrapers expect")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  agent_cmd_
      ->add_option("--window", window_,
                   "Telemetry window (GPU metrics, engine metrics, spans); match the processes'\n"
                   "INFERSCOPE_WINDOW (inferscope run --window)")
      ->type_name("DURATION")
      ->capture_default_str();
  agent_cmd_->add_option("--gpu-sample-interval", gpu_sample_interval_, "NVML sampling period")
      ->type_name("DURATION")
      ->capture_default_str();
  agent_cmd_->add_option("--scrape-interval", scrape_interval_, "Engine /metrics scrape period")
      ->type_name("DURATION")
      ->capture_default_str();
  agent_cmd_
      ->add_option("--span-grace", span_grace_,
                   "How long a window stays open for late OTLP spans (the SDKs' batch\n"
                   "processors export every 5 s); spans arriving later are dropped and logged")
      ->type_name("DURATION")
      ->capture_default_str();
  agent_cmd_
      ->add_option("--metrics-url", metrics_url_,
                   "The engine's Prometheus endpoint (default: found from the listening\n"
                   "sockets of the profiled processes)")
      ->type_name("URL");
  agent_cmd_->add_option("--nvml-library", nvml_library_, "NVML to load (tests use a fake)")
      ->type_name("FILE")
      ->capture_default_str();
  agent_cmd_->add_flag("--no-nvml", no_nvml_, "Do not sample GPU metrics");
  agent_cmd_->add_flag("--no-scrape", no_scrape_, "Do not scrape the engine's metrics");
  agent_cmd_->add_flag("--no-otlp", no_otlp_, "Do not receive OpenTelemetry spans");
  agent_cmd_
      ->add_option("--sink", sink_,
                   "Also ship every stored window and telemetry record to ClickHouse,\n"
                   "clickhouse://HOST[:8123][/DB], or over HTTPS\n"
                   "clickhouses://HOST[:8443][/DB][?ca_file=PEM][&skip_verify=1]\n"
                   "(docs/fleet.md); a spool in the store holds them while the server is down")
      ->type_name("URL");
  agent_cmd_
      ->add_option("--sink-credentials", sink_credentials_,
                   "File with `user = NAME` and `password = SECRET` lines for --sink (mode 600;\n"
                   "never on the command line)")
      ->type_name("FILE");
  agent_cmd_
      ->add_option("--sink-spool", sink_spool_,
                   "Bound of the --sink spool in the store (oldest rows dropped, counted)")
      ->type_name("SIZE")
      ->capture_default_str();
  agent_cmd_
      ->add_option("--sink-retention", sink_retention_,
                   "Drop the ClickHouse tables' days older than this (e.g. 90d; whole days,\n"
                   "hourly; default: keep everything)")
      ->type_name("DURATION");
  agent_cmd_
      ->add_option("--label", labels_,
                   "KEY=VALUE stamped on every row --sink ships (repeatable): host=, engine=,\n"
                   "model= fill those dimensions; cluster=, replica=... are free labels")
      ->type_name("KEY=VALUE");
  agent_cmd_->add_flag("-v,--verbose", verbose_, "Log every window and retention pass");

  report_cmd_ = app->add_subcommand(
      "report", "Report on the profile windows the agent stored (a time range, all processes)");
  report_cmd_->footer(
      "\nMerges the stored windows of the range per process and renders them like `inferscope\n"
      "analyze` renders traces. Works whether or not the agent runs.\n"
      "Times (--from/--to): now, -5m, -2h, 2026-01-02T15:04[:05][Z] (Z = UTC, else local), or\n"
      "Unix seconds.\n\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 no store or no windows in the range,\n"
      "5 corrupt store.\n\n"
      "Examples:\n"
      "  inferscope report\n"
      "  inferscope report --last 1h --rank 0 --format markdown\n"
      "  inferscope report --from 2026-01-02T15:00 --to 2026-01-02T15:10 --format json\n"
      "  inferscope report --source clickhouse://ch1:8123/fleet --last 24h --rank-by sync\n");
  report_cmd_->add_option("--state-dir", report_state_dir_, kStateDirHelp)->type_name("DIR");
  auto* last = report_cmd_->add_option("--last", last_, "Report the last DURATION (default 5m)")
                   ->type_name("DURATION");
  auto* from =
      report_cmd_->add_option("--from", report_.from, "Start of the range")->type_name("TIME");
  auto* to = report_cmd_->add_option("--to", report_.to, "End of the range (default now)")
                 ->type_name("TIME");
  last->excludes(from)->excludes(to);
  report_cmd_->add_option("--pid", pid_, "Only this process id")
      ->type_name("PID")
      ->check(IntIn(0, UINT32_MAX));
  report_cmd_->add_option("--rank", rank_, "Only this rank")
      ->type_name("N")
      ->check(IntIn(INT32_MIN, INT32_MAX));
  report_cmd_->add_option("--device", device_, "Only this GPU (device index)")
      ->type_name("N")
      ->check(IntIn(0, UINT32_MAX));
  report_cmd_
      ->add_option("--gpu-hourly-cost", report_.gpu_hourly_usd,
                   "GPU price in USD per hour (each GPU): adds cost per request and per million\n"
                   "generated tokens, split by category and stage (docs/cost.md)")
      ->type_name("USD")
      ->check(PositiveNumber());
  report_cmd_
      ->add_option("--gpu-prices", report_.gpu_prices_path,
                   "GPU price table, `MODEL = USD_PER_HOUR` lines (docs/cost.md)")
      ->type_name("FILE");
  report_cmd_
      ->add_option("--diagnosis-thresholds", report_.thresholds_path,
                   "Diagnosis thresholds file, `name = value` lines (docs/diagnosis.md)")
      ->type_name("FILE");
  report_cmd_
      ->add_option("-f,--format", format_,
                   "Report format: text, markdown (md), json, or csv (one table, --table)")
      ->capture_default_str()
      ->type_name("FORMAT")
      ->check(OneOf({"text", "markdown", "md", "json", "csv"}));
  report_cmd_
      ->add_option("--table", csv_table_,
                   "The table --format csv prints, as for analyze (docs/cli.md); `ranges`:\n"
                   "the NVTX range table of windows recorded with `run --nvtx`")
      ->capture_default_str()
      ->type_name("NAME")
      ->check(OneOf(report::CsvTableNames()));
  report_cmd_
      ->add_option("--views", report_views_,
                   "Also show these views computed from the windows: kernels (per kernel:\n"
                   "count, total, mean, min, max and the launch configurations: grid,\n"
                   "block, registers per thread, shared memory). The ranges view shows\n"
                   "by itself for windows recorded with `run --nvtx`. With --source: the\n"
                   "20 heaviest kernels of the selection's GPUs summed as one")
      ->type_name("LIST");
  report_cmd_->add_option("--top", report_.top, "Kernels listed per rank; the rest form one row")
      ->capture_default_str()
      ->type_name("N")
      ->check(IntIn(1, query::kMaxTop));
  CLI::Option* source = AddFleetSourceOptions(
      report_cmd_, "Report on the fleet in ClickHouse instead of this host's store",
      {&fleet_.source, &fleet_.credentials_path, &fleet_.exact});
  report_cmd_->add_option("--host", fleet_.hosts, "With --source: only this host (repeatable)")
      ->type_name("HOST")
      ->needs(source);
  report_cmd_
      ->add_option("--label", fleet_.labels,
                   "With --source: only rows with this agent label (repeatable)")
      ->type_name("KEY=VALUE")
      ->needs(source);
  report_cmd_
      ->add_option("--group-by", fleet_.group_by,
                   "With --source: one row per host, model, engine or gpu_model")
      ->capture_default_str()
      ->type_name("DIM")
      ->needs(source);
  report_cmd_
      ->add_option("--rank-by", fleet_.rank_by,
                   "With --source: worst first by idle share, exposed communication,\n"
                   "sync waits or mean step time (idle, communication, sync, step)")
      ->capture_default_str()
      ->type_name("FIGURE")
      ->needs(source);
}

std::optional<int> AgentAndReportCommands::RunIfParsed() {
  if (agent_cmd_->parsed()) {
    agentd::AgentOptions options;
    options.state_dir = state_dir_.empty() ? base::DefaultStateDir(&Getenv) : state_dir_;
    auto retention = base::ParseDuration(retention_, base::DurationUnits::kWithLongUnits);
    if (!retention.ok()) return Usage("--retention: " + retention.status().message(), "agent");
    options.retention_ns = *retention;
    auto max_store = ParseBytes(max_store_);
    if (!max_store.ok()) return Usage("--max-store: " + max_store.status().message(), "agent");
    options.max_store_bytes = *max_store;
    if (!rollup_retention_.empty()) {
      auto tiers = store::ParseRollupRetention(rollup_retention_);
      if (!tiers.ok()) return Usage("--rollup-retention: " + tiers.status().message(), "agent");
      options.rollup_retention = *tiers;
    }
    if (!exit_when_idle_.empty()) {
      auto idle = base::ParseDuration(exit_when_idle_, base::DurationUnits::kWithLongUnits);
      if (!idle.ok()) return Usage("--exit-when-idle: " + idle.status().message(), "agent");
      if (*idle <= 0) return Usage("--exit-when-idle: must be greater than 0", "agent");
      options.exit_when_idle_ns = *idle;
    }
    options.verbose = verbose_;
    options.watch_pids = watch_pids_;
    options.http_port = http_port_;
    options.metrics_token_file = metrics_token_;
    options.http_port_chosen = agent_cmd_->count("--http-port") > 0;
    struct {
      const char* flag;
      const std::string& text;
      int64_t min_ns;
      int64_t* out;
    } durations[] = {
        {"--window", window_, 100'000'000, &options.telemetry.window_ns},
        {"--gpu-sample-interval", gpu_sample_interval_, 10'000'000,
         &options.telemetry.gpu_sample_interval_ns},
        {"--scrape-interval", scrape_interval_, 100'000'000, &options.telemetry.scrape_interval_ns},
        {"--span-grace", span_grace_, 0, &options.telemetry.span_grace_ns},
    };
    for (const auto& d : durations) {
      auto v = base::ParseDuration(d.text, base::DurationUnits::kWithLongUnits);
      if (!v.ok()) return Usage(std::string(d.flag) + ": " + v.status().message(), "agent");
      if (*v < d.min_ns)
        return Usage(
            std::string(d.flag) + ": at least " + std::to_string(d.min_ns / 1'000'000) + "ms",
            "agent");
      *d.out = *v;
    }
    options.telemetry.nvml = !no_nvml_;
    options.telemetry.scrape = !no_scrape_;
    options.telemetry.otlp = !no_otlp_;
    options.telemetry.metrics_url = metrics_url_;
    options.telemetry.nvml_library = nvml_library_;
    if (sink_.empty() &&
        (!sink_credentials_.empty() || !labels_.empty() || !sink_retention_.empty()))
      return Usage("--sink-credentials, --sink-retention and --label need --sink", "agent");
    if (!sink_.empty()) {
      fleet::ClickHouseSinkOptions sink;
      auto target = fleet::ParseClickHouseUrl(sink_);
      if (!target.ok()) return Usage("--sink: " + target.status().message(), "agent");
      // A CA file that cannot be read would only show as failed inserts later: say it now.
      if (!target->ca_file.empty() && ::access(target->ca_file.c_str(), R_OK) != 0)
        return Usage("--sink: ca_file " + target->ca_file + ": " + std::strerror(errno), "agent");
      sink.target = *target;
      if (!sink_credentials_.empty()) {
        auto creds = fleet::ReadCredentialsFile(sink_credentials_);
        if (!creds.ok()) return Usage("--sink-credentials: " + creds.status().message(), "agent");
        sink.target.user = creds->user;
        sink.target.password = creds->password;
      }
      for (const std::string& label : labels_) {
        const base::Status s = fleet::ParseLabel(label, &sink.identity.labels);
        if (!s.ok()) return Usage("--label: " + s.message(), "agent");
      }
      auto spool = ParseBytes(sink_spool_);
      if (!spool.ok()) return Usage("--sink-spool: " + spool.status().message(), "agent");
      sink.max_spool_bytes = *spool;
      if (!sink_retention_.empty()) {
        auto keep = base::ParseDuration(sink_retention_, base::DurationUnits::kWithLongUnits);
        if (!keep.ok() || *keep < 86400'000'000'000)
          return Usage("--sink-retention: want whole days, at least 1d (e.g. 90d)", "agent");
        sink.retention_days = static_cast<int>(*keep / 86400'000'000'000);
      }
      options.make_sink =
          [sink](
              const std::string& state_dir) -> base::StatusOr<std::unique_ptr<store::WindowSink>> {
        fleet::ClickHouseSinkOptions o = sink;
        o.state_dir = state_dir;
        ASSIGN_OR_RETURN(auto s, fleet::ClickHouseSink::Start(std::move(o)));
        return std::unique_ptr<store::WindowSink>(std::move(s));
      };
    }
    return RunAgent(options);
  }
  if (report_cmd_->parsed()) {
    report_.state_dir =
        report_state_dir_.empty() ? base::DefaultStateDir(&Getenv) : report_state_dir_;
    if (!last_.empty()) {
      auto last = base::ParseDuration(last_, base::DurationUnits::kWithLongUnits);
      if (!last.ok()) return Usage("--last: " + last.status().message(), "report");
      if (*last <= 0) return Usage("--last: must be greater than 0", "report");
      report_.last_ns = *last;
    }
    if (!report_views_.empty()) {
      if (report_views_ != "kernels")
        return Usage(
            "--views: only 'kernels' is computed from profile windows (ranges show by "
            "themselves after `run --nvtx`; the other views need a trace: analyze)",
            "report");
      report_.kernels_view = true;
    }
    if (format_ == "csv")
      report_.csv_table = csv_table_;
    else if (!report::ParseReportFormat(format_, &report_.format))
      return Usage("--format: unknown format '" + format_ + "'", "report");
    if (!fleet_.source.empty()) {
      if (pid_ || rank_ || device_)
        return Usage("--pid, --rank and --device are for a host's store, not --source", "report");
      if (report_.format == report::ReportFormat::kMarkdown || !report_.csv_table.empty())
        return Usage("--source: --format is text or json", "report");
      fleet_.kernels_view = report_.kernels_view;
      fleet_.last_ns = report_.last_ns;
      fleet_.from = report_.from;
      fleet_.to = report_.to;
      fleet_.json = report_.format == report::ReportFormat::kJson;
      if (report_cmd_->count("--top") > 0) fleet_.top = report_.top;
      return RunFleetReport(fleet_, std::cout, std::cerr);
    }
    report_.pid = pid_;
    report_.rank = rank_;
    report_.device = device_;
    return RunReport(report_, std::cout, std::cerr);
  }
  return std::nullopt;
}

int RunAgent(const agentd::AgentOptions& options) {
  agentd::Agent agent(options);
  // The handlers go in before Start: from the moment the socket exists, SIGTERM must mean a
  // clean stop, not the default death (which loses the windows still queued).
  g_stop_requested.store(false);
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_term {
  }, old_int{};
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGINT, &sa, &old_int);
  const base::Status started = agent.Start();
  if (!started.ok()) {
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGINT, &old_int, nullptr);
    std::cerr << "inferscope: error: " << started.message() << "\n";
    if (started.code() == base::StatusCode::kAlreadyExists) return kExitAgentAlreadyRunning;
    return ExitCodeFor(started) == kExitOk ? kExitError : ExitCodeFor(started);
  }
  g_agent.store(&agent);
  if (g_stop_requested.load()) agent.Stop();  // signalled while starting
  std::cerr << "inferscope agent: listening on " << agent.socket_path();
  if (agent.http_port() > 0)
    std::cerr << " and http://" << options.http_host << ":" << agent.http_port() << "/api/v1";
  std::cerr << " (pid " << getpid() << ")\n";
  const base::Status status = agent.Wait();
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGINT, &old_int, nullptr);
  g_agent.store(nullptr);
  const agentd::AgentStats stats = agent.stats();
  std::cerr << "inferscope agent: stopped; " << stats.sessions << " sessions, "
            << stats.windows_stored << " windows stored\n";
  if (!status.ok()) {
    std::cerr << "inferscope: error: " << status.message() << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace inferscope::cli
