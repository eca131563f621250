// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/nsys/nsys_importer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "src/import/nsys/nsys_mapping.h"
#include "src/model/cuda_api.h"
#include "src/model/event_buffer.h"
#include "src/model/event_recorder.h"
#include "tests/temp_dir.h"
#include "tests/test_traces.h"

namespace inferscope::import {
namespace {

using model::ApiKind;
using model::DataQuality;
using model::MemcpyKind;
using model::SyncType;
using ::testing::HasSubstr;

// Records everything the importer delivers, checking that each event's process was announced
// first.
class RecordingSink : public model::EventRecorder {
 public:
  void OnKernel(const model::KernelEvent& e) override {
    EXPECT_TRUE(Announced(e.pid));
    EventRecorder::OnKernel(e);
  }
  void OnMemcpy(const model::MemcpyEvent& e) override {
    EXPECT_TRUE(Announced(e.pid));
    EventRecorder::OnMemcpy(e);
  }
  void OnApiCall(const model::ApiCallEvent& e) override {
    EXPECT_TRUE(Announced(e.pid));
    EventRecorder::OnApiCall(e);
  }
  void OnDataQuality(uint32_t pid, DataQuality counter, uint64_t count) override {
    EXPECT_TRUE(Announced(pid));
    EventRecorder::OnDataQuality(pid, counter, count);
  }

  bool Announced(uint32_t pid) const {
    for (const auto& p : processes) {
      if (p.pid == pid) return true;
    }
    return false;
  }
  std::set<uint32_t> Pids() const {
    std::set<uint32_t> out;
    for (const auto& p : processes) out.insert(p.pid);
    return out;
  }
};

// ---- real exports -------------------------------------------------------------------------------

struct RealFile {
  const char* path;
  size_t kernels, memcpys, memsets, runtime, syncs, nvtx;
  std::set<uint32_t> pids;
};

// Expected numbers from the sqlite3 CLI, e.g. for each file F and table T:
//   sqlite3 -readonly F "select count(*) from T"
//   sqlite3 -readonly F "select count(*) from NVTX_EVENTS where eventType in (59,60) and end>start"
//   sqlite3 -readonly F "select distinct globalPid>>24&16777215 from CUPTI_ACTIVITY_KIND_KERNEL"
// No row in these files has a zero or reversed timestamp (checked with start=0 or end<start).
const RealFile kRealFiles[] = {
    {"nsys-ai/mfu_2gpu_before.sqlite", 4010, 1020, 269, 7466, 366, 19118, {144, 145}},
    {"nsys-ai/mfu_2gpu_after.sqlite", 3587, 904, 242, 6682, 334, 17113, {148, 149}},
    {"nsys-ai/h100_2gpu_1s.sqlite", 3442, 904, 22, 5796, 244, 16782, {111, 112}},
    {"pipit/cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite",
     1312,
     279,
     0,
     3048,
     1312,
     0,
     {1701896}},
    {"pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", 5, 15, 0, 95, 0, 22, {1230493}},
};

class RealExportTest : public ::testing::TestWithParam<RealFile> {};

TEST_P(RealExportTest, DeliversEveryRow) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  const RealFile& f = GetParam();
  model::NameTable names;
  RecordingSink sink;
  auto stats = ImportNsysSqlite(testing::SharedTrace(f.path), &names, &sink);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->format, TraceFormat::kNsysSqlite);
  EXPECT_EQ(stats->kernels, f.kernels);
  EXPECT_EQ(sink.kernels.size(), f.kernels);
  EXPECT_EQ(sink.memcpys.size(), f.memcpys);
  EXPECT_EQ(sink.memsets.size(), f.memsets);
  EXPECT_EQ(sink.api_calls.size(), f.runtime);
  EXPECT_EQ(sink.syncs.size(), f.syncs);
  EXPECT_EQ(sink.nvtx.size(), f.nvtx);
  EXPECT_EQ(sink.Pids(), f.pids);
  EXPECT_EQ(sink.processes.size(), f.pids.size());  // each announced once
  EXPECT_TRUE(sink.quality.empty());
  for (const auto& k : sink.kernels) {
    ASSERT_NE(k.name, model::kNoName);
    ASSERT_FALSE(names.Get(k.name).empty());
    ASSERT_LE(k.start_ns, k.end_ns);
    ASSERT_GT(k.grid[0], 0);
    ASSERT_GT(k.block[0], 0);
  }
  for (const auto& a : sink.api_calls) ASSERT_NE(a.name, model::kNoName);
  for (const auto& n : sink.nvtx) ASSERT_LT(n.start_ns, n.end_ns);

