// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Throughput of the Nsight Systems importer: synthetic exports with millions of rows (generated
// once per run into a temp file, using the column layout of Nsight 2026.2 / schema 3.25) and the
// real exports in ../shared/traces when present. Reports rows/s (items_per_second).

#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "src/aggregate/aggregator.h"
#include "src/import/nsys/nsys_importer.h"
#include "src/import/pipelined_sink.h"
#include "tests/trace_paths.h"

namespace inferscope::import {
namespace {

// Counts events; the cheapest possible consumer, so the numbers are the importer's own cost.
class CountingSink : public model::EventSink {
 public:
  void OnProcess(const model::ProcessInfo&) override { ++processes; }
  void OnDevice(const model::DeviceInfo&) override { ++devices; }
  void OnKernel(const model::KernelEvent& e) override { kernel_ns += e.end_ns - e.start_ns; }
  void OnMemcpy(const model::MemcpyEvent&) override { ++other; }
  void OnMemset(const model::MemsetEvent&) override { ++other; }
  void OnSync(const model::SyncEvent&) override { ++other; }
  void OnApiCall(const model::ApiCallEvent& e) override { api_kinds += static_cast<int>(e.kind); }
  void OnNvtx(const model::NvtxEvent&) override { ++other; }
  void OnDataQuality(uint32_t, model::DataQuality, uint64_t) override { ++other; }

  int64_t processes = 0, devices = 0, other = 0, api_kinds = 0, kernel_ns = 0;
};

constexpr char kSchema[] = R"sql(
PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.25.0');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
  gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,
  sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER, qmdPreexitDone INTEGER,
  qmdLastCtaDone INTEGER, graphId INTEGER, clusterX INTEGER, clusterY INTEGER, clusterZ INTEGER,
  clusterSchedulingPolicy INTEGER, maxPotentialClusterSize INTEGER, maxActiveClusters INTEGER,
  sharedMemoryRequestedPercentage INTEGER, tensorSizeMinusOneElements TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL, callchainId INTEGER);
)sql";

constexpr int kDistinctKernelNames = 300;
constexpr int64_t kGlobalPid0 = (int64_t{1} << 48) | (int64_t{1234} << 24);

