// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/context/report_view.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <set>

#include "src/base/human_format.h"

namespace inferscope::context {
namespace {

namespace dom = simdjson::dom;

int64_t Int(dom::element e, std::string_view key) {
  dom::element v;
  if (e[key].get(v) != simdjson::SUCCESS) return 0;
  int64_t i = 0;
  if (v.get(i) == simdjson::SUCCESS) return i;
  uint64_t u = 0;
  if (v.get(u) == simdjson::SUCCESS) return static_cast<int64_t>(u);
  double d = 0;
  if (v.get(d) == simdjson::SUCCESS) return static_cast<int64_t>(d);
  return 0;
}

double Double(dom::element e, std::string_view key) {
  dom::element v;
  if (e[key].get(v) != simdjson::SUCCESS) return 0;
  double d = 0;
  if (v.get(d) == simdjson::SUCCESS) return d;
  std::string_view s;  // engine JSON writes some exact values as strings
  if (v.get(s) == simdjson::SUCCESS) {
    try {
      return std::stod(std::string(s));
    } catch (...) {
      return 0;
    }
  }
  return 0;
}

std::string Str(dom::element e, std::string_view key) {
  std::string_view s;
  if (e[key].get(s) != simdjson::SUCCESS) return "";
  return std::string(s);
}

// {name: {total_ns|time_ns: N}} as (name, N) in document order.
std::vector<std::pair<std::string, int64_t>> NsMap(dom::element e, std::string_view key,
                                                   std::string_view field) {
  std::vector<std::pair<std::string, int64_t>> out;
  dom::object o;
  if (e[key].get(o) != simdjson::SUCCESS) return out;
  for (auto [k, v] : o) {
    if (!v.is_object()) continue;
    out.emplace_back(std::string(k), Int(v, field));
  }
  return out;
}

std::string Number(double v) {
  if (v == static_cast<int64_t>(v) && std::abs(v) < 1e15)
    return std::to_string(static_cast<int64_t>(v));
  return fmt::format("{:.4g}", v);
}

RankView ParseRank(dom::element r) {
  RankView out;
  out.rank = Int(r, "rank");
  out.pid = Int(r, "pid");
  out.device = Int(r, "device");
  out.hostname = Str(r, "hostname");
  out.device_name = Str(r, "device_name");
  dom::element t;
  if (r["temporal_breakdown"].get(t) == simdjson::SUCCESS) {
    out.span_ns = Int(t, "span_ns");
    out.busy_ns = Int(t, "busy_ns");
    out.idle_ns = Int(t, "idle_ns");
    out.compute_ns = Int(t, "compute_ns");
  }
  out.kernel_time_ns = Int(r, "kernel_time_ns");
  out.kernel_count = Int(r, "kernel_count");
  out.categories = NsMap(r, "categories", "time_ns");
  out.subcategories = NsMap(r, "subcategories", "time_ns");
  dom::array top;
  if (r["top_kernels"].get(top) == simdjson::SUCCESS) {
    for (dom::element k : top)
      out.top_kernels.push_back({Str(k, "name"), Str(k, "display_name"), Str(k, "category"),
                                 Int(k, "total_ns"), Int(k, "count")});
  }
  dom::element other;
  if (r["other_kernels"].get(other) == simdjson::SUCCESS) {
    out.other_kernels_ns = Int(other, "total_ns");
    out.other_kernels_distinct = Int(other, "distinct_names");
  }
  out.idle_causes = NsMap(r, "idle_causes", "total_ns");
  dom::element phases;
  if (r["phases"].get(phases) == simdjson::SUCCESS && phases.is_object()) {
    dom::array list;
    if (phases["list"].get(list) == simdjson::SUCCESS)
      for (dom::element p : list)
        out.phases.push_back(
            {Str(p, "phase"), Int(p, "steps"), Int(p, "step_total_ns"), Int(p, "gpu_time_ns")});
    out.phase_outside_ns = Int(phases, "outside_ns");
  }
  dom::object syncs;
  if (r["sync_waits"].get(syncs) == simdjson::SUCCESS) {
    for (auto [type, s] : syncs) {
      RankView::SyncWait w{std::string(type), "", Int(s, "count"), Int(s, "total_ns"),
                           Int(s, "max_ns")};
      dom::array on;
      if (s["waited_on"].get(on) == simdjson::SUCCESS)
        for (dom::element first : on) {
          w.waited_on = Str(first, "display_name");
          break;
        }
      if (w.count > 0) out.sync_waits.push_back(std::move(w));
    }
  }
  dom::object dq;
  if (r["data_quality"].get(dq) == simdjson::SUCCESS) {
    for (auto [k, v] : dq) {
      int64_t n = 0;
      if (v.get(n) == simdjson::SUCCESS && n != 0) out.data_quality.emplace_back(std::string(k), n);
    }
  }
  dom::element tl;
  if (r["timeline"].get(tl) == simdjson::SUCCESS) {
    out.timeline_bin_ns = Int(tl, "bin_ns");
    out.timeline_origin_ns = Int(tl, "origin_ns");
    dom::array bins;
    if (tl["bins"].get(bins) == simdjson::SUCCESS) {
      for (dom::element b : bins) {
        out.timeline_busy_ns.push_back(Int(b, "busy_ns"));
        std::map<std::string, int64_t> cats;
        dom::object c;
        if (b["categories_ns"].get(c) == simdjson::SUCCESS)
          for (auto [k, v] : c) {
            int64_t n = 0;
            if (v.get(n) == simdjson::SUCCESS) cats[std::string(k)] = n;
          }
        out.timeline_category_ns.push_back(std::move(cats));
      }
    }
  }
  return out;
}

void ParseTelemetry(dom::element doc, ReportView* view) {
  dom::element gm;
  if (doc["gpu_metrics"].get(gm) == simdjson::SUCCESS && gm.is_object()) {
    view->gpu_unavailable = Str(gm, "unavailable");
    dom::array devices;
    if (gm["devices"].get(devices) == simdjson::SUCCESS) {
      for (dom::element d : devices) {
        GpuView g;
        g.index = Int(d, "index");
        g.name = Str(d, "name");
        g.xid_count = Int(d, "xid_count");
        dom::object metrics;
        if (d["metrics"].get(metrics) == simdjson::SUCCESS) {
          for (auto [name, m] : metrics) {
            const int64_t samples = Int(m, "samples");
            if (samples <= 0) continue;
            double scale = 1;
            std::string unit = Str(m, "unit");
            if (name.ends_with("_bytes")) {  // memory in GiB: 12-digit byte counts cost tokens
              scale = 1.0 / static_cast<double>(1ull << 30);
              unit = "GiB";
            }
            const double mean = Double(m, "sum") / static_cast<double>(samples) * scale;
            g.metrics.emplace_back(
                std::string(name),
                fmt::format("{} ({}..{}){}{}", Number(mean), Number(Double(m, "min") * scale),
                            Number(Double(m, "max") * scale), unit.empty() ? "" : " ", unit));
          }
        }
        dom::object throttle;
        if (d["throttle"].get(throttle) == simdjson::SUCCESS) {
          for (auto [reason, t] : throttle) {
            const double f = Double(t, "fraction");
            if (f > 0) g.throttle.push_back(fmt::format("{} {:.0f}%", reason, f * 100));
          }
        }
        view->gpus.push_back(std::move(g));
      }
    }
  }
  dom::element en;
  if (doc["engine"].get(en) == simdjson::SUCCESS && en.is_object()) {
    view->has_engine = true;
    view->engine = Str(en, "engine");
    view->backend = Str(en, "backend");
    dom::array models;
    if (en["model_names"].get(models) == simdjson::SUCCESS)
      for (dom::element m : models) {
        std::string_view s;
        if (m.get(s) == simdjson::SUCCESS) view->models.emplace_back(s);
      }
    dom::object derived;
    if (en["derived"].get(derived) == simdjson::SUCCESS)
      for (auto [k, v] : derived) {
        double d = 0;
        if (v.get(d) == simdjson::SUCCESS) view->engine_derived.emplace_back(std::string(k), d);
      }
    dom::object gauges;
    if (en["gauges"].get(gauges) == simdjson::SUCCESS)
      for (auto [k, g] : gauges) {
        const double samples = Double(g, "samples");
        if (samples > 0)
          view->engine_gauges.emplace_back(std::string(k), Double(g, "sum") / samples);
      }
  }
  dom::element rq;
  if (doc["requests"].get(rq) == simdjson::SUCCESS && rq.is_object()) {
    view->has_requests = true;
    view->requests = Int(rq, "requests");
    view->prompt_tokens = Int(rq, "prompt_tokens");
    view->completion_tokens = Int(rq, "completion_tokens");
    dom::object stages;
    if (rq["stages"].get(stages) == simdjson::SUCCESS)
      for (auto [stage, h] : stages) {
        const int64_t count = Int(h, "count");
        if (count > 0)
          view->request_stages.push_back({std::string(stage), count, Int(h, "p50_ns") / 1e6,
                                          Int(h, "p90_ns") / 1e6, Int(h, "p99_ns") / 1e6});
      }
    dom::object counters;
    if (rq["counters"].get(counters) == simdjson::SUCCESS)
      for (auto [k, v] : counters) {
        int64_t n = 0;
        const bool drop =
            k.starts_with("dropped_") || k == "requests_rejected" || k == "bad_attribute_values";
        if (drop && v.get(n) == simdjson::SUCCESS && n != 0)
          view->span_drops.emplace_back("spans " + std::string(k), n);
      }
    dom::array models;
    if (rq["models"].get(models) == simdjson::SUCCESS)
      for (dom::element m : models)
        view->request_models.emplace_back(Str(m, "model"), Int(m, "requests"));
    for (const auto& [model, n] : view->request_models)
      if (std::find(view->models.begin(), view->models.end(), model) == view->models.end())
        view->models.push_back(model);
  }
}

// The host range tables of a report's `views` object (the GPU annotations' tables are spans of
// the same ranges). `pids` non-empty: only those processes (the host filter; views carry pids,
// not hosts).
void ParseRangeTables(dom::element views, const std::set<int64_t>& pids, ReportView* view) {
  dom::array inputs;
  if (views["inputs"].get(inputs) != simdjson::SUCCESS) return;
  auto row = [](dom::element duration, dom::element gpu, std::string name) {
    return RangeTableView::Row{std::move(name), Int(duration, "count"), Int(duration, "total_ns"),
                               Int(gpu, "ops"), Int(gpu, "time_ns")};
  };
  for (dom::element input : inputs) {
    dom::array processes;
    if (input["processes"].get(processes) != simdjson::SUCCESS) continue;
    for (dom::element p : processes) {
      dom::element ranges;
      if (p["ranges"].get(ranges) != simdjson::SUCCESS || !ranges.is_object()) continue;
      RangeTableView t;
      t.pid = Int(p, "pid");
      t.instances = Int(ranges, "instances");
      if (t.instances == 0 || (!pids.empty() && !pids.count(t.pid))) continue;
      dom::array list;
      if (ranges["list"].get(list) == simdjson::SUCCESS)
        for (dom::element r : list) {
          dom::element duration, gpu;
          if (r["duration"].get(duration) != simdjson::SUCCESS ||
              r["gpu"].get(gpu) != simdjson::SUCCESS)
            continue;
          t.rows.push_back(row(duration, gpu, Str(r, "name")));
        }
      dom::element other, gpu;
      if (ranges["other"].get(other) == simdjson::SUCCESS &&
          other["gpu"].get(gpu) == simdjson::SUCCESS) {
        t.other = row(other, gpu, "");
        t.other_names = Int(other, "distinct_names");
      }
      view->range_tables.push_back(std::move(t));
    }
  }
}

}  // namespace

base::StatusOr<std::vector<RangeTableView>> ParseViewRangeTables(std::string_view views_json) {
  dom::parser parser;
  dom::element views;
  if (parser.parse(views_json.data(), views_json.size()).get(views) != simdjson::SUCCESS)
    return base::DataLossError("report views: not valid JSON");
  ReportView view;
  ParseRangeTables(views, {}, &view);
  return std::move(view.range_tables);
}

void AddRangeFigures(const std::vector<RangeTableView>& tables, analyze::ProfileFigures* figures) {
  auto range = [](const RangeTableView::Row& r) {
    return analyze::ProfileFigures::Range{static_cast<uint64_t>(r.count), r.host_ns,
                                          static_cast<uint64_t>(r.gpu_ops), r.gpu_time_ns};
  };
  for (const RangeTableView& t : tables) {
    figures->has_ranges = true;
    for (const RangeTableView::Row& r : t.rows) figures->ranges[r.name].Add(range(r));
    figures->range_tail.Add(range(t.other));
  }
}

std::string FormatNs(int64_t ns) { return base::FormatDuration(ns); }

std::string Share(int64_t part, int64_t whole) {
  if (whole <= 0) return "0.0%";
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

int64_t ReportView::span_ns() const {
  int64_t out = 0;
  for (const RankView& r : ranks) out = std::max(out, r.span_ns);
  return out;
}
int64_t ReportView::Total(int64_t RankView::*field) const {
  int64_t out = 0;
  for (const RankView& r : ranks) out += r.*field;
  return out;
}

std::vector<KernelRow> ReportView::MergedKernels() const {
  std::map<std::string, KernelRow> by_name;
  for (const RankView& r : ranks)
    for (const KernelRow& k : r.top_kernels) {
      KernelRow& m = by_name[k.name];
      if (m.name.empty()) m = {k.name, k.display_name, k.category, 0, 0};
      m.total_ns += k.total_ns;
      m.count += k.count;
    }
  std::vector<KernelRow> out;
  for (auto& [name, k] : by_name) out.push_back(std::move(k));
  std::stable_sort(out.begin(), out.end(),
                   [](const KernelRow& a, const KernelRow& b) { return a.total_ns > b.total_ns; });
  return out;
}

std::vector<std::pair<std::string, int64_t>> ReportView::Sum(
    std::vector<std::pair<std::string, int64_t>> RankView::*list) const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const RankView& r : ranks)
    for (const auto& [key, ns] : r.*list) {
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == key; });
      if (it == out.end())
        out.emplace_back(key, ns);
      else
        it->second += ns;
    }
  out.erase(std::remove_if(out.begin(), out.end(), [](const auto& p) { return p.second == 0; }),
            out.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

base::StatusOr<ReportView> ParseReport(std::string_view json, const std::string& host,
                                       const std::string& engine) {
  dom::parser parser;
  dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS || !doc.is_object())
    return base::DataLossError("the report is not a JSON object");
  ReportView view;
  dom::element range;
  if (doc["range"].get(range) == simdjson::SUCCESS && range.is_object()) {
    view.from_utc = Str(range, "from_utc");
    view.to_utc = Str(range, "to_utc");
    dom::element oe;
    bool open = false;
    if (range["open_ended"].get(oe) == simdjson::SUCCESS && oe.get(open) == simdjson::SUCCESS)
      view.open_ended = open;
    view.windows = Int(range, "windows");
  } else {
    dom::array inputs;
    if (doc["inputs"].get(inputs) == simdjson::SUCCESS)
      for (dom::element i : inputs) view.inputs.push_back(Str(i, "path"));
  }
  dom::element jobs;
  if (doc["jobs"].get(jobs) == simdjson::SUCCESS && jobs.is_object())
    view.job_warning = Str(jobs, "warning");
  std::set<std::string> hosts;
  dom::array ranks;
  if (doc["ranks"].get(ranks) == simdjson::SUCCESS) {
    for (dom::element r : ranks) {
      RankView rank = ParseRank(r);
      hosts.insert(rank.hostname.empty() ? "(unknown)" : rank.hostname);
      if (!host.empty() && rank.hostname != host) continue;
      view.ranks.push_back(std::move(rank));
    }
  }
  view.all_hosts.assign(hosts.begin(), hosts.end());
  if (!host.empty() && view.ranks.empty()) {
    std::string known;
    for (const std::string& h : view.all_hosts) known += (known.empty() ? "" : ", ") + h;
    return base::NotFoundError("host " + host + " matched no rank; hosts in the range: " +
                               (known.empty() ? "none" : known));
  }
  dom::element diagnosis;
  dom::array findings;
  if (doc["diagnosis"].get(diagnosis) == simdjson::SUCCESS &&
      diagnosis["findings"].get(findings) == simdjson::SUCCESS) {
    for (dom::element f : findings) {
      FindingView v{Str(f, "id"),
                    Str(f, "severity"),
                    Str(f, "summary"),
                    Double(f, "confidence"),
                    Double(f, "score"),
                    Int(f, "rank"),
                    {},
                    {}};
      dom::array evidence;
      if (f["evidence"].get(evidence) == simdjson::SUCCESS)
        for (dom::element e : evidence) {
          const std::string unit = Str(e, "unit");
          v.evidence.push_back(Str(e, "name") + "=" + Number(Double(e, "value")) +
                               (unit == "count" ? "" : unit));
        }
      dom::array fixes;
      if (f["fixes"].get(fixes) == simdjson::SUCCESS)
        for (dom::element x : fixes) {
          std::string_view s;
          if (x.get(s) == simdjson::SUCCESS) v.fixes.emplace_back(s);
        }
      view.findings.push_back(std::move(v));
    }
  }
  std::set<int64_t> pids;
  if (!host.empty())
    for (const RankView& r : view.ranks) pids.insert(r.pid);
  dom::element views;
  if (doc["views"].get(views) == simdjson::SUCCESS) ParseRangeTables(views, pids, &view);
  ParseTelemetry(doc, &view);
  if (!engine.empty() && view.has_engine && view.engine != engine) {
    view.has_engine = false;
    view.engine_derived.clear();
    view.engine_gauges.clear();
  }
  return view;
}

}  // namespace inferscope::context
