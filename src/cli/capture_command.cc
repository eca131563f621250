// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/capture_command.h"

#include <simdjson.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "src/base/duration.h"
#include "src/base/human_format.h"
#include "src/base/state_dir.h"
#include "src/cli/cli_voice.h"
#include "src/cli/exit_codes.h"
#include "src/net/agent_endpoints.h"
#include "src/net/http_client.h"

namespace inferscope::cli {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "256MB", "1GB", "64MiB", or a plain byte count.
std::optional<uint64_t> ParseSize(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || v < 0) return std::nullopt;
  const std::string unit(end);
  double m = 1;
  if (unit.empty() || unit == "B")
    m = 1;
  else if (unit == "KB" || unit == "KiB")
    m = 1024;
  else if (unit == "MB" || unit == "MiB")
    m = 1024.0 * 1024;
  else if (unit == "GB" || unit == "GiB")
    m = 1024.0 * 1024 * 1024;
  else
    return std::nullopt;
  return static_cast<uint64_t>(v * m);
}

// A status field that may be absent: its default stays.
void Optional(simdjson::error_code) {}

void SleepMs(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1'000'000L};
  nanosleep(&ts, nullptr);
}

std::string ErrorOf(const net::FetchResult& r) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view message;
  if (parser.parse(r.body).get(doc) == simdjson::SUCCESS &&
      doc["error"].get(message) == simdjson::SUCCESS)
    return std::string(message);
  return "HTTP " + std::to_string(r.status);
}

}  // namespace

std::string CaptureFormatFor(const std::string& path) {
  if (EndsWith(path, ".json.gz")) return "json.gz";
  if (EndsWith(path, ".json")) return "json";
  if (EndsWith(path, ".gz")) return "pftrace.gz";
  return "pftrace";
}

