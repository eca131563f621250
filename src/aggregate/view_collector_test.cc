// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/aggregate/view_collector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

namespace inferscope::aggregate {
namespace {

constexpr const char* kGemm = "ampere_sgemm_128x64_tn";
constexpr const char* kNorm = "void vllm::rms_norm_kernel<c10::BFloat16, 8, 3>(c10::BFloat16*)";

TEST(SummarizeDurationsTest, ExactOrderStatistics) {
  std::vector<int64_t> v;
  for (int64_t i = 100; i >= 1; --i) v.push_back(i * 10);  // 10 .. 1000, reversed
  const model::DurationSummary s = SummarizeDurations(&v);
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.total_ns, 50500);
  EXPECT_EQ(s.mean_ns, 505);
  EXPECT_EQ(s.min_ns, 10);
  EXPECT_EQ(s.max_ns, 1000);
  EXPECT_EQ(s.median_ns, 500);  // lower median of an even count
  EXPECT_EQ(s.p99_ns, 990);     // the 99th smallest of 100
  // Sample standard deviation of 10, 20, ..., 1000: 10 * sqrt(100 * 101 / 12).
  EXPECT_NEAR(s.stddev_ns, 10 * std::sqrt(100.0 * 101 / 12), 1e-6);

  std::vector<int64_t> one = {7};
  const model::DurationSummary o = SummarizeDurations(&one);
  EXPECT_EQ(o.median_ns, 7);
  EXPECT_EQ(o.p99_ns, 7);
  EXPECT_EQ(o.stddev_ns, 0);
  std::vector<int64_t> none;
  EXPECT_EQ(SummarizeDurations(&none), model::DurationSummary{});
}

class ViewCollectorTest : public ::testing::Test {
 protected:
  model::KernelEvent Kernel(const char* name, int64_t start, int64_t end, uint32_t stream,
                            uint32_t correlation, int32_t grid = 1, int32_t block = 128) {
    model::KernelEvent k;
    k.pid = 1;
    k.stream = stream;
    k.start_ns = start;
    k.end_ns = end;
    k.name = names_.Intern(name);
    k.correlation_id = correlation;
    k.grid[0] = grid;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = block;
    k.block[1] = k.block[2] = 1;
    return k;
  }
  model::ApiCallEvent Launch(int64_t start, uint32_t correlation, uint32_t tid = 1) {
    model::ApiCallEvent a;
    a.pid = 1;
    a.tid = tid;
    a.start_ns = start;
    a.end_ns = start + 5;
    a.correlation_id = correlation;
    a.kind = model::ApiKind::kKernelLaunch;
    a.name = names_.Intern("cudaLaunchKernel");
    return a;
  }
  model::NvtxEvent Range(const char* name, int64_t start, int64_t end, uint32_t tid = 1) {
    model::NvtxEvent n;
    n.pid = 1;
    n.tid = tid;
    n.start_ns = start;
    n.end_ns = end;
    n.name = names_.Intern(name);
    return n;
  }

