// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The fleet's numbers (docs/benchmarks.md, "The fleet in ClickHouse"):
//  1. a simulated fleet (--gpus GPUs, 8 per host, one process per GPU, --hours of --window
//     windows) generated through the sink's own encoder (fleet::EncodeWindow) into a ClickHouse
//     server, then "worst 10 hosts by idle share, last 24 h" (fleet::QueryFleet: GROUP BY host over
//     the windows fact table, FINAL) timed --runs times;
//  2. the sink's steady state at 8 GPUs: a fleet::ClickHouseSink fed one realistic window per GPU
//  (top
//     15 kernels + tail, 6 categories, 3 sync types) and a telemetry record per window every
//     --window for --cpu-seconds of wall time, shipping every 2 s; the process's CPU time over
//     that wall time is the sink's cost (encoding on the caller + its thread's inserts).
// Starts its own clickhouse-server (test_clickhouse_server.h) unless --url names one.
// --phases: every window also carries a forward-phase split (prefill, decode and the outside
// row: schema 4's phases table), to measure what the phases add to the sink's inserts.
//
// --row-bytes: no server; prints the JSONEachRow bytes of one realistic device window (15 top
// kernels + tail, 6 categories, 3 sync types) per table, without and with launch configurations
// on its top kernels (schema 5: 1 to 4 per kernel, 2.5 on average), and the encoding time.
//
// Usage: fleet_benchmark [--gpus 1000] [--hours 24] [--window 10] [--runs 5] [--cpu-seconds 60]
//                        [--all-tables] [--phases] [--url clickhouse://HOST:PORT/DB [--query-only]]
//        fleet_benchmark --row-bytes
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_serving_phases.h"
#include "src/base/time_point.h"
#include "src/fleet/query/fleet_query.h"
#include "src/fleet/sink/clickhouse_sink.h"
#include "src/fleet/sink/schema.h"
#include "src/fleet/sink/test_clickhouse_server.h"

namespace ch = inferscope::fleet;
namespace model = inferscope::model;
using Clock = std::chrono::steady_clock;

