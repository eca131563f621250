// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/kineto/kineto_importer.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "src/import/kineto/kineto_event_mapper.h"
#include "src/model/cuda_api.h"
#include "src/model/event_recorder.h"
#include "tests/compress.h"
#include "tests/test_traces.h"

namespace inferscope::import {
namespace {

using model::ApiKind;
using model::DataQuality;
using model::MemcpyKind;
using model::SyncType;

using RecordingSink = model::EventRecorder;

struct Imported {
  base::StatusOr<ImportStats> stats = base::InternalError("not run");
  RecordingSink sink;
  model::NameTable names;
};

std::unique_ptr<Imported> Import(std::string_view json, size_t chunk_bytes = 8 << 20) {
  auto out = std::make_unique<Imported>();
  KinetoImportOptions options;
  options.chunk_bytes = chunk_bytes;
  out->stats = ImportKinetoJson(json, &out->names, &out->sink, options);
  return out;
}

constexpr char kSmallTrace[] = R"js({
  "schemaVersion": 1,
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}, {"id": 1, "name": "B"}],
  "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "gpu_kernel", "pid": 0, "tid": 7,
     "ts": 1695835535123456.789, "dur": 18.112,
     "args": {"device": 1, "stream": 7, "correlation": 42, "grid": [56, 2, 1], "block": [384, 1, 1]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1234, "tid": 1235, "ts": 10, "dur": 5},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1234, "tid": 1235,
     "ts": 1695835535123450, "dur": 3, "args": {"correlation": 42}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernelExC", "pid": 1234, "tid": 1235,
     "ts": 100, "dur": 1, "args": {"correlation": 43}},
    {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1234, "tid": 1235,
     "ts": 101, "dur": 1, "args": {"correlation": 44}},
    {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 1234, "tid": 1235,
     "ts": 102, "dur": 1, "args": {"correlation": 45}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1234, "tid": 1235,
     "ts": 103, "dur": 1, "args": {"correlation": 46}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1234, "tid": 1235,
     "ts": 104, "dur": 1, "args": {"correlation": 47}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaMalloc", "pid": 1234, "tid": 1235,
     "ts": 105, "dur": 1, "args": {"correlation": 48}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
     "tid": 7, "ts": 200, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 49,
     "bytes": 92928}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 210,
     "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 50, "bytes": 4}},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 20, "ts": 300,
     "dur": 3, "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 20, "device": 0}},
    {"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 0, "tid": -1, "ts": 310,
     "dur": 9, "args": {"cuda_sync_kind": "Context Sync", "stream": 4294967295, "device": 0}},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#6", "pid": 1234, "tid": 1235,
     "ts": 1, "dur": 1000},
    {"ph": "f", "id": 9, "pid": 1234, "tid": 1235, "ts": 5, "cat": "ac2g", "name": "ac2g"},
    {"name": "process_name", "ph": "M", "ts": 1, "pid": 1234, "tid": 0, "args": {"name": "py"}}
  ],
  "traceName": "x.json"
})js";