  model::NameTable names_;
  model::KernelClassifier classifier_;
};

// Counts what reaches the sink behind the collector.
struct CountingSink : model::EventSink {
  void OnProcess(const model::ProcessInfo&) override {}
  void OnDevice(const model::DeviceInfo&) override {}
  void OnKernel(const model::KernelEvent&) override { ++events; }
  void OnMemcpy(const model::MemcpyEvent&) override { ++events; }
  void OnMemset(const model::MemsetEvent&) override { ++events; }
  void OnSync(const model::SyncEvent&) override { ++events; }
  void OnApiCall(const model::ApiCallEvent&) override { ++events; }
  void OnNvtx(const model::NvtxEvent&) override { ++events; }
  void OnDataQuality(uint32_t, model::DataQuality, uint64_t) override { ++events; }
  int events = 0;
};

TEST_F(ViewCollectorTest, KernelStatisticsAndLaunchConfigs) {
  ViewOptions options;
  options.selection.kernels = true;
  options.top = 1;
  CountingSink next;
  ViewCollector views(options, &names_, &classifier_, &next);
  // Four GEMMs (two grids), two norms: top 1 keeps the GEMM, the norms form the tail.
  views.OnKernel(Kernel(kGemm, 0, 100, 7, 1, /*grid=*/8));
  views.OnKernel(Kernel(kGemm, 200, 400, 7, 2, /*grid=*/8));
  views.OnKernel(Kernel(kGemm, 500, 800, 7, 3, /*grid=*/16));
  views.OnKernel(Kernel(kGemm, 900, 1300, 7, 4, /*grid=*/8));
  views.OnKernel(Kernel(kNorm, 1300, 1310, 7, 5));
  views.OnKernel(Kernel(kNorm, 1310, 1330, 7, 6));
  EXPECT_EQ(next.events, 6);  // everything is forwarded
  const model::TraceViews v = views.Finish();
  ASSERT_EQ(v.processes.size(), 1u);
  ASSERT_EQ(v.processes[0].devices.size(), 1u);
  const model::DeviceViews& d = v.processes[0].devices[0];
  ASSERT_EQ(d.kernels.size(), 1u);
  const model::KernelStatRow& gemm = d.kernels[0];
  EXPECT_EQ(gemm.name, kGemm);
  EXPECT_EQ(gemm.category, model::Category::kMatmul);
  EXPECT_EQ(gemm.duration.count, 4u);
  EXPECT_EQ(gemm.duration.total_ns, 1000);
  EXPECT_EQ(gemm.duration.median_ns, 200);
  EXPECT_EQ(gemm.duration.min_ns, 100);
  EXPECT_EQ(gemm.duration.max_ns, 400);
  EXPECT_EQ(gemm.duration.p99_ns, 400);
  EXPECT_NEAR(gemm.duration.stddev_ns, std::sqrt(50000.0 / 3), 1e-6);
  EXPECT_EQ(gemm.distinct_configs, 2u);
  ASSERT_EQ(gemm.configs.size(), 2u);
  EXPECT_EQ(gemm.configs[0].grid[0], 8);  // the most frequent first
  EXPECT_EQ(gemm.configs[0].count, 3u);
  EXPECT_EQ(gemm.configs[0].total_ns, 700);
  EXPECT_EQ(gemm.configs[0].block[0], 128);
  EXPECT_EQ(gemm.configs[1].grid[0], 16);
  EXPECT_EQ(d.kernel_tail_names, 1u);
  EXPECT_EQ(d.kernel_tail.duration.count, 2u);
  EXPECT_EQ(d.kernel_tail.duration.total_ns, 30);
  EXPECT_EQ(d.kernel_tail.duration.max_ns, 20);
  // Views not selected stay empty.
  EXPECT_TRUE(d.streams.empty());
  EXPECT_TRUE(v.processes[0].steps.empty());
  EXPECT_TRUE(v.processes[0].ranges.empty());
}

// A launch configuration is grid, block, registers and shared memory: the same grid and block with
// another dynamic shared-memory size is another configuration. Resources hold for the kernels of
// their name delivered after them; a kernel before any has them unknown (-1).
TEST_F(ViewCollectorTest, LaunchConfigsIncludeRegistersAndSharedMemory) {
  ViewOptions options;
  options.selection.kernels = true;
  CountingSink next;
  ViewCollector views(options, &names_, &classifier_, &next);
  auto resources = [&](const char* name, int32_t regs, int32_t static_bytes,
                       int32_t dynamic_bytes) {
    model::KernelResourcesEvent r;
    r.pid = 1;
    r.name = names_.Intern(name);
    r.resources = {regs, static_bytes, dynamic_bytes, static_bytes + dynamic_bytes};
    views.OnKernelResources(r);
  };
  views.OnKernel(Kernel(kGemm, 0, 10, 7, 1, /*grid=*/8));  // before any resources: unknown
  resources(kGemm, 128, 1024, 0);
  views.OnKernel(Kernel(kGemm, 10, 30, 7, 2, /*grid=*/8));
  views.OnKernel(Kernel(kGemm, 30, 50, 7, 3, /*grid=*/8));
  resources(kNorm, 32, 0, 0);  // another name: the GEMM's stay
  views.OnKernel(Kernel(kGemm, 50, 70, 7, 4, /*grid=*/8));
  resources(kGemm, 128, 1024, 49152);  // same grid and block, more dynamic shared memory
  views.OnKernel(Kernel(kGemm, 70, 170, 7, 5, /*grid=*/8));
  views.OnKernel(Kernel(kNorm, 200, 205, 7, 6));
  EXPECT_EQ(next.events, 6);  // resources stop here; the kernels go on
  const model::TraceViews v = views.Finish();
  ASSERT_EQ(v.processes.size(), 1u);
  const model::DeviceViews& d = v.processes[0].devices[0];
  ASSERT_EQ(d.kernels.size(), 2u);
  const model::KernelStatRow& gemm = d.kernels[0];
  ASSERT_EQ(gemm.name, kGemm);
  EXPECT_EQ(gemm.distinct_configs, 3u);
  ASSERT_EQ(gemm.configs.size(), 3u);
  // By count: the static-only configuration ran three times.
  EXPECT_EQ(gemm.configs[0].count, 3u);
  EXPECT_EQ(gemm.configs[0].total_ns, 60);
  EXPECT_EQ(gemm.configs[0].grid[0], 8);
  EXPECT_EQ(gemm.configs[0].registers_per_thread, 128);
  EXPECT_EQ(gemm.configs[0].static_shared_bytes, 1024);
  EXPECT_EQ(gemm.configs[0].dynamic_shared_bytes, 0);
  EXPECT_EQ(gemm.configs[0].shared_bytes, 1024);
  // Then by total time: the one with 48 KiB of dynamic shared memory (100 ns), then the unknown.
  EXPECT_EQ(gemm.configs[1].count, 1u);
  EXPECT_EQ(gemm.configs[1].dynamic_shared_bytes, 49152);
  EXPECT_EQ(gemm.configs[1].shared_bytes, 50176);
  EXPECT_EQ(gemm.configs[1].grid, gemm.configs[0].grid);
  EXPECT_EQ(gemm.configs[1].block, gemm.configs[0].block);
  EXPECT_EQ(gemm.configs[2].registers_per_thread, -1);
  EXPECT_EQ(gemm.configs[2].shared_bytes, -1);
  EXPECT_EQ(gemm.configs[2].total_ns, 10);
  const model::KernelStatRow& norm = d.kernels[1];
  ASSERT_EQ(norm.configs.size(), 1u);
  EXPECT_EQ(norm.configs[0].registers_per_thread, 32);
  EXPECT_EQ(norm.configs[0].shared_bytes, 0);
}

// Without the kernel statistics, resources are not kept (and nothing changes).
TEST_F(ViewCollectorTest, KernelResourcesIgnoredWithoutTheKernelView) {
  ViewOptions options;
  options.selection.streams = true;
  ViewCollector views(options, &names_, &classifier_, nullptr);
  model::KernelResourcesEvent r;
  r.name = names_.Intern(kGemm);
  r.resources.registers_per_thread = 64;
  views.OnKernelResources(r);
  views.OnKernel(Kernel(kGemm, 0, 10, 7, 1));
  const model::TraceViews v = views.Finish();
  ASSERT_EQ(v.processes.size(), 1u);
  EXPECT_TRUE(v.processes[0].devices[0].kernels.empty());
  EXPECT_EQ(v.processes[0].devices[0].streams.size(), 1u);
}

TEST_F(ViewCollectorTest, StreamsBusyIdleOverlap) {
  ViewOptions options;
  options.selection.streams = true;
  ViewCollector views(options, &names_, &classifier_, nullptr);
  // Stream 7: [0,100) and [200,300). Stream 9: [50,150) and a copy [300,400) touching stream 7's
  // end (no overlap at one instant).
  views.OnKernel(Kernel(kGemm, 0, 100, 7, 1));
  views.OnKernel(Kernel(kGemm, 200, 300, 7, 2));
  views.OnKernel(Kernel(kNorm, 50, 150, 9, 3));
  model::MemcpyEvent copy;
  copy.pid = 1;
  copy.stream = 9;
  copy.start_ns = 300;
  copy.end_ns = 400;
  views.OnMemcpy(copy);
  const model::TraceViews v = views.Finish();
  const model::DeviceViews& d = v.processes.at(0).devices.at(0);
  ASSERT_EQ(d.streams.size(), 2u);
  const model::StreamRow& s7 = d.streams[0];
  EXPECT_EQ(s7.stream, 7u);
  EXPECT_EQ(s7.kernels, 2u);
  EXPECT_EQ(s7.busy_ns, 200);
  EXPECT_EQ(s7.idle_ns, 100);  // span 300
  EXPECT_EQ(s7.overlap_ns, 50);
  const model::StreamRow& s9 = d.streams[1];
  EXPECT_EQ(s9.stream, 9u);
  EXPECT_EQ(s9.kernels, 1u);
  EXPECT_EQ(s9.memcpys, 1u);
  EXPECT_EQ(s9.busy_ns, 200);
  EXPECT_EQ(s9.idle_ns, 150);  // span [50, 400)
  EXPECT_EQ(s9.overlap_ns, 50);
  EXPECT_EQ(d.multi_stream_ns, 50);
}

TEST_F(ViewCollectorTest, StepsAndRangesProjectByCorrelation) {
  ViewOptions options;
  options.selection.steps = true;
  options.selection.ranges = true;
  ViewCollector views(options, &names_, &classifier_, nullptr);
  // Two steps on thread 1; "forward" nested in step 1 and repeated in step 2. Kernels arrive
  // before their launches (file order is not time order).
  views.OnKernel(Kernel(kGemm, 1000, 1400, 7, 1));  // launched at 10 in step 1 / forward
  views.OnKernel(Kernel(kNorm, 1400, 1500, 7, 2));  // launched at 20 in step 1 / forward
  views.OnKernel(Kernel(kGemm, 2000, 2100, 7, 3));  // launched at 110 in step 2 / forward
  views.OnKernel(Kernel(kGemm, 2600, 2700, 7, 4));  // launched at 150 in step 2, outside forward
  views.OnKernel(Kernel(kGemm, 3000, 3100, 7, 5));  // launched at 300: no step
  views.OnKernel(Kernel(kGemm, 3200, 3300, 7, 6));  // no launch record: unprojected
  views.OnApiCall(Launch(10, 1));
  views.OnApiCall(Launch(20, 2));
  views.OnApiCall(Launch(110, 3));
  views.OnApiCall(Launch(150, 4));
  views.OnApiCall(Launch(300, 5));
  views.OnNvtx(Range("ProfilerStep#1", 0, 100));
  views.OnNvtx(Range("ProfilerStep#2", 100, 200));
  views.OnNvtx(Range("forward", 5, 50));
  views.OnNvtx(Range("forward", 105, 130));
  views.OnNvtx(Range("forward", 120, 125));  // nested in itself: a kernel counts once
  const model::TraceViews v = views.Finish();
  ASSERT_EQ(v.processes.size(), 1u);
  const model::ProcessViews& p = v.processes[0];
  EXPECT_EQ(p.unprojected_ops, 1u);
  EXPECT_EQ(p.nvtx_ranges, 5u);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps_total, 2u);
  EXPECT_EQ(p.steps[0].name, "ProfilerStep#1");
  EXPECT_EQ(p.steps[0].gpu.ops, 2u);
  EXPECT_EQ(p.steps[0].gpu.time_ns, 500);
  EXPECT_EQ(p.steps[0].gpu.busy_ns, 500);
  EXPECT_EQ(p.steps[0].gpu.first_start_ns, 1000);
  EXPECT_EQ(p.steps[0].gpu.last_end_ns, 1500);
  EXPECT_EQ(p.steps[0].gpu.category_ns[static_cast<size_t>(model::Category::kMatmul)], 400);
  EXPECT_EQ(p.steps[0].gpu.category_ns[static_cast<size_t>(model::Category::kNormalization)], 100);
  EXPECT_EQ(p.steps[1].gpu.ops, 2u);
  EXPECT_EQ(p.steps[1].gpu.time_ns, 200);
  EXPECT_EQ(p.steps[1].gpu.busy_ns, 200);
  EXPECT_EQ(p.steps[1].gpu.last_end_ns - p.steps[1].gpu.first_start_ns, 700);
  EXPECT_EQ(p.step_duration.count, 2u);
  EXPECT_EQ(p.step_duration.total_ns, 200);
  EXPECT_EQ(p.step_gpu_time.max_ns, 700);
  EXPECT_EQ(p.step_gpu_time.min_ns, 500);

