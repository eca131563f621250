// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Renderers over an Analysis: a terminal report (fits 100 columns), the same content as GitHub
// markdown, and a versioned JSON document for programs and agents (docs/report-schema.md).

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analyze/analysis.h"
#include "src/base/json_writer.h"

namespace inferscope::report {

enum class ReportFormat { kText, kMarkdown, kJson };

// "text", "markdown" (or "md"), "json"; returns false for anything else.
bool ParseReportFormat(std::string_view name, ReportFormat* format);

// The inferscope version ("0.1.0"), as the JSON report and --version show it.
const char* ToolVersion();

// The JSON schema version this build writes.
inline constexpr int kJsonSchemaVersion = 1;

// Every line is at most `width` columns (long kernel names are shortened with "...").
std::string RenderText(const analyze::Analysis& analysis, int width = 100);
std::string RenderMarkdown(const analyze::Analysis& analysis);
std::string RenderJson(const analyze::Analysis& analysis);
std::string RenderJson(const analyze::Analysis& analysis,
                       const std::function<void(base::JsonWriter&)>& extra_keys);

std::string Render(const analyze::Analysis& analysis, ReportFormat format);

// One table of the report as CSV (RFC 4180: a header row, then one row per line; durations in
// integer ns, percentages as decimal numbers): `analyze --format csv --table NAME`. The tables are
// CsvTableNames(); the views' tables are empty unless the analysis carries that view. False for an
// unknown name.
bool RenderCsv(const analyze::Analysis& analysis, const std::string& table, std::string* out);
const std::vector<std::string>& CsvTableNames();

// What a caller adds beside the kernel profile: `inferscope report` adds the GPU metrics, engine
// load and request latencies of the same time range. Text and markdown get the sections (each a
// preformatted block, after the profile), then the data sections present; JSON gets the keys
// `json` writes into the top-level object, after the profile's own keys, then one key per data
// section.
struct ReportExtras {
  struct Section {
    std::string title;
    std::vector<std::string> lines;
  };
  std::vector<Section> sections;
  std::function<void(base::JsonWriter&)> json;
  // A section backed by data (host telemetry, cost), rendered for the format asked: JSON writes
  // `key` with write_json's value (null when absent), text and markdown a section `title` with
  // render_text's lines (none when absent).
  struct DataSection {
    std::string key;
    std::string title;
    bool present = false;
    std::function<void(base::JsonWriter&)> write_json;
    std::function<void(std::string*)> render_text;
  };
  std::vector<DataSection> data;
  // Header lines saying what the report covers, in place of the one-per-input "input:" lines
  // (text and markdown; a store range: one input line and the range).
  std::vector<std::string> input_lines;
};
std::string Render(const analyze::Analysis& analysis, ReportFormat format,
                   const ReportExtras& extras);

}  // namespace inferscope::report