TEST(KinetoImporterTest, MapsEveryEventKind) {
  auto r = Import(kSmallTrace);
  ASSERT_TRUE(r->stats.ok()) << r->stats.status().message();
  const RecordingSink& s = r->sink;
  EXPECT_EQ(r->stats->events_read, 16u);
  EXPECT_EQ(r->stats->kernels, 1u);
  EXPECT_EQ(r->stats->events_skipped, 3u);  // cpu_op, ac2g, metadata
  ASSERT_EQ(s.kernels.size(), 1u);
  const model::KernelEvent& k = s.kernels[0];
  EXPECT_EQ(k.start_ns, 1695835535123456789);
  EXPECT_EQ(k.end_ns, 1695835535123456789 + 18112);
  EXPECT_EQ(k.pid, 1234u);  // the host process, not the GPU "pid"
  EXPECT_EQ(k.device, 1u);
  EXPECT_EQ(k.stream, 7u);
  EXPECT_EQ(k.correlation_id, 42u);
  EXPECT_EQ(r->names.Get(k.name), "gpu_kernel");
  EXPECT_EQ(k.grid[0], 56);
  EXPECT_EQ(k.grid[1], 2);
  EXPECT_EQ(k.block[0], 384);

  ASSERT_EQ(s.api_calls.size(), 7u);
  const ApiKind kinds[] = {ApiKind::kKernelLaunch, ApiKind::kKernelLaunch, ApiKind::kKernelLaunch,
                           ApiKind::kKernelLaunch, ApiKind::kGraphLaunch,  ApiKind::kSync,
                           ApiKind::kMalloc};
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(s.api_calls[i].kind, kinds[i]) << i;
    EXPECT_EQ(s.api_calls[i].correlation_id, 42u + (i == 0 ? 0 : i + 0)) << i;
    EXPECT_EQ(s.api_calls[i].pid, 1234u);
    EXPECT_EQ(s.api_calls[i].tid, 1235u);
  }
  EXPECT_EQ(s.api_calls[0].start_ns, 1695835535123450000);
  EXPECT_EQ(s.api_calls[5].sync_type, SyncType::kStream);

  ASSERT_EQ(s.memcpys.size(), 1u);
  EXPECT_EQ(s.memcpys[0].kind, MemcpyKind::kHtoD);
  EXPECT_TRUE(s.memcpys[0].pageable);
  EXPECT_EQ(s.memcpys[0].bytes, 92928u);
  EXPECT_EQ(s.memcpys[0].correlation_id, 49u);
  ASSERT_EQ(s.memsets.size(), 1u);
  EXPECT_EQ(s.memsets[0].bytes, 4u);
  ASSERT_EQ(s.syncs.size(), 2u);
  EXPECT_EQ(s.syncs[0].type, SyncType::kStreamWaitEvent);
  EXPECT_EQ(s.syncs[0].stream, 20u);
  EXPECT_EQ(s.syncs[1].type, SyncType::kDevice);
  EXPECT_EQ(s.syncs[1].stream, model::kUnknownStream);
  ASSERT_EQ(s.nvtx.size(), 1u);
  EXPECT_EQ(r->names.Get(s.nvtx[0].name), "ProfilerStep#6");
  EXPECT_EQ(s.nvtx[0].end_ns - s.nvtx[0].start_ns, 1000000);

  ASSERT_FALSE(s.processes.empty());
  EXPECT_EQ(s.processes.back().pid, 1234u);
  EXPECT_EQ(s.processes.back().rank, 3);
  EXPECT_EQ(s.processes.back().world_size, 8);
  ASSERT_EQ(s.devices.size(), 2u);
  EXPECT_EQ(s.devices[0].pid, 1234u);
  EXPECT_EQ(r->names.Get(s.devices[0].name), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(s.devices[1].device, 1u);
  EXPECT_TRUE(s.quality.empty());
}

TEST(KinetoImporterTest, EveryChunkSizeGivesTheSameResult) {
  auto whole = Import(kSmallTrace);
  ASSERT_TRUE(whole->stats.ok());
  for (size_t chunk : {16, 17, 31, 64, 100, 333}) {
    auto r = Import(kSmallTrace, chunk);
    ASSERT_TRUE(r->stats.ok()) << chunk << ": " << r->stats.status().message();
    EXPECT_EQ(r->stats->events_read, whole->stats->events_read) << chunk;
    ASSERT_EQ(r->sink.kernels.size(), 1u) << chunk;
    EXPECT_EQ(r->sink.kernels[0].start_ns, whole->sink.kernels[0].start_ns);
    EXPECT_EQ(r->sink.api_calls.size(), whole->sink.api_calls.size()) << chunk;
    EXPECT_EQ(r->sink.syncs.size(), 2u) << chunk;
    EXPECT_EQ(r->sink.devices.size(), 2u) << chunk;
    EXPECT_EQ(r->sink.processes.back().rank, 3) << chunk;
  }
}

TEST(KinetoImporterTest, OldCategoryNamesAndStringTids) {
  auto r = Import(R"js({"traceEvents": [
    {"ph": "X", "cat": "Operator", "name": "aten::add", "pid": 77, "tid": 78, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 5, "dur": 2,
     "args": {"device": 0, "correlation": 3}},
    {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 77, "tid": 78, "ts": 4,
     "dur": 1, "args": {"correlation": 3}},
    {"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0,
     "tid": "stream 7", "ts": 9, "dur": 1, "args": {"device": 0, "bytes": 8}},
    {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 10,
     "dur": 1, "args": {"bytes": 8}}
  ]})js");
  ASSERT_TRUE(r->stats.ok()) << r->stats.status().message();
  ASSERT_EQ(r->sink.kernels.size(), 1u);
  EXPECT_EQ(r->sink.kernels[0].stream, 7u);
  EXPECT_EQ(r->sink.kernels[0].pid, 77u);
  ASSERT_EQ(r->sink.api_calls.size(), 1u);
  EXPECT_EQ(r->sink.api_calls[0].kind, ApiKind::kKernelLaunch);
  ASSERT_EQ(r->sink.memcpys.size(), 1u);
  EXPECT_EQ(r->sink.memcpys[0].kind, MemcpyKind::kDtoD);
  EXPECT_FALSE(r->sink.memcpys[0].pageable);
  EXPECT_EQ(r->sink.memcpys[0].stream, 7u);
  EXPECT_EQ(r->sink.memsets.size(), 1u);
}

