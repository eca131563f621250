// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The kernel statistics' launch configurations with registers and shared memory
// through the whole offline pipeline: traces written here (a Kineto JSON, an Nsight SQLite export),
// then the real traces that record them (skipped when ../shared/traces is absent).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <sstream>
#include <string>

#include "src/pipeline/trace_pipeline.h"
#include "src/report/report.h"
#include "tests/temp_dir.h"
#include "tests/test_traces.h"

namespace inferscope::pipeline {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kAttn = "flash_fwd_kernel";

TraceOptions KernelView() {
  TraceOptions options;
  options.views.kernels = true;
  return options;
}

base::StatusOr<TraceSet> Import(const std::string& path, TraceOptions options = KernelView()) {
  static const model::KernelClassifier classifier;
  std::string failed;
  std::ostringstream err;
  return ImportTraces({path}, options, classifier, &failed, err);
}

const model::DeviceViews& OnlyDevice(const TraceSet& set) {
  return set.traces.at(0).views.processes.at(0).devices.at(0);
}

// Four attention kernels of one grid and block: three with 48 KiB of shared memory, one with 96 KiB
// (another configuration), and a norm kernel whose args do not record them.
std::string KinetoTrace() {
  std::string events =
      R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":1,)"
      R"("dur":1,"args":{"correlation":1}})";
  auto kernel = [&](const char* name, int corr, const std::string& resources) {
    events += ",\n" + std::string(R"({"ph":"X","cat":"kernel","name":")") + name +
              R"(","pid":0,"tid":7,"ts":)" + std::to_string(100 * corr) +
              R"(,"dur":10,"args":{"device":0,"stream":7,"correlation":)" + std::to_string(corr) +
              R"(,"grid":[132,1,1],"block":[128,1,1])" + resources + "}}";
  };
  const std::string small = R"(,"registers per thread":168,"shared memory":49152)";
  kernel(kAttn, 1, small);
  kernel(kAttn, 2, small);
  kernel(kAttn, 3, R"(,"registers per thread":168,"shared memory":98304)");
  kernel(kAttn, 4, small);
  kernel("rms_norm_kernel", 5, "");
  return R"({"schemaVersion":1,"traceEvents":[)" + events + "]}";
}

TEST(TraceLaunchConfigsTest, KinetoRegistersAndSharedMemoryInViewsJsonTextAndCsv) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/attn.json";
  std::ofstream(path) << KinetoTrace();
  auto set = Import(path);
  ASSERT_TRUE(set.ok()) << set.status().message();
  const model::DeviceViews& d = OnlyDevice(*set);
  ASSERT_EQ(d.kernels.size(), 2u);
  const model::KernelStatRow& attn = d.kernels[0];
  ASSERT_EQ(attn.name, kAttn);
  EXPECT_EQ(attn.distinct_configs, 2u);  // same grid and block, another shared-memory size
  ASSERT_EQ(attn.configs.size(), 2u);
  EXPECT_EQ(attn.configs[0].count, 3u);
  EXPECT_EQ(attn.configs[0].registers_per_thread, 168);
  EXPECT_EQ(attn.configs[0].shared_bytes, 49152);
  EXPECT_EQ(attn.configs[0].static_shared_bytes, -1);  // Kineto records the sum only
  EXPECT_EQ(attn.configs[0].dynamic_shared_bytes, -1);
  EXPECT_EQ(attn.configs[1].shared_bytes, 98304);
  EXPECT_EQ(d.kernels[1].configs.at(0).registers_per_thread, -1);

  const analyze::Analysis a = AnalyzeTraces(*set, KernelView());
  const std::string json = report::RenderJson(a);
  EXPECT_THAT(json, HasSubstr(R"("registers_per_thread": 168,)"));
  EXPECT_THAT(json, HasSubstr(R"("static_shared_bytes": null,)"));
  EXPECT_THAT(json, HasSubstr(R"("shared_bytes": 98304,)"));
  std::string csv;
  ASSERT_TRUE(report::RenderCsv(a, "launch_configs", &csv));
  EXPECT_THAT(csv, HasSubstr("registers_per_thread,shared_bytes,static_shared_bytes,"
                             "dynamic_shared_bytes,count"));
  EXPECT_THAT(csv, HasSubstr(",132x1x1,128x1x1,168,49152,,,3,"));
  EXPECT_THAT(csv, HasSubstr(",132x1x1,128x1x1,,,,,1,"));  // the norm: not recorded
  // The text shows registers and the shared-memory sum; the split is unknown: no column for it.
  const std::string text = report::RenderText(a);
  EXPECT_THAT(text, HasSubstr("regs"));
  EXPECT_THAT(text, HasSubstr("49.2 KB"));
  EXPECT_THAT(text, Not(HasSubstr("dyn smem")));
}