  // Ranges by total host time: the two steps (100 each) and forward (45 + 25 + 5).
  ASSERT_EQ(p.ranges.size(), 3u);
  const model::RangeRow* forward = nullptr;
  for (const model::RangeRow& r : p.ranges)
    if (r.name == "forward") forward = &r;
  ASSERT_NE(forward, nullptr);
  EXPECT_EQ(forward->duration.count, 3u);
  EXPECT_EQ(forward->duration.total_ns, 75);
  EXPECT_EQ(forward->duration.max_ns, 45);
  EXPECT_EQ(forward->gpu.ops, 3u);
  EXPECT_EQ(forward->gpu.time_ns, 600);
  EXPECT_EQ(p.ranges[0].name, "ProfilerStep#1");
  EXPECT_EQ(p.ranges[0].gpu.time_ns, 500);
}

TEST_F(ViewCollectorTest, StepPrefixesAndRangeTail) {
  ViewOptions options;
  options.selection.steps = true;
  options.selection.ranges = true;
  options.top = 1;
  options.step_prefixes = {"train_step"};
  ViewCollector views(options, &names_, &classifier_, nullptr);
  views.OnKernel(Kernel(kGemm, 1000, 1100, 7, 1));
  views.OnApiCall(Launch(10, 1, /*tid=*/2));  // another thread: in the step, not in its range
  views.OnNvtx(Range("train_step 0", 0, 100));
  views.OnNvtx(Range("ProfilerStep#1", 0, 50));  // not a step with these prefixes
  views.OnNvtx(Range("small", 0, 10));
  const model::TraceViews v = views.Finish();
  const model::ProcessViews& p = v.processes.at(0);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].name, "train_step 0");
  EXPECT_EQ(p.steps[0].gpu.time_ns, 100);
  ASSERT_EQ(p.ranges.size(), 1u);
  EXPECT_EQ(p.ranges[0].name, "train_step 0");
  EXPECT_EQ(p.ranges[0].gpu.ops, 0u);
  EXPECT_EQ(p.range_tail_names, 2u);
  EXPECT_EQ(p.range_tail.duration.count, 2u);
  EXPECT_EQ(p.range_tail.duration.total_ns, 60);
}