TEST(KinetoImporterTest, GpuEventsBeforeTheHostPidWaitForIt) {
  auto r = Import(R"js({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 2},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0, "dur": 2},
    {"ph": "X", "cat": "python_function", "name": "f", "pid": 99, "tid": 1, "ts": 1, "dur": 1}
  ], "distributedInfo": {"rank": 1, "world_size": 2}})js");
  ASSERT_TRUE(r->stats.ok()) << r->stats.status().message();
  ASSERT_EQ(r->sink.kernels.size(), 1u);
  EXPECT_EQ(r->sink.kernels[0].pid, 99u);
  EXPECT_EQ(r->sink.kernels[0].device, 0u);
  EXPECT_EQ(r->sink.quality[DataQuality::kZeroTimestamp], 1u);
  EXPECT_EQ(r->sink.quality_pids, std::vector<uint32_t>{99u});
  // Keys after traceEvents: the last announcement carries the rank.
  EXPECT_EQ(r->sink.processes.back().pid, 99u);
  EXPECT_EQ(r->sink.processes.back().rank, 1);
  EXPECT_EQ(r->sink.processes.back().world_size, 2);
}

TEST(KinetoImporterTest, BaseTimeNanosecondsIsTheWallClockOffset) {
  auto r = Import(R"js({"baseTimeNanoseconds": 1751410836000000000, "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 2}]})js");
  ASSERT_TRUE(r->stats.ok());
  EXPECT_EQ(r->stats->wall_clock_offset_ns, 1'751'410'836'000'000'000);
  r = Import(R"js({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 2}]})js");
  ASSERT_TRUE(r->stats.ok());
  EXPECT_EQ(r->stats->wall_clock_offset_ns, 0);
}

TEST(KinetoImporterTest, NoHostEventsMeansPidZero) {
  auto r = Import(R"js({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 3, "tid": 7, "ts": 5, "dur": 2}]})js");
  ASSERT_TRUE(r->stats.ok());
  ASSERT_EQ(r->sink.kernels.size(), 1u);
  EXPECT_EQ(r->sink.kernels[0].pid, 0u);
  EXPECT_EQ(r->sink.kernels[0].device, 3u);  // no args.device: the GPU row's pid
  ASSERT_EQ(r->sink.processes.size(), 1u);
  EXPECT_EQ(r->sink.processes[0].rank, -1);
}

TEST(KinetoImporterTest, TrickyStringsInNames) {
  const std::string json = R"js({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "host", "pid": 5, "tid": 5, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "void f<{[\"}]\\\"\u00e9\u4e2d}>(x) \\", "pid": 0,
     "tid": 7, "ts": 5, "dur": 2, "args": {"note": "cat", "x": "]}\\\\", "cat": "cpu_op"}},
    {"ph": "X", "name": "cat", "cat": "kernel", "pid": 0, "tid": 7, "ts": 6, "dur": 2}
  ]})js";
  for (size_t chunk : {size_t{8} << 20, size_t{16}, size_t{23}}) {
    auto r = Import(json, chunk);
    ASSERT_TRUE(r->stats.ok()) << r->stats.status().message();
    ASSERT_EQ(r->sink.kernels.size(), 2u) << chunk;
    EXPECT_EQ(r->names.Get(r->sink.kernels[0].name),
              "void f<{[\"}]\\\"\xc3\xa9\xe4\xb8\xad}>(x) \\");
    EXPECT_EQ(r->names.Get(r->sink.kernels[1].name), "cat");
  }
}

TEST(KinetoImporterTest, BadEventsAreCountedNotFatal) {
  auto r = Import(R"js({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "host", "pid": 5, "tid": 5, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "no_ts", "pid": 0, "tid": 7, "dur": 2},
    {"ph": "X", "cat": "kernel", "name": "bad_ts", "pid": 0, "tid": 7, "ts": "abc", "dur": 2},
    {"ph": "X", "cat": "kernel", "name": 12, "pid": 0, "tid": 7, "ts": 3, "dur": 2},
    {"ph": "X", "cat": "kernel", "name": "reversed", "pid": 0, "tid": 7, "ts": 3, "dur": -2},
    {"ph": "X", "cat": "kernel", "name": "zero", "pid": 0, "tid": 7, "ts": 0, "dur": 2},
    {"ph": "X", "cat": "kernel", "name": "huge", "pid": 0, "tid": 7, "ts": 1e30, "dur": 2},
    {"ph": "X", "cat": "kernel", "name": "broken", "pid": 0, "tid": 7, "ts": 3, "dur": 2,, },
    42,
    {"ph": "X", "cat": "cuda_runtime", "pid": 5, "tid": 5, "ts": 3, "dur": 2},
    {"ph": "X", "cat": "kernel", "name": "ok", "pid": 0, "tid": 7, "ts": "7.5", "dur": 2}
  ]})js");
  ASSERT_TRUE(r->stats.ok()) << r->stats.status().message();
  ASSERT_EQ(r->sink.kernels.size(), 1u);
  EXPECT_EQ(r->sink.kernels[0].start_ns, 7500);
  EXPECT_EQ(r->sink.quality[DataQuality::kReversedTimestamp], 1u);
  EXPECT_EQ(r->sink.quality[DataQuality::kZeroTimestamp], 1u);
  EXPECT_EQ(r->sink.quality[DataQuality::kMalformedEvent], 7u);
  EXPECT_EQ(r->stats->events_read, 11u);
}

