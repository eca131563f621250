// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// What `context --source` and `diff --source` cost on a simulated fleet (docs/benchmarks.md, "The
// fleet's context and diff"): --gpus GPUs (8 per host, one process per GPU) x --hours of
// --window windows, every fact table filled through the sink's encoder (15 top kernels per window
// out of 30 names per GPU, so the kernels' LIMIT BY cuts, 6 categories, 3 sync types, a forward-
// phase split of decode, prefill and outside rows), then timed
// --runs times:
//  - context: fleet::QueryFleetProfile over the whole range (top 20 per GPU) and the analysis of
//  it;
//  - a diff side: the whole range (top 50), the distinct window starts, the 64-slice profile and
//    the figures of every slice (what cli/fleet_diff.cc does per side).
// Starts its own clickhouse-server (test_clickhouse_server.h) unless --url names one that already
// holds the data (--query-only).
//
// --launch-configs: every top kernel row also carries 1 to 4 launch configurations (schema 5;
// kernel name n: n % 4 + 1, one of them changing with the window), to time the two configuration
// queries the profile reads add.
//
// Usage: fleet_profile_benchmark [--gpus 1000] [--hours 1] [--window 10] [--runs 3]
//                                [--launch-configs] [--url clickhouse://HOST:PORT/DB
//                                [--query-only]]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_serving_phases.h"
#include "src/analyze/analysis.h"
#include "src/analyze/compare.h"
#include "src/fleet/query/fleet_profile.h"
#include "src/fleet/sink/row_encoder.h"
#include "src/fleet/sink/schema.h"
#include "src/fleet/sink/test_clickhouse_server.h"

namespace ch = inferscope::fleet;
namespace model = inferscope::model;
namespace analyze = inferscope::analyze;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kBase = 1'764'201'600'000'000'000;  // 2025-11-27T00:00:00Z

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