  // The in-memory path gives the same result.
  std::ifstream in(testing::SharedTrace(f.path), std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string bytes = buf.str();
  model::NameTable names2;
  RecordingSink sink2;
  auto stats2 = ImportNsysSqliteImage(bytes, &names2, &sink2);
  ASSERT_TRUE(stats2.ok()) << stats2.status().message();
  EXPECT_EQ(sink2.kernels.size(), f.kernels);
  EXPECT_EQ(sink2.api_calls.size(), f.runtime);
  EXPECT_EQ(sink2.nvtx.size(), f.nvtx);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RealExportTest, ::testing::ValuesIn(kRealFiles));

TEST(NsysImporterRealTest, MfuTwoRanksDevicesSyncsAndNames) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  model::NameTable names;
  RecordingSink sink;
  auto stats =
      ImportNsysSqlite(testing::SharedTrace("nsys-ai/mfu_2gpu_before.sqlite"), &names, &sink);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  // TARGET_INFO_SESSION_START_TIME.utcEpochNs: 2026-05-26T07:58:50 UTC.
  EXPECT_EQ(stats->wall_clock_offset_ns, 1'779'782'330'176'752'435);
  ASSERT_EQ(sink.processes.size(), 2u);
  for (const auto& p : sink.processes) {
    EXPECT_EQ(p.rank, -1);
    EXPECT_EQ(names.Get(p.hostname), "modal");
  }
  // pid 144 runs on device 0 (context 1), pid 145 on device 1 (context 2); no TARGET_INFO_GPU.
  std::set<std::pair<uint32_t, uint32_t>> devices;
  for (const auto& d : sink.devices) {
    devices.emplace(d.pid, d.device);
    EXPECT_EQ(d.name, model::kNoName);
  }
  EXPECT_EQ(devices, (std::set<std::pair<uint32_t, uint32_t>>{{144, 0}, {145, 1}}));
  // SYNCHRONIZATION rows say deviceId 0 for both contexts; the importer uses the context's device.
  // Type 1 (event sync) rows belong to cudaEventQuery calls, types 2/3 to cudaStreamWaitEvent and
  // cudaStreamSynchronize (joined on correlationId).
  std::map<SyncType, int> sync_types;
  for (const auto& s : sink.syncs) {
    EXPECT_EQ(s.device, s.pid == 144 ? 0u : 1u);
    EXPECT_NE(s.tid, 0u) << "tid comes from the API call with the same correlation id";
    ++sync_types[s.type];
  }
  // sqlite3 ... "select syncType, count(*) from CUPTI_ACTIVITY_KIND_SYNCHRONIZATION group by 1"
  EXPECT_EQ(sync_types[SyncType::kEvent], 133);
  EXPECT_EQ(sync_types[SyncType::kStreamWaitEvent], 200);
  EXPECT_EQ(sync_types[SyncType::kStream], 33);
  // Every memcpy here is HtoD from pageable memory or DtoD (copyKind/srcKind/dstKind 1/0/2, 8/2/2).
  int htod = 0, dtod = 0;
  for (const auto& m : sink.memcpys) {
    if (m.kind == MemcpyKind::kHtoD) {
      ++htod;
      EXPECT_TRUE(m.pageable);
    } else if (m.kind == MemcpyKind::kDtoD) {
      ++dtod;
      EXPECT_FALSE(m.pageable);
    }
  }
  EXPECT_EQ(htod, 34);
  EXPECT_EQ(dtod, 986);
  int stream_syncs = 0, launches = 0;
  for (const auto& a : sink.api_calls) {
    if (a.kind == ApiKind::kSync && a.sync_type == SyncType::kStream) ++stream_syncs;
    if (a.kind == ApiKind::kKernelLaunch) ++launches;
    EXPECT_NE(a.tid, 0u);
  }
  EXPECT_EQ(stream_syncs, 33);
  EXPECT_GT(launches, 3000);
  bool nccl = false;
  for (const auto& k : sink.kernels) {
    nccl = nccl || names.Get(k.name).find("ncclDevKernel_SendRecv") != std::string_view::npos;
  }
  EXPECT_TRUE(nccl);
}

TEST(NsysImporterRealTest, TargetInfoGpuNamesDevices) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  model::NameTable names;
  RecordingSink sink;
  auto stats = ImportNsysSqlite(
      testing::SharedTrace("pipit/cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite"), &names,
      &sink);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  ASSERT_EQ(sink.devices.size(), 1u);  // 4 GPUs listed, kernels on one
  EXPECT_EQ(sink.devices[0].device, 0u);
  EXPECT_EQ(names.Get(sink.devices[0].name), "NVIDIA A100-SXM4-80GB");
  // sqlite3 ... "select syncType, streamId, contextId, count(*) ... group by 1,2,3": 1|-1|1|1312,
  // event syncs without a stream.
  for (const auto& s : sink.syncs) {
    EXPECT_EQ(s.type, SyncType::kEvent);
    EXPECT_EQ(s.device, 0u);
    EXPECT_EQ(s.stream, model::kUnknownStream);
  }
}