TEST(KinetoImporterTest, TimestampsAreExactToTheNanosecond) {
  int64_t ns = 0;
  ASSERT_TRUE(kineto::ParseMicrosToNs("1695835535123456.789", &ns));
  EXPECT_EQ(ns, 1695835535123456789);
  ASSERT_TRUE(kineto::ParseMicrosToNs("1683564902133354", &ns));
  EXPECT_EQ(ns, 1683564902133354000);
  ASSERT_TRUE(kineto::ParseMicrosToNs("18.112 ", &ns));
  EXPECT_EQ(ns, 18112);
  ASSERT_TRUE(kineto::ParseMicrosToNs("10.0", &ns));
  EXPECT_EQ(ns, 10000);
  ASSERT_TRUE(kineto::ParseMicrosToNs("0.0005", &ns));  // half a ns rounds up
  EXPECT_EQ(ns, 1);
  ASSERT_TRUE(kineto::ParseMicrosToNs("0.00049999", &ns));
  EXPECT_EQ(ns, 0);
  ASSERT_TRUE(kineto::ParseMicrosToNs("1.5e3", &ns));
  EXPECT_EQ(ns, 1500000);
  ASSERT_TRUE(kineto::ParseMicrosToNs("1695835535123456789E-3", &ns));
  EXPECT_EQ(ns, 1695835535123456789);
  ASSERT_TRUE(kineto::ParseMicrosToNs("-2.25", &ns));
  EXPECT_EQ(ns, -2250);
  ASSERT_TRUE(kineto::ParseMicrosToNs("\"42\"", &ns));
  EXPECT_EQ(ns, 42000);
  EXPECT_FALSE(kineto::ParseMicrosToNs("9300000000000000", &ns));  // > int64 ns
  EXPECT_FALSE(kineto::ParseMicrosToNs("", &ns));
  EXPECT_FALSE(kineto::ParseMicrosToNs("1.2.3", &ns));
  EXPECT_FALSE(kineto::ParseMicrosToNs("1e", &ns));
  EXPECT_FALSE(kineto::ParseMicrosToNs("true", &ns));
}

TEST(KinetoImporterTest, ApiNameClassification) {
  EXPECT_EQ(model::ClassifyCudaApi("cudaLaunchCooperativeKernel").kind, ApiKind::kKernelLaunch);
  EXPECT_EQ(model::ClassifyCudaApi("cudaLaunchHostFunc").kind, ApiKind::kOther);
  EXPECT_EQ(model::ClassifyCudaApi("cuGraphLaunch").kind, ApiKind::kGraphLaunch);
  EXPECT_EQ(model::ClassifyCudaApi("cuMemAlloc_v2").kind, ApiKind::kMalloc);
  EXPECT_EQ(model::ClassifyCudaApi("cudaMallocAsync").kind, ApiKind::kMalloc);
  EXPECT_EQ(model::ClassifyCudaApi("cuMemCreate").kind, ApiKind::kMalloc);
  EXPECT_EQ(model::ClassifyCudaApi("cudaFreeHost").kind, ApiKind::kFree);
  EXPECT_EQ(model::ClassifyCudaApi("cuMemRelease").kind, ApiKind::kFree);
  EXPECT_EQ(model::ClassifyCudaApi("cudaMemcpyAsync").kind, ApiKind::kMemcpy);
  EXPECT_EQ(model::ClassifyCudaApi("cudaMemsetAsync").kind, ApiKind::kMemset);
  EXPECT_EQ(model::ClassifyCudaApi("cuCtxSynchronize").kind, ApiKind::kSync);
  EXPECT_EQ(model::ClassifyCudaApi("cuCtxSynchronize").sync, SyncType::kDevice);
  EXPECT_EQ(model::ClassifyCudaApi("cudaEventSynchronize").sync, SyncType::kEvent);
  EXPECT_EQ(model::ClassifyCudaApi("cudaStreamWaitEvent").sync, SyncType::kStreamWaitEvent);
  EXPECT_EQ(model::ClassifyCudaApi("cudaEventQuery").kind, ApiKind::kQuery);
  EXPECT_EQ(model::ClassifyCudaApi("cudaHostAlloc").kind, ApiKind::kMalloc);
  bool pageable = false;
  EXPECT_EQ(kineto::ClassifyMemcpyName("Memcpy PtoP (Device -> Device)", &pageable),
            MemcpyKind::kPtoP);
  EXPECT_EQ(kineto::ClassifyMemcpyName("Memcpy DtoH (Device -> Pinned)", &pageable),
            MemcpyKind::kDtoH);
  EXPECT_FALSE(pageable);
}

