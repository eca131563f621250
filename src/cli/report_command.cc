// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/report_command.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <exception>
#include <limits>
#include <map>
#include <new>
#include <vector>

#include "src/agent/store/sqlite_store.h"
#include "src/analyze/analysis.h"
#include "src/base/duration.h"
#include "src/cli/exit_codes.h"
#include "src/model/profile_merge.h"
#include "src/report/format.h"

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

constexpr int64_t kNsPerSec = 1'000'000'000;

int64_t UnixNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

// "2026-01-02 03:04:05 UTC" style, local time, for messages.
std::string FormatTime(int64_t unix_ns) {
  const time_t t = static_cast<time_t>(unix_ns / kNsPerSec);
  tm local{};
  localtime_r(&t, &local);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &local);
  return buf;
}

int Fail(std::ostream& err, const base::Status& status) {
  err << "inferscope: error: " << status.message() << "\n";
  return ExitCodeFor(status);
}

// Keeps only device `device` of every process; drops processes left without devices.
void KeepDevice(uint32_t device, model::ProfileWindow* w) {
  for (model::ProcessProfile& p : w->processes)
    std::erase_if(p.devices, [&](const model::DeviceProfile& d) { return d.device != device; });
  std::erase_if(w->processes, [](const model::ProcessProfile& p) { return p.devices.empty(); });
}