namespace inferscope::aggregate {
namespace {

TEST_F(ViewCollectorTest, StepPhasesFromNamesThenAttentionKernels) {
  constexpr const char* kPrefill = "void flashinfer::BatchPrefillWithPagedKVCacheKernel<128>()";
  constexpr const char* kDecode = "void flashinfer::BatchDecodeWithPagedKVCacheKernel<128>()";
  ViewOptions options;
  options.selection.steps = true;
  options.step_prefixes = {"step", "SGLang"};
  ViewCollector views(options, &names_, &classifier_, nullptr);
  views.OnNvtx(Range("step 1", 0, 100));           // prefill attention: prefill
  views.OnNvtx(Range("step 2", 100, 200));         // decode attention: decode
  views.OnNvtx(Range("step 3", 200, 300));         // both: mixed (chunked prefill)
  views.OnNvtx(Range("step 4", 300, 400));         // a GEMM only: unknown
  views.OnNvtx(Range("SGLang EXTEND", 400, 500));  // the engine's word wins over kernels
  uint32_t corr = 1;
  auto launch = [&](const char* kernel, int64_t at) {
    views.OnApiCall(Launch(at, corr));
    views.OnKernel(Kernel(kernel, 1000 + at, 1010 + at, 7, corr));
    ++corr;
  };
  launch(kPrefill, 10);
  launch(kDecode, 110);
  launch(kPrefill, 210);
  launch(kDecode, 220);
  launch(kGemm, 310);
  launch(kDecode, 410);
  const model::TraceViews v = views.Finish();
  const model::ProcessViews& p = v.processes.at(0);
  ASSERT_EQ(p.steps.size(), 5u);
  EXPECT_EQ(p.steps[0].phase, "prefill");
  EXPECT_EQ(p.steps[1].phase, "decode");
  EXPECT_EQ(p.steps[2].phase, "mixed");
  EXPECT_EQ(p.steps[3].phase, "");
  EXPECT_EQ(p.steps[4].phase, "prefill");
  ASSERT_EQ(p.phases.size(), 4u);  // prefill, decode, mixed, unknown
  EXPECT_EQ(p.phases[0].phase, "prefill");
  EXPECT_EQ(p.phases[0].duration.count, 2u);
  EXPECT_EQ(p.phases[0].gpu_time_ns, 20);
  EXPECT_EQ(p.phases[0].category_ns[static_cast<size_t>(model::Category::kAttention)], 20);
  EXPECT_EQ(p.phases[2].phase, "mixed");
  EXPECT_EQ(p.phases[2].gpu_time_ns, 20);
  EXPECT_EQ(p.phases[3].phase, "unknown");
  EXPECT_EQ(p.phases[3].category_ns[static_cast<size_t>(model::Category::kMatmul)], 10);
}

}  // namespace
}  // namespace inferscope::aggregate

