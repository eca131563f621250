// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The MCP tools (docs/agent.md, "MCP"): few, with tight schemas, every argument optional (the
// last 15 minutes, everything the source holds), every result within a byte budget with
// `truncated` and a hint naming the narrower call. Shared by the stdio and HTTP transports.

#include <simdjson.h>

#include <string>
#include <string_view>

#include "src/mcp/data_source.h"

namespace inferscope::mcp {

// What a tool returns: the text content, the structured content (compact JSON matching the
// tool's outputSchema) and whether it is a tool error (isError; text says how to fix the call).
struct ToolResult {
  std::string text;
  std::string structured;  // empty for errors
  bool is_error = false;
};

// Structured results stay within this many bytes (the text content, a copy or a table of the same
// rows, is no larger): both together stay far below the 25,000-token cap clients enforce.
inline constexpr size_t kToolBudgetBytes = 12000;
inline constexpr int kMaxTopN = 100;

class Tools {
 public:
  // `source` outlives the Tools. Calls are serialized by the caller (one source, one query at a
  // time keeps the store's read load and memory bounded).
  explicit Tools(DataSource* source) : source_(source) {}

  // The `tools` array of tools/list (compact JSON), deterministic.
  static const std::string& DefinitionsJson();
  // Whether `name` is one of the tools.
  static bool Has(std::string_view name);

  // Runs tool `name` with `arguments` (an object; null = none). A tool it does not know is the
  // caller's protocol error (check Has first).
  ToolResult Call(std::string_view name, simdjson::dom::element arguments);

 private:
  DataSource* source_;
};

// Strips the whitespace outside strings from JSON text (base::JsonWriter pretty-prints; stdio
// frames must hold no newline).
std::string MinifyJson(std::string_view json);

}  // namespace inferscope::mcp