model::ProfileWindow GpuWindow(uint32_t pid, int32_t rank, int64_t index, int64_t window_ns,
                               bool launch_configs) {
  model::ProfileWindow w;
  w.start_ns = kBase + index * window_ns;
  w.end_ns = w.start_ns + window_ns;
  model::ProcessProfile p;
  p.pid = pid;
  p.rank = rank;
  p.world_size = 8;
  model::DeviceProfile d;
  d.device = static_cast<uint32_t>(rank);
  d.device_name = "NVIDIA H100 80GB HBM3";
  d.first_start_ns = w.start_ns + 1'000'000;
  d.last_end_ns = w.end_ns - 1'000'000;
  d.busy_ns = window_ns / 1000 * (600 + (pid % 300));
  d.compute_ns = d.busy_ns * 8 / 10;
  d.communication_ns = d.busy_ns / 10;
  d.communication_overlap_ns = d.communication_ns / 2;
  for (int k = 0; k < 15; ++k) {
    model::KernelStats s;
    const int name = static_cast<int>((index + k) % 30);
    s.name = "_ZN7cutlass6KernelINS_4gemm6kernel13GemmUniversalINS_4gemm9GemmShapeILi128ELi256E" +
             std::to_string(name);
    s.category = static_cast<model::Category>(name % 6);
    s.subcategory = "dense";
    s.duration.Add(100'000 + name * 1000);
    s.duration.Add(90'000);
    for (int j = 0; launch_configs && j <= name % 4; ++j) {
      model::LaunchConfig& c = s.configs.emplace_back();
      c.grid = {132 * (j + 1) + (j == 0 ? static_cast<int32_t>(index % 3) : 0), 8, 1};
      c.block = {128, 1, 1};
      c.registers_per_thread = 168 - 8 * j;
      c.static_shared_bytes = 0;
      c.dynamic_shared_bytes = 98'304 - 8'192 * j;
      c.shared_bytes = c.dynamic_shared_bytes;
      c.count = static_cast<uint64_t>(2 - (j > 0));
      c.total_ns = 90'000 + j;
      s.distinct_configs = s.configs.size();
    }
    d.categories[static_cast<size_t>(s.category)].count += 2;
    d.categories[static_cast<size_t>(s.category)].time_ns += s.duration.total_ns;
    d.kernel_count += 2;
    d.top_kernels.push_back(s);
  }
  d.tail.duration.Add(5000);
  d.tail.distinct_names = 40;
  d.kernel_count += 1;
  const int64_t idle = d.idle_ns();
  d.idle_causes.ns[1] = idle / 2;
  d.idle_causes.ns[3] = idle - idle / 2;
  d.idle_causes.intervals = 200;
  d.idle_gaps.host_wait.Add(idle / 2);
  d.idle_gaps.kernel_wait.Add(idle - idle / 2);
  for (size_t t = 1; t <= 3; ++t) d.syncs[t].wait.Add(50'000 * static_cast<int64_t>(t));
  d.steps.plain.Add(25'000'000);
  inferscope::bench::AddServingPhases(&d, window_ns);  // schema 4's phases table
  p.devices.push_back(d);
  w.processes.push_back(p);
  return w;
}

struct Flags {
  int gpus = 1000;
  double hours = 1;
  int64_t window_s = 10;
  int runs = 3;
  bool query_only = false;
  bool launch_configs = false;
  std::string url;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--query-only") {
      f->query_only = true;
      continue;
    }
    if (a == "--launch-configs") {
      f->launch_configs = true;
      continue;
    }
    if (!v) return false;
    ++i;
    if (a == "--gpus")
      f->gpus = std::atoi(v);
    else if (a == "--hours")
      f->hours = std::atof(v);
    else if (a == "--window")
      f->window_s = std::atoll(v);
    else if (a == "--runs")
      f->runs = std::atoi(v);
    else if (a == "--url")
      f->url = v;
    else
      return false;
  }
  return f->gpus > 0 && f->hours > 0 && f->window_s > 0 && f->runs > 0;
}

bool Send(const ch::ClickHouseClient& client, ch::RowBatch* batch) {
  for (int t = 0; t < ch::RowBatch::kTables; ++t) {
    if (t == ch::RowBatch::kTelemetry || !batch->rows[t]) continue;
    const auto s = client.InsertJsonEachRow(ch::RowBatch::TableName(t), batch->body[t]);
    if (!s.ok()) {
      std::fprintf(stderr, "insert: %s\n", s.message().c_str());
      return false;
    }
  }
  batch->Clear();
  return true;
}

std::vector<const model::ProfileWindow*> Pointers(const std::vector<model::ProfileWindow>& ws) {
  std::vector<const model::ProfileWindow*> out;
  for (const auto& w : ws) out.push_back(&w);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  if (!ParseFlags(argc, argv, &f)) {
    std::fprintf(stderr,
                 "usage: fleet_profile_benchmark [--gpus N] [--hours H] [--window S] "
                 "[--runs N] [--url clickhouse://HOST:PORT/DB [--query-only]]\n");
    return 2;
  }
  ch::testing::TestClickHouseServer server;
  ch::ClickHouseTarget target;
  if (const auto stop = ch::testing::BenchmarkTarget("fleet_profile_benchmark", f.url,
                                                     "fleet_profile_bench", &server, &target))
    return *stop;
  const ch::ClickHouseClient client(target, 600'000);
  const int64_t window_ns = f.window_s * 1'000'000'000;
  const int64_t windows = static_cast<int64_t>(f.hours * 3600 / static_cast<double>(f.window_s));
  if (!f.query_only) {
    auto v = client.EnsureSchema();
    if (!v.ok()) {
      std::fprintf(stderr, "schema: %s\n", v.status().message().c_str());
      return 1;
    }
    const auto t0 = Clock::now();
    ch::RowBatch batch;
    inferscope::wire::Hello hello;
    uint64_t rows = 0;
    for (int gpu = 0; gpu < f.gpus; ++gpu) {
      ch::FleetIdentity identity;
      identity.labels = {{"host", "host-" + std::to_string(gpu / 8)},
                         {"replica", "r" + std::to_string(gpu / 8 % 4)}};
      hello.pid = static_cast<uint32_t>(1000 + gpu);
      hello.process_start_unix_ns = 7;
      for (int64_t i = 0; i < windows; ++i) {
        ch::EncodeWindow(identity, hello,
                         GpuWindow(hello.pid, gpu % 8, i, window_ns, f.launch_configs), &batch);
        if (batch.total_bytes() > (64u << 20)) {
          rows += batch.total_rows();
          if (!Send(client, &batch)) return 1;
        }
      }
    }
    rows += batch.total_rows();
    if (!Send(client, &batch)) return 1;
    std::printf("fill: %d GPUs x %lld windows, %llu rows in 5 fact tables, %.1f s\n", f.gpus,
                static_cast<long long>(windows), static_cast<unsigned long long>(rows),
                Seconds(Clock::now() - t0));
  }

  ch::FleetProfileQuery q;
  q.selection.from_ns = kBase;
  q.selection.to_ns = kBase + windows * window_ns;
  std::vector<double> context_s, side_s;
  size_t devices = 0, kernels = 0, slices = 0;
  for (int run = 0; run < f.runs; ++run) {
    auto t0 = Clock::now();
    q.top_k = 20;
    q.slice_starts.clear();
    q.collapse_devices = false;
    q.launch_configs = true;  // the context reads them; diff does not (cli/fleet_diff.cc)
    auto profile = ch::QueryFleetProfile(client, q);
    if (!profile.ok()) {
      std::fprintf(stderr, "context profile: %s\n", profile.status().message().c_str());
      return 1;
    }
    analyze::AnalysisOptions options;
    std::vector<analyze::AnalysisInput> inputs;
    for (const auto& w : profile->slices[0]) inputs.push_back({"", "clickhouse", &w});
    const analyze::Analysis analysis = analyze::Analyze(inputs, options);
    context_s.push_back(Seconds(Clock::now() - t0));
    devices = profile->devices;
    kernels = 0;
    for (const auto& w : profile->slices[0])
      for (const auto& p : w.processes)
        for (const auto& d : p.devices) kernels += d.top_kernels.size();

    t0 = Clock::now();
    q.top_k = 50;
    q.launch_configs = false;
    auto whole = ch::QueryFleetProfile(client, q);
    auto starts = ch::QueryWindowStarts(client, q, 100'000);
    if (!whole.ok() || !starts.ok()) {
      std::fprintf(stderr, "diff side failed\n");
      return 1;
    }
    analyze::AnalysisOptions diff_options;
    diff_options.top = 50;
    const auto figures = [&](const std::vector<model::ProfileWindow>& ws) {
      std::vector<analyze::AnalysisInput> in;
      for (const auto* w : Pointers(ws)) in.push_back({"", "", w});
      return analyze::FiguresFromAnalysis(analyze::Analyze(in, diff_options));
    };
    figures(whole->slices[0]);
    const size_t groups = starts->size(), n = std::min<size_t>(groups, 64);
    for (size_t g = 0; g < groups; ++g)
      if (g * n / groups == q.slice_starts.size()) q.slice_starts.push_back((*starts)[g]);
    q.collapse_devices = true;  // as cli/fleet_diff.cc
    auto sliced = ch::QueryFleetProfile(client, q);
    q.collapse_devices = false;
    if (!sliced.ok()) {
      std::fprintf(stderr, "slices: %s\n", sliced.status().message().c_str());
      return 1;
    }
    for (const auto& s : sliced->slices)
      if (!s.empty()) figures(s);
    slices = sliced->slices.size();
    side_s.push_back(Seconds(Clock::now() - t0));
  }
  // Where the time goes: each fact's query alone (the last run's settings: 64 slices, collapsed,
  // then the whole range per GPU as the context reads it).
  for (bool sliced : {true, false}) {
    q.collapse_devices = sliced;
    if (!sliced) {
      q.slice_starts.clear();
      q.top_k = 20;
    }
    std::string line;
    for (auto [fact, name] : {std::pair{ch::FleetFact::kDevices, "windows"},
                              std::pair{ch::FleetFact::kCategories, "categories"},
                              std::pair{ch::FleetFact::kKernels, "kernels"},
                              std::pair{ch::FleetFact::kKernelTotals, "kernel totals"},
                              std::pair{ch::FleetFact::kSyncs, "syncs"},
                              std::pair{ch::FleetFact::kWindowCount, "window count"},
                              std::pair{ch::FleetFact::kPhases, "phases"},
                              std::pair{ch::FleetFact::kPhaseCategories, "phase categories"},
                              std::pair{ch::FleetFact::kRanges, "ranges"},
                              std::pair{ch::FleetFact::kLaunchConfigs, "launch configs"},
                              std::pair{ch::FleetFact::kUnlistedConfigs, "unlisted configs"}}) {
      const auto t0 = Clock::now();
      auto body = client.Execute(ch::FleetProfileSql(target.database, q, fact));
      char part[96];
      std::snprintf(part, sizeof(part), "%s%s %.2f s (%zu KB)", line.empty() ? "" : ", ", name,
                    Seconds(Clock::now() - t0), body.ok() ? body->size() / 1024 : 0);
      line += part;
    }
    std::printf("%s: %s\n", sliced ? "64 slices, collapsed" : "whole range per GPU", line.c_str());
  }
  std::printf(
      "context profile (GROUP BY per GPU, top 20 kernels per GPU, analysis): median %.2f s "
      "(%d runs); %zu GPUs, %zu kernel rows back\n",
      Median(context_s), f.runs, devices, kernels);
  std::printf(
      "diff side (whole + window starts + %zu slices, figures of each): median %.2f s (%d runs)\n",
      slices, Median(side_s), f.runs);
  return 0;
}