// The ops view: GPU time by the CPU operator (and module) that launched it.
TEST_F(ViewCollectorTest, OpsAttributeGpuTimeToTheInnermostOperator) {
  ViewOptions options;
  options.selection.ops = true;
  options.top = 3;
  CountingSink next;
  ViewCollector views(options, &names_, &classifier_, &next);
  auto op = [&](const char* name, int64_t start, int64_t end, uint32_t tid = 1,
                model::ViewRangeKind kind = model::ViewRangeKind::kCpuOp) {
    model::ViewRangeEvent e;
    e.pid = 1;
    e.tid = tid;
    e.start_ns = start;
    e.end_ns = end;
    e.name = names_.Intern(name);
    e.kind = kind;
    views.OnViewRange(e);
  };
  // GPU work first (file order is not time order).
  views.OnKernel(Kernel(kGemm, 1000, 1400, 7, 1));  // launched at 20 in addmm in linear
  views.OnKernel(Kernel(kNorm, 1400, 1500, 7, 2));  // launched at 70 in linear itself
  model::MemcpyEvent copy;
  copy.pid = 1;
  copy.stream = 7;
  copy.start_ns = 1600;
  copy.end_ns = 1700;
  copy.correlation_id = 3;  // launched at 250 in copy_
  views.OnMemcpy(copy);
  views.OnKernel(Kernel(kGemm, 1800, 1900, 7, 4));  // launched at 400: outside every operator
  views.OnKernel(Kernel(kGemm, 1900, 1950, 8, 5));  // launched at 10 on thread 2, in mm
  views.OnKernel(Kernel(kNorm, 2000, 2010, 7, 6));  // launched at 520 in to (in to)
  views.OnKernel(Kernel(kGemm, 2100, 2200, 7, 7));  // no launch record
  for (auto [t, corr, tid] : std::vector<std::tuple<int64_t, uint32_t, uint32_t>>{
           {20, 1, 1}, {70, 2, 1}, {250, 3, 1}, {400, 4, 1}, {10, 5, 2}, {520, 6, 1}}) {
    model::ApiCallEvent a = Launch(t, corr, tid);
    if (corr == 3) a.kind = model::ApiKind::kMemcpy;
    views.OnApiCall(a);
  }
  // Operators per thread in start order, parents first, as Kineto writes them.
  op("aten::linear", 0, 100);
  op("aten::t", 5, 10);
  op("aten::addmm", 10, 60);
  op("aten::copy_", 200, 300);
  op("aten::to", 500, 600);
  op("aten::to", 510, 590);  // nested in itself: its kernel counts once in gpu_total
  op("aten::mm", 0, 50, 2);
  // Modules: two Linear instances inside the model.
  const auto kModule = model::ViewRangeKind::kModule;
  op("nn.Module: Model_0", 0, 1000, 1, kModule);
  op("nn.Module: Linear_0", 0, 150, 1, kModule);
  op("nn.Module: Linear_1", 190, 310, 1, kModule);
  EXPECT_EQ(next.events, 13);  // the GPU ops and launches go on; the view ranges do not
  const model::TraceViews v = views.Finish();
  ASSERT_EQ(v.processes.size(), 1u);
  const model::OpsView& o = v.processes[0].ops;
  EXPECT_EQ(v.processes[0].unprojected_ops, 1u);
  EXPECT_EQ(o.op_instances, 7u);
  EXPECT_EQ(o.outside_gpu_ops, 1u);
  EXPECT_EQ(o.outside_gpu_ns, 100);
  // By GPU self time, then CPU time, then name; top 3 and the rest as one row.
  ASSERT_EQ(o.ops.size(), 3u);
  const model::OpRow& addmm = o.ops[0];
  EXPECT_EQ(addmm.name, "aten::addmm");
  EXPECT_EQ(addmm.count, 1u);
  EXPECT_EQ(addmm.top_level, 0u);
  EXPECT_EQ(addmm.cpu_total_ns, 50);
  EXPECT_EQ(addmm.cpu_self_ns, 50);
  EXPECT_EQ(addmm.gpu_ops, 1u);
  EXPECT_EQ(addmm.kernels, 1u);
  EXPECT_EQ(addmm.gpu_self_ns, 400);
  EXPECT_EQ(addmm.gpu_total_ns, 400);
  const model::OpRow& copy_ = o.ops[1];
  EXPECT_EQ(copy_.name, "aten::copy_");
  EXPECT_EQ(copy_.gpu_ops, 1u);
  EXPECT_EQ(copy_.kernels, 0u);  // a memcpy
  EXPECT_EQ(copy_.gpu_self_ns, 100);
  const model::OpRow& linear = o.ops[2];
  EXPECT_EQ(linear.name, "aten::linear");
  EXPECT_EQ(linear.top_level, 1u);
  EXPECT_EQ(linear.cpu_total_ns, 100);
  EXPECT_EQ(linear.cpu_self_ns, 45);  // minus t (5) and addmm (50)
  EXPECT_EQ(linear.gpu_self_ns, 100);
  EXPECT_EQ(linear.gpu_total_ns, 500);  // its own kernel and addmm's
  // The tail: mm (50), to (10, twice, nested), t (0).
  EXPECT_EQ(o.op_tail_names, 3u);
  EXPECT_EQ(o.op_tail.count, 4u);
  EXPECT_EQ(o.op_tail.top_level, 2u);  // mm and the outer to; t is inside linear
  EXPECT_EQ(o.op_tail.gpu_self_ns, 60);
  EXPECT_EQ(o.op_tail.gpu_total_ns, 60);           // to's kernel once although two are open
  EXPECT_EQ(o.op_tail.cpu_self_ns, 50 + 100 + 5);  // to: 20 + 80
  // Modules by class, by GPU total.
  EXPECT_EQ(o.module_instances, 3u);
  ASSERT_EQ(o.modules.size(), 2u);
  EXPECT_EQ(o.modules[0].name, "Model");
  EXPECT_EQ(o.modules[0].gpu_total_ns, 400 + 100 + 100 + 100 + 10);
  EXPECT_EQ(o.modules[0].gpu_self_ns, 110);
  EXPECT_EQ(o.modules[0].cpu_self_ns, 1000 - 150 - 120);
  EXPECT_EQ(o.modules[1].name, "Linear");
  EXPECT_EQ(o.modules[1].count, 2u);
  EXPECT_EQ(o.modules[1].gpu_self_ns, 600);
  EXPECT_EQ(o.modules[1].gpu_total_ns, 600);
}