TEST(KinetoImporterTest, StructuralErrors) {
  struct Case {
    const char* json;
    base::StatusCode code;
  };
  const Case cases[] = {
      {"", base::StatusCode::kUnsupported},
      {"   ", base::StatusCode::kUnsupported},
      {"hello", base::StatusCode::kUnsupported},
      {R"js({"schemaVersion": 1})js", base::StatusCode::kUnsupported},
      {R"js({"traceEvents": 5})js", base::StatusCode::kUnsupported},
      {R"js({"traceEvents": [{"ph": "X"})js", base::StatusCode::kDataLoss},
      {R"js({"traceEvents": [{"ph": "X"}] "x": 1})js", base::StatusCode::kDataLoss},
      {R"js({"traceEvents" [])js", base::StatusCode::kDataLoss},
      {R"js({"traceEvents": [{"ph": "X"}})js", base::StatusCode::kDataLoss},
  };
  for (const Case& c : cases) {
    auto r = Import(c.json);
    ASSERT_FALSE(r->stats.ok()) << c.json;
    EXPECT_EQ(r->stats.status().code(), c.code) << c.json << " -> " << r->stats.status().message();
    EXPECT_NE(r->stats.status().message().find("in-memory JSON"), std::string::npos);
  }
  auto r = Import(R"js({"traceEvents": [{"ph": "X"}] "x": 1})js");
  EXPECT_NE(r->stats.status().message().find("byte 30"), std::string::npos)
      << r->stats.status().message();
  // A bare array (Chrome "JSON Array Format") is accepted.
  auto bare = Import(R"js([{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}])js");
  ASSERT_TRUE(bare->stats.ok()) << bare->stats.status().message();
  EXPECT_EQ(bare->sink.kernels.size(), 1u);
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/kineto_test_" + std::to_string(::getpid()) + "_" + name;
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary) << data;
}

TEST(KinetoImporterTest, FilesPlainGzipAndErrors) {
  const std::string plain = TempPath("t.json");
  const std::string gz = TempPath("t.json.gz");
  const std::string cut = TempPath("cut.json.gz");
  const std::string bad = TempPath("bad.json.gz");
  const std::string zipped = ::inferscope::testing::Gzip(kSmallTrace);
  WriteFile(plain, kSmallTrace);
  WriteFile(gz, zipped);
  WriteFile(cut, zipped.substr(0, zipped.size() / 2));
  std::string corrupt = zipped;
  for (size_t i = 20; i < corrupt.size() - 10; i += 7) corrupt[i] ^= 0x5a;
  WriteFile(bad, corrupt);
  for (const std::string& path : {plain, gz}) {
    model::NameTable names;
    RecordingSink sink;
    auto stats = ImportKinetoTrace(path, &names, &sink);
    ASSERT_TRUE(stats.ok()) << stats.status().message();
    EXPECT_EQ(stats->kernels, 1u);
    EXPECT_EQ(stats->input_bytes, sizeof(kSmallTrace) - 1);
    EXPECT_EQ(sink.api_calls.size(), 7u);
  }
  // Two concatenated gzip members are one stream.
  const std::string two = TempPath("two.json.gz");
  const std::string text = kSmallTrace;
  WriteFile(two, ::inferscope::testing::Gzip(text.substr(0, 100)) +
                     ::inferscope::testing::Gzip(text.substr(100)));
  {
    model::NameTable names;
    RecordingSink sink;
    auto stats = ImportKinetoTrace(two, &names, &sink);
    ASSERT_TRUE(stats.ok()) << stats.status().message();
    EXPECT_EQ(stats->kernels, 1u);
  }
  model::NameTable names;
  RecordingSink sink;
  auto truncated = ImportKinetoTrace(cut, &names, &sink);
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), base::StatusCode::kDataLoss);
  EXPECT_NE(truncated.status().message().find("truncated gzip"), std::string::npos)
      << truncated.status().message();
  EXPECT_NE(truncated.status().message().find(cut), std::string::npos);
  auto corrupted = ImportKinetoTrace(bad, &names, &sink);
  ASSERT_FALSE(corrupted.ok());
  EXPECT_EQ(corrupted.status().code(), base::StatusCode::kDataLoss) << corrupted.status().message();
  auto missing = ImportKinetoTrace(TempPath("does_not_exist.json"), &names, &sink);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), base::StatusCode::kNotFound);
  for (const std::string& p : {plain, gz, cut, bad, two}) std::remove(p.c_str());
}

