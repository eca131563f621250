// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/server/api_routes.h"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "src/base/duration.h"
#include "src/base/json_writer.h"
#include "src/base/time_point.h"
#include "src/model/profile.h"
#include "src/query/range_compare.h"
#include "src/query/range_query.h"
#include "src/query/range_series.h"
#include "src/report/report.h"
#include "src/store/sqlite_store.h"
#include "src/telemetry/registry/telemetry_kinds.h"

#ifndef INFERSCOPE_VERSION
#define INFERSCOPE_VERSION "0.0.0"
#endif

namespace inferscope::server {
namespace {

using base::JsonWriter;

constexpr int64_t kOpenEnded = std::numeric_limits<int64_t>::max();

HttpResponse Json(const JsonWriter& w) {
  HttpResponse r;
  r.body = w.str() + "\n";
  return r;
}

// A parsed request: the range and filters every listing route shares.
struct Query {
  query::RangeQuery range;
  size_t limit = 1000;
};

template <typename T>
bool ParseInt(const std::string& text, T* out) {
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && p == end;
}

// Parses from/to/last/pid/rank/device/top/limit; an HTTP 400 response on bad input.
base::StatusOr<Query> ParseQuery(const HttpRequest& req, int64_t now_ns) {
  Query q;
  q.range.now_ns = now_ns;
  const std::string* from = req.Param("from");
  const std::string* to = req.Param("to");
  if (from == nullptr && to == nullptr) {
    int64_t last = 300'000'000'000;
    if (const std::string* v = req.Param("last")) {
      auto d = base::ParseDuration(*v, base::DurationUnits::kWithLongUnits);
      if (!d.ok()) return base::InvalidArgumentError("last: " + d.status().message());
      last = *d;
    }
    q.range.from_ns = now_ns - last;
    q.range.to_ns = kOpenEnded;
  } else {
    if (from != nullptr) {
      auto t = base::ParseTimePoint(*from, now_ns);
      if (!t.ok()) return base::InvalidArgumentError("from: " + t.status().message());
      q.range.from_ns = *t;
    }
    if (to != nullptr) {
      auto t = base::ParseTimePoint(*to, now_ns);
      if (!t.ok()) return base::InvalidArgumentError("to: " + t.status().message());
      q.range.to_ns = *t;
    }
    if (q.range.to_ns <= q.range.from_ns)
      return base::InvalidArgumentError("to must be after from");
  }
  auto number = [&](const char* name, auto* out) -> base::Status {
    const std::string* v = req.Param(name);
    if (v == nullptr) return base::OkStatus();
    std::remove_reference_t<decltype(**out)> value{};
    if (!ParseInt(*v, &value))
      return base::InvalidArgumentError(std::string(name) + ": not a number: '" + *v + "'");
    *out = value;
    return base::OkStatus();
  };
  RETURN_IF_ERROR(number("pid", &q.range.pid));
  RETURN_IF_ERROR(number("rank", &q.range.rank));
  RETURN_IF_ERROR(number("device", &q.range.device));
  std::optional<int> top;
  RETURN_IF_ERROR(number("top", &top));
  if (top) {
    if (*top < 1 || *top > query::kMaxTop)
      return base::InvalidArgumentError("top: must be 1.." + std::to_string(query::kMaxTop));
    q.range.top = *top;
  }
  std::optional<size_t> limit;
  RETURN_IF_ERROR(number("limit", &limit));
  if (limit) q.limit = std::min<size_t>(*limit, 100'000);
  return q;
}

void WriteRange(JsonWriter& w, const query::RangeQuery& r) {
  w.Key("range").BeginObject();
  w.Key("from_unix_ns").Int(r.from_ns);
  if (r.to_ns == kOpenEnded)
    w.Key("to_unix_ns").Null();
  else
    w.Key("to_unix_ns").Int(r.to_ns);
  w.EndObject();
}

void WriteProcess(JsonWriter& w, const store::ProcessInfo& info) {
  const store::StoredProcess& p = info.process;
  w.BeginObject();
  w.Key("id").Int(p.id);
  w.Key("hostname").String(p.hello.hostname);
  w.Key("pid").UInt(p.hello.pid);
  w.Key("rank").Int(p.hello.rank);
  w.Key("local_rank").Int(p.hello.local_rank);
  w.Key("world_size").Int(p.hello.world_size);
  w.Key("process_start_unix_ns").Int(p.hello.process_start_unix_ns);
  w.Key("tool_version").String(p.hello.tool_version);
  // What the injection library said of its CUPTI in the hello (docs/agent.md).
  w.Key("profiling").BeginObject();
  w.Key("on").Bool(p.hello.profiling_off_reason.empty());
  w.Key("cupti_release").String(p.hello.cupti_release);
  w.Key("cupti_path").String(p.hello.cupti_path);
  if (p.hello.profiling_off_reason.empty())
    w.Key("off_reason").Null();
  else
    w.Key("off_reason").String(p.hello.profiling_off_reason);
  w.EndObject();
  w.Key("first_seen_unix_ns").Int(p.first_seen_ns);
  w.Key("last_seen_unix_ns").Int(p.last_seen_ns);
  if (p.ended_ns > 0)
    w.Key("ended_unix_ns").Int(p.ended_ns);
  else
    w.Key("ended_unix_ns").Null();
  w.Key("windows").UInt(info.windows);
  w.EndObject();
}

// Runs `body(store, query)` with the request's range and a read-only store.
template <typename Body>
HttpResponse WithStore(const ApiContext& ctx, const HttpRequest& req, Body body) {
  auto query = ParseQuery(req, ctx.now_unix_ns());
  if (!query.ok()) return JsonError(query.status());
  auto store = store::SqliteStore::Open(ctx.state_dir, store::SqliteStore::Mode::kReadOnly);
  if (!store.ok()) return JsonError(store.status());
  return body(**store, *query);
}

// Built from the server's routes, so it lists every endpoint, the agent's own (/api/v1/watch,
// /metrics, /v1/traces) included.
HttpResponse Index(const HttpServer& server) {
  const std::vector<std::pair<std::string, std::string>> routes = server.Routes();
  JsonWriter w;
  w.BeginObject();
  w.Key("version").String(INFERSCOPE_VERSION);
  w.Key("endpoints").BeginArray();  // "GET /api/v1/status", ...
  for (const auto& [method, path] : routes) w.String(method + " " + path);
  w.EndArray();
  w.Key("parameters")
      .String(
          "from, to (now, -5m, 2026-01-02T15:04[:05][Z], Unix seconds) or last (default 5m); "
          "pid, rank, device; top (profile); format=json|text|markdown (profile); limit "
          "(windows); steps (timeseries, 1..1000, default 120); b_from, b_to (compare: the "
          "baseline range); gpu_hourly_cost (profile: USD per GPU-hour, adds the cost); "
          "capture: duration, pid or rank, max_bytes, graph_nodes=0|1, "
          "format=pftrace|pftrace.gz|json|json.gz (POST), id (GET, download)");
  w.EndObject();
  return Json(w);
}

HttpResponse Status(const ApiContext& ctx) {
  const AgentSnapshot s = ctx.snapshot ? ctx.snapshot() : AgentSnapshot{};
  JsonWriter w;
  w.BeginObject();
  w.Key("version").String(INFERSCOPE_VERSION);
  w.Key("pid").Int(s.pid);
  w.Key("state_dir").String(ctx.state_dir);
  w.Key("started_unix_ns").Int(s.started_unix_ns);
  const MetricsExporter::AgentCounters& counters = s.counters;
  w.Key("connected_processes").UInt(counters.connected_processes);
  w.Key("sessions").UInt(counters.sessions);
  w.Key("windows_received").UInt(counters.windows_received);
  w.Key("windows_stored").UInt(counters.windows_stored);
  w.Key("dropped_connections").UInt(counters.dropped_connections);
  w.Key("store_errors").UInt(counters.store_errors);
  w.Key("refused_connections").UInt(counters.refused_connections);
  w.Key("windows_rejected").UInt(counters.windows_rejected);
  w.Key("collectors").BeginObject();
  auto collector = [&](const char* name, const telemetry::CollectorStatus& c, auto extra) {
    w.Key(name).BeginObject();
    w.Key("state").String(s.has_telemetry ? c.state : "off");
    w.Key("reason").String(s.has_telemetry ? c.reason : "telemetry disabled in this agent");
    extra();
    w.EndObject();
  };
  const telemetry::TelemetryStatus& t = s.telemetry;
  collector("nvml", t.nvml, [&] {
    w.Key("devices").BeginArray();
    for (const telemetry::GpuDeviceWindow& d : t.devices) {
      w.BeginObject();
      w.Key("index").Int(d.index);
      w.Key("name").String(d.name);
      w.Key("uuid").String(d.uuid);
      w.EndObject();
    }
    w.EndArray();
  });
  collector("scrape", t.scrape, [&] {
    if (t.scrape.detail.empty())
      w.Key("url").Null();
    else
      w.Key("url").String(t.scrape.detail);
    if (t.engine.empty())
      w.Key("engine").Null();
    else
      w.Key("engine").String(t.engine);
    w.Key("targets").BeginArray();
    for (const telemetry::scrape::ScrapeTargetStats& target : t.scrape_targets) {
      w.BeginObject();
      w.Key("url").String(target.url);
      w.Key("scrapes").UInt(target.scrapes);
      w.Key("failures").UInt(target.failures);
      w.Key("abandoned").UInt(target.abandoned);
      w.Key("probes_abandoned").UInt(target.probes_abandoned);
      w.EndObject();
    }
    w.EndArray();
  });
  collector("otlp", t.otlp, [&] { w.Key("spans_received").UInt(t.spans_received); });
  w.EndObject();
  if (s.sink) {
    const store::SinkStats& k = *s.sink;
    w.Key("sink").BeginObject();
    w.Key("url").String(k.url);
    w.Key("connected").Bool(k.connected);
    w.Key("rows_sent").UInt(k.rows_sent);
    w.Key("batches_sent").UInt(k.batches_sent);
    w.Key("failures").UInt(k.failures);
    w.Key("queued_rows").UInt(k.queued_rows);
    w.Key("spooled_rows").UInt(k.spooled_rows);
    w.Key("spooled_total").UInt(k.spooled_total);
    w.Key("spool_drained").UInt(k.spool_drained);
    w.Key("dropped_rows").UInt(k.dropped_rows);
    w.Key("last_error").String(k.last_error);
    w.EndObject();
  } else {
    w.Key("sink").Null();
  }
  w.EndObject();
  return Json(w);
}

HttpResponse Hosts(store::SqliteStore& store, const Query& q) {
  auto processes = store.ListProcesses(q.range.Windows(), /*include_idle=*/true);
  if (!processes.ok()) return JsonError(processes.status());
  struct Host {
    uint64_t processes = 0, windows = 0;
    int64_t last_seen_ns = 0;
  };
  std::map<std::string, Host> hosts;
  for (const store::ProcessInfo& p : *processes) {
    Host& h = hosts[p.process.hello.hostname];
    ++h.processes;
    h.windows += p.windows;
    h.last_seen_ns = std::max(h.last_seen_ns, p.process.last_seen_ns);
  }
  JsonWriter w;
  w.BeginObject();
  WriteRange(w, q.range);
  w.Key("hosts").BeginArray();
  for (const auto& [name, h] : hosts) {
    w.BeginObject();
    w.Key("hostname").String(name);
    w.Key("processes").UInt(h.processes);
    w.Key("windows").UInt(h.windows);
    w.Key("last_seen_unix_ns").Int(h.last_seen_ns);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Json(w);
}

HttpResponse Processes(store::SqliteStore& store, const Query& q) {
  auto processes = store.ListProcesses(q.range.Windows(), /*include_idle=*/true);
  if (!processes.ok()) return JsonError(processes.status());
  JsonWriter w;
  w.BeginObject();
  WriteRange(w, q.range);
  w.Key("processes").BeginArray();
  for (const store::ProcessInfo& p : *processes) WriteProcess(w, p);
  w.EndArray();
  w.EndObject();
  return Json(w);
}

// Devices come from the windows themselves (the GPUs each process ran work on).
HttpResponse Devices(store::SqliteStore& store, const Query& q) {
  struct Device {
    uint64_t windows = 0, kernels = 0;
    int64_t busy_ns = 0;
  };
  std::map<std::pair<int64_t, uint32_t>, Device> devices;  // (process row, device)
  // Streamed over rollup rows and the raw windows at the edges: a week costs neither a week of
  // windows in memory nor decoding each of them. Any resolution will do (no timeline here).
  store::ScanStats scan;
  const base::Status status = query::ScanRange(
      store, q.range.Windows(), query::RangeBinNs(INT64_MAX), /*use_rollups=*/true,
      [&](int64_t process_id, uint64_t windows, model::ProfileWindow& window) {
        for (const model::ProcessProfile& p : window.processes)
          for (const model::DeviceProfile& d : p.devices) {
            if (q.range.device && d.device != *q.range.device) continue;
            Device& dev = devices[{process_id, d.device}];
            dev.windows += windows;
            dev.kernels += d.kernel_count;
            dev.busy_ns += d.busy_ns;
          }
      },
      &scan);
  if (!status.ok()) return JsonError(status);
  const store::ScanStats* result = &scan;
  JsonWriter w;
  w.BeginObject();
  WriteRange(w, q.range);
  w.Key("devices").BeginArray();
  for (const auto& [key, d] : devices) {
    const store::StoredProcess& p = result->processes.at(key.first);
    w.BeginObject();
    w.Key("hostname").String(p.hello.hostname);
    w.Key("pid").UInt(p.hello.pid);
    w.Key("rank").Int(p.hello.rank);
    w.Key("device").UInt(key.second);
    w.Key("windows").UInt(d.windows);
    w.Key("kernels").UInt(d.kernels);
    w.Key("busy_ns").Int(d.busy_ns);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Json(w);
}

HttpResponse Windows(store::SqliteStore& store, const Query& q) {
  auto windows = store.ListWindows(q.range.Windows(), q.limit + 1);
  if (!windows.ok()) return JsonError(windows.status());
  auto processes = store.ListProcesses(q.range.Windows(), /*include_idle=*/false);
  if (!processes.ok()) return JsonError(processes.status());
  std::map<int64_t, const store::StoredProcess*> by_id;
  for (const store::ProcessInfo& p : *processes) by_id[p.process.id] = &p.process;
  const bool truncated = windows->size() > q.limit;
  if (truncated) windows->resize(q.limit);
  JsonWriter w;
  w.BeginObject();
  WriteRange(w, q.range);
  w.Key("truncated").Bool(truncated);
  w.Key("windows").BeginArray();
  for (const store::WindowInfo& win : *windows) {
    w.BeginObject();
    w.Key("id").Int(win.id);
    w.Key("process_id").Int(win.process_id);
    auto it = by_id.find(win.process_id);
    if (it != by_id.end()) {
      w.Key("pid").UInt(it->second->hello.pid);
      w.Key("rank").Int(it->second->hello.rank);
    }
    w.Key("start_unix_ns").Int(win.start_ns);
    w.Key("end_unix_ns").Int(win.end_ns);
    w.Key("received_unix_ns").Int(win.received_ns);
    w.Key("stored_bytes").UInt(win.stored_bytes);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Json(w);
}

HttpResponse Profile(const ApiContext& ctx, const HttpRequest& req, store::SqliteStore& store,
                     const Query& q) {
  report::ReportFormat format = report::ReportFormat::kJson;
  if (const std::string* f = req.Param("format"); f && !report::ParseReportFormat(*f, &format))
    return JsonError(400, "format: use json, text or markdown");
  query::RangeQuery range = q.range;
  if (const std::string* price = req.Param("gpu_hourly_cost")) {
    // As `report --gpu-hourly-cost`: USD per GPU-hour, for the cost section (docs/cost.md).
    char* end = nullptr;
    const double usd = std::strtod(price->c_str(), &end);
    if (price->empty() || end != price->c_str() + price->size() || !(usd > 0) || usd > 1e6)
      return JsonError(400, "gpu_hourly_cost: a price in USD per GPU-hour, e.g. 2.5");
    range.gpu_hourly_usd = usd;
  }
  auto profile = query::QueryRangeProfile(store, range, "store:" + ctx.state_dir);
  if (!profile.ok()) return JsonError(profile.status());
  const std::string filters = query::FilterText(q.range);
  if (profile->windows == 0 && profile->telemetry_windows == 0 && filters.empty())
    return JsonError(404, "no profile windows or telemetry in the range");
  // No verdict without evidence (as `inferscope report`, which exits 3): say what the range holds.
  if (query::NoGpuActivityMatched(q.range, *profile)) {
    auto holds = query::DescribeRange(store, q.range);
    if (!holds.ok()) return JsonError(holds.status());
    base::JsonWriter w;
    w.BeginObject();
    w.Key("error").String("no GPU activity matched" + (filters.empty() ? "" : " " + filters) +
                          " in the range");
    w.Key("range_holds").BeginArray();
    for (const std::string& line : *holds) w.String(line);
    w.EndArray();
    w.EndObject();
    HttpResponse r;
    r.status = 404;
    r.body = w.str() + "\n";
    return r;
  }
  HttpResponse r;
  r.body = query::RenderRangeReport(*profile, format);
  r.content_type = format == report::ReportFormat::kJson       ? "application/json"
                   : format == report::ReportFormat::kMarkdown ? "text/markdown; charset=utf-8"
                                                               : "text/plain; charset=utf-8";
  return r;
}

// The range's host telemetry per step (range_series.h): one object per step with each kind's
// merged JSON under its report key (null when the step holds none of it), for the dashboard's
// timeline.
HttpResponse Timeseries(const HttpRequest& req, store::SqliteStore& store, const Query& q) {
  size_t steps = 120;
  if (const std::string* v = req.Param("steps")) {
    if (!ParseInt(*v, &steps) || steps < 1 || steps > query::kMaxSeriesSteps)
      return JsonError(400, "steps: must be 1.." + std::to_string(query::kMaxSeriesSteps));
  }
  auto series = query::QueryRangeSeries(store, q.range, steps);
  if (!series.ok()) return JsonError(series.status());
  JsonWriter w;
  w.BeginObject();
  WriteRange(w, q.range);
  w.Key("from_unix_ns").Int(series->from_ns);
  w.Key("step_ns").Int(series->step_ns);
  w.Key("rows").UInt(series->rows);
  w.Key("corrupt_rows").UInt(series->corrupt);
  w.Key("steps").BeginArray();
  for (size_t i = 0; i < series->steps.size(); ++i) {
    w.BeginObject();
    w.Key("start_unix_ns").Int(series->from_ns + static_cast<int64_t>(i) * series->step_ns);
    w.Key("idle_causes_ns");
    if (const auto& idle = series->idle_ns[i]) {
      w.BeginObject();
      for (size_t c = 0; c < model::kIdleCauseCount; ++c)
        w.Key(model::kIdleCauseNames[c]).Int(static_cast<int64_t>((*idle)[c]));
      w.EndObject();
    } else {
      w.Null();
    }
    for (const telemetry::TelemetryKind* kind : telemetry::TelemetryKinds().kinds()) {
      w.Key(kind->report_key());
      if (const telemetry::TelemetryData* data = series->steps[i].Find(*kind))
        data->WriteJson(w);
      else
        w.Null();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Json(w);
}

// `inferscope diff` between two ranges of the store: the request's range is the candidate,
// b_from/b_to the baseline; every change judged against the slice-to-slice spread
// (analyze::Compare, docs/diff.md), significant ones flagged.
HttpResponse CompareRanges(const ApiContext& ctx, const HttpRequest& req, store::SqliteStore& store,
                           const Query& q) {
  const std::string* b_from = req.Param("b_from");
  const std::string* b_to = req.Param("b_to");
  if (b_from == nullptr || b_to == nullptr)
    return JsonError(400, "b_from and b_to (the baseline range) are required");
  if (q.range.device)
    return JsonError(400, "device: compare covers whole processes (use pid or rank)");
  query::RangeQuery baseline = q.range;
  auto from = base::ParseTimePoint(*b_from, q.range.now_ns);
  if (!from.ok()) return JsonError(400, "b_from: " + from.status().message());
  auto to = base::ParseTimePoint(*b_to, q.range.now_ns);
  if (!to.ok()) return JsonError(400, "b_to: " + to.status().message());
  if (*to <= *from) return JsonError(400, "b_to must be after b_from");
  baseline.from_ns = *from;
  baseline.to_ns = *to;
  query::RangeQuery candidate = q.range;
  if (candidate.to_ns == kOpenEnded) candidate.to_ns = candidate.now_ns;
  constexpr size_t kMaxSlices = 64;  // diff's default (--max-slices)
  const std::string source = "store:" + ctx.state_dir;
  auto a = query::LoadRangeSide(store, baseline, kMaxSlices, source);
  if (!a.ok())
    return JsonError(a.status().code() == base::StatusCode::kNotFound ? 404 : 500,
                     "baseline: " + a.status().message());
  auto b = query::LoadRangeSide(store, candidate, kMaxSlices, source);
  if (!b.ok())
    return JsonError(b.status().code() == base::StatusCode::kNotFound ? 404 : 500,
                     "candidate: " + b.status().message());
  const analyze::Comparison comparison = analyze::Compare(*a, *b, analyze::CompareOptions());
  JsonWriter w;
  w.BeginObject();
  w.Key("baseline").BeginObject();
  w.Key("from_unix_ns").Int(baseline.from_ns);
  w.Key("to_unix_ns").Int(baseline.to_ns);
  w.EndObject();
  w.Key("candidate").BeginObject();
  w.Key("from_unix_ns").Int(candidate.from_ns);
  w.Key("to_unix_ns").Int(candidate.to_ns);
  w.EndObject();
  w.Key("comparison");
  analyze::WriteComparisonJson(comparison, w);
  w.EndObject();
  return Json(w);
}

}  // namespace

void AddApiRoutes(HttpServer* server, ApiContext context) {
  if (!context.now_unix_ns) context.now_unix_ns = &base::UnixNowNs;
  auto ctx = std::make_shared<const ApiContext>(std::move(context));
  server->Get("/api/v1", [server](const HttpRequest&) { return Index(*server); });
  server->Get("/api/v1/status", [ctx](const HttpRequest&) { return Status(*ctx); });
  server->Get("/api/v1/hosts",
              [ctx](const HttpRequest& req) { return WithStore(*ctx, req, &Hosts); });
  server->Get("/api/v1/processes",
              [ctx](const HttpRequest& req) { return WithStore(*ctx, req, &Processes); });
  server->Get("/api/v1/devices",
              [ctx](const HttpRequest& req) { return WithStore(*ctx, req, &Devices); });
  server->Get("/api/v1/windows",
              [ctx](const HttpRequest& req) { return WithStore(*ctx, req, &Windows); });
  server->Get("/api/v1/timeseries", [ctx](const HttpRequest& req) {
    return WithStore(*ctx, req, [&](store::SqliteStore& store, const Query& q) {
      return Timeseries(req, store, q);
    });
  });
  server->Get("/api/v1/compare", [ctx](const HttpRequest& req) {
    return WithStore(*ctx, req, [&](store::SqliteStore& store, const Query& q) {
      return CompareRanges(*ctx, req, store, q);
    });
  });
  server->Get("/api/v1/profile", [ctx](const HttpRequest& req) {
    return WithStore(*ctx, req, [&](store::SqliteStore& store, const Query& q) {
      return Profile(*ctx, req, store, q);
    });
  });
}

}  // namespace inferscope::server