TEST(NsysImporterRealTest, OldSchemaVersionedNames) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  model::NameTable names;
  RecordingSink sink;
  auto stats = ImportNsysSqlite(
      testing::SharedTrace("pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"), &names, &sink);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  ASSERT_EQ(sink.devices.size(), 1u);
  EXPECT_EQ(names.Get(sink.devices[0].name), "NVIDIA A100-SXM4-40GB");
  std::map<std::string, int> mallocs, frees, copies, launches;
  for (const auto& a : sink.api_calls) {
    const std::string name(names.Get(a.name));
    if (a.kind == ApiKind::kMalloc) ++mallocs[name];
    if (a.kind == ApiKind::kFree) ++frees[name];
    if (a.kind == ApiKind::kMemcpy) ++copies[name];
    if (a.kind == ApiKind::kKernelLaunch) ++launches[name];
  }
  EXPECT_EQ(mallocs, (std::map<std::string, int>{{"cudaMalloc", 15}, {"cudaMalloc_v3020", 15}}));
  EXPECT_EQ(frees, (std::map<std::string, int>{{"cudaFree", 3}, {"cudaFree_v3020", 3}}));
  EXPECT_EQ(copies, (std::map<std::string, int>{{"cudaMemcpy", 15}, {"cudaMemcpy_v3020", 15}}));
  EXPECT_EQ(launches,
            (std::map<std::string, int>{{"cudaLaunchKernel", 5}, {"cudaLaunchKernel_v7000", 5}}));
  // 2022 export, no ENUM tables: srcKind 0 is pageable (HtoD 1/0/2 x10, DtoH 2/2/0 x5).
  int pageable_htod = 0, pageable_dtoh = 0;
  for (const auto& m : sink.memcpys) {
    pageable_htod += m.kind == MemcpyKind::kHtoD && m.pageable;
    pageable_dtoh += m.kind == MemcpyKind::kDtoH && m.pageable;
  }
  EXPECT_EQ(pageable_htod, 10);
  EXPECT_EQ(pageable_dtoh, 5);
  EXPECT_EQ(names.Get(sink.processes.at(0).hostname), "nid001608");
}

TEST(NsysImporterRealTest, TruncatedRealFileIsAnErrorNotACrash) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  std::ifstream in(testing::SharedTrace("nsys-ai/mfu_2gpu_before.sqlite"), std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string bytes = buf.str();
  for (size_t keep : {bytes.size() / 2, bytes.size() / 10, size_t{5000}, size_t{100}}) {
    model::NameTable names;
    RecordingSink sink;
    auto stats = ImportNsysSqliteImage(std::string_view(bytes).substr(0, keep), &names, &sink);
    EXPECT_FALSE(stats.ok()) << "kept " << keep << " bytes";
    if (keep > 1000) {
      EXPECT_EQ(stats.status().code(), base::StatusCode::kDataLoss) << stats.status().message();
    }
  }
}

// ---- synthetic databases ------------------------------------------------------------------------

class SyntheticTest : public ::testing::Test {
 protected:
  std::string MakeDb(const std::string& name, const std::string& sql) {
    const std::string path = (dir_ / name).string();
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
    sqlite3_free(err);
    sqlite3_close(db);
    return path;
  }

  std::string WriteFile(const std::string& name, const std::string& content) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  inferscope::testing::TempDir temp_;
  std::filesystem::path dir_ = temp_.path();
};

// A minimal 3.x-shaped export: no NVTX, SYNCHRONIZATION or MEMSET tables, pid 100 and 200.
constexpr char kMinimalSql[] = R"sql(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (0, 'gemm_kernel'), (1, 'cudaLaunchKernel_v7000'),
  (2, 'cudaMallocAsync_v11020'), (3, 'cudaStreamSynchronize_ptsz');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (1000, 2000, 0, 1, 7, 11, 100 << 24, 0, 4, 2, 1, 128, 1, 1),
  (3000, 3500, 1, 2, 9, 12, 200 << 24, 0, 1, 1, 1, 32, 1, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (900, 950, 1, (100 << 24) + 101, 11, 1),
  (960, 970, 1, (100 << 24) + 101, 13, 2),
  (980, 990, 1, (200 << 24) + 202, 14, 3);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, globalPid INTEGER, bytes INTEGER,
  copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES
  (100, 200, 0, 7, 100 << 24, 4096, 2, 2, 1),
  (300, 400, 0, 7, 100 << 24, 8, 10, 2, 2),
  (500, 600, 0, 7, 100 << 24, 8, 9, NULL, NULL);
)sql";

