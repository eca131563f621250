// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope context` and the MCP tool get_context: one bounded, self-describing text of a
// report (docs/report-schema.md) for a reader with a token budget, most important first: what was
// profiled, the diagnosis, where GPU time went, why the GPU idled, host telemetry, data quality
// and the tags to narrow by. Every cut is marked with what it left out.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "src/context/report_view.h"

namespace inferscope::context {

// Tokens are estimated from bytes conservatively: 3 bytes a token (English prose runs ~4; numbers,
// tables and kernel names tokenize worse), so a text within budget_tokens * 3 bytes stays within
// budget_tokens for the usual tokenizers.
inline constexpr size_t kBytesPerToken = 3;
inline constexpr int kDefaultBudgetTokens = 6000;
inline constexpr int kMinBudgetTokens = 200;
inline constexpr int kMaxBudgetTokens = 100000;

inline size_t EstimateTokens(size_t bytes) { return (bytes + kBytesPerToken - 1) / kBytesPerToken; }

// A section the caller adds, rendered after the diagnosis under the same budget and cut the same
// way (the fleet view of `context --source clickhouse://`: worst hosts and outliers). `rows`
// start with their header row; `cut_noun` names what a cut drops ("hosts").
struct ExtraSection {
  std::string title;
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right;
  std::string cut_noun;
};

struct ContextOptions {
  int budget_tokens = kDefaultBudgetTokens;
  std::string source;        // "store:/var/lib/inferscope", "traces:a.json"
  std::string range_text;    // what was asked for: "last 15m", "whole trace"
  std::string filters_text;  // the filters applied: "host node-a, rank 1"; "" for none
  std::string command;       // how to narrow in the hints: "inferscope context" or "get_context"
  // The narrowing flags the hint names.
  std::string narrow_flags = "--last/--from/--to, --host, --pid, --rank, --device";
  std::vector<ExtraSection> extra_sections;
};

struct ContextResult {
  std::string text;
  bool truncated = false;            // some row or section was cut for the budget
  std::vector<std::string> omitted;  // sections left out entirely
  size_t bytes() const { return text.size(); }
};

// Renders `view`. The text never exceeds budget_tokens * kBytesPerToken bytes.
ContextResult RenderContext(const ReportView& view, const ContextOptions& options);

// A cut-down aligned table: each row's cells padded to the column's width, two spaces apart,
// trailing spaces dropped. `right` marks right-aligned (numeric) columns.
std::string AlignedTable(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right);

}  // namespace inferscope::context
