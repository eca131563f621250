// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Adapter: the store as a DataSource, through query::QueryRangeProfile (the code path of
// `inferscope report` and /api/v1/profile). The one place the MCP tools touch the range query.

#include <algorithm>
#include <limits>
#include <string>

#include "src/base/duration.h"
#include "src/base/time_point.h"
#include "src/mcp/data_source.h"
#include "src/query/range_query.h"
#include "src/report/report.h"
#include "src/store/sqlite_store.h"

namespace inferscope::mcp {

std::string DescribeRange(const Range& r) {
  if (r.from.empty() && r.to.empty())
    return "last " + (r.last.empty() ? std::string(kDefaultLast) : r.last);
  return "from " + (r.from.empty() ? "?" : r.from) + " to " + (r.to.empty() ? "now" : r.to);
}

std::string DescribeFilters(const Filters& f) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  if (!f.host.empty()) add("host " + f.host);
  if (f.pid) add("pid " + std::to_string(*f.pid));
  if (f.rank) add("rank " + std::to_string(*f.rank));
  if (f.device) add("device " + std::to_string(*f.device));
  if (!f.engine.empty()) add("engine " + f.engine);
  return out;
}

base::StatusOr<ResolvedRange> ResolveRange(const Range& range, int64_t now_unix_ns) {
  ResolvedRange out;
  if (!range.last.empty() && (!range.from.empty() || !range.to.empty()))
    return base::InvalidArgumentError("range: give either last or from/to, not both");
  if (range.from.empty() && range.to.empty()) {
    auto last = base::ParseDuration(range.last.empty() ? kDefaultLast : range.last,
                                    base::DurationUnits::kWithLongUnits);
    if (!last.ok())
      return base::InvalidArgumentError("range.last: " + last.status().message() +
                                        " (e.g. \"15m\", \"2h\", \"1d\")");
    if (*last <= 0) return base::InvalidArgumentError("range.last must be above 0 (e.g. \"15m\")");
    out.from_ns = now_unix_ns - *last;
    out.to_ns = std::numeric_limits<int64_t>::max();
    out.open_ended = true;
    return out;
  }
  if (range.from.empty())
    return base::InvalidArgumentError("range.to needs range.from (or use range.last)");
  auto from = base::ParseTimePoint(range.from, now_unix_ns);
  if (!from.ok())
    return base::InvalidArgumentError("range.from: " + from.status().message() +
                                      " (e.g. \"-2h\", \"2026-01-02T15:04Z\" or Unix seconds)");
  out.from_ns = *from;
  out.to_ns = std::numeric_limits<int64_t>::max();
  out.open_ended = true;
  if (!range.to.empty()) {
    auto to = base::ParseTimePoint(range.to, now_unix_ns);
    if (!to.ok())
      return base::InvalidArgumentError("range.to: " + to.status().message() +
                                        " (e.g. \"now\", \"-1h\", \"2026-01-02T16:04Z\")");
    out.to_ns = *to;
    out.open_ended = false;
  }
  if (out.to_ns <= out.from_ns)
    return base::InvalidArgumentError("range.to must be after range.from");
  return out;
}

namespace {

class StoreSource : public DataSource {
 public:
  StoreSource(std::string state_dir, int64_t now_unix_ns)
      : state_dir_(std::move(state_dir)), now_unix_ns_(now_unix_ns) {}

  std::string Describe() const override { return "store:" + state_dir_; }
  bool HasTimeRanges() const override { return true; }

  base::StatusOr<std::string> ProfileJson(const ProfileRequest& request) override {
    const int64_t now = now_unix_ns_ != 0 ? now_unix_ns_ : base::UnixNowNs();
    ASSIGN_OR_RETURN(ResolvedRange range, ResolveRange(request.range, now));
    query::RangeQuery query;
    query.from_ns = range.from_ns;
    query.to_ns = range.to_ns;
    query.now_ns = now;
    query.pid = request.filters.pid;
    query.rank = request.filters.rank;
    query.device = request.filters.device;
    // The rollup tiers hold the default top-K per window: a bigger top would read every raw
    // window of the range (24 h of 8 GPUs: 4 s instead of 0.1 s). The tail is still accounted
    // for (other_kernels), so shares stay right.
    query.top = std::min(request.top, query::RangeQuery().top);
    auto store = store::SqliteStore::Open(state_dir_, store::SqliteStore::Mode::kReadOnly);
    if (!store.ok()) return store.status();
    ASSIGN_OR_RETURN(query::RangeProfile profile,
                     query::QueryRangeProfile(**store, query, Describe()));
    const std::string filters = query::FilterText(query);
    if ((profile.windows == 0 && profile.telemetry_windows == 0) ||
        query::NoGpuActivityMatched(query, profile)) {
      std::string message =
          "no data matched" + (filters.empty() ? "" : " " + filters) + " in the range";
      auto holds = query::DescribeRange(**store, query);
      if (holds.ok() && !holds->empty()) {
        message += "; the range holds:";
        for (const std::string& line : *holds) message += " [" + line + "]";
      } else {
        auto summary = (*store)->Summary();
        if (summary.ok() && summary->windows > 0)
          message += "; the store holds windows from " +
                     base::FormatUtcTime(summary->first_start_ns) + " to " +
                     base::FormatUtcTime(summary->last_end_ns) + ": widen the range";
        else
          message += "; the store holds no windows yet";
      }
      return base::NotFoundError(message);
    }
    return query::RenderRangeReport(profile, report::ReportFormat::kJson);
  }

 private:
  std::string state_dir_;
  int64_t now_unix_ns_ = 0;
};

}  // namespace

std::unique_ptr<DataSource> MakeStoreSource(const std::string& state_dir, int64_t now_unix_ns) {
  return std::make_unique<StoreSource>(state_dir, now_unix_ns);
}

}  // namespace inferscope::mcp
