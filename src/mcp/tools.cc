// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/mcp/tools.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "src/analyze/compare.h"
#include "src/base/duration.h"
#include "src/base/json_writer.h"
#include "src/context/context.h"
#include "src/context/report_view.h"

namespace inferscope::mcp {
namespace {

namespace dom = simdjson::dom;
using context::ReportView;

constexpr int kMcpMaxBudgetTokens = 8000;
constexpr size_t kMaxPoints = 200;
constexpr size_t kDefaultPoints = 60;

ToolResult Error(const std::string& message) { return {message, "", true}; }

ToolResult Success(const std::string& structured_pretty) {
  std::string json = MinifyJson(structured_pretty);
  return {json, json, false};
}

// The arguments a call may carry, parsed and checked. Messages say how to fix the call.
struct Args {
  Range range, range_a, range_b;
  Filters filters;
  int budget = context::kDefaultBudgetTokens;
  std::string group_by = "category";
  int top_n = 10;
  std::string metric = "busy_pct";
  std::string step;
};

base::Status ParseRange(dom::element e, const char* name, Range* out) {
  std::string_view s;
  if (e.get(s) == simdjson::SUCCESS) {  // shorthand: "1h" means {"last": "1h"}
    out->last = std::string(s);
    return base::OkStatus();
  }
  dom::object o;
  if (e.get(o) != simdjson::SUCCESS)
    return base::InvalidArgumentError(std::string(name) +
                                      " must be an object like {\"last\":\"1h\"} or "
                                      "{\"from\":\"-2h\",\"to\":\"-1h\"}");
  for (auto [key, value] : o) {
    std::string_view v;
    if (value.get(v) != simdjson::SUCCESS)
      return base::InvalidArgumentError(fmt::format("{}.{} must be a string", name, key));
    if (key == "last")
      out->last = std::string(v);
    else if (key == "from")
      out->from = std::string(v);
    else if (key == "to")
      out->to = std::string(v);
    else
      return base::InvalidArgumentError(
          fmt::format("{}: unknown key '{}'; use last, or from and to", name, key));
  }
  return base::OkStatus();
}

base::Status ParseFilters(dom::element e, Filters* out) {
  dom::object o;
  if (e.get(o) != simdjson::SUCCESS)
    return base::InvalidArgumentError("filters must be an object like {\"rank\":0}");
  for (auto [key, value] : o) {
    int64_t n = 0;
    std::string_view s;
    if (key == "host" || key == "engine") {
      if (value.get(s) != simdjson::SUCCESS)
        return base::InvalidArgumentError(fmt::format("filters.{} must be a string", key));
      (key == "host" ? out->host : out->engine) = std::string(s);
      continue;
    }
    if (key != "pid" && key != "rank" && key != "device")
      return base::InvalidArgumentError(fmt::format(
          "filters: unknown key '{}'; use host, pid, rank, device, engine (list_targets shows "
          "the values)",
          key));
    if (value.get(n) != simdjson::SUCCESS || n < 0 || n > INT32_MAX)
      return base::InvalidArgumentError(
          fmt::format("filters.{} must be a non-negative integer", key));
    if (key == "pid")
      out->pid = static_cast<uint32_t>(n);
    else if (key == "rank")
      out->rank = static_cast<int32_t>(n);
    else
      out->device = static_cast<uint32_t>(n);
  }
  return base::OkStatus();
}

base::Status ParseArgs(std::string_view tool, dom::element arguments,
                       const std::set<std::string_view>& allowed, Args* args) {
  if (arguments.is_null()) return base::OkStatus();
  dom::object o;
  if (arguments.get(o) != simdjson::SUCCESS)
    return base::InvalidArgumentError("arguments must be an object");
  for (auto [key, value] : o) {
    if (!allowed.count(key)) {
      std::string names;
      for (std::string_view a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
      return base::InvalidArgumentError(
          fmt::format("{}: unknown argument '{}'; it takes {}", tool, key, names));
    }
    int64_t n = 0;
    std::string_view s;
    if (key == "range")
      RETURN_IF_ERROR(ParseRange(value, "range", &args->range));
    else if (key == "range_a")
      RETURN_IF_ERROR(ParseRange(value, "range_a", &args->range_a));
    else if (key == "range_b")
      RETURN_IF_ERROR(ParseRange(value, "range_b", &args->range_b));
    else if (key == "filters")
      RETURN_IF_ERROR(ParseFilters(value, &args->filters));
    else if (key == "budget") {
      if (value.get(n) != simdjson::SUCCESS || n < context::kMinBudgetTokens ||
          n > kMcpMaxBudgetTokens)
        return base::InvalidArgumentError(fmt::format(
            "budget must be an integer from {} to {} tokens (default {}); for more, narrow the "
            "range or filters",
            context::kMinBudgetTokens, kMcpMaxBudgetTokens, context::kDefaultBudgetTokens));
      args->budget = static_cast<int>(n);
    } else if (key == "top_n") {
      if (value.get(n) != simdjson::SUCCESS || n < 1 || n > kMaxTopN)
        return base::InvalidArgumentError(fmt::format(
            "top_n must be an integer from 1 to {}; the rest is summed in `rest`, and filters "
            "(rank, device) narrow further",
            kMaxTopN));
      args->top_n = static_cast<int>(n);
    } else if (key == "group_by" || key == "metric" || key == "step") {
      if (value.get(s) != simdjson::SUCCESS)
        return base::InvalidArgumentError(fmt::format("{} must be a string", key));
      (key == "group_by" ? args->group_by
       : key == "metric" ? args->metric
                         : args->step) = std::string(s);
    }
  }
  if (args->group_by != "category" && args->group_by != "subcategory" &&
      args->group_by != "kernel" && args->group_by != "rank")
    return base::InvalidArgumentError("group_by must be category, subcategory, kernel or rank");
  return base::OkStatus();
}

// Fetches and parses the report of a range; an error result says how to fix the call.
base::StatusOr<ReportView> Load(DataSource* source, const Range& range, const Filters& filters,
                                int top, std::string* error) {
  ProfileRequest request{range, filters, top};
  auto json = source->ProfileJson(request);
  if (!json.ok()) {
    const base::Status& s = json.status();
    if (s.code() == base::StatusCode::kNotFound)
      *error = "No data for " + DescribeRange(range) +
               (DescribeFilters(filters).empty() ? "" : " with " + DescribeFilters(filters)) +
               ": " + s.message() +
               ". Try a wider range (e.g. {\"last\":\"24h\"}) or call list_targets.";
    else if (s.code() == base::StatusCode::kInvalidArgument)
      *error = "Bad argument: " + s.message();
    else
      *error = "Failed to read " + source->Describe() + ": " + s.message();
    return s;
  }
  auto view = context::ParseReport(*json, filters.host, filters.engine);
  if (!view.ok()) *error = view.status().message() + " (list_targets shows the hosts)";
  return view;
}

// The largest k <= n for which render(k) fits the budget (rows are cut from the end).
std::string FitRows(size_t n, const std::function<std::string(size_t)>& render, size_t* kept) {
  std::string full = render(n);
  if (full.size() <= kToolBudgetBytes) {
    *kept = n;
    return full;
  }
  size_t lo = 0, hi = n;  // render(lo) fits (assumed), render(hi) does not
  while (hi - lo > 1) {
    const size_t mid = (lo + hi) / 2;
    if (render(mid).size() <= kToolBudgetBytes)
      lo = mid;
    else
      hi = mid;
  }
  *kept = lo;
  return render(lo);
}

void CutFields(base::JsonWriter* w, bool truncated, const std::string& hint) {
  w->Key("truncated").Bool(truncated);
  w->Key("hint").String(hint);
}

ToolResult ListTargets(DataSource* source, const Args& a) {
  std::string error;
  auto view = Load(source, a.range, a.filters, 1, &error);
  if (!view.ok()) return Error(error);
  std::set<std::string> engines, models(view->models.begin(), view->models.end());
  if (!view->engine.empty()) engines.insert(view->engine);
  size_t kept = 0;
  auto render = [&](size_t k) {
    base::JsonWriter w;
    w.BeginObject();
    w.Key("source").String(source->Describe());
    w.Key("range").String(source->HasTimeRanges() ? DescribeRange(a.range) : "whole trace");
    w.Key("targets").BeginArray();
    for (size_t i = 0; i < k; ++i) {
      const context::RankView& r = view->ranks[i];
      w.BeginObject();
      w.Key("host").String(r.hostname);
      w.Key("pid").Int(r.pid);
      w.Key("rank").Int(r.rank);
      w.Key("device").Int(r.device);
      w.Key("gpu").String(r.device_name);
      w.Key("kernels").Int(r.kernel_count);
      w.EndObject();
    }
    w.EndArray();
    w.Key("engines").BeginArray();
    for (const std::string& e : engines) w.String(e);
    w.EndArray();
    w.Key("models").BeginArray();
    for (const std::string& m : models) w.String(m);
    w.EndArray();
    CutFields(&w, k < view->ranks.size(),
              k < view->ranks.size()
                  ? fmt::format("{} more targets: filter by host or pid", view->ranks.size() - k)
                  : "");
    w.EndObject();
    return MinifyJson(w.str());
  };
  return Success(FitRows(view->ranks.size(), render, &kept));
}

ToolResult GetContext(DataSource* source, const Args& a) {
  std::string error;
  auto view = Load(source, a.range, a.filters, 50, &error);
  if (!view.ok()) return Error(error);
  context::ContextOptions options;
  options.budget_tokens = a.budget;
  options.source = source->Describe();
  options.range_text = source->HasTimeRanges() ? DescribeRange(a.range) : "whole trace";
  options.filters_text = DescribeFilters(a.filters);
  options.command = "get_context filters";
  auto sections = source->ContextSections();
  if (!sections.ok()) return Error(source->Describe() + ": " + sections.status().message());
  options.extra_sections = std::move(sections).value();
  context::ContextResult result = context::RenderContext(*view, options);
  base::JsonWriter w;
  w.BeginObject();
  w.Key("text").String(result.text);
  w.Key("tokens").UInt(context::EstimateTokens(result.bytes()));
  w.Key("omitted").BeginArray();
  for (const std::string& s : result.omitted) w.String(s);
  w.EndArray();
  CutFields(&w, result.truncated,
            result.truncated ? "raise budget (max 8000), or narrow with filters/range, or use "
                               "get_breakdown for one table"
                             : "");
  w.EndObject();
  return {result.text, MinifyJson(w.str()), false};
}

struct Row {
  std::string key, category;
  int64_t time_ns = 0, count = -1;
  double share_pct = 0;
};

ToolResult GetBreakdown(DataSource* source, const Args& a) {
  std::string error;
  auto view = Load(source, a.range, a.filters, std::max(a.top_n, 50), &error);
  if (!view.ok()) return Error(error);
  const int64_t total = view->kernel_time_ns();
  std::vector<Row> rows;
  auto pct = [](int64_t part, int64_t whole) {
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  if (a.group_by == "category" || a.group_by == "subcategory") {
    for (const auto& [key, ns] :
         view->Sum(a.group_by == "category" ? &context::RankView::categories
                                            : &context::RankView::subcategories))
      rows.push_back({key, "", ns, -1, pct(ns, total)});
  } else if (a.group_by == "kernel") {
    for (const context::KernelRow& k : view->MergedKernels())
      rows.push_back({k.display_name.empty() ? k.name : k.display_name, k.category, k.total_ns,
                      k.count, pct(k.total_ns, total)});
  } else {
    for (const context::RankView& r : view->ranks)
      rows.push_back({fmt::format("rank {} pid {} gpu {} {}", r.rank, r.pid, r.device, r.hostname),
                      "", r.busy_ns, r.kernel_count, pct(r.busy_ns, r.span_ns)});
  }
  const int64_t whole = a.group_by == "rank" ? view->busy_ns() : total;
  const size_t wanted = std::min(rows.size(), static_cast<size_t>(a.top_n));
  size_t kept = 0;
  auto render = [&](size_t k) {
    base::JsonWriter w;
    w.BeginObject();
    w.Key("group_by").String(a.group_by);
    w.Key("range").String(source->HasTimeRanges() ? DescribeRange(a.range) : "whole trace");
    w.Key("total_ns").Int(whole);
    w.Key("rows").BeginArray();
    int64_t listed = 0;
    for (size_t i = 0; i < k; ++i) {
      const Row& r = rows[i];
      w.BeginObject();
      w.Key("key").String(r.key);
      if (!r.category.empty()) w.Key("category").String(r.category);
      w.Key("time_ns").Int(r.time_ns);
      w.Key("share_pct").Double(r.share_pct);
      if (r.count >= 0) w.Key(a.group_by == "rank" ? "kernels" : "count").Int(r.count);
      w.EndObject();
      listed += r.time_ns;
    }
    w.EndArray();
    // The rest keeps shares right after the cut (for kernels it includes kernels outside every
    // rank's top list).
    const int64_t rest = std::max<int64_t>(0, whole - listed);
    w.Key("rest").BeginObject();
    w.Key("rows").UInt(rows.size() - k);
    w.Key("time_ns").Int(a.group_by == "rank" ? 0 : rest);
    w.Key("share_pct").Double(a.group_by == "rank" ? 0 : pct(rest, whole));
    w.EndObject();
    const bool cut = k < rows.size();
    CutFields(
        &w, cut,
        !cut ? ""
        : k < wanted
            ? "cut to fit the result budget: narrow with filters (rank, device) or a lower top_n"
            : fmt::format("{} more rows in rest: raise top_n (max {}) or narrow with filters",
                          rows.size() - k, kMaxTopN));
    w.EndObject();
    return MinifyJson(w.str());
  };
  return Success(FitRows(wanted, render, &kept));
}

ToolResult GetFindings(DataSource* source, const Args& a) {
  std::string error;
  auto view = Load(source, a.range, a.filters, 15, &error);
  if (!view.ok()) return Error(error);
  size_t kept = 0;
  auto render = [&](size_t k) {
    base::JsonWriter w;
    w.BeginObject();
    w.Key("range").String(source->HasTimeRanges() ? DescribeRange(a.range) : "whole trace");
    if (!a.filters.host.empty())
      w.Key("note").String("the diagnosis covers every host of the range; filter by pid or rank");
    w.Key("findings").BeginArray();
    for (size_t i = 0; i < k; ++i) {
      const context::FindingView& f = view->findings[i];
      w.BeginObject();
      w.Key("id").String(f.id);
      w.Key("severity").String(f.severity);
      w.Key("confidence").Double(f.confidence);
      w.Key("score").Double(f.score);
      w.Key("summary").String(f.summary);
      w.Key("rank").Int(f.rank);
      w.Key("evidence").BeginArray();
      for (const std::string& e : f.evidence) w.String(e);
      w.EndArray();
      w.Key("fixes").BeginArray();
      for (const std::string& x : f.fixes) w.String(x);
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    const bool cut = k < view->findings.size();
    CutFields(&w, cut, cut ? "less important findings cut: narrow with filters (rank)" : "");
    w.EndObject();
    return MinifyJson(w.str());
  };
  return Success(FitRows(view->findings.size(), render, &kept));
}

// The NVTX range figures of a side from its report's range tables (summed over processes by
// name, as `diff` sums a saved report's), and the GPU-seconds their shares are of.
//
// The table itself is analyze::CompareRanges, the code `inferscope diff` and /api/v1/compare
// use, so all three agree. Not query::LoadRangeSide: it reads a SqliteStore directly, and this
// tool's sources (a store, or an agent over HTTP) have only the report JSON in common.
analyze::ProfileFigures RangeFigures(const ReportView& v) {
  analyze::ProfileFigures f;
  f.span_ns = v.Total(&context::RankView::span_ns);  // summed over ranks, as the report's summary
  context::AddRangeFigures(v.range_tables, &f);
  return f;
}

// One side of a range row: instances, host and GPU time, and the GPU time's share of the side's.
void RangeSideFields(base::JsonWriter* w, const char* side, const analyze::ProfileFigures::Range& r,
                     double gpu_pct) {
  w->Key(fmt::format("{}_count", side)).UInt(r.count);
  w->Key(fmt::format("{}_host_ns", side)).Int(r.host_ns);
  w->Key(fmt::format("{}_gpu_time_ns", side)).Int(r.gpu_time_ns);
  w->Key(fmt::format("{}_gpu_pct", side)).Double(gpu_pct);
}

void RangeChangeFields(base::JsonWriter* w, const analyze::RangeChange& r) {
  RangeSideFields(w, "a", r.baseline, r.baseline_gpu_pct);
  RangeSideFields(w, "b", r.candidate, r.candidate_gpu_pct);
  w->Key("delta_gpu_time_ns").Int(r.gpu_delta_ns());
}

// `ranges`: absent when neither side recorded NVTX ranges (nothing to say, no noise); only
// `notes` when one side did; else the rows (the first `k` of the comparison's; rows cut for the
// budget join `other`, so its totals stay right), `other` and the notes.
void WriteRanges(base::JsonWriter* w, const analyze::Comparison& c, size_t k) {
  if (!c.ranges_compared && c.notes.empty()) return;
  w->Key("ranges").BeginObject();
  if (c.ranges_compared) {
    w->Key("rows").BeginArray();
    for (size_t i = 0; i < k; ++i) {
      const analyze::RangeChange& r = c.ranges[i];
      w->BeginObject();
      w->Key("range").String(r.name);
      w->Key("status").String(r.status);
      RangeChangeFields(w, r);
      w->EndObject();
    }
    w->EndArray();
    analyze::RangeChange other = c.ranges_other;
    uint64_t names = c.ranges_other_names;
    for (size_t i = k; i < c.ranges.size(); ++i, ++names) {
      other.baseline.Add(c.ranges[i].baseline);
      other.candidate.Add(c.ranges[i].candidate);
      other.baseline_gpu_pct += c.ranges[i].baseline_gpu_pct;
      other.candidate_gpu_pct += c.ranges[i].candidate_gpu_pct;
    }
    w->Key("other").BeginObject();
    w->Key("names").UInt(names);
    w->Key("tails").Bool(c.ranges_other_tails);
    RangeChangeFields(w, other);
    w->EndObject();
  }
  w->Key("notes").BeginArray();
  for (const std::string& n : c.notes) w->String(n);
  w->EndArray();
  w->EndObject();
}

ToolResult Compare(DataSource* source, const Args& a) {
  if (!source->HasTimeRanges())
    return Error(
        "compare needs time ranges: serve a store or an agent (inferscope mcp --state-dir DIR "
        "or --url URL); for two trace files run `inferscope diff A B`");
  if (a.range_a.empty() || a.range_b.empty())
    return Error(
        "compare needs range_a (the baseline) and range_b, e.g. {\"range_a\":{\"from\":\"-2h\","
        "\"to\":\"-1h\"},\"range_b\":{\"last\":\"1h\"}}");
  std::string error;
  auto va = Load(source, a.range_a, a.filters, 50, &error);
  if (!va.ok()) return Error("range_a: " + error);
  auto vb = Load(source, a.range_b, a.filters, 50, &error);
  if (!vb.ok()) return Error("range_b: " + error);
  auto pct = [](int64_t part, int64_t whole) {
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  struct Delta {
    std::string key;
    double a = 0, b = 0;
  };
  auto deltas = [&](const std::vector<std::pair<std::string, int64_t>>& xa, int64_t ta,
                    const std::vector<std::pair<std::string, int64_t>>& xb, int64_t tb) {
    std::map<std::string, Delta> m;
    for (const auto& [k, ns] : xa) m[k] = {k, pct(ns, ta), 0};
    for (const auto& [k, ns] : xb) {
      m[k].key = k;
      m[k].b = pct(ns, tb);
    }
    std::vector<Delta> out;
    for (auto& [k, d] : m) out.push_back(d);
    std::stable_sort(out.begin(), out.end(), [](const Delta& x, const Delta& y) {
      return std::abs(x.b - x.a) > std::abs(y.b - y.a);
    });
    return out;
  };
  auto kernels = [](const ReportView& v) {
    std::vector<std::pair<std::string, int64_t>> out;
    for (const context::KernelRow& k : v.MergedKernels())
      out.emplace_back(k.display_name.empty() ? k.name : k.display_name, k.total_ns);
    return out;
  };
  const std::vector<Delta> cats =
      deltas(va->Sum(&context::RankView::categories), va->kernel_time_ns(),
             vb->Sum(&context::RankView::categories), vb->kernel_time_ns());
  const std::vector<Delta> ks =
      deltas(kernels(*va), va->kernel_time_ns(), kernels(*vb), vb->kernel_time_ns());
  auto side = [&](base::JsonWriter* w, const char* name, const Range& r, const ReportView& v) {
    w->Key(name).BeginObject();
    w->Key("range").String(DescribeRange(r));
    w->Key("ranks").UInt(v.ranks.size());
    w->Key("busy_pct").Double(pct(v.busy_ns(), v.busy_ns() + v.idle_ns()));
    w->Key("kernel_time_ns").Int(v.kernel_time_ns());
    w->Key("findings").BeginArray();
    for (const context::FindingView& f : v.findings)
      w->String(fmt::format("{} {:.1f}%", f.id, f.score * 100));
    w->EndArray();
    w->EndObject();
  };
  // The NVTX range table as `diff` makes it (a is the baseline); CompareRanges fills only the
  // ranges and their notes.
  analyze::Comparison ranges;
  analyze::CompareRanges(RangeFigures(*va), RangeFigures(*vb), analyze::CompareOptions(), &ranges);
  const size_t n_kernels = std::min<size_t>(ks.size(), 15);
  size_t kept = 0, kept_ranges = ranges.ranges.size();
  auto render = [&](size_t k) {
    base::JsonWriter w;
    w.BeginObject();
    side(&w, "a", a.range_a, *va);
    side(&w, "b", a.range_b, *vb);
    w.Key("categories").BeginArray();
    for (const Delta& d : cats) {
      if (d.a == 0 && d.b == 0) continue;
      w.BeginObject();
      w.Key("category").String(d.key);
      w.Key("a_pct").Double(d.a);
      w.Key("b_pct").Double(d.b);
      w.Key("delta_pp").Double(d.b - d.a);
      w.EndObject();
    }
    w.EndArray();
    w.Key("kernels").BeginArray();
    for (size_t i = 0; i < k; ++i) {
      w.BeginObject();
      w.Key("kernel").String(ks[i].key);
      w.Key("a_pct").Double(ks[i].a);
      w.Key("b_pct").Double(ks[i].b);
      w.Key("delta_pp").Double(ks[i].b - ks[i].a);
      w.EndObject();
    }
    w.EndArray();
    WriteRanges(&w, ranges, kept_ranges);
    const bool cut = k < ks.size(), ranges_cut = kept_ranges < ranges.ranges.size();
    std::string hint;
    if (cut)
      hint = fmt::format(
          "{} smaller kernel changes cut: get_breakdown group_by=kernel on each range lists them",
          ks.size() - k);
    if (ranges_cut)
      hint += fmt::format(
          "{}{} NVTX range rows cut into ranges.other to fit the result budget: "
          "narrow with filters (pid, rank)",
          hint.empty() ? "" : "; ", ranges.ranges.size() - kept_ranges);
    CutFields(&w, cut || ranges_cut, hint);
    w.EndObject();
    return MinifyJson(w.str());
  };
  // Kernels are cut first; range rows (at most CompareOptions::top_ranges, 10) only when even
  // no kernel rows leave them room (very long range names).
  std::string out = FitRows(n_kernels, render, &kept);
  if (kept == 0 && out.size() > kToolBudgetBytes) {
    size_t fitted = 0;
    out = FitRows(
        ranges.ranges.size(),
        [&](size_t r) {
          kept_ranges = r;
          return render(0);
        },
        &fitted);
  }
  return Success(out);
}

ToolResult GetTimeseries(DataSource* source, const Args& a) {
  std::string category;
  if (a.metric != "busy_pct" && a.metric != "idle_pct") {
    if (a.metric.size() < 5 || a.metric.compare(a.metric.size() - 4, 4, "_pct") != 0)
      return Error(
          "metric must be busy_pct, idle_pct or <category>_pct (e.g. attention_pct, "
          "communication_pct)");
    category = a.metric.substr(0, a.metric.size() - 4);
  }
  int64_t step_ns = 0;
  if (!a.step.empty()) {
    auto s = base::ParseDuration(a.step, base::DurationUnits::kWithLongUnits);
    if (!s.ok() || *s <= 0) return Error("step must be a duration like 10s, 1m or 500ms");
    step_ns = *s;
  }
  std::string error;
  auto view = Load(source, a.range, a.filters, 1, &error);
  if (!view.ok()) return Error(error);
  if (!category.empty()) {
    bool known = false;
    for (const auto& [c, ns] : view->ranks.empty() ? std::vector<std::pair<std::string, int64_t>>{}
                                                   : view->ranks.front().categories)
      known = known || c == category;
    if (!known)
      return Error("unknown category '" + category +
                   "' in metric: use busy_pct, idle_pct or <category>_pct with a category of "
                   "get_breakdown (attention, matmul, communication, ...)");
  }
  // Every rank's bins on one absolute axis: busy (or category) ns per step over all ranks.
  int64_t origin = INT64_MAX, end = INT64_MIN, bin = 0;
  for (const context::RankView& r : view->ranks) {
    if (r.timeline_bin_ns <= 0 || r.timeline_busy_ns.empty()) continue;
    origin = std::min(origin, r.timeline_origin_ns);
    end = std::max(end, r.timeline_origin_ns +
                            static_cast<int64_t>(r.timeline_busy_ns.size()) * r.timeline_bin_ns);
    bin = std::max(bin, r.timeline_bin_ns);
  }
  if (bin == 0) return Error("the range holds no timeline: try a range with GPU activity");
  const int64_t span = end - origin;
  if (step_ns == 0) {
    step_ns = std::max<int64_t>(bin, (span + kDefaultPoints - 1) / kDefaultPoints);
    step_ns = (step_ns + bin - 1) / bin * bin;
  }
  step_ns = std::max(step_ns, bin);
  const size_t n = static_cast<size_t>((span + step_ns - 1) / step_ns);
  std::vector<int64_t> value_ns(n, 0), covered_ns(n, 0);
  for (const context::RankView& r : view->ranks) {
    for (size_t i = 0; i < r.timeline_busy_ns.size(); ++i) {
      const int64_t t = r.timeline_origin_ns + static_cast<int64_t>(i) * r.timeline_bin_ns;
      const size_t s = static_cast<size_t>((t - origin) / step_ns);
      if (s >= n) continue;
      covered_ns[s] += r.timeline_bin_ns;
      if (category.empty()) {
        value_ns[s] += r.timeline_busy_ns[i];
      } else if (i < r.timeline_category_ns.size()) {
        auto it = r.timeline_category_ns[i].find(category);
        if (it != r.timeline_category_ns[i].end()) value_ns[s] += it->second;
      }
    }
  }
  size_t kept = 0;
  const size_t shown = std::min(n, kMaxPoints);
  auto render = [&](size_t k) {
    base::JsonWriter w;
    w.BeginObject();
    w.Key("metric").String(a.metric);
    w.Key("unit").String("% of the ranks' time in the step");
    w.Key("origin_ns").Int(origin);
    w.Key("step_s").Double(static_cast<double>(step_ns) / 1e9);
    w.Key("points").BeginArray();
    for (size_t s = 0; s < k; ++s) {
      double v = covered_ns[s] > 0
                     ? 100.0 * static_cast<double>(value_ns[s]) / static_cast<double>(covered_ns[s])
                     : 0.0;
      if (a.metric == "idle_pct") v = covered_ns[s] > 0 ? 100.0 - v : 0.0;
      w.BeginArray();
      w.Double(static_cast<double>(s) * static_cast<double>(step_ns) / 1e9);
      w.Double(v);
      w.EndArray();
    }
    w.EndArray();
    const bool cut = k < n;
    CutFields(&w, cut,
              cut ? fmt::format("{} later points cut: raise step (e.g. {}s) or narrow the range",
                                n - k, std::ceil(static_cast<double>(span) / 1e9 / 60))
                  : "");
    w.EndObject();
    return MinifyJson(w.str());
  };
  return Success(FitRows(shown, render, &kept));
}

}  // namespace

std::string MinifyJson(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  bool in_string = false, escaped = false;
  for (char c : json) {
    if (in_string) {
      out += c;
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
    if (c == '"') in_string = true;
    out += c;
  }
  return out;
}

ToolResult Tools::Call(std::string_view name, dom::element arguments) {
  static const std::map<std::string_view, std::set<std::string_view>> kAllowed = {
      {"list_targets", {"range"}},
      {"get_context", {"range", "filters", "budget"}},
      {"get_breakdown", {"range", "filters", "group_by", "top_n"}},
      {"get_findings", {"range", "filters"}},
      {"compare", {"range_a", "range_b", "filters"}},
      {"get_timeseries", {"range", "filters", "metric", "step"}},
  };
  auto allowed = kAllowed.find(name);
  if (allowed == kAllowed.end()) return Error("unknown tool");
  Args args;
  base::Status status = ParseArgs(name, arguments, allowed->second, &args);
  if (!status.ok()) return Error(status.message());
  if (name == "list_targets") return ListTargets(source_, args);
  if (name == "get_context") return GetContext(source_, args);
  if (name == "get_breakdown") return GetBreakdown(source_, args);
  if (name == "get_findings") return GetFindings(source_, args);
  if (name == "compare") return Compare(source_, args);
  return GetTimeseries(source_, args);
}

}  // namespace inferscope::mcp