// An Nsight export records the split: the same grid and block with two dynamic sizes are two
// configurations; registers and static shared memory come along.
TEST(TraceLaunchConfigsTest, NsightStaticAndDynamicSharedMemory) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/attn.sqlite";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const char* sql = R"sql(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (0, 'flash_fwd_kernel');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (1000, 2000, 0, 1, 7, 1, 100 << 24, 0, 132, 1, 1, 128, 1, 1, 255, 16, 33280),
  (3000, 4000, 0, 1, 7, 2, 100 << 24, 0, 132, 1, 1, 128, 1, 1, 255, 16, 33280),
  (5000, 9000, 0, 1, 7, 3, 100 << 24, 0, 132, 1, 1, 128, 1, 1, 255, 16, 66560);
)sql";
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &error), SQLITE_OK) << error;
  sqlite3_close(db);
  auto set = Import(path);
  ASSERT_TRUE(set.ok()) << set.status().message();
  const model::KernelStatRow& k = OnlyDevice(*set).kernels.at(0);
  ASSERT_EQ(k.configs.size(), 2u);
  EXPECT_EQ(k.configs[0].count, 2u);
  EXPECT_EQ(k.configs[0].registers_per_thread, 255);
  EXPECT_EQ(k.configs[0].static_shared_bytes, 16);
  EXPECT_EQ(k.configs[0].dynamic_shared_bytes, 33280);
  EXPECT_EQ(k.configs[0].shared_bytes, 33296);
  EXPECT_EQ(k.configs[1].dynamic_shared_bytes, 66560);
  EXPECT_EQ(k.configs[1].total_ns, 4000);
  const analyze::Analysis a = AnalyzeTraces(*set, KernelView());
  const std::string text = report::RenderText(a);
  EXPECT_THAT(text, HasSubstr("dyn smem"));  // recorded: the text shows it
  EXPECT_THAT(text, HasSubstr("66.6 KB"));
  std::string csv;
  ASSERT_TRUE(report::RenderCsv(a, "launch_configs", &csv));
  EXPECT_THAT(csv, HasSubstr(",132x1x1,128x1x1,255,66576,16,66560,1,4000,2"));
  // A slice keeps the resources of the kernels it keeps.
  TraceOptions sliced = KernelView();
  sliced.slice.relative = true;
  sliced.slice.from_ns = 3000;
  set = Import(path, sliced);
  ASSERT_TRUE(set.ok()) << set.status().message();
  const model::KernelStatRow& s = OnlyDevice(*set).kernels.at(0);
  ASSERT_EQ(s.configs.size(), 1u);
  EXPECT_EQ(s.configs[0].dynamic_shared_bytes, 66560);
  EXPECT_EQ(s.configs[0].registers_per_thread, 255);
}