// The ops view's operators and modules and the ranges view's GPU annotations, delivered
// only when asked for.
TEST(KinetoImporterTest, ViewRangesOnlyWhenAsked) {
  constexpr char kTrace[] = R"js({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 7, "tid": 8, "ts": 10, "dur": 5,
     "args": {"External id": 3, "Input Dims": [[16, 1024], [1024, 1024]], "Input type": ["float"]}},
    {"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": 7, "tid": 8, "ts": 11, "dur": 2},
    {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 7, "tid": 8,
     "ts": 9, "dur": 7, "args": {"Python id": 4}},
    {"ph": "X", "cat": "python_function", "name": "torch/nn/modules/linear.py(124): forward",
     "pid": 7, "tid": 8, "ts": 9.5, "dur": 6},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "## forward ##", "pid": 0, "tid": 7,
     "ts": 20, "dur": 3, "args": {"External id": 1}},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "## backward ##", "pid": 0, "tid": 9,
     "ts": 24, "dur": 1, "args": {"device": 1, "stream": 11}},
    {"ph": "X", "cat": "cpu_op", "pid": 7, "tid": 8, "ts": 30, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "args": {"Input Dims": [[2]]}, "name": "aten::late", "pid": 7,
     "tid": 8, "ts": 40, "dur": 2},
    {"ph": "X", "cat": "cpu_op", "name": "aten::esc\"aped", "pid": 7, "tid": 8, "ts": 50,
     "dur": 2, "args": {"Input Dims": [[2]]}}
  ]})js";
  auto plain = Import(kTrace);
  ASSERT_TRUE(plain->stats.ok());
  EXPECT_TRUE(plain->sink.view_ranges.empty());
  EXPECT_EQ(plain->stats->events_skipped, 9u);  // nothing parsed, nothing malformed
  EXPECT_TRUE(plain->sink.quality.empty());

  Imported r;
  KinetoImportOptions options;
  options.host_ops = true;
  options.gpu_annotations = true;
  r.stats = ImportKinetoJson(kTrace, &r.names, &r.sink, options);
  ASSERT_TRUE(r.stats.ok());
  const std::vector<model::ViewRangeEvent>& v = r.sink.view_ranges;
  ASSERT_EQ(v.size(), 7u);  // not the python_function that is no module
  EXPECT_EQ(r.names.Get(v[0].name), "aten::linear");
  EXPECT_EQ(v[0].kind, model::ViewRangeKind::kCpuOp);
  EXPECT_EQ(v[0].pid, 7u);
  EXPECT_EQ(v[0].tid, 8u);
  EXPECT_EQ(v[0].start_ns, 10000);
  EXPECT_EQ(v[0].end_ns, 15000);
  EXPECT_EQ(r.names.Get(v[1].name), "aten::mm");  // the 2021 format's category
  EXPECT_EQ(v[1].kind, model::ViewRangeKind::kCpuOp);
  EXPECT_EQ(r.names.Get(v[2].name), "nn.Module: Linear_0");
  EXPECT_EQ(v[2].kind, model::ViewRangeKind::kModule);
  EXPECT_EQ(v[2].tid, 8u);
  EXPECT_EQ(v[3].kind, model::ViewRangeKind::kGpuAnnotation);
  EXPECT_EQ(r.names.Get(v[3].name), "## forward ##");
  EXPECT_EQ(v[3].pid, 7u);  // the host process, as for kernels
  EXPECT_EQ(v[3].device, 0u);
  EXPECT_EQ(v[3].tid, 7u);     // the stream
  EXPECT_EQ(v[4].device, 1u);  // args win over the row, as for kernels
  EXPECT_EQ(v[4].tid, 11u);
  // Fields after "args", an escaped name: parsed whole, not cut before "args".
  EXPECT_EQ(r.names.Get(v[5].name), "aten::late");
  EXPECT_EQ(v[5].start_ns, 40000);
  EXPECT_EQ(v[5].end_ns, 42000);
  EXPECT_EQ(r.names.Get(v[6].name), "aten::esc\"aped");
  EXPECT_EQ(v[6].end_ns, 52000);
  EXPECT_EQ(r.stats->events_skipped, 1u);                       // the python frame
  EXPECT_EQ(r.sink.quality[DataQuality::kMalformedEvent], 1u);  // the cpu_op without a name
}

