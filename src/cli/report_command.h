// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope report`: the windows the agent stored for a time range, merged per process and
// rendered like `inferscope analyze` renders trace files (same analyses, same formats).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "src/base/status.h"
#include "src/report/report.h"

namespace inferscope::cli {

struct ReportOptions {
  std::string state_dir;              // where the agent keeps inferscope.db
  int64_t last_ns = 300'000'000'000;  // range = [now - last, now) unless from/to are set
  std::string from, to;               // time points (base::ParseTimePoint); either may be empty
  std::optional<uint32_t> pid;
  std::optional<int32_t> rank;
  std::optional<uint32_t> device;
  report::ReportFormat format = report::ReportFormat::kText;
  std::string csv_table;  // --format csv: the table printed (report::CsvTableNames); else empty
  int top = 15;
  bool kernels_view = false;             // --views kernels
  std::string thresholds_path;           // --diagnosis-thresholds
  std::optional<double> gpu_hourly_usd;  // --gpu-hourly-cost
  std::string gpu_prices_path;           // --gpu-prices
  int64_t now_unix_ns = 0;               // 0: the clock (tests pin it)
};

// Runs the command. The report goes to `out`; errors (one line) and notes go to `err`.
// Exit codes: 0 ok, 2 usage, 3 no store, no windows in the range or no GPU activity matched the
// filters (the message says what the range holds), 5 corrupt store, 1 other.
int RunReport(const ReportOptions& options, std::ostream& out, std::ostream& err);

}  // namespace inferscope::cli