// The ranges view: Kineto's gpu_user_annotation, a range on a GPU stream.
TEST_F(ViewCollectorTest, GpuAnnotationsCountTheOpsStartingInsideOnTheirStream) {
  ViewOptions options;
  options.selection.ranges = true;
  ViewCollector views(options, &names_, &classifier_, nullptr);
  views.OnKernel(Kernel(kGemm, 1000, 1400, 7, 1));
  views.OnKernel(Kernel(kNorm, 1400, 1500, 7, 2));
  views.OnKernel(Kernel(kNorm, 1500, 1600, 7, 3));  // starts at the end: outside
  views.OnKernel(Kernel(kGemm, 1000, 1100, 9, 4));  // another stream
  auto annotation = [&](const char* name, int64_t start, int64_t end, uint32_t stream) {
    model::ViewRangeEvent e;
    e.pid = 1;
    e.device = 0;
    e.tid = stream;
    e.start_ns = start;
    e.end_ns = end;
    e.name = names_.Intern(name);
    e.kind = model::ViewRangeKind::kGpuAnnotation;
    views.OnViewRange(e);
  };
  annotation("ProfilerStep#1", 1000, 1500, 7);
  annotation("## forward ##", 1000, 1450, 7);
  annotation("## forward ##", 1005, 1300, 7);  // nested in itself: counted once
  annotation("idle", 0, 900, 8);
  const model::TraceViews v = views.Finish();
  ASSERT_EQ(v.processes.size(), 1u);
  const model::ProcessViews& p = v.processes[0];
  EXPECT_EQ(p.gpu_annotations, 4u);
  ASSERT_EQ(p.gpu_ranges.size(), 3u);
  EXPECT_EQ(p.gpu_ranges[0].name, "idle");  // by total time: 900, 745, 500
  EXPECT_EQ(p.gpu_ranges[0].gpu.ops, 0u);
  EXPECT_EQ(p.gpu_ranges[1].name, "## forward ##");
  EXPECT_EQ(p.gpu_ranges[1].duration.count, 2u);
  EXPECT_EQ(p.gpu_ranges[1].duration.total_ns, 745);
  EXPECT_EQ(p.gpu_ranges[1].gpu.ops, 2u);
  EXPECT_EQ(p.gpu_ranges[1].gpu.time_ns, 500);
  EXPECT_EQ(p.gpu_ranges[2].name, "ProfilerStep#1");
  EXPECT_EQ(p.gpu_ranges[2].gpu.ops, 2u);
  EXPECT_EQ(p.gpu_ranges[2].gpu.time_ns, 500);
  EXPECT_TRUE(p.ranges.empty());  // no host ranges
}

}  // namespace
}  // namespace inferscope::aggregate
