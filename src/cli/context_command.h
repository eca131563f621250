// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope context` (one bounded text of a window for an AI coding agent) and `inferscope mcp`
// (the MCP server on stdio); docs/cli.md. Both read a store, an agent URL or trace files through
// mcp::DataSource.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "src/cli/fleet_source.h"
#include "src/context/context.h"
#include "src/mcp/data_source.h"

namespace CLI {
class App;
}  // namespace CLI

namespace inferscope::cli {

struct ContextCommandOptions {
  mcp::Range range;
  mcp::Filters filters;
  int budget_tokens = 6000;
  // The narrowing flags the closing hint names ("": the default ones). The sections after the
  // diagnosis come from the source (DataSource::ContextSections: the fleet view of --source).
  std::string narrow_flags;
};

// Renders the context of `source` to `out`. Exit codes: 0 ok, 2 bad range or filter, 3 no data
// matched (the message says what the source holds), 1 other.
int RunContext(const ContextCommandOptions& options, mcp::DataSource* source, std::ostream& out,
               std::ostream& err);

// Registers `context` and `mcp` on the binary's app and runs whichever was parsed.
class ContextAndMcpCommands {
 public:
  explicit ContextAndMcpCommands(CLI::App* app);
  std::optional<int> RunIfParsed();

 private:
  // The source the flags name (traces, --url, --source, or the state dir); nullptr after a usage
  // error, said on `err`.
  std::unique_ptr<mcp::DataSource> MakeSource(const std::vector<std::string>& traces,
                                              const std::string& state_dir, const std::string& url,
                                              std::ostream& err);

  CLI::App* context_ = nullptr;
  CLI::App* mcp_ = nullptr;
  ContextCommandOptions options_;
  std::string last_, state_dir_, url_;
  std::vector<std::string> traces_;
  int64_t pid_ = -1, rank_ = -1, device_ = -1;
  FleetSourceOptions fleet_;  // --source clickhouse://... and its flags
  std::string mcp_state_dir_, mcp_url_;
  std::vector<std::string> mcp_traces_;
};

}  // namespace inferscope::cli