// The Nsight export of a real 2 x H100 run: each kernel row's configurations, checked against
// SQLite's own GROUP BY over the kernel table.
TEST(TraceLaunchConfigsTest, RealNsightExportMatchesSqlGroupBy) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  const std::string path = testing::SharedTrace("nsys-ai/mfu_2gpu_before.sqlite");
  auto set = Import(path);
  ASSERT_TRUE(set.ok()) << set.status().message();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  // Configurations of one kernel name on one (pid, device), most frequent first.
  ASSERT_EQ(sqlite3_prepare_v2(db, R"sql(
SELECT count(*), sum(k.end - k.start), k.registersPerThread, k.staticSharedMemory,
       k.dynamicSharedMemory, k.gridX, k.blockX
FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
WHERE (k.globalPid >> 24) & 16777215 = ?1 AND k.deviceId = ?2 AND s.value = ?3
GROUP BY k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, k.registersPerThread,
         k.staticSharedMemory, k.dynamicSharedMemory
ORDER BY 1 DESC, 2 DESC)sql",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  size_t rows = 0, with_resources = 0;
  for (const model::ProcessViews& p : set->traces.at(0).views.processes) {
    for (const model::DeviceViews& d : p.devices) {
      for (const model::KernelStatRow& k : d.kernels) {
        sqlite3_reset(stmt);
        sqlite3_bind_int64(stmt, 1, p.pid);
        sqlite3_bind_int64(stmt, 2, d.device);
        sqlite3_bind_text(stmt, 3, k.name.c_str(), -1, SQLITE_TRANSIENT);
        size_t groups = 0;
        while (sqlite3_step(stmt) == SQLITE_ROW) {
          if (groups < k.configs.size()) {
            const model::LaunchConfig& c = k.configs[groups];
            EXPECT_EQ(c.count, static_cast<uint64_t>(sqlite3_column_int64(stmt, 0))) << k.name;
            EXPECT_EQ(c.total_ns, sqlite3_column_int64(stmt, 1)) << k.name;
            EXPECT_EQ(c.registers_per_thread, sqlite3_column_int(stmt, 2)) << k.name;
            EXPECT_EQ(c.static_shared_bytes, sqlite3_column_int(stmt, 3)) << k.name;
            EXPECT_EQ(c.dynamic_shared_bytes, sqlite3_column_int(stmt, 4)) << k.name;
            EXPECT_EQ(c.shared_bytes, c.static_shared_bytes + c.dynamic_shared_bytes);
            EXPECT_EQ(c.grid[0], sqlite3_column_int(stmt, 5)) << k.name;
            EXPECT_EQ(c.block[0], sqlite3_column_int(stmt, 6)) << k.name;
            with_resources += c.registers_per_thread > 0;
          }
          ++groups;
        }
        EXPECT_EQ(k.distinct_configs, groups) << k.name;
        ++rows;
      }
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  EXPECT_GE(rows, 20u);  // two ranks, the top 15 kernels of each
  EXPECT_GE(with_resources, rows);
}

// A Kineto trace that records them (TraceLens h100, HF Qwen inference): registers and the shared
// sum for every configuration listed, no split.
TEST(TraceLaunchConfigsTest, RealKinetoTraceRecordsRegistersAndSharedMemory) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  auto set = Import(testing::SharedTrace("TraceLens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"));
  ASSERT_TRUE(set.ok()) << set.status().message();
  size_t configs = 0, large_smem = 0;
  for (const model::ProcessViews& p : set->traces.at(0).views.processes)
    for (const model::DeviceViews& d : p.devices)
      for (const model::KernelStatRow& k : d.kernels)
        for (const model::LaunchConfig& c : k.configs) {
          ++configs;
          EXPECT_GE(c.registers_per_thread, 0) << k.name;
          EXPECT_LE(c.registers_per_thread, 255) << k.name;
          EXPECT_GE(c.shared_bytes, 0) << k.name;
          EXPECT_EQ(c.dynamic_shared_bytes, -1) << k.name;
          large_smem += c.shared_bytes == 231424;  // the sm90 GEMMs' 226 KiB
        }
  EXPECT_GE(configs, 15u);
  EXPECT_GE(large_smem, 1u);
}

}  // namespace
}  // namespace inferscope::pipeline
