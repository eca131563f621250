// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Where `inferscope context` and the MCP tools get their data: a store (state dir), a running
// agent (its HTTP API) or trace files. Every source answers with the report JSON of
// docs/report-schema.md, so the context text and the tools have one input whatever the source.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/context/context.h"

namespace inferscope::mcp {

// A time range as the user wrote it: `last` (a duration, open-ended like `report --last`) or
// `from`/`to` (the forms of base::ParseTimePoint). Empty everywhere: the last 15 minutes.
struct Range {
  std::string last, from, to;
  bool empty() const { return last.empty() && from.empty() && to.empty(); }
};

// Narrowing. pid/rank/device go to the source; host and engine are applied to the report's ranks
// and engine section by the consumer (the store and API have no host filter).
struct Filters {
  std::string host;
  std::optional<uint32_t> pid;
  std::optional<int32_t> rank;
  std::optional<uint32_t> device;
  std::string engine;
};

struct ProfileRequest {
  Range range;
  Filters filters;
  int top = 50;  // top kernels per rank in the report
};

// A source of report JSON. kNotFound means the range and filters matched no data (the message
// says what the source does hold); kInvalidArgument a bad range or filter (the message names it).
class DataSource {
 public:
  virtual ~DataSource() = default;
  // "store:/var/lib/inferscope", "agent:http://127.0.0.1:9470", "traces:a.json,b.json".
  virtual std::string Describe() const = 0;
  // False for traces: they are analyzed whole and a range is ignored (the answer says so).
  virtual bool HasTimeRanges() const = 0;
  virtual base::StatusOr<std::string> ProfileJson(const ProfileRequest& request) = 0;
  // Sections the source adds to the context after the profile's, for the last ProfileJson's
  // selection (the fleet in ClickHouse: its worst hosts and outliers). None by default.
  virtual base::StatusOr<std::vector<context::ExtraSection>> ContextSections() const {
    return std::vector<context::ExtraSection>{};
  }
};

// The default range of every command and tool.
inline constexpr const char* kDefaultLast = "15m";

// `now_unix_ns` 0: the clock (tests pin it).
std::unique_ptr<DataSource> MakeStoreSource(const std::string& state_dir, int64_t now_unix_ns = 0);
// `url`: the agent's base ("http://127.0.0.1:9470") or its API ("…/api/v1"). `bearer_token`:
// sent as Authorization when set.
std::unique_ptr<DataSource> MakeAgentSource(const std::string& url,
                                            const std::string& bearer_token = "");
// Trace files or directories (as `inferscope analyze` takes them); imported once, on first use.
std::unique_ptr<DataSource> MakeTraceSource(const std::vector<std::string>& paths);

// [from, to) of `range` in Unix ns for a store; to = INT64_MAX when open-ended. `now_unix_ns` is
// "now". Errors name the argument and its accepted forms.
struct ResolvedRange {
  int64_t from_ns = 0, to_ns = 0;
  bool open_ended = false;
};
base::StatusOr<ResolvedRange> ResolveRange(const Range& range, int64_t now_unix_ns);

// "last 15m" / "from A to B" (B "now" when open): how the context header and tool results name a
// range. "host h, rank 1": the filters given, "" for none.
std::string DescribeRange(const Range& range);
std::string DescribeFilters(const Filters& filters);

}  // namespace inferscope::mcp
