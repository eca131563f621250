// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// `analyze --views` through the whole offline pipeline: a Kineto trace written here (runs without
// ../shared/traces), then the real traces that carry each view's data (skipped when absent).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "src/pipeline/trace_pipeline.h"
#include "src/report/report.h"
#include "tests/temp_dir.h"
#include "tests/test_traces.h"

namespace inferscope::pipeline {
namespace {

constexpr const char* kGemm = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn";

// Two ProfilerSteps; step 2 has a "forward" annotation. Kernels on streams 7 and 9 (overlapping
// 20 us), each launched by a cudaLaunchKernel with its correlation id. Times in us.
std::string StepTrace() {
  std::string events;
  auto add = [&events](const std::string& e) { events += (events.empty() ? "" : ",\n") + e; };
  auto kernel = [&](int corr, int stream, double ts, double dur, int grid) {
    add(R"({"ph":"X","cat":"kernel","name":")" + std::string(kGemm) + R"(","pid":0,"tid":)" +
        std::to_string(stream) + R"(,"ts":)" + std::to_string(ts) + R"(,"dur":)" +
        std::to_string(dur) + R"(,"args":{"device":0,"stream":)" + std::to_string(stream) +
        R"(,"correlation":)" + std::to_string(corr) + R"(,"grid":[)" + std::to_string(grid) +
        R"(,1,1],"block":[256,1,1]}})");
  };
  auto launch = [&](int corr, double ts) {
    add(R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":)" +
        std::to_string(ts) + R"(,"dur":4,"args":{"correlation":)" + std::to_string(corr) + "}}");
  };
  auto range = [&](const std::string& name, double ts, double dur) {
    add(R"({"ph":"X","cat":"user_annotation","name":")" + name + R"(","pid":100,"tid":100,"ts":)" +
        std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + "}");
  };
  range("ProfilerStep#1", 1000, 100);
  range("ProfilerStep#2", 1100, 300);
  range("forward", 1110, 50);
  launch(1, 1010);
  launch(2, 1020);
  launch(3, 1120);
  launch(4, 1200);
  kernel(1, 7, 1050, 100, 8);  // step 1
  kernel(2, 9, 1130, 40, 16);  // step 1, overlaps kernel 1 by 20 us
  kernel(3, 7, 1300, 200, 8);  // step 2, forward
  kernel(4, 7, 1600, 100, 8);  // step 2
  return R"({"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100"}],)"
         R"("traceEvents":[)" +
         events + "]}";
}

TEST(TraceViewsTest, EveryViewFromAKinetoTrace) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/steps.json";
  std::ofstream(path) << StepTrace();
  TraceOptions options;
  options.views = {true, true, true, true, true};
  model::KernelClassifier classifier;
  std::string failed;
  std::ostringstream err;
  auto set = ImportTraces({path}, options, classifier, &failed, err);
  ASSERT_TRUE(set.ok()) << set.status().message();
  const model::TraceViews& v = set->traces.at(0).views;
  ASSERT_EQ(v.processes.size(), 1u);
  const model::ProcessViews& p = v.processes[0];
  ASSERT_EQ(p.devices.size(), 1u);
  const model::DeviceViews& d = p.devices[0];

