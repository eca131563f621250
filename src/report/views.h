// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The report's tables as data with two faces: each cell's raw value (integers in ns, for CSV) and
// its human text (for the terminal and markdown). One builder per table, so `--format csv` and the
// text report always list the same rows. Internal to src/report.

#include <string>
#include <vector>

#include "src/analyze/analysis.h"
#include "src/base/json_writer.h"
#include "src/report/document.h"

namespace inferscope::report {

struct ViewCell {
  std::string raw;   // CSV: plain numbers (ns, counts, percent as a decimal number), names as is
  std::string text;  // the text report
};

struct ViewTable {
  std::string key;    // the CSV table name (`--table`)
  std::string title;  // the text section title
  std::vector<Column> columns;
  std::vector<std::string> csv_headers;  // one per column
  std::vector<bool> csv_only;            // one per column: left out of the text table (width)
  std::vector<std::vector<ViewCell>> rows;
  std::vector<std::string> notes;  // paragraph lines under the text table
  std::string empty_note;          // the text in place of a table without rows
};

// Every table `--format csv --table` can print, in the order `--help` lists them.
const std::vector<std::string>& TableNames();

// The tables of the views the analysis carries (Analysis::views), in report order; none when no
// view was selected.
std::vector<ViewTable> BuildViewTables(const analyze::Analysis& a);

// The table named `key` (TableNames()); false when there is no such table.
bool BuildTable(const analyze::Analysis& a, const std::string& key, ViewTable* table);

// The "views" key's value of the JSON report (docs/report-schema.md).
void WriteViewsJson(base::JsonWriter& w, const analyze::Analysis& a);

// The launch configurations of one kernel row: its "distinct_launch_configs" and
// "launch_configs" keys (the kernels view's rows, and the live windows' top kernels).
void WriteLaunchConfigs(base::JsonWriter& w, const std::vector<model::LaunchConfig>& configs,
                        uint64_t distinct);

// Sections for the text and markdown report.
void AppendViewSections(const analyze::Analysis& a, Document* doc);

}  // namespace inferscope::report