int Run(const ReportOptions& options, std::ostream& out, std::ostream& err) {
  const int64_t now_ns = options.now_unix_ns ? options.now_unix_ns : UnixNowNs();
  agent::WindowQuery query;
  query.pid = options.pid;
  query.rank = options.rank;
  // Without --to the range is open-ended: a window that ends (or even starts) a little after
  // "now" by this host's clock, from a GPU or host clock slightly ahead, still belongs to it.
  constexpr int64_t kOpenEnded = std::numeric_limits<int64_t>::max();
  if (options.from.empty() && options.to.empty()) {
    query.from_ns = now_ns - options.last_ns;
    query.to_ns = kOpenEnded;
  } else {
    if (!options.from.empty()) {
      auto from = ParseTimePoint(options.from, now_ns);
      if (!from.ok())
        return Fail(err, base::InvalidArgumentError("--from: " + from.status().message()));
      query.from_ns = *from;
    }
    query.to_ns = kOpenEnded;
    if (!options.to.empty()) {
      auto to = ParseTimePoint(options.to, now_ns);
      if (!to.ok()) return Fail(err, base::InvalidArgumentError("--to: " + to.status().message()));
      query.to_ns = *to;
    }
    if (query.to_ns <= query.from_ns)
      return Fail(err, base::InvalidArgumentError("--to must be after --from"));
  }

  auto store = agent::SqliteStore::Open(options.state_dir, agent::SqliteStore::Mode::kReadOnly);
  if (!store.ok()) return Fail(err, store.status());
  auto result = (*store)->QueryWindows(query);
  if (!result.ok()) return Fail(err, result.status());
  if (result->corrupt_windows > 0)
    err << "inferscope: note: skipped " << result->corrupt_windows
        << " stored windows that did not decode\n";

  // One merged window per process: a range report reads like the report of one long window.
  model::MergeOptions merge;
  merge.top_k = std::max(options.top, merge.top_k);
  std::map<int64_t, model::ProfileWindow> merged;
  std::map<int64_t, size_t> window_counts;
  for (agent::StoredWindow& stored : result->windows) {
    if (options.device) KeepDevice(*options.device, &stored.window);
    if (stored.window.processes.empty()) continue;
    model::MergeWindow(stored.window, &merged[stored.process_id], merge);
    ++window_counts[stored.process_id];
  }
  if (merged.empty()) {
    const std::string range =
        options.from.empty() && options.to.empty() ? "in the last " + RangeText(options.last_ns)
        : query.to_ns == kOpenEnded
            ? "since " + FormatTime(query.from_ns)
            : "between " + FormatTime(query.from_ns) + " and " + FormatTime(query.to_ns);
    std::string filters;
    if (options.pid) filters += fmt::format(" for pid {}", *options.pid);
    if (options.rank) filters += fmt::format(" for rank {}", *options.rank);
    if (options.device) filters += fmt::format(" on device {}", *options.device);
    err << "inferscope: no profile windows " << range << filters << " in " << (*store)->path()
        << "\n";
    auto summary = (*store)->Summary();
    if (summary.ok() && summary->windows > 0) {
      err << "  the store holds " << summary->windows << " windows from "
          << FormatTime(summary->first_start_ns) << " to " << FormatTime(summary->last_end_ns)
          << "; widen the range with --last or --from/--to\n";
    } else if (summary.ok()) {
      err << "  the store is empty: run the application under 'inferscope run', or with "
             "CUDA_INJECTION64_PATH set, while 'inferscope agent' runs\n";
    }
    return kExitNotFound;
  }

  analyze::AnalysisOptions analysis_options;
  analysis_options.top = options.top;
  analysis_options.bin_ns = 0;
  for (const auto& [id, w] : merged)
    for (const model::ProcessProfile& p : w.processes)
      for (const model::DeviceProfile& d : p.devices)
        if (analysis_options.bin_ns == 0 && d.timeline.bin_ns > 0)
          analysis_options.bin_ns = d.timeline.bin_ns;
  if (analysis_options.bin_ns == 0) analysis_options.bin_ns = 100'000'000;
  std::vector<analyze::AnalysisInput> inputs;
  for (const auto& [id, w] : merged)
    inputs.push_back({"store:" + options.state_dir,
                      fmt::format("inferscope_store, {} windows", window_counts[id]), &w});
  const analyze::Analysis analysis = analyze::Analyze(inputs, analysis_options);
  out << report::Render(analysis, options.format);
  out.flush();
  if (!out) {
    err << "inferscope: error: <stdout>: write failed\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

base::StatusOr<int64_t> ParseTimePoint(std::string_view text, int64_t now_unix_ns) {
  auto bad = [&]() {
    return base::InvalidArgumentError(
        "invalid time '" + std::string(text) +
        "' (use now, -5m, -2h, 2026-01-02T15:04[:05][Z] or Unix seconds)");
  };
  if (text == "now") return now_unix_ns;
  if (!text.empty() && text[0] == '-') {
    auto ago = base::ParseDuration(text.substr(1), base::DurationUnits::kWithLongUnits);
    if (!ago.ok()) return bad();
    return now_unix_ns - *ago;
  }
  if (!text.empty() &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (text.size() > 12) return bad();
    return static_cast<int64_t>(std::stoll(std::string(text))) * kNsPerSec;
  }
  std::string s(text);
  const bool utc = !s.empty() && (s.back() == 'Z' || s.back() == 'z');
  if (utc) s.pop_back();
  tm t{};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%*1[T ]%2d:%2d%n", &t.tm_year, &t.tm_mon, &t.tm_mday,
                  &t.tm_hour, &t.tm_min, &consumed) != 5)
    return bad();
  if (static_cast<size_t>(consumed) < s.size()) {
    int more = 0;
    if (std::sscanf(s.c_str() + consumed, ":%2d%n", &t.tm_sec, &more) != 1 ||
        static_cast<size_t>(consumed + more) != s.size())
      return bad();
  }
  if (t.tm_mon < 1 || t.tm_mon > 12 || t.tm_mday < 1 || t.tm_mday > 31 || t.tm_hour > 23 ||
      t.tm_min > 59 || t.tm_sec > 60)
    return bad();
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  t.tm_isdst = -1;
  const time_t seconds = utc ? timegm(&t) : mktime(&t);
  if (seconds == static_cast<time_t>(-1)) return bad();
  return static_cast<int64_t>(seconds) * kNsPerSec;
}

int RunReport(const ReportOptions& options, std::ostream& out, std::ostream& err) {
  return RunGuarded([&] { return Run(options, out, err); }, err);
}

}  // namespace inferscope::cli