TEST_F(SyntheticTest, MissingOptionalTablesAndColumns) {
  const std::string path = MakeDb("minimal.sqlite", kMinimalSql);
  model::NameTable names;
  RecordingSink sink;
  auto stats = ImportNsysSqlite(path, &names, &sink);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(sink.Pids(), (std::set<uint32_t>{100, 200}));
  ASSERT_EQ(sink.kernels.size(), 2u);
  const auto& k = sink.kernels[0];
  EXPECT_EQ(k.pid, 100u);
  EXPECT_EQ(k.device, 0u);
  EXPECT_EQ(k.stream, 7u);
  EXPECT_EQ(k.correlation_id, 11u);
  EXPECT_EQ(k.graph_id, 0u);
  EXPECT_EQ(names.Get(k.name), "gemm_kernel");
  EXPECT_EQ(sink.kernels[1].name, k.name);  // interned once
  EXPECT_EQ(k.grid[0], 4);
  EXPECT_EQ(k.grid[1], 2);
  EXPECT_EQ(k.block[0], 128);
  ASSERT_EQ(sink.api_calls.size(), 3u);
  EXPECT_EQ(sink.api_calls[0].kind, ApiKind::kKernelLaunch);
  EXPECT_EQ(sink.api_calls[0].tid, 101u);
  EXPECT_EQ(sink.api_calls[1].kind, ApiKind::kMalloc);
  EXPECT_EQ(sink.api_calls[2].kind, ApiKind::kSync);
  EXPECT_EQ(sink.api_calls[2].sync_type, SyncType::kStream);
  EXPECT_EQ(sink.api_calls[2].pid, 200u);
  ASSERT_EQ(sink.memcpys.size(), 3u);
  EXPECT_EQ(sink.memcpys[0].kind, MemcpyKind::kDtoH);
  EXPECT_FALSE(sink.memcpys[0].pageable);  // 1 = pinned in Nsight's numbering
  EXPECT_EQ(sink.memcpys[0].bytes, 4096u);
  EXPECT_EQ(sink.memcpys[1].kind, MemcpyKind::kPtoP);
  EXPECT_EQ(sink.memcpys[2].kind, MemcpyKind::kHtoH);
  EXPECT_FALSE(sink.memcpys[2].pageable);  // NULL kinds are not pageable
  EXPECT_TRUE(sink.memsets.empty());
  EXPECT_TRUE(sink.syncs.empty());
  EXPECT_TRUE(sink.nvtx.empty());
  EXPECT_EQ(sink.devices.size(), 2u);
}

TEST_F(SyntheticTest, ZeroAndReversedTimestampsAreCountedNotDelivered) {
  const std::string path = MakeDb("bad_times.sqlite", R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (0, 'k'), (1, 'range');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, globalPid INTEGER, demangledName INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 10, 0, 1, 5 << 24, 0), (20, 10, 0, 1, 5 << 24, 0),
  (5, 0, 0, 1, 5 << 24, 0), (1, 2, 0, 1, 5 << 24, 0), (7, 7, 0, 1, 5 << 24, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, globalPid INTEGER, bytes INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (9, 3, 0, 1, 5 << 24, 16), (3, 9, 0, 1, 5 << 24, 16);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  text TEXT, globalTid INTEGER, textId INTEGER);
INSERT INTO NVTX_EVENTS VALUES (10, 20, 59, 'step', (5 << 24) + 6, NULL),
  (10, 30, 60, NULL, (5 << 24) + 6, 1), (10, NULL, 59, 'open', (5 << 24) + 6, NULL),
  (15, 15, 34, 'mark', (5 << 24) + 6, NULL), (40, 30, 59, 'rev', (5 << 24) + 6, NULL);
)sql");
  model::NameTable names;
  RecordingSink sink;
  auto stats = ImportNsysSqlite(path, &names, &sink);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(sink.kernels.size(), 2u);  // (1, 2) and the zero-length (7, 7)
  EXPECT_EQ(stats->kernels, 2u);
  EXPECT_EQ(sink.memsets.size(), 1u);
  ASSERT_EQ(sink.nvtx.size(), 2u);
  EXPECT_EQ(names.Get(sink.nvtx[0].name), "step");
  EXPECT_EQ(names.Get(sink.nvtx[1].name), "range");
  EXPECT_EQ(sink.nvtx[0].tid, 6u);
  EXPECT_EQ(sink.quality[DataQuality::kZeroTimestamp], 2u);
  EXPECT_EQ(sink.quality[DataQuality::kReversedTimestamp], 3u);  // kernel, memset, nvtx
}