// Operators are held back and delivered as runs (EventSink::OnViewRanges); every other delivery
// sends the run first, so a sink sees the file's order: runs of 1 and of more than one full run.
TEST(KinetoImporterTest, ViewRangeRunsKeepTheFileOrder) {
  // Records the order of what it receives, a run as its ranges.
  struct OrderSink final : model::EventSink {
    void OnProcess(const model::ProcessInfo&) override { seen.push_back("process"); }
    void OnDevice(const model::DeviceInfo&) override { seen.push_back("device"); }
    void OnKernel(const model::KernelEvent& e) override { Add("kernel", e.start_ns); }
    void OnMemcpy(const model::MemcpyEvent& e) override { Add("memcpy", e.start_ns); }
    void OnMemset(const model::MemsetEvent& e) override { Add("memset", e.start_ns); }
    void OnSync(const model::SyncEvent& e) override { Add("sync", e.start_ns); }
    void OnApiCall(const model::ApiCallEvent& e) override { Add("api", e.start_ns); }
    void OnNvtx(const model::NvtxEvent& e) override { Add("nvtx", e.start_ns); }
    void OnViewRange(const model::ViewRangeEvent& e) override { Add("op", e.start_ns); }
    void OnViewRanges(const model::ViewRangeEvent* e, size_t n) override {
      ++runs;
      for (size_t i = 0; i < n; ++i) OnViewRange(e[i]);
    }
    void OnDataQuality(uint32_t, DataQuality, uint64_t) override { seen.push_back("quality"); }
    void Add(const char* what, int64_t t) { seen.push_back(what + std::to_string(t / 1000)); }
    std::vector<std::string> seen;
    int runs = 0;
  };
  std::string json = R"({"traceEvents": [)";
  std::vector<std::string> expected = {"process"};
  auto op = [&](int ts) {
    json += R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 8, "ts": )" +
            std::to_string(ts) + R"(, "dur": 1, "args": {}},)";
    expected.push_back("op" + std::to_string(ts));
  };
  op(1);
  json += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 8,
             "ts": 2, "dur": 1, "args": {"correlation": 5}},)";
  expected.push_back("api2");
  for (int ts = 3; ts < 3 + 1300; ++ts) op(ts);  // more than two full runs
  json += R"({"ph": "X", "cat": "cpu_op", "name": "bad", "pid": 7, "tid": 8, "ts": 0, "dur": 1},)";
  expected.push_back("quality");
  op(2000);
  json += R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 3000, "dur": 1,
             "args": {"correlation": 5}},)";
  expected.push_back("kernel3000");
  op(4000);
  json +=
      R"({"ph": "X", "cat": "cpu_op", "name": "last", "pid": 7, "tid": 8, "ts": 5000, "dur": 1}]})";
  expected.push_back("op5000");
  expected.push_back("process");  // Finish announces the process again, after the last run
  for (bool scanner : {true, false}) {
    for (size_t chunk : {size_t{1} << 20, size_t{300}}) {
      OrderSink sink;
      model::NameTable names;
      KinetoImportOptions options;
      options.host_ops = true;
      options.host_range_scanner = scanner;
      options.chunk_bytes = chunk;
      ASSERT_TRUE(ImportKinetoJson(json, &names, &sink, options).ok());
      EXPECT_EQ(sink.seen, expected) << scanner << " " << chunk;
      EXPECT_EQ(sink.runs, 6);  // 1, 512, 512, 276, 1, 2
    }
  }
}

// Real traces: kernel counts checked against a python3 json count of `cat == "kernel"` events.
TEST(KinetoImporterTest, RealTracesKernelCounts) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  const std::pair<const char*, uint64_t> expected[] = {
      {"HolisticTraceAnalysis/critical_path/alexnet/"
       "benchmark_result_2869224_1695835535_trace.json.gz",
       79},
      {"TraceLens/b200/eager_trace.json.gz", 768},
      {"TraceLens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", 1465},
      {"TraceLens/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz", 4330},
      {"HolisticTraceAnalysis/df_index_resolver/df_index_resolver.json.gz", 19370},
      {"HolisticTraceAnalysis/nccl_parser_config/nccl_data.json.gz", 2700},
      {"HolisticTraceAnalysis/negative_queue_length_values_check/rank0.json.gz", 6080},
      {"HolisticTraceAnalysis/trace_diff/control/control.json.gz", 8568},
      {"HolisticTraceAnalysis/trace_filter/sampled_rank-0.json.gz", 1154},
      {"HolisticTraceAnalysis/trace_filter/sampled_rank-1.json.gz", 1104},
  };
  for (const auto& [file, kernels] : expected) {
    model::NameTable names;
    RecordingSink sink;
    auto stats = ImportKinetoTrace(testing::SharedTrace(file), &names, &sink);
    ASSERT_TRUE(stats.ok()) << stats.status().message();
    EXPECT_EQ(stats->kernels, kernels) << file;
    EXPECT_EQ(sink.kernels.size(), kernels) << file;
    EXPECT_TRUE(sink.quality.empty()) << file;
    ASSERT_FALSE(sink.processes.empty()) << file;
    for (const auto& k : sink.kernels) {
      ASSERT_EQ(k.pid, sink.processes.back().pid) << file;
      ASSERT_GT(k.end_ns, 0) << file;
    }
  }
}

