// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/cli/context_command.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdlib>
#include <iostream>

#include "src/base/state_dir.h"
#include "src/cli/cli_voice.h"
#include "src/cli/exit_codes.h"
#include "src/context/context.h"
#include "src/context/report_view.h"
#include "src/mcp/server.h"
#include "src/net/agent_endpoints.h"
#include "src/report/report.h"

namespace inferscope::cli {
namespace {

constexpr const char* kContextFooter =
    "\nPrints one bounded text for a time window, most important first: what was profiled,\n"
    "the diagnosis with evidence, GPU time by category and top kernels (with the tail's share),\n"
    "idle causes, sync waits, GPU metrics, engine load and latencies, data quality, and the\n"
    "tags to narrow by. Tokens are estimated as bytes / 3; every cut is marked.\n"
    "Sources: trace files (arguments), a running agent (--url), the store (--state-dir,\n"
    "the default), or the fleet in ClickHouse (--source clickhouse://HOST:8123/DB, what agents\n"
    "ship with --sink; --host/--label select hosts and a 'Fleet' section lists the worst hosts\n"
    "and the outliers, docs/fleet.md). Trace files are analyzed whole (no range).\n\n"
    "Exit codes: 0 ok, 1 error, 2 usage error or bad range, 3 no data matched.\n\n"
    "Examples:\n"
    "  inferscope context --last 1h --rank 0\n"
    "  inferscope context --url http://127.0.0.1:9470 --from -2h --to -1h --budget 3000\n"
    "  inferscope context examples/vllm_tp2_decode\n"
    "  inferscope context --source clickhouse://ch1:8123/fleet --last 1h --label replica=r3\n";

constexpr const char* kMcpFooter =
    "\nServes the MCP tools list_targets, get_context, get_breakdown, get_findings, compare and\n"
    "get_timeseries over stdio (newline-delimited JSON-RPC; logs on stderr), for protocol\n"
    "2025-11-25 clients (initialize) and 2026-07-28 clients (stateless, server/discover).\n"
    "The agent serves the same tools over streamable HTTP at http://127.0.0.1:9470/mcp.\n\n"
    "Examples (an MCP client's server entry):\n"
    "  {\"command\": \"inferscope\", \"args\": [\"mcp\"]}\n"
    "  {\"command\": \"inferscope\", \"args\": [\"mcp\", \"--url\", \"http://127.0.0.1:9470\"]}\n"
    "  {\"command\": \"inferscope\", \"args\": [\"mcp\", \"trace.json.gz\"]}\n"
    "  {\"command\": \"inferscope\", \"args\": [\"mcp\", \"--source\", "
    "\"clickhouse://ch1:8123/fleet\"]}\n";

std::string DefaultStateDir() {
  return base::DefaultStateDir([](const char* n) -> const char* { return std::getenv(n); });
}

}  // namespace

int RunContext(const ContextCommandOptions& options, mcp::DataSource* source, std::ostream& out,
               std::ostream& err) {
  mcp::ProfileRequest request{options.range, options.filters, 50};
  auto json = source->ProfileJson(request);
  if (!json.ok()) {
    const base::Status& s = json.status();
    err << "inferscope: " << (s.code() == base::StatusCode::kNotFound ? "" : "error: ")
        << source->Describe() << ": " << s.message() << "\n";
    if (s.code() == base::StatusCode::kNotFound) return kExitNotFound;
    if (s.code() == base::StatusCode::kInvalidArgument) return kExitUsage;
    return kExitError;
  }
  auto view = context::ParseReport(*json, options.filters.host, options.filters.engine);
  if (!view.ok()) {
    err << "inferscope: " << view.status().message() << "\n";
    return view.status().code() == base::StatusCode::kNotFound ? kExitNotFound : kExitError;
  }
  context::ContextOptions copts;
  copts.budget_tokens = options.budget_tokens;
  copts.source = source->Describe();
  copts.range_text = mcp::DescribeRange(options.range);
  copts.filters_text = mcp::DescribeFilters(options.filters);
  copts.command = "inferscope context";
  if (!options.narrow_flags.empty()) copts.narrow_flags = options.narrow_flags;
  auto sections = source->ContextSections();
  if (!sections.ok()) {
    err << "inferscope: error: " << source->Describe() << ": " << sections.status().message()
        << "\n";
    return kExitError;
  }
  copts.extra_sections = std::move(sections).value();
  const context::ContextResult result = context::RenderContext(*view, copts);
  out << result.text;
  return FlushOutput(out, err) ? kExitOk : kExitError;
}

ContextAndMcpCommands::ContextAndMcpCommands(CLI::App* app) {
  context_ = app->add_subcommand("context",
                                 "Print one bounded text of a time window for an AI coding agent");
  context_->footer(kContextFooter);
  context_->add_option("TRACE", traces_, "Trace files or directories (instead of a store)")
      ->type_name("TRACE...");
  context_->add_option("--state-dir", state_dir_, "The agent's store (default: the state dir)")
      ->type_name("DIR");
  context_
      ->add_option("--url", url_,
                   "A running agent, e.g. http://127.0.0.1:9470 (sends the access token of "
                   "the default state dir when its agent.json names this URL)")
      ->type_name("URL");
  context_->add_option("--last", last_, "The window up to now (default 15m)")
      ->type_name("DURATION");
  context_->add_option("--from", options_.range.from, "Window start (-2h, 2026-01-02T15:04Z, ...)")
      ->type_name("TIME");
  context_->add_option("--to", options_.range.to, "Window end (default: now, open-ended)")
      ->type_name("TIME");
  context_->add_option("--host", options_.filters.host, "Only this host's ranks")
      ->type_name("HOST");
  context_->add_option("--pid", pid_, "Only this process")
      ->type_name("PID")
      ->check(IntIn(0, INT32_MAX));
  context_->add_option("--rank", rank_, "Only this rank")
      ->type_name("RANK")
      ->check(IntIn(0, INT32_MAX));
  context_->add_option("--device", device_, "Only this GPU of every process")
      ->type_name("N")
      ->check(IntIn(0, 1024));
  context_->add_option("--engine", options_.filters.engine, "Only this engine's metrics")
      ->type_name("NAME");
  CLI::Option* source =
      AddFleetSourceOptions(context_, "The fleet in ClickHouse instead of a store",
                            {&fleet_.url, &fleet_.credentials_path, &fleet_.exact});
  context_->add_option("--label", fleet_.labels, "With --source: only hosts with this label")
      ->type_name("KEY=VALUE")
      ->needs(source);
  context_
      ->add_option("--group-by", fleet_.group_by,
                   "With --source: the fleet section's groups: host, model, engine or gpu_model")
      ->capture_default_str()
      ->type_name("DIM")
      ->needs(source);
  context_
      ->add_option("--rank-by", fleet_.rank_by,
                   "With --source: rank groups by idle, communication, sync or step")
      ->capture_default_str()
      ->type_name("METRIC")
      ->needs(source);
  context_->add_option("--budget", options_.budget_tokens, "Token budget of the text")
      ->capture_default_str()
      ->type_name("TOKENS")
      ->check(IntIn(context::kMinBudgetTokens, context::kMaxBudgetTokens));

  mcp_ = app->add_subcommand("mcp", "Serve the MCP tools over stdio (for AI coding agents)");
  mcp_->footer(kMcpFooter);
  mcp_->add_option("TRACE", mcp_traces_, "Trace files or directories (instead of a store)")
      ->type_name("TRACE...");
  mcp_->add_option("--state-dir", mcp_state_dir_, "The agent's store (default: the state dir)")
      ->type_name("DIR");
  mcp_->add_option("--url", mcp_url_,
                   "A running agent, e.g. http://127.0.0.1:9470 (sends the access token of "
                   "the default state dir when its agent.json names this URL)")
      ->type_name("URL");
  // The same fleet flags as context's (one subcommand is parsed: they share fleet_).
  CLI::Option* mcp_source =
      AddFleetSourceOptions(mcp_, "The fleet in ClickHouse instead of a store",
                            {&fleet_.url, &fleet_.credentials_path, &fleet_.exact});
  mcp_->add_option("--label", fleet_.labels, "With --source: only hosts with this label")
      ->type_name("KEY=VALUE")
      ->needs(mcp_source);
}

namespace {

// "http://127.0.0.1:9470" of "http://127.0.0.1:9470/api/v1".
std::string OriginOf(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  std::string origin = url.substr(0, url.find('/', scheme + 3));
  for (char& c : origin) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return origin;
}

// The access token to send to the agent at `url`: the default state dir's, when its agent.json
// names that same listener. Otherwise none: a listener this user's agent does not own (another
// user's agent on the default port, say) never receives it.
std::string TokenFor(const std::string& url) {
  auto endpoints = net::ReadAgentEndpoints(DefaultStateDir());
  if (!endpoints.ok() || endpoints->access_token.empty()) return "";
  return OriginOf(endpoints->api) == OriginOf(url) ? endpoints->access_token : "";
}

}  // namespace

std::unique_ptr<mcp::DataSource> ContextAndMcpCommands::MakeSource(
    const std::vector<std::string>& traces, const std::string& state_dir, const std::string& url,
    std::ostream& err) {
  const int given = !traces.empty() + !state_dir.empty() + !url.empty() + !fleet_.url.empty();
  if (given > 1) {
    err << "inferscope: error: give one source: trace files, --state-dir, --url or --source\n";
    return nullptr;
  }
  if (!fleet_.url.empty()) {
    auto fleet = FleetSource::Create(fleet_);
    if (!fleet.ok()) {
      err << "inferscope: error: " << fleet.status().message() << "\n";
      return nullptr;
    }
    return std::move(fleet).value();
  }
  if (!traces.empty()) return mcp::MakeTraceSource(traces);
  if (!url.empty()) return mcp::MakeAgentSource(url, TokenFor(url));
  return mcp::MakeStoreSource(state_dir.empty() ? DefaultStateDir() : state_dir);
}

std::optional<int> ContextAndMcpCommands::RunIfParsed() {
  if (context_->parsed()) {
    auto source = MakeSource(traces_, state_dir_, url_, std::cerr);
    if (!fleet_.url.empty())
      options_.narrow_flags = "--last/--from/--to, --host, --label, --pid, --rank, --device";
    if (!source) return kExitUsage;
    if (!last_.empty() && (!options_.range.from.empty() || !options_.range.to.empty())) {
      std::cerr << "inferscope: error: give --last or --from/--to, not both\n";
      return kExitUsage;
    }
    options_.range.last = last_;
    if (pid_ >= 0) options_.filters.pid = static_cast<uint32_t>(pid_);
    if (rank_ >= 0) options_.filters.rank = static_cast<int32_t>(rank_);
    if (device_ >= 0) options_.filters.device = static_cast<uint32_t>(device_);
    return RunContext(options_, source.get(), std::cout, std::cerr);
  }
  if (mcp_->parsed()) {
    auto source = MakeSource(mcp_traces_, mcp_state_dir_, mcp_url_, std::cerr);
    if (!source) return kExitUsage;
    std::cerr << "inferscope mcp: source " << source->Describe() << "\n";
    mcp::Server server(source.get(), report::ToolVersion());
    return mcp::ServeStdio(&server, std::cin, std::cout, std::cerr);
  }
  return std::nullopt;
}

}  // namespace inferscope::cli