TEST_F(SyntheticTest, SyncRowsUseEnumTablesContextDeviceAndCallThread) {
  const std::string path = MakeDb("sync.sqlite", R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (0, 'k'), (1, 'cudaEventSynchronize_v3020'),
  (2, 'cudaDeviceSynchronize_v3020');
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (0, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN', ''),
  (11, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE', ''),
  (14, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE', '');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
  contextId INTEGER, streamId INTEGER, globalPid INTEGER, demangledName INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 3, 9, 1, 5 << 24, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10, 20, (5 << 24) + 77, 40, 1),
  (30, 40, (5 << 24) + 78, 41, 2);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER, end INTEGER, deviceId INTEGER,
  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
  deprecatedSyncType INTEGER, syncType INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES
  (11, 19, 0, 9, 4294967295, 40, 5 << 24, NULL, 11),
  (31, 39, 0, 9, 12, 41, 5 << 24, NULL, 14),
  (41, 49, 0, 8, 12, 99, 5 << 24, 1, NULL);
)sql");
  model::NameTable names;
  RecordingSink sink;
  auto stats = ImportNsysSqlite(path, &names, &sink);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  ASSERT_EQ(sink.syncs.size(), 3u);
  EXPECT_EQ(sink.syncs[0].type, SyncType::kEvent);
  EXPECT_EQ(sink.syncs[0].device, 3u);
  EXPECT_EQ(sink.syncs[0].stream, model::kUnknownStream);
  EXPECT_EQ(sink.syncs[0].tid, 77u);
  EXPECT_EQ(sink.syncs[1].type, SyncType::kDevice);
  EXPECT_EQ(sink.syncs[1].stream, model::kUnknownStream);
  EXPECT_EQ(sink.syncs[1].tid, 78u);
  EXPECT_EQ(sink.syncs[2].type, SyncType::kUnknown);       // code 1 is not in this file's enum
  EXPECT_EQ(sink.syncs[2].device, model::kUnknownDevice);  // context 8 ran nothing
  EXPECT_EQ(sink.syncs[2].stream, 12u);
}

// A kernel table large enough to be read on two connections at once (nsys_split_scan.h) gives
// exactly what the single-connection path gives (the in-memory image is never split).
TEST_F(SyntheticTest, LargeKernelTableSplitScanDeliversEveryRowOnce) {
  std::string sql = kMinimalSql;
  sql +=
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 250000) "
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT 10000 + i * 10, 10005 + i * 10, i % 2, "
      "1 + i % 2, 7, 100 + i, (100 + 100 * (i % 2)) << 24, 0, i % 64, 1, 1, 128, 1, 1 FROM n;";
  const std::string path = MakeDb("large.sqlite", sql);
  model::NameTable names_file, names_image;
  RecordingSink from_file, from_image;
  auto a = ImportNsysSqlite(path, &names_file, &from_file);
  ASSERT_TRUE(a.ok()) << a.status().message();
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto b = ImportNsysSqliteImage(bytes, &names_image, &from_image);
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(from_file.kernels.size(), 250'002u);
  ASSERT_EQ(from_image.kernels.size(), from_file.kernels.size());
  EXPECT_EQ(a->events_read, b->events_read);
  int64_t sum_a = 0, sum_b = 0, corr_a = 0, corr_b = 0;
  for (const auto& k : from_file.kernels) {
    sum_a += k.start_ns + k.grid[0];
    corr_a += k.correlation_id;
  }
  for (const auto& k : from_image.kernels) {
    sum_b += k.start_ns + k.grid[0];
    corr_b += k.correlation_id;
  }
  EXPECT_EQ(sum_a, sum_b);
  EXPECT_EQ(corr_a, corr_b);
}

// ---- kernel resources (registers, shared memory) ------------------------------------------------

// What an import delivered, in order: "R name regs/static/dynamic/sum" for a KernelResourcesEvent,
// "K name corr" for a kernel.
class SequenceSink : public RecordingSink {
 public:
  explicit SequenceSink(const model::NameTable* names) : names_(names) {}
  void OnKernel(const model::KernelEvent& e) override {
    RecordingSink::OnKernel(e);
    sequence.push_back("K " + std::string(names_->Get(e.name)) + " " +
                       std::to_string(e.correlation_id));
  }
  void OnKernelResources(const model::KernelResourcesEvent& e) override {
    EXPECT_TRUE(Announced(e.pid));
    const model::KernelResources& r = e.resources;
    sequence.push_back(
        "R " + std::string(names_->Get(e.name)) + " " + std::to_string(r.registers_per_thread) +
        "/" + std::to_string(r.static_shared_bytes) + "/" + std::to_string(r.dynamic_shared_bytes) +
        "/" + std::to_string(r.shared_bytes));
  }
  std::vector<std::string> sequence;

 private:
  const model::NameTable* names_;
};

constexpr char kResourcesSql[] = R"sql(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (0, 'gemm'), (1, 'attn'), (2, 'odd');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER,
  localMemoryPerThread INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (1000, 2000, 0, 1, 7, 1, 100 << 24, 0, 4, 1, 1, 128, 1, 1, 32, 1024, 0, 0),
  (2000, 3000, 0, 1, 7, 2, 100 << 24, 0, 4, 1, 1, 128, 1, 1, 32, 1024, 0, 0),
  (3000, 4000, 0, 1, 7, 3, 100 << 24, 0, 4, 1, 1, 128, 1, 1, 32, 1024, 4096, 0),
  (4000, 5000, 0, 1, 7, 4, 100 << 24, 1, 8, 1, 1, 256, 1, 1, NULL, NULL, 100, 0),
  (5000, 6000, 0, 1, 7, 5, 100 << 24, 0, 4, 1, 1, 128, 1, 1, 32, 1024, 0, 0),
  (6000, 7000, 0, 1, 7, 6, 100 << 24, 2, 1, 1, 1, 1, 1, 1, -3, 3000000000, 5, 0),
  (7000, 8000, 0, 1, 7, 7, 100 << 24, 2, 1, 1, 1, 1, 1, 1, 70000, 2147483647, 1, 0);
)sql";

TEST_F(SyntheticTest, KernelResourcesOnEachChangeBeforeTheKernel) {
  const std::string path = MakeDb("resources.sqlite", kResourcesSql);
  model::NameTable names;
  SequenceSink sink(&names);
  auto stats = ImportNsysSqlite(path, &names, &sink, /*kernel_resources=*/true);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(sink.kernels.size(), 7u);
  EXPECT_THAT(sink.sequence,
              ::testing::ElementsAre(
                  "R gemm 32/1024/0/1024", "K gemm 1", "K gemm 2",  // unchanged: no event
                  "R gemm 32/1024/4096/5120", "K gemm 3",           // dynamic smem changed
                  "R attn -1/-1/100/-1", "K attn 4",  // NULL: not recorded; no sum without both
                  "R gemm 32/1024/0/1024", "K gemm 5",
                  // negative, or above 16 bits of registers / 31 bits of bytes: not recorded
                  "R odd -1/-1/5/-1", "K odd 6",
                  // the largest shared sizes that fit, whose sum does not: sum not recorded
                  "R odd -1/2147483647/1/-1", "K odd 7"));
  // Everything else is as without the option.
  model::NameTable plain_names;
  SequenceSink plain(&plain_names);
  ASSERT_TRUE(ImportNsysSqlite(path, &plain_names, &plain).ok());
  EXPECT_TRUE(plain.kernel_resources.empty());
  ASSERT_EQ(plain.kernels.size(), sink.kernels.size());
  for (size_t i = 0; i < plain.kernels.size(); ++i) {
    EXPECT_EQ(plain.kernels[i].correlation_id, sink.kernels[i].correlation_id);
    EXPECT_EQ(plain.kernels[i].block[0], sink.kernels[i].block[0]);
  }
}

TEST_F(SyntheticTest, KernelResourcesOfAnExportWithoutTheColumnsAreUnknown) {
  const std::string path = MakeDb("minimal_resources.sqlite", kMinimalSql);
  model::NameTable names;
  SequenceSink sink(&names);
  ASSERT_TRUE(ImportNsysSqlite(path, &names, &sink, /*kernel_resources=*/true).ok());
  // One event for the name (the first kernel always sends), every field unknown.
  EXPECT_THAT(sink.sequence, ::testing::ElementsAre("R gemm_kernel -1/-1/-1/-1", "K gemm_kernel 11",
                                                    "K gemm_kernel 12"));
}

// The split scan (two connections) delivers each kernel after the resources that hold for it.
TEST_F(SyntheticTest, KernelResourcesStayInOrderThroughTheSplitScan) {
  std::string sql = kResourcesSql;
  sql +=
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000) "
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT 10000 + i * 10, 10005 + i * 10, 0, 1, 7, "
      "100 + i, 100 << 24, 0, 4, 1, 1, 128, 1, 1, 32, 0, (i % 3) * 1024, 0 FROM n;";
  const std::string path = MakeDb("large_resources.sqlite", sql);
  model::NameTable names;
  model::EventBuffer buffer;
  ASSERT_TRUE(ImportNsysSqlite(path, &names, &buffer, /*kernel_resources=*/true).ok());
  std::map<model::NameId, model::KernelResources> current;
  size_t checked = 0, events = 0;
  for (const model::AnyEvent& any : buffer.events()) {
    if (const auto* r = std::get_if<model::KernelResourcesEvent>(&any)) {
      current[r->name] = r->resources;
      ++events;
    } else if (const auto* k = std::get_if<model::KernelEvent>(&any)) {
      if (k->correlation_id <= 100) continue;  // the seven of kResourcesSql
      ASSERT_EQ(current[k->name].dynamic_shared_bytes, ((k->correlation_id - 100) % 3) * 1024)
          << k->correlation_id;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 200'000u);
  EXPECT_GT(events, 100'000u);  // every kernel of the name changes it
}

TEST_F(SyntheticTest, UnrelatedSqliteFileIsUnsupported) {
  const std::string path = MakeDb("other.sqlite",
                                  "CREATE TABLE users (id INTEGER, name TEXT); INSERT INTO users "
                                  "VALUES (1, 'a');");
  model::NameTable names;
  RecordingSink sink;
  auto stats = ImportNsysSqlite(path, &names, &sink);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), base::StatusCode::kUnsupported);
  EXPECT_THAT(stats.status().message(),
              HasSubstr("not an Nsight Systems export (no CUPTI_ACTIVITY_KIND_KERNEL table)"));
  EXPECT_THAT(stats.status().message(), HasSubstr("other.sqlite"));
  EXPECT_EQ(stats.status().message().find('\n'), std::string::npos);
}

TEST_F(SyntheticTest, ViewNamedLikeTheKernelTableIsIgnored) {
  const std::string path = MakeDb("view.sqlite",
                                  "CREATE TABLE t (start INTEGER, end INTEGER);"
                                  "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM t;");
  model::NameTable names;
  RecordingSink sink;
  auto stats = ImportNsysSqlite(path, &names, &sink);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), base::StatusCode::kUnsupported);
}