namespace {

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// One process on one GPU; `kernels` top kernels (names as long as real mangled ones).
model::ProfileWindow GpuWindow(uint32_t pid, int32_t rank, int kernels, int64_t start_ns,
                               int64_t window_ns, int idle_permille, bool phases) {
  model::ProfileWindow w;
  w.start_ns = start_ns;
  w.end_ns = start_ns + window_ns;
  model::ProcessProfile p;
  p.pid = pid;
  p.rank = rank;
  p.world_size = 8;
  model::DeviceProfile d;
  d.device = static_cast<uint32_t>(rank);
  d.device_name = "NVIDIA H100 80GB HBM3";
  d.first_start_ns = start_ns;
  d.last_end_ns = start_ns + window_ns;
  d.busy_ns = window_ns / 1000 * (1000 - idle_permille);
  d.compute_ns = d.busy_ns * 8 / 10;
  d.communication_ns = d.busy_ns / 10;
  d.communication_overlap_ns = d.communication_ns / 2;
  d.kernel_count = 40'000;
  for (int c = 0; c < 6; ++c) d.categories[static_cast<size_t>(c)] = {5000, d.busy_ns / 6};
  for (int k = 0; k < kernels; ++k) {
    model::KernelStats s;
    s.name =
        "_ZN7cutlass6KernelINS_4gemm6kernel13GemmUniversalINS_4gemm9GemmShapeILi128ELi256ELi64E" +
        std::to_string(k);
    s.category = static_cast<model::Category>(k % 6);
    s.duration.Add(100'000 + k);
    s.duration.Add(90'000);
    d.top_kernels.push_back(s);
  }
  d.tail.duration.Add(5000);
  d.tail.distinct_names = 40;
  const int64_t idle = d.idle_ns();
  d.idle_causes.ns[1] = idle / 2;
  d.idle_causes.ns[3] = idle - idle / 2;
  d.idle_causes.intervals = 200;
  for (size_t t = 1; t <= 3; ++t) d.syncs[t].wait.Add(50'000 * static_cast<int64_t>(t));
  d.steps.plain.Add(25'000'000);
  d.steps.prefill.Add(60'000'000);
  if (phases) inferscope::bench::AddServingPhases(&d, window_ns);
  p.devices.push_back(d);
  w.processes.push_back(p);
  return w;
}

// Gives each top kernel of `w` 1 to 4 launch configurations (kernel k: k % 4 + 1) with values
// of real sizes (grids in the hundreds to thousands, shared memory in tens of KB, launches and
// times of a 10 s window).
void AddLaunchConfigs(model::ProfileWindow* w) {
  for (model::DeviceProfile& d : w->processes[0].devices)
    for (size_t k = 0; k < d.top_kernels.size(); ++k) {
      model::KernelStats& s = d.top_kernels[k];
      const int n = static_cast<int>(k % 4) + 1;
      for (int j = 0; j < n; ++j) {
        model::LaunchConfig& c = s.configs.emplace_back();
        c.grid = {132 * (j + 1) + static_cast<int32_t>(k), 8, 1};
        c.block = {128 * (j % 2 + 1), 1, 1};
        c.registers_per_thread = 168 - 8 * j;
        c.static_shared_bytes = 0;
        c.dynamic_shared_bytes = 98'304 - 8'192 * j;
        c.shared_bytes = c.dynamic_shared_bytes;
        c.count = static_cast<uint64_t>(12'000 / (j + 1) + k);
        c.total_ns = 350'000'000 / (j + 1) + static_cast<int64_t>(k);
      }
      s.distinct_configs = static_cast<uint64_t>(n);
    }
}

// --row-bytes: the rows of one device window, per table, without and with configurations.
int RowBytes() {
  const int64_t window_ns = 10'000'000'000;
  const int64_t start_ns = 1'764'201'600'000'000'000;
  ch::FleetIdentity id;
  id.labels = {{"host", "node-17"}, {"model", "llama-70b"}, {"engine", "vllm"}};
  inferscope::wire::Hello hello;
  hello.pid = 1017;
  model::ProfileWindow plain = GpuWindow(1017, 1, 15, start_ns, window_ns, 150, false);
  model::ProfileWindow with = plain;
  AddLaunchConfigs(&with);
  size_t totals[2] = {};
  for (int v = 0; v < 2; ++v) {
    const model::ProfileWindow& w = v ? with : plain;
    constexpr int kReps = 20'000;
    ch::RowBatch batch;
    const auto t0 = Clock::now();
    for (int i = 0; i < kReps; ++i) {
      batch.Clear();
      ch::EncodeWindow(id, hello, w, &batch);
    }
    const double us = Seconds(Clock::now() - t0) * 1e6 / kReps;
    totals[v] = batch.total_bytes();
    std::printf(
        "%s launch configurations: %zu bytes a device window (%s %zu, kernels %zu B in "
        "%llu rows), encoding %.2f us\n",
        v ? "with" : "without", batch.total_bytes(), ch::kWindowsTable,
        batch.body[ch::RowBatch::kWindows].size(), batch.body[ch::RowBatch::kKernels].size(),
        static_cast<unsigned long long>(batch.rows[ch::RowBatch::kKernels]), us);
  }
  std::printf("launch configurations add %.1f%% to a device window's rows\n",
              100.0 * static_cast<double>(totals[1] - totals[0]) / static_cast<double>(totals[0]));
  return 0;
}

struct Flags {
  int gpus = 1000;
  double hours = 24;
  int64_t window_s = 10;
  int runs = 5;
  double cpu_seconds = 60;
  bool all_tables = false;
  bool phases = false;
  bool query_only = false;  // --query-only: time the queries over what --url already holds
  std::string url;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--all-tables") {
      f->all_tables = true;
    } else if (a == "--phases") {
      f->phases = true;
    } else if (a == "--query-only") {
      f->query_only = true;
    } else if ((a == "--gpus" || a == "--hours" || a == "--window" || a == "--runs" ||
                a == "--cpu-seconds" || a == "--url") &&
               (v = next())) {
      if (a == "--gpus") f->gpus = std::atoi(v);
      if (a == "--hours") f->hours = std::atof(v);
      if (a == "--window") f->window_s = std::atoll(v);
      if (a == "--runs") f->runs = std::atoi(v);
      if (a == "--cpu-seconds") f->cpu_seconds = std::atof(v);
      if (a == "--url") f->url = v;
    } else {
      std::fprintf(stderr, "fleet_benchmark: bad flag %s\n", a.c_str());
      return false;
    }
  }
  return f->gpus > 0 && f->hours > 0 && f->window_s > 0 && f->runs > 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--row-bytes") == 0) return RowBytes();
  Flags f;
  if (!ParseFlags(argc, argv, &f)) return 2;
  ch::testing::TestClickHouseServer server;
  ch::ClickHouseTarget target;
  if (const auto stop =
          ch::testing::BenchmarkTarget("fleet_benchmark", f.url, "fleet_bench", &server, &target))
    return *stop;
  const ch::ClickHouseClient client(target, 600'000);
  if (auto v = client.EnsureSchema(); !v.ok()) {
    std::fprintf(stderr, "fleet_benchmark: %s\n", v.status().message().c_str());
    return 1;
  }

  // 1. Fill: hosts of 8 GPUs; each host idles its own share (a few are clearly worse).
  const int64_t window_ns = f.window_s * 1'000'000'000;
  const int64_t windows = static_cast<int64_t>(f.hours * 3600 / static_cast<double>(f.window_s));
  const int64_t now_ns = inferscope::base::UnixNowNs();
  const int64_t first_ns = (now_ns - windows * window_ns) / window_ns * window_ns;
  const int hosts = (f.gpus + 7) / 8;
  std::vector<model::ProfileWindow> templates;
  for (int g = 0; g < f.gpus; ++g) {
    const int host = g / 8;
    const int idle = 100 + (host * 37) % 200 + (host % 50 == 7 ? 400 : 0);
    templates.push_back(
        GpuWindow(static_cast<uint32_t>(1000 + g), g % 8, 2, first_ns, window_ns, idle, f.phases));
  }
  std::vector<ch::FleetIdentity> ids(static_cast<size_t>(hosts));
  for (int h = 0; h < hosts; ++h)
    ids[static_cast<size_t>(h)].labels = {{"host", "node-" + std::to_string(h)},
                                          {"model", h % 2 ? "llama-70b" : "qwen-32b"},
                                          {"engine", "vllm"}};
  inferscope::wire::Hello hello;
  hello.process_start_unix_ns = first_ns - 1;
  const auto fill_start = Clock::now();
  double encode_s = 0;
  uint64_t rows = 0, bytes = 0;
  ch::RowBatch batch;
  uint64_t next_batch_id = 0;
  const auto half_rows = static_cast<uint64_t>(windows * f.gpus / 2);
  ch::Insert probe;  // a windows insert from mid-fill: the recovery check's cost is timed on it
  // As the sink sends: one insert per table and day, each row with its batch id.
  auto send = [&]() -> bool {
    for (ch::Insert& in : ch::SplitIntoInserts(batch, [&] { return ++next_batch_id; })) {
      if (!f.all_tables && in.table != ch::RowBatch::kWindows) continue;
      const auto s = client.InsertJsonEachRow(ch::RowBatch::TableName(in.table), in.body,
                                              "inferscope-insert-" + std::to_string(in.batch_id));
      if (!s.ok()) {
        std::fprintf(stderr, "fleet_benchmark: insert: %s\n", s.message().c_str());
        return false;
      }
      rows += in.rows;
      bytes += in.body.size();
      if (in.table == ch::RowBatch::kWindows && rows >= half_rows && probe.batch_id == 0) {
        probe = std::move(in);
        probe.body.clear();
      }
    }
    batch.Clear();
    return true;
  };
  for (int64_t i = 0; i < (f.query_only ? 0 : windows); ++i) {
    const auto e0 = Clock::now();
    for (int g = 0; g < f.gpus; ++g) {
      model::ProfileWindow& w = templates[static_cast<size_t>(g)];
      const int64_t start = first_ns + i * window_ns;
      const int64_t shift = start - w.start_ns;
      w.start_ns += shift;
      w.end_ns += shift;
      w.processes[0].devices[0].first_start_ns += shift;
      w.processes[0].devices[0].last_end_ns += shift;
      hello.pid = static_cast<uint32_t>(1000 + g);
      ch::EncodeWindow(ids[static_cast<size_t>(g / 8)], hello, w, &batch);
    }
    encode_s += Seconds(Clock::now() - e0);
    if (batch.rows[ch::RowBatch::kWindows] >= 200'000 && !send()) return 1;
  }
  if (!f.query_only && !send()) return 1;
  const double fill_s = Seconds(Clock::now() - fill_start);
  std::printf(
      "fill: %d GPUs on %d hosts x %lld windows of %llds = %llu rows (%s%s), %.1f MB of "
      "JSONEachRow in %.1f s (encoding %.1f s: %.2f us/window)\n",
      f.gpus, hosts, static_cast<long long>(windows), static_cast<long long>(f.window_s),
      static_cast<unsigned long long>(rows), f.all_tables ? "all tables" : "windows table",
      f.phases ? ", with phases" : "", static_cast<double>(bytes) / 1e6, fill_s, encode_s,
      encode_s * 1e6 / static_cast<double>(windows * f.gpus));

  // 2. The fleet query: worst 10 hosts by idle share over the last 24 h.
  ch::FleetQuery q;
  q.to_ns = now_ns + 60'000'000'000;
  q.from_ns = now_ns - 86400'000'000'000;
  q.top = 10;
  for (bool exact : {false, true}) {
    q.exact = exact;
    std::vector<double> times;
    std::string worst;
    for (int r = 0; r < f.runs; ++r) {
      const auto t0 = Clock::now();
      auto view = ch::QueryFleet(client, q);
      times.push_back(Seconds(Clock::now() - t0));
      if (!view.ok()) {
        std::fprintf(stderr, "fleet_benchmark: query: %s\n", view.status().message().c_str());
        return 1;
      }
      if (r == 0 && !exact) {
        for (size_t i = 0; i < std::min<size_t>(3, view->groups.size()); ++i)
          worst += (i ? ", " : "") + view->groups[i].key;
        std::printf("query: %zu hosts, %llu device windows; worst: %s; %zu outliers\n",
                    view->groups.size(), static_cast<unsigned long long>(view->total.windows),
                    worst.c_str(), view->outliers.size());
      }
    }
    std::sort(times.begin(), times.end());
    std::printf("worst 10 hosts by idle share, last 24 h%s: median %.3f s, max %.3f s (%d runs)\n",
                exact ? " (--exact: FINAL)" : "", times[times.size() / 2], times.back(), f.runs);
  }

  // The sink's check before resending an insert whose answer was lost: is a query of its id still
  // running, and how many rows of its batch id are in its day's partition.
  if (probe.batch_id != 0) {
    std::vector<double> times;
    uint64_t found = 0;
    for (int r = 0; r < std::max(f.runs, 1); ++r) {
      const auto t0 = Clock::now();
      auto running = client.QueryRunning("inferscope-insert-" + std::to_string(probe.batch_id));
      auto n = client.CountBatchRows(ch::kWindowsTable, probe.date, probe.batch_id);
      times.push_back(Seconds(Clock::now() - t0));
      if (!running.ok() || !n.ok()) {
        std::fprintf(stderr, "fleet_benchmark: batch check failed\n");
        return 1;
      }
      found = *n;
    }
    std::sort(times.begin(), times.end());
    std::printf(
        "retry check (running? + count of one batch id in its day, %llu of %llu rows found): "
        "median %.3f s, max %.3f s\n",
        static_cast<unsigned long long>(found), static_cast<unsigned long long>(probe.rows),
        times[times.size() / 2], times.back());
  }

  // 3. The sink's steady state at 8 GPUs.
  if (f.cpu_seconds > 0) {
    ch::ClickHouseSinkOptions o;
    o.target = target;
    o.target.database = target.database;
    o.identity.labels = {{"host", "steady-host"}};
    o.log = [](std::string_view) {};
    auto sink = ch::ClickHouseSink::Start(o);
    if (!sink.ok()) return 1;
    std::vector<model::ProfileWindow> gpus;
    for (int g = 0; g < 8; ++g)
      gpus.push_back(
          GpuWindow(static_cast<uint32_t>(50 + g), g, 15, now_ns, window_ns, 150, f.phases));
    const std::string telemetry_json(2048, ' ');
    const double cpu0 = CpuSeconds();
    const auto t0 = Clock::now();
    int64_t sent_windows = 0;
    while (Seconds(Clock::now() - t0) < f.cpu_seconds) {
      for (auto& w : gpus) {
        w.start_ns += window_ns;
        w.end_ns += window_ns;
        hello.pid = w.processes[0].pid;
        (*sink)->OnWindow(hello, w);
        ++sent_windows;
      }
      (*sink)->OnTelemetry({"gpu", gpus[0].start_ns, gpus[0].end_ns, 0, telemetry_json});
      std::this_thread::sleep_for(std::chrono::nanoseconds(window_ns));
    }
    (*sink)->Stop();
    const double wall = Seconds(Clock::now() - t0), cpu = CpuSeconds() - cpu0;
    const auto st = (*sink)->stats();
    std::printf(
        "sink steady state, 8 GPUs, %llds windows: %.3f s CPU over %.1f s = %.2f%% of a "
        "core (%lld windows, %llu rows sent, %llu failures)\n",
        static_cast<long long>(f.window_s), cpu, wall, 100 * cpu / wall,
        static_cast<long long>(sent_windows), static_cast<unsigned long long>(st.rows_sent),
        static_cast<unsigned long long>(st.failures));
  }
  return 0;
}