TEST(KinetoImporterTest, RealTracesDetails) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  for (int rank : {0, 1}) {
    model::NameTable names;
    RecordingSink sink;
    const std::string file =
        "HolisticTraceAnalysis/trace_filter/sampled_rank-" + std::to_string(rank) + ".json.gz";
    auto stats = ImportKinetoTrace(testing::SharedTrace(file), &names, &sink);
    ASSERT_TRUE(stats.ok()) << stats.status().message();
    EXPECT_EQ(sink.processes.back().rank, rank);
    EXPECT_EQ(sink.processes.back().world_size, 128);
    EXPECT_EQ(sink.processes.back().pid, rank == 0 ? 4037u : 4045u);
  }
  model::NameTable names;
  RecordingSink sink;
  auto stats =
      ImportKinetoTrace(testing::SharedTrace("HolisticTraceAnalysis/critical_path/alexnet/"
                                             "benchmark_result_2869224_1695835535_trace.json.gz"),
                        &names, &sink);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(sink.syncs.size(), 41u);
  std::map<SyncType, int> sync_types;
  for (const auto& s : sink.syncs) ++sync_types[s.type];
  EXPECT_EQ(sync_types[SyncType::kStreamWaitEvent], 20);
  EXPECT_EQ(sync_types[SyncType::kStream], 16);
  EXPECT_EQ(sync_types[SyncType::kDevice], 5);
  int mallocs = 0;
  for (const auto& a : sink.api_calls) mallocs += a.kind == ApiKind::kMalloc;
  EXPECT_EQ(mallocs, 25);  // 24 cudaMalloc + 1 cudaHostAlloc
  EXPECT_EQ(sink.devices.size(), 8u);
  EXPECT_EQ(sink.processes.back().pid, 2869224u);
  EXPECT_EQ(sink.processes.back().rank, 0);
  EXPECT_EQ(sink.memcpys.size(), 16u);
  EXPECT_EQ(sink.memsets.size(), 3u);

  // Fractional timestamps, exact: the first b200 kernel starts at 1365627866520.196 us.
  model::NameTable names2;
  RecordingSink b200;
  auto b =
      ImportKinetoTrace(testing::SharedTrace("TraceLens/b200/eager_trace.json.gz"), &names2, &b200);
  ASSERT_TRUE(b.ok());
  ASSERT_FALSE(b200.kernels.empty());
  EXPECT_EQ(b200.kernels[0].start_ns, 1365627866520196);
  EXPECT_EQ(b200.kernels[0].end_ns - b200.kernels[0].start_ns, 2080);
  EXPECT_EQ(b200.processes.back().rank, 0);
  EXPECT_EQ(b200.processes.back().world_size, 8);
  int ex_launches = 0;
  for (const auto& a : b200.api_calls) ex_launches += a.kind == ApiKind::kKernelLaunch;
  EXPECT_EQ(ex_launches, 367 + 220 + 1 + 180);
}

// The view ranges of real traces, counted with python3's json module: cpu_op events,
// python_function events named "nn.Module: ...", and gpu_user_annotation events.
TEST(KinetoImporterTest, RealTracesViewRanges) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  struct Expected {
    const char* file;
    size_t ops, modules, gpu_annotations;
  };
  const Expected expected[] = {
      {"TraceLens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", 4186, 316, 1},
      {"TraceLens/b200/eager_trace.json.gz", 4809, 436, 3},
      {"HolisticTraceAnalysis/nccl_parser_config/nccl_data.json.gz", 14346, 0, 30},
      {"HolisticTraceAnalysis/trace_filter/sampled_rank-0.json.gz", 2329, 0, 0},
  };
  for (const Expected& e : expected) {
    model::NameTable names;
    RecordingSink sink;
    KinetoImportOptions options;
    options.host_ops = true;
    options.gpu_annotations = true;
    auto stats = ImportKinetoTrace(testing::SharedTrace(e.file), &names, &sink, options);
    ASSERT_TRUE(stats.ok()) << stats.status().message();
    std::map<model::ViewRangeKind, size_t> kinds;
    for (const model::ViewRangeEvent& v : sink.view_ranges) {
      ++kinds[v.kind];
      ASSERT_EQ(v.pid, sink.processes.back().pid) << e.file;
    }
    EXPECT_EQ(kinds[model::ViewRangeKind::kCpuOp], e.ops) << e.file;
    EXPECT_EQ(kinds[model::ViewRangeKind::kModule], e.modules) << e.file;
    EXPECT_EQ(kinds[model::ViewRangeKind::kGpuAnnotation], e.gpu_annotations) << e.file;
    EXPECT_TRUE(sink.quality.empty()) << e.file;
  }
}

}  // namespace
}  // namespace inferscope::import