TEST_F(SyntheticTest, TextFileIsAnError) {
  const std::string path = WriteFile("notes.sqlite", std::string(5000, 'x') + "\nhello\n");
  model::NameTable names;
  RecordingSink sink;
  auto stats = ImportNsysSqlite(path, &names, &sink);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), base::StatusCode::kUnsupported);
  EXPECT_THAT(stats.status().message(), HasSubstr("not a SQLite database"));
  EXPECT_EQ(stats.status().message().find('\n'), std::string::npos);
  EXPECT_TRUE(sink.processes.empty());

  auto empty = ImportNsysSqlite(WriteFile("empty.sqlite", ""), &names, &sink);
  EXPECT_FALSE(empty.ok());
}

TEST_F(SyntheticTest, TruncatedSqliteFileIsAnError) {
  // Enough rows that the kernel table spans many pages.
  std::string sql = kMinimalSql;
  sql +=
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) "
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT i * 10, i * 10 + 5, 0, 1, 7, i, 100 << 24, "
      "0, 1, 1, 1, 1, 1, 1 FROM n;";
  const std::string full = MakeDb("full.sqlite", sql);
  std::ifstream in(full, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string bytes = buf.str();
  ASSERT_GT(bytes.size(), 100000u);
  for (size_t keep : {bytes.size() - 4096, bytes.size() / 2, size_t{4096 + 100}, size_t{50}}) {
    const std::string path =
        WriteFile("cut" + std::to_string(keep) + ".sqlite", bytes.substr(0, keep));
    model::NameTable names;
    RecordingSink sink;
    auto stats = ImportNsysSqlite(path, &names, &sink);
    EXPECT_FALSE(stats.ok()) << "kept " << keep << " bytes";
    EXPECT_EQ(stats.status().message().find('\n'), std::string::npos);
  }
}