  ASSERT_EQ(d.kernels.size(), 1u);
  EXPECT_EQ(d.kernels[0].duration.count, 4u);
  EXPECT_EQ(d.kernels[0].duration.total_ns, 440'000);
  EXPECT_EQ(d.kernels[0].duration.median_ns, 100'000);
  EXPECT_EQ(d.kernels[0].duration.max_ns, 200'000);
  EXPECT_EQ(d.kernels[0].distinct_configs, 2u);
  EXPECT_EQ(d.kernels[0].configs[0].count, 3u);  // grid 8, three times

  ASSERT_EQ(d.streams.size(), 2u);
  EXPECT_EQ(d.streams[0].stream, 7u);
  EXPECT_EQ(d.streams[0].busy_ns, 400'000);
  EXPECT_EQ(d.streams[0].idle_ns, 250'000);  // span 1050..1700
  EXPECT_EQ(d.streams[0].overlap_ns, 20'000);
  EXPECT_EQ(d.multi_stream_ns, 20'000);

  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].name, "ProfilerStep#1");
  EXPECT_EQ(p.steps[0].gpu.ops, 2u);
  EXPECT_EQ(p.steps[0].gpu.busy_ns, 120'000);  // 1050..1170
  EXPECT_EQ(p.steps[1].gpu.ops, 2u);
  EXPECT_EQ(p.steps[1].gpu.time_ns, 300'000);
  EXPECT_EQ(p.steps[1].gpu.last_end_ns - p.steps[1].gpu.first_start_ns, 400'000);
  EXPECT_EQ(p.step_duration.max_ns, 300'000);

  const auto forward = std::find_if(p.ranges.begin(), p.ranges.end(),
                                    [](const model::RangeRow& r) { return r.name == "forward"; });
  ASSERT_NE(forward, p.ranges.end());
  EXPECT_EQ(forward->gpu.ops, 1u);
  EXPECT_EQ(forward->gpu.time_ns, 200'000);
  EXPECT_EQ(p.unprojected_ops, 0u);

  // The report carries them; without --views it does not.
  const analyze::Analysis with = AnalyzeTraces(*set, options);
  EXPECT_NE(report::RenderJson(with).find("\"views\": {"), std::string::npos);
  options.views = {};
  set = ImportTraces({path}, options, classifier, &failed, err);
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->traces[0].views.processes.empty());
  EXPECT_NE(report::RenderJson(AnalyzeTraces(*set, options)).find("\"views\": null"),
            std::string::npos);
}

TEST(TraceViewsTest, StepPrefixes) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/steps.json";
  std::ofstream(path) << StepTrace();
  TraceOptions options;
  options.views.steps = true;
  options.step_prefixes = {"forward"};
  model::KernelClassifier classifier;
  std::string failed;
  std::ostringstream err;
  auto set = ImportTraces({path}, options, classifier, &failed, err);
  ASSERT_TRUE(set.ok());
  const model::ProcessViews& p = set->traces.at(0).views.processes.at(0);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].name, "forward");
  EXPECT_EQ(p.steps[0].gpu.ops, 1u);
}

// Invariants on the real traces: kernel statistics add up to the window's kernel time, no stream
// is busier than the device, every kernel of a ProfilerStep trace lands in at most one step.
void CheckRealTrace(const std::string& relative, size_t min_steps, bool want_ranges) {
  const std::string path = testing::SharedTrace(relative);
  TraceOptions options;
  options.views = {true, true, true, true, true};
  model::KernelClassifier classifier;
  std::string failed;
  std::ostringstream err;
  auto set = ImportTraces({path}, options, classifier, &failed, err);
  ASSERT_TRUE(set.ok()) << set.status().message();
  const ImportedTrace& t = set->traces.at(0);
  size_t steps = 0, ranges = 0;
  for (const model::ProcessViews& p : t.views.processes) {
    steps += p.steps_total;
    ranges += p.ranges.size();
    const model::ProcessProfile* profile = nullptr;
    for (const model::ProcessProfile& pp : t.window.processes)
      if (pp.pid == p.pid) profile = &pp;
    for (const model::DeviceViews& d : p.devices) {
      ASSERT_NE(profile, nullptr) << relative;
      const model::DeviceProfile* device = nullptr;
      for (const model::DeviceProfile& dp : profile->devices)
        if (dp.device == d.device) device = &dp;
      ASSERT_NE(device, nullptr) << relative;
      uint64_t count = d.kernel_tail.duration.count;
      for (const model::KernelStatRow& k : d.kernels) {
        count += k.duration.count;
        EXPECT_LE(k.duration.min_ns, k.duration.median_ns);
        EXPECT_LE(k.duration.median_ns, k.duration.p99_ns);
        EXPECT_LE(k.duration.p99_ns, k.duration.max_ns);
      }
      EXPECT_EQ(count, device->kernel_count) << relative;
      int64_t max_busy = 0;
      for (const model::StreamRow& s : d.streams) {
        max_busy = std::max(max_busy, s.busy_ns);
        EXPECT_LE(s.overlap_ns, s.busy_ns);
        EXPECT_GE(s.idle_ns, 0);
      }
      EXPECT_LE(max_busy, device->busy_ns) << relative;
    }
    // A GPU op is in at most one step: the steps' ops never exceed the process's.
    uint64_t in_steps = 0, ops = 0;
    for (const model::StepRow& s : p.steps) in_steps += s.gpu.ops;
    if (profile != nullptr)
      for (const model::DeviceProfile& dp : profile->devices) {
        ops += dp.kernel_count + dp.memset.count;
        for (const model::TransferStats& m : dp.memcpy) ops += m.count;
      }
    EXPECT_LE(in_steps, ops) << relative;
  }
  EXPECT_GE(steps, min_steps) << relative;
  if (want_ranges) {
    EXPECT_GT(ranges, 0u) << relative;
  }
}

TEST(TraceViewsTest, RealTracesThatCarryTheData) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  // ProfilerStep ranges, user_annotation, 4-5 streams (Kineto).
  CheckRealTrace("HolisticTraceAnalysis/trace_filter/sampled_rank-0.json.gz", 2, true);
  CheckRealTrace("HolisticTraceAnalysis/negative_queue_length_values_check/rank0.json.gz", 5, true);
  // NVTX_EVENTS (emit_nvtx aten ranges), two processes (Nsight).
  CheckRealTrace("nsys-ai/mfu_2gpu_before.sqlite", 0, true);
}

TEST(TraceViewsTest, RealStepsOfAHtaTrace) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  TraceOptions options;
  options.views.steps = true;
  model::KernelClassifier classifier;
  std::string failed;
  std::ostringstream err;
  auto set = ImportTraces(
      {testing::SharedTrace("HolisticTraceAnalysis/trace_filter/sampled_rank-0.json.gz")}, options,
      classifier, &failed, err);
  ASSERT_TRUE(set.ok()) << set.status().message();
  const model::ProcessViews& p = set->traces.at(0).views.processes.at(0);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].name, "ProfilerStep#551");
  EXPECT_EQ(p.steps[1].name, "ProfilerStep#552");
  for (const model::StepRow& s : p.steps) {
    EXPECT_GT(s.gpu.ops, 100u);
    EXPECT_GT(s.gpu.busy_ns, 0);
    EXPECT_LE(s.gpu.busy_ns, s.gpu.last_end_ns - s.gpu.first_start_ns);
  }
}

// The ops view on real Kineto traces, against a python3 reference over the same JSON (innermost
// cpu_op / `nn.Module:` python_function open on the launching thread at the launch's start).
TEST(TraceViewsTest, RealOpsOfKinetoTraces) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  struct Expected {
    const char* file;
    const char* top_op;
    int64_t top_op_gpu_self_ns;
    const char* top_module;  // by GPU total
    int64_t top_module_gpu_total_ns;
    int64_t outside_ns;
  };
  const Expected expected[] = {
      {"TraceLens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", "aten::mul", 6752901, "Qwen2Model",
       31905473, 0},
      {"TraceLens/b200/eager_trace.json.gz", "vllm::moe_forward", 6078426, "GptOssForCausalLM",
       11575199, 5088},
  };
  for (const Expected& e : expected) {
    TraceOptions options;
    options.views.ops = true;
    model::KernelClassifier classifier;
    std::string failed;
    std::ostringstream err;
    auto set = ImportTraces({testing::SharedTrace(e.file)}, options, classifier, &failed, err);
    ASSERT_TRUE(set.ok()) << set.status().message();
    const model::OpsView& o = set->traces.at(0).views.processes.at(0).ops;
    ASSERT_FALSE(o.ops.empty()) << e.file;
    EXPECT_EQ(o.ops[0].name, e.top_op) << e.file;
    // The reference rounds microseconds through doubles: a few ns apart at most per kernel.
    EXPECT_NEAR(o.ops[0].gpu_self_ns, e.top_op_gpu_self_ns, 2000) << e.file;
    ASSERT_FALSE(o.modules.empty()) << e.file;
    EXPECT_EQ(o.modules[0].name, e.top_module) << e.file;
    EXPECT_NEAR(o.modules[0].gpu_total_ns, e.top_module_gpu_total_ns, 10000) << e.file;
    EXPECT_NEAR(o.outside_gpu_ns, e.outside_ns, 100) << e.file;
    // GPU self time partitions what was launched inside operators: rows, tail and outside add up
    // to every projected GPU op.
    int64_t self = o.op_tail.gpu_self_ns + o.outside_gpu_ns;
    uint64_t ops = o.op_tail.gpu_ops + o.outside_gpu_ops;
    for (const model::OpRow& r : o.ops) {
      self += r.gpu_self_ns;
      ops += r.gpu_ops;
      EXPECT_LE(r.gpu_self_ns, r.gpu_total_ns) << r.name;
      EXPECT_LE(r.cpu_self_ns, r.cpu_total_ns) << r.name;
      EXPECT_GE(r.cpu_self_ns, 0) << r.name;
    }
    const model::ProfileWindow& w = set->traces.at(0).window;
    uint64_t gpu_ops = 0;
    for (const auto& p : w.processes)
      for (const auto& d : p.devices) {
        gpu_ops += d.kernel_count + d.memset.count;
        for (const model::TransferStats& t : d.memcpy) gpu_ops += t.count;
      }
    EXPECT_EQ(ops + set->traces.at(0).views.processes.at(0).unprojected_ops, gpu_ops) << e.file;
    EXPECT_GT(self, 0);
  }
}

}  // namespace
}  // namespace inferscope::pipeline
