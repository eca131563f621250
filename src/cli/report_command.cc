// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/report_command.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <new>

#include "src/base/duration.h"
#include "src/base/file.h"
#include "src/base/time_point.h"
#include "src/cli/cli_voice.h"
#include "src/cli/exit_codes.h"
#include "src/query/range_query.h"
#include "src/report/format.h"
#include "src/report/report.h"
#include "src/store/sqlite_store.h"

namespace inferscope::cli {
namespace {

// "5 min", "2 h", "7 d" for whole units (how people give --last), else a plain duration.
std::string RangeText(int64_t ns) {
  constexpr int64_t kMin = 60'000'000'000, kHour = 60 * kMin, kDay = 24 * kHour;
  if (ns > 0 && ns % kDay == 0) return fmt::format("{} d", ns / kDay);
  if (ns > 0 && ns % kHour == 0) return fmt::format("{} h", ns / kHour);
  if (ns > 0 && ns % kMin == 0) return fmt::format("{} min", ns / kMin);
  return report::FormatDuration(ns);
}

// "10s", "500ms": a duration as --window takes it.
std::string FlagDuration(int64_t ns) {
  if (ns % 1'000'000'000 == 0) return fmt::format("{}s", ns / 1'000'000'000);
  if (ns % 1'000'000 == 0) return fmt::format("{}ms", ns / 1'000'000);
  return report::FormatDuration(ns);
}

// The running agent's window length from <state dir>/agent.json; 0 when unknown (no agent, or
// one from before it wrote it).
int64_t AgentWindowNs(const std::string& state_dir) {
  auto text = base::ReadSmallFile(state_dir + "/agent.json", "agent.json");
  if (!text.ok()) return 0;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  int64_t window_ns = 0;
  if (parser.parse(*text).get(doc) != simdjson::SUCCESS ||
      doc["window_ns"].get_int64().get(window_ns) != simdjson::SUCCESS)
    return 0;
  return window_ns > 0 ? window_ns : 0;
}

// Processes that said hello in the range, have not said goodbye and never sent a window (a window
// moves last_seen past the hello's first_seen): their first window is still being collected.
size_t WaitingProcesses(store::SqliteStore& store, const query::RangeQuery& query) {
  auto processes = store.ListProcesses(query.Windows(), /*include_idle=*/true);
  if (!processes.ok()) return 0;
  size_t n = 0;
  for (const store::ProcessInfo& p : *processes)
    n += p.windows == 0 && p.process.ended_ns == 0 &&
         p.process.last_seen_ns == p.process.first_seen_ns;
  return n;
}

int Fail(std::ostream& err, const base::Status& status) {
  err << "inferscope: error: " << status.message() << "\n";
  return ExitCodeFor(status);
}

int Run(const ReportOptions& options, std::ostream& out, std::ostream& err) {
  const int64_t now_ns = options.now_unix_ns ? options.now_unix_ns : base::UnixNowNs();
  query::RangeQuery query;
  query.now_ns = now_ns;
  query.pid = options.pid;
  query.rank = options.rank;
  query.device = options.device;
  query.top = options.top;
  // The kernels view's tables print from the windows when asked for, as analyze prints them.
  query.kernels_view = options.kernels_view || options.csv_table == "kernel_stats" ||
                       options.csv_table == "launch_configs";
  if (!options.thresholds_path.empty()) {
    auto thresholds = analyze::LoadThresholdsFile(options.thresholds_path);
    if (!thresholds.ok()) return Fail(err, thresholds.status());
    query.thresholds = *thresholds;
  }
  query.gpu_hourly_usd = options.gpu_hourly_usd;
  if (!options.gpu_prices_path.empty()) {
    auto table = analyze::LoadGpuPriceTableFile(options.gpu_prices_path);
    if (!table.ok()) return Fail(err, table.status());
    query.gpu_prices = *table;
  }
  // Without --to the range is open-ended: a window that ends (or even starts) a little after
  // "now" by this host's clock, from a GPU or host clock slightly ahead, still belongs to it.
  constexpr int64_t kOpenEnded = std::numeric_limits<int64_t>::max();
  if (options.from.empty() && options.to.empty()) {
    query.from_ns = now_ns - options.last_ns;
    query.to_ns = kOpenEnded;
  } else {
    if (!options.from.empty()) {
      auto from = base::ParseTimePoint(options.from, now_ns);
      if (!from.ok())
        return Fail(err, base::InvalidArgumentError("--from: " + from.status().message()));
      query.from_ns = *from;
    }
    query.to_ns = kOpenEnded;
    if (!options.to.empty()) {
      auto to = base::ParseTimePoint(options.to, now_ns);
      if (!to.ok()) return Fail(err, base::InvalidArgumentError("--to: " + to.status().message()));
      query.to_ns = *to;
    }
    if (query.to_ns <= query.from_ns)
      return Fail(err, base::InvalidArgumentError("--to must be after --from"));
  }

  auto store = store::SqliteStore::Open(options.state_dir, store::SqliteStore::Mode::kReadOnly);
  if (!store.ok()) return Fail(err, store.status());
  auto result = query::QueryRangeProfile(**store, query, "store:" + options.state_dir);
  if (!result.ok()) return Fail(err, result.status());
  if (result->corrupt_windows > 0)
    err << "inferscope: note: skipped " << result->corrupt_windows
        << " stored windows that did not decode\n";
  const std::string range =
      options.from.empty() && options.to.empty() ? "in the last " + RangeText(options.last_ns)
      : query.to_ns == kOpenEnded                ? "since " + base::FormatLocalTime(query.from_ns)
                                  : "between " + base::FormatLocalTime(query.from_ns) + " and " +
                                        base::FormatLocalTime(query.to_ns);
  // Where the range holds nothing, what the rest of the store holds: the range to ask for instead.
  auto explain_store = [&] {
    auto summary = (*store)->Summary();
    if (summary.ok() && summary->windows > 0) {
      err << "  the store holds " << summary->windows << " windows from "
          << base::FormatLocalTime(summary->first_start_ns) << " to "
          << base::FormatLocalTime(summary->last_end_ns)
          << "; widen the range with --last or --from/--to\n";
    } else if (summary.ok()) {
      err << "  the store is empty: run the application under 'inferscope run', or with "
             "CUDA_INJECTION64_PATH set, while 'inferscope agent' runs\n";
    }
  };
  const std::string filters = query::FilterText(query);
  // Before the first window: processes connected (their hello is stored) but nothing to report
  // yet. Say so, and when to look again, rather than "the store is empty".
  const size_t waiting =
      result->windows == 0 && filters.empty() ? WaitingProcesses(**store, query) : 0;
  if (waiting > 0) {
    const int64_t window_ns = AgentWindowNs(options.state_dir);
    err << "inferscope: waiting for the first window ("
        << (window_ns > 0 ? "window " + FlagDuration(window_ns) + ", " : "") << waiting
        << (waiting == 1 ? " process" : " processes") << " connected) in " << (*store)->path()
        << "\n"
        << "  a process sends its first window one window after its first CUDA work; run "
           "'inferscope report' again then\n";
    if (result->telemetry_windows == 0) return kExitNotFound;
  }
  if (result->windows == 0 && result->telemetry_windows == 0 && filters.empty()) {
    err << "inferscope: no profile windows " << range << " in " << (*store)->path() << "\n";
    explain_store();
    return kExitNotFound;
  }
  // No verdict without evidence: a filter that matched nothing, or windows without a kernel, copy
  // or memset, would otherwise read as "healthy".
  if (query::NoGpuActivityMatched(query, *result)) {
    err << "inferscope: no GPU activity matched" << (filters.empty() ? "" : " " + filters) << " "
        << range << " in " << (*store)->path() << "\n";
    auto holds = query::DescribeRange(**store, query);
    if (!holds.ok()) return Fail(err, holds.status());
    if (holds->empty()) {
      explain_store();
    } else {
      err << "  the range holds:\n";
      for (const std::string& line : *holds) err << "    " << line << "\n";
    }
    return kExitNotFound;
  }
  if (result->windows == 0 && waiting == 0)
    err << "inferscope: note: no profile windows in the range (no profiled process sent any); "
           "showing the host telemetry only\n";
  if (!options.csv_table.empty()) {
    // One table as CSV, as `analyze --format csv` prints it (the views' tables hold what the
    // windows carry: the ranges view after `run --nvtx`, nothing for the other views).
    std::string csv;
    if (!report::RenderCsv(result->analysis, options.csv_table, &csv)) {
      err << "inferscope: error: --table: unknown table '" << options.csv_table << "'\n";
      return kExitUsage;
    }
    out << csv;
    return FlushOutput(out, err) ? kExitOk : kExitError;
  }
  out << query::RenderRangeReport(*result, options.format);
  return FlushOutput(out, err) ? kExitOk : kExitError;
}

}  // namespace

int RunReport(const ReportOptions& options, std::ostream& out, std::ostream& err) {
  return RunGuarded([&] { return Run(options, out, err); }, err);
}

}  // namespace inferscope::cli