TEST_F(SyntheticTest, MissingFileIsNotFound) {
  model::NameTable names;
  RecordingSink sink;
  auto stats = ImportNsysSqlite((dir_ / "absent.sqlite").string(), &names, &sink);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), base::StatusCode::kNotFound);
}

// ---- mapping ------------------------------------------------------------------------------------

TEST(NsysMappingTest, ApiNames) {
  EXPECT_EQ(model::StripApiSuffixes("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync");
  EXPECT_EQ(model::StripApiSuffixes("cudaMalloc_v3020"), "cudaMalloc");
  EXPECT_EQ(model::StripApiSuffixes("_v1"), "_v1");
  EXPECT_EQ(model::ClassifyCudaApi("cudaLaunchKernel_v7000").kind, ApiKind::kKernelLaunch);
  EXPECT_EQ(model::ClassifyCudaApi("cudaLaunchKernelExC_v11060").kind, ApiKind::kKernelLaunch);
  EXPECT_EQ(model::ClassifyCudaApi("cuLaunchKernelEx").kind, ApiKind::kKernelLaunch);
  EXPECT_EQ(model::ClassifyCudaApi("cudaLaunchCooperativeKernel").kind, ApiKind::kKernelLaunch);
  EXPECT_EQ(model::ClassifyCudaApi("cudaGraphLaunch_v10000").kind, ApiKind::kGraphLaunch);
  EXPECT_EQ(model::ClassifyCudaApi("cuGraphLaunch").kind, ApiKind::kGraphLaunch);
  EXPECT_EQ(model::ClassifyCudaApi("cudaMallocAsync_v11020").kind, ApiKind::kMalloc);
  EXPECT_EQ(model::ClassifyCudaApi("cuMemAlloc_v2").kind, ApiKind::kMalloc);
  EXPECT_EQ(model::ClassifyCudaApi("cuMemCreate").kind, ApiKind::kMalloc);
  EXPECT_EQ(model::ClassifyCudaApi("cudaFreeAsync").kind, ApiKind::kFree);
  EXPECT_EQ(model::ClassifyCudaApi("cuMemFree_v2").kind, ApiKind::kFree);
  EXPECT_EQ(model::ClassifyCudaApi("cudaMemcpyAsync_v3020").kind, ApiKind::kMemcpy);
  EXPECT_EQ(model::ClassifyCudaApi("cudaMemsetAsync").kind, ApiKind::kMemset);
  const auto sync = [](std::string_view n) { return model::ClassifyCudaApi(n).sync; };
  EXPECT_EQ(sync("cudaDeviceSynchronize_v3020"), SyncType::kDevice);
  EXPECT_EQ(sync("cuCtxSynchronize"), SyncType::kDevice);
  EXPECT_EQ(sync("cudaStreamSynchronize_ptsz_v7000"), SyncType::kStream);
  EXPECT_EQ(sync("cudaEventSynchronize"), SyncType::kEvent);
  EXPECT_EQ(sync("cudaStreamWaitEvent_v3020"), SyncType::kStreamWaitEvent);
  EXPECT_EQ(model::ClassifyCudaApi("cudaStreamWaitEvent").kind, ApiKind::kSync);
  EXPECT_EQ(model::ClassifyCudaApi("cudaEventQuery").kind, ApiKind::kQuery);
  EXPECT_EQ(model::ClassifyCudaApi("cudaStreamQuery_v3020").kind, ApiKind::kQuery);
  EXPECT_EQ(model::ClassifyCudaApi("cudaEventRecord").kind, ApiKind::kOther);
  EXPECT_EQ(model::ClassifyCudaApi("cudaLaunchHostFunc").kind, ApiKind::kOther);
  EXPECT_EQ(model::ClassifyCudaApi("").kind, ApiKind::kOther);
}

TEST(NsysMappingTest, EnumNames) {
  EXPECT_EQ(nsys::MemcpyKindFromEnumName("CUDA_MEMCPY_KIND_HTOD"), MemcpyKind::kHtoD);
  EXPECT_EQ(nsys::MemcpyKindFromEnumName("CUDA_MEMCPY_KIND_ATOH"), MemcpyKind::kDtoH);
  EXPECT_EQ(nsys::MemcpyKindFromEnumName("CUDA_MEMCPY_KIND_UVM_DTOD"), MemcpyKind::kDtoD);
  EXPECT_EQ(nsys::MemcpyKindFromEnumName("CUDA_MEMCPY_KIND_PTOP"), MemcpyKind::kPtoP);
  EXPECT_EQ(nsys::MemcpyKindFromEnumName("CUDA_MEMCPY_KIND_HTOH"), MemcpyKind::kHtoH);
  EXPECT_EQ(nsys::MemcpyKindFromEnumName("CUDA_MEMCPY_KIND_UNKNOWN"), MemcpyKind::kUnknown);
  EXPECT_EQ(nsys::SyncTypeFromEnumName("CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT"),
            SyncType::kStreamWaitEvent);
  EXPECT_EQ(nsys::SyncTypeFromEnumName("CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE"),
            SyncType::kStream);
  nsys::CodeMaps defaults;
  EXPECT_EQ(defaults.Memcpy(1), MemcpyKind::kHtoD);
  EXPECT_EQ(defaults.Memcpy(8), MemcpyKind::kDtoD);
  EXPECT_EQ(defaults.Memcpy(10), MemcpyKind::kPtoP);
  EXPECT_EQ(defaults.Memcpy(-1), MemcpyKind::kUnknown);
  EXPECT_EQ(defaults.Memcpy(1 << 20), MemcpyKind::kUnknown);
  EXPECT_TRUE(defaults.Pageable(0));
  EXPECT_FALSE(defaults.Pageable(1));
  EXPECT_EQ(defaults.Sync(3), SyncType::kStream);
}

}  // namespace
}  // namespace inferscope::import