int RunCapture(const CaptureOptions& options, std::ostream& err) {
  auto fail = [&](const std::string& message, int code) {
    err << "inferscope: error: " << message << "\n";
    return code;
  };
  auto duration = base::ParseDuration(options.duration);
  if (!duration.ok() || *duration <= 0 || *duration > 60'000'000'000)
    return fail("--duration: want a duration up to 60s, e.g. 2s or 500ms", kExitUsage);
  const auto max_bytes = ParseSize(options.max_size);
  if (!max_bytes || *max_bytes < (1u << 20))
    return fail("--max-size: want a size of at least 1MB, e.g. 256MB", kExitUsage);
  if (options.output_path.empty()) return fail("-o FILE is required", kExitUsage);

  auto endpoints = net::ReadAgentEndpoints(options.state_dir);
  if (!endpoints.ok())
    return fail("no agent is running for " + options.state_dir +
                    " (start one with 'inferscope agent' or 'inferscope run')",
                kExitNotFound);
  std::string query = "/capture?duration=" + std::to_string(*duration) + "ns" +
                      "&max_bytes=" + std::to_string(*max_bytes) +
                      "&format=" + CaptureFormatFor(options.output_path);
  if (options.pid) query += "&pid=" + std::to_string(*options.pid);
  if (options.rank) query += "&rank=" + std::to_string(*options.rank);
  if (options.graph_nodes) query += "&graph_nodes=1";
  auto target = net::ParseHttpUrl(endpoints->api + query, "agent API URL");
  if (!target.ok()) return fail(target.status().message(), kExitError);
  net::FetchOptions fetch;
  fetch.bearer_token = endpoints->access_token;
  auto started = net::HttpPost(*target, fetch);
  if (!started.ok()) return fail("agent API: " + started.status().message(), kExitError);
  if (started->status != 202) return fail("capture refused: " + ErrorOf(*started), kExitError);

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  uint64_t id = 0;
  if (parser.parse(started->body).get(doc) != simdjson::SUCCESS ||
      doc["id"].get(id) != simdjson::SUCCESS)
    return fail("agent API: unexpected answer to POST /capture", kExitError);
  auto status_target =
      net::ParseHttpUrl(endpoints->api + "/capture?id=" + std::to_string(id), "URL");
  if (!status_target.ok()) return fail(status_target.status().message(), kExitError);

  // The agent picks the processes on its next turn: a capture with none to record fails then,
  // and is reported as that failure, never announced as a recording.
  for (int waited_ms = 0; waited_ms < 10'000; waited_ms += 20) {
    auto r = net::HttpGet(*status_target, fetch);
    if (!r.ok()) return fail("agent API: " + r.status().message(), kExitError);
    if (r->status != 200)
      return fail("capture " + std::to_string(id) + ": " + ErrorOf(*r), kExitError);
    std::string_view s, error;
    if (parser.parse(r->body).get(doc) != simdjson::SUCCESS ||
        doc["state"].get(s) != simdjson::SUCCESS)
      return fail("agent API: unexpected capture status", kExitError);
    if (s == "failed") {
      Optional(doc["error"].get(error));
      return fail("capture " + std::to_string(id) + " failed: " + std::string(error), kExitError);
    }
    if (s != "pending") break;
    SleepMs(20);
  }
  err << "inferscope: capture " << id << ": recording " << options.duration << " starting in "
      << (options.graph_nodes ? 3 : 1)
      << " s on every selected process\n";  // the agent's lead (CaptureManager::kLeadNs)

  // Wait: the lead second, the span, the processes' settle time and the agent's writing.
  const int64_t deadline_ms = *duration / 1'000'000 + 60'000;
  std::string state;
  std::string body;
  for (int64_t waited = 0; waited < deadline_ms; waited += 200) {
    SleepMs(200);
    auto r = net::HttpGet(*status_target, fetch);
    if (!r.ok()) return fail("agent API: " + r.status().message(), kExitError);
    if (r->status != 200)
      return fail("capture " + std::to_string(id) + ": " + ErrorOf(*r), kExitError);
    body = r->body;
    std::string_view s;
    if (parser.parse(body).get(doc) != simdjson::SUCCESS ||
        doc["state"].get(s) != simdjson::SUCCESS)
      return fail("agent API: unexpected capture status", kExitError);
    state = std::string(s);
    if (state == "done" || state == "failed") break;
  }
  if (state != "done" && state != "failed")
    return fail("capture " + std::to_string(id) + " did not finish in time (state " + state + ")",
                kExitError);
  // Per process: what it recorded, and any cap hit or loss.
  simdjson::dom::array processes;
  if (doc["processes"].get(processes) == simdjson::SUCCESS) {
    for (simdjson::dom::element p : processes) {
      uint64_t pid = 0, events = 0, lost = 0, dropped = 0;
      int64_t rank = -1;
      std::string_view pstate, cap, refused;
      Optional(p["pid"].get(pid));
      Optional(p["rank"].get(rank));
      Optional(p["events"].get(events));
      Optional(p["records_lost"].get(lost));
      Optional(p["chunks_dropped"].get(dropped));
      Optional(p["state"].get(pstate));
      Optional(p["cap_hit"].get(cap));
      Optional(p["refused"].get(refused));
      err << "  pid " << pid;
      if (rank >= 0) err << " rank " << rank;
      err << ": " << pstate << ", " << base::FormatCount(events) << " events";
      if (!cap.empty()) err << ", stopped early: the " << cap << " cap was reached";
      // What was dropped and why, one line each (an older agent has only the two counts).
      simdjson::dom::array reasons;
      const bool has_reasons = p["dropped"].get(reasons) == simdjson::SUCCESS;
      if (!has_reasons && lost > 0) err << ", " << base::FormatCount(lost) << " CUPTI records lost";
      if (!has_reasons && dropped > 0) err << ", " << dropped << " chunks dropped";
      if (!refused.empty()) err << " (" << refused << ")";
      err << "\n";
      if (has_reasons) {
        for (simdjson::dom::element r : reasons) {
          std::string_view why;
          if (r.get(why) == simdjson::SUCCESS) err << "    " << why << "\n";
        }
      }
    }
  }
  if (state == "failed") {
    std::string_view error;
    Optional(doc["error"].get(error));
    return fail("capture " + std::to_string(id) + " failed: " + std::string(error), kExitError);
  }

  auto download =
      net::ParseHttpUrl(endpoints->api + "/capture/download?id=" + std::to_string(id), "URL");
  if (!download.ok()) return fail(download.status().message(), kExitError);
  net::FetchOptions big = fetch;
  big.read_timeout_ms = 60'000;
  big.max_body_bytes = size_t{4} << 30;
  auto trace = net::HttpGet(*download, big);
  if (!trace.ok()) return fail("agent API: " + trace.status().message(), kExitError);
  if (trace->status != 200) return fail("download: " + ErrorOf(*trace), kExitError);
  std::ofstream out(options.output_path, std::ios::binary | std::ios::trunc);
  out.write(trace->body.data(), static_cast<std::streamsize>(trace->body.size()));
  out.close();
  if (!out) return fail("cannot write " + options.output_path, kExitError);
  uint64_t kernels = 0, api_calls = 0, flows = 0;
  Optional(doc["kernels"].get(kernels));
  Optional(doc["api_calls"].get(api_calls));
  Optional(doc["flows"].get(flows));
  err << "inferscope: wrote " << options.output_path << " ("
      << base::FormatBytes(trace->body.size()) << "): " << base::FormatCount(kernels)
      << " kernels, " << base::FormatCount(api_calls) << " CUDA calls, " << base::FormatCount(flows)
      << " flows\n";
  return kExitOk;
}

CaptureCommand::CaptureCommand(CLI::App* app) {
  cmd_ = app->add_subcommand(
      "capture", "Record a few seconds of every kernel, copy, sync and CUDA call of a live server");
  cmd_->footer(
      "\nAsks the running agent to have its profiled processes record their raw events for the\n"
      "duration, starting at the same wall-clock instant (1 s from now) on every rank, while\n"
      "their profile windows keep flowing; then writes one trace: a track per GPU with a child\n"
      "per stream (kernels by short name, with category, full name, grid/block, correlation and\n"
      "graph ids), a track per host thread (CUDA runtime/driver calls) and its sync waits, flows\n"
      "from each launch to its kernel, and per-category GPU busy-share counters.\n"
      "Only kernel and CUDA API names are recorded, never request content.\n"
      "Memory is bounded: --max-size for all processes together (split evenly), and each\n"
      "process stops recording at its share; the summary says when a cap was reached.\n"
      "One capture at a time per agent.\n\n"
      "Output: .pftrace (Perfetto protobuf, opens in ui.perfetto.dev), .pftrace.gz, .json or\n"
      ".json.gz (Chrome JSON, for small captures).\n\n"
      "Exit codes: 0 written, 1 error (capture refused or failed, cannot write), 2 usage error,\n"
      "3 no agent is running.\n\n"
      "Examples:\n"
      "  inferscope capture --duration 2s -o server.pftrace\n"
      "  inferscope capture --rank 0 --duration 500ms -o rank0.json.gz\n");
  cmd_->add_option("--state-dir", options_.state_dir,
                   "Agent directory (default: $INFERSCOPE_STATE_DIR, else\n"
                   "$XDG_STATE_HOME/inferscope, else ~/.local/state/inferscope)")
      ->type_name("DIR");
  auto* pid = cmd_->add_option("--pid", pid_, "Only this process")->type_name("PID");
  auto* rank = cmd_->add_option("--rank", rank_, "Only this rank")->type_name("R");
  auto* all = cmd_->add_flag("--all", all_, "Every profiled process (the default)");
  pid->excludes(rank)->excludes(all);
  rank->excludes(all);
  cmd_->add_option("--duration", options_.duration, "How long to record (at most 60s)")
      ->capture_default_str()
      ->type_name("DURATION");
  cmd_->add_option("--max-size", options_.max_size,
                   "Memory of the capture, all processes together (e.g. 64MB, 1GB)")
      ->capture_default_str()
      ->type_name("SIZE");
  cmd_->add_flag("--graph-nodes", options_.graph_nodes,
                 "Trace every CUDA graph node as a kernel for the span (graph launches are\n"
                 "otherwise one record each)");
  cmd_->add_option("-o,--output", options_.output_path, "The trace file to write")
      ->required()
      ->type_name("FILE");
}

std::optional<int> CaptureCommand::RunIfParsed() {
  if (!cmd_->parsed()) return std::nullopt;
  if (options_.state_dir.empty())
    options_.state_dir =
        base::DefaultStateDir([](const char* n) -> const char* { return std::getenv(n); });
  if (cmd_->count("--pid") > 0) options_.pid = pid_;
  if (cmd_->count("--rank") > 0) options_.rank = rank_;
  return RunGuarded([&] { return RunCapture(options_, std::cerr); }, std::cerr);
}

}  // namespace inferscope::cli