// Builds an export with `kernels` kernel rows (2 processes, 2 devices, 300 kernel names) and
// `launches` runtime rows. Returns the path; the caller removes it.
std::string Generate(const std::string& tag, int64_t kernels, int64_t launches) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("nsys_bench_" + tag + "_" + std::to_string(getpid()) + ".sqlite"))
                               .string();
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr);
  sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO StringIds VALUES (?, ?)", -1, &s, nullptr);
  for (int i = 0; i < kDistinctKernelNames + 2; ++i) {
    const std::string name = i == 0   ? "cudaLaunchKernel_v7000"
                             : i == 1 ? "cudaStreamSynchronize_v3020"
                                      : "void at::native::vectorized_elementwise_kernel<4, "
                                        "at::native::FillFunctor<float>>(int, T2, T3) #" +
                                            std::to_string(i);
    sqlite3_bind_int(s, 1, i);
    sqlite3_bind_text(s, 2, name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_step(s);
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  sqlite3_prepare_v2(db,
                     "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1, ?2, ?3, ?3 + 1, NULL, ?4, "
                     "?5, ?6, ?7, ?7, NULL, 1, 0, 32, ?8, 1, 1, 128, 1, 1, 0, 0, 0, 0, ?5, 0, "
                     "NULL, 0, NULL, NULL, NULL, NULL, 1, 1, 1, 0, 0, 0, 0, '')",
                     -1, &s, nullptr);
  int64_t t = 1'000'000'000;
  for (int64_t i = 0; i < kernels; ++i) {
    const int rank = static_cast<int>(i & 1);
    t += 1500 + (i % 7) * 100;
    sqlite3_bind_int64(s, 1, t);
    sqlite3_bind_int64(s, 2, t + 1000 + (i % 13) * 50);
    sqlite3_bind_int(s, 3, rank);
    sqlite3_bind_int(s, 4, 7 + static_cast<int>(i % 3));
    sqlite3_bind_int64(s, 5, i + 1);
    sqlite3_bind_int64(s, 6, kGlobalPid0 + (int64_t{rank} << 24));
    sqlite3_bind_int(s, 7, 2 + static_cast<int>((i * 7919) % kDistinctKernelNames));
    sqlite3_bind_int(s, 8, 1 + static_cast<int>(i % 1024));
    sqlite3_step(s);
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  sqlite3_prepare_v2(
      db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?1, ?2, 1, ?3, ?4, ?5, 0, NULL)", -1, &s,
      nullptr);
  t = 1'000'000'000;
  for (int64_t i = 0; i < launches; ++i) {
    const int rank = static_cast<int>(i & 1);
    t += 1500;
    sqlite3_bind_int64(s, 1, t);
    sqlite3_bind_int64(s, 2, t + 3000);
    sqlite3_bind_int64(s, 3, kGlobalPid0 + (int64_t{rank} << 24) + 1234 + rank);
    sqlite3_bind_int64(s, 4, i + 1);
    sqlite3_bind_int(s, 5, i % 100 == 99 ? 1 : 0);
    sqlite3_step(s);
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  return path;
}

// One generated file per benchmark, removed at exit.
struct GeneratedFile {
  GeneratedFile(const std::string& tag, int64_t kernels, int64_t launches)
      : path(Generate(tag, kernels, launches)) {}
  ~GeneratedFile() { std::filesystem::remove(path); }
  std::string path;
};

void RunImport(benchmark::State& state, const std::string& path) {
  uint64_t rows = 0, kernels = 0, bytes = 0;
  for (auto _ : state) {
    model::NameTable names;
    CountingSink sink;
    auto stats = ImportNsysSqlite(path, &names, &sink);
    if (!stats.ok()) {
      state.SkipWithError(stats.status().message().c_str());
      return;
    }
    rows += stats->events_read;
    kernels += stats->kernels;
    bytes += stats->file_bytes;
    benchmark::DoNotOptimize(sink.kernel_ns);
  }
  state.SetItemsProcessed(static_cast<int64_t>(rows));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["kernels/s"] =
      benchmark::Counter(static_cast<double>(kernels), benchmark::Counter::kIsRate);
}

void BM_NsysSyntheticKernels(benchmark::State& state) {
  static const GeneratedFile file("kernels", 2'000'000, 0);
  RunImport(state, file.path);
}
BENCHMARK(BM_NsysSyntheticKernels)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_NsysSyntheticKernelsAndLaunches(benchmark::State& state) {
  static const GeneratedFile file("mixed", 1'000'000, 1'000'000);
  RunImport(state, file.path);
}
BENCHMARK(BM_NsysSyntheticKernelsAndLaunches)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same 2 M kernel rows through the whole-trace Aggregator on a second thread: what
// `inferscope analyze` pays before the (size-independent) analysis and rendering.
void BM_NsysSyntheticKernelsAggregated(benchmark::State& state) {
  static const GeneratedFile file("aggregated", 2'000'000, 0);
  uint64_t kernels = 0;
  for (auto _ : state) {
    model::NameTable names;
    model::KernelClassifier classifier;
    aggregate::AggregateWholeTrace({}, &names, &classifier, [&](model::EventSink* sink) {
      PipelinedSink pipeline(
          sink);  // as `inferscope analyze` runs it: import and aggregate overlap
      auto stats = ImportNsysSqlite(file.path, &names, &pipeline);
      pipeline.Close();
      if (stats.ok()) kernels += stats->kernels;
    });
  }
  state.SetItemsProcessed(static_cast<int64_t>(kernels));
}
BENCHMARK(BM_NsysSyntheticKernelsAggregated)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_NsysRealFile(benchmark::State& state, const char* relative) {
  const std::string path = testing::SharedTrace(relative);
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("shared trace not found (set INFERSCOPE_SHARED_TRACES)");
    return;
  }
  RunImport(state, path);
}
BENCHMARK_CAPTURE(BM_NsysRealFile, mfu_2gpu_before, "nsys-ai/mfu_2gpu_before.sqlite")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_NsysRealFile, h100_2gpu_1s, "nsys-ai/h100_2gpu_1s.sqlite")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_NsysRealFile, cloverleaf,
                  "pipit/cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite")
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace inferscope::import

BENCHMARK_MAIN();
