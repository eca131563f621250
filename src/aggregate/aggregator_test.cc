// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/aggregate/aggregator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace inferscope::aggregate {
namespace {

using model::Category;
using model::KernelEvent;

constexpr const char* kGemm = "ampere_sgemm_128x64_tn";
constexpr const char* kNccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
constexpr const char* kNorm = "void vllm::rms_norm_kernel<c10::BFloat16, 8, 3>(c10::BFloat16*)";

// Builds events against one NameTable and runs them through an Aggregator in whole-trace or
// windowed mode.
class AggregatorTest : public ::testing::Test {
 protected:
  KernelEvent Kernel(const char* name, int64_t start, int64_t end, uint32_t stream = 7,
                     uint32_t correlation = 0) {
    KernelEvent k;
    k.pid = 1;
    k.device = 0;
    k.stream = stream;
    k.start_ns = start;
    k.end_ns = end;
    k.name = names_.Intern(name);
    k.correlation_id = correlation;
    return k;
  }
  model::ApiCallEvent Launch(int64_t start, int64_t end, uint32_t correlation,
                             model::ApiKind kind = model::ApiKind::kKernelLaunch) {
    model::ApiCallEvent a;
    a.pid = 1;
    a.tid = 1;
    a.start_ns = start;
    a.end_ns = end;
    a.correlation_id = correlation;
    a.kind = kind;
    a.name = names_.Intern("cudaLaunchKernel");
    return a;
  }

  model::ProfileWindow Whole(const std::function<void(model::EventSink*)>& feed,
                             AggregatorOptions options = {}) {
    return AggregateWholeTrace(options, &names_, &classifier_, feed);
  }

  static const model::DeviceProfile& OnlyDevice(const model::ProfileWindow& w) {
    EXPECT_EQ(w.processes.size(), 1u);
    EXPECT_EQ(w.processes[0].devices.size(), 1u);
    return w.processes.at(0).devices.at(0);
  }

  model::NameTable names_;
  model::KernelClassifier classifier_;
};

int64_t Cause(const model::DeviceProfile& d, model::IdleCause c) {
  return d.idle_causes.ns[static_cast<size_t>(c)];
}

TEST_F(AggregatorTest, IdleCausesFollowTheLaunchingThread) {
  using model::IdleCause;
  constexpr int64_t kUs = 1'000;
  auto api = [&](int64_t s, int64_t e, model::ApiKind kind, uint32_t corr = 0) {
    model::ApiCallEvent a = Launch(s, e, corr, kind);
    if (kind == model::ApiKind::kSync) a.sync_type = model::SyncType::kDevice;
    return a;
  };
  auto w = Whole([&](model::EventSink* s) {
    // Launch-bound: each launch call (6 us) outlasts its kernel (2 us); the queue is empty.
    s->OnApiCall(api(1, 6 * kUs, model::ApiKind::kKernelLaunch, 1));
    s->OnKernel(Kernel(kNorm, 3 * kUs, 5 * kUs, 7, 1));
    s->OnApiCall(api(7 * kUs, 13 * kUs, model::ApiKind::kKernelLaunch, 2));
    s->OnKernel(Kernel(kNorm, 10 * kUs, 12 * kUs, 7, 2));  // idle [5, 10): launch
    // A 3 ms cudaFree while the GPU is idle, then a launch.
    s->OnApiCall(api(14 * kUs, 3014 * kUs, model::ApiKind::kFree));
    s->OnApiCall(api(3020 * kUs, 3026 * kUs, model::ApiKind::kKernelLaunch, 3));
    s->OnKernel(Kernel(kGemm, 3025 * kUs, 4000 * kUs, 7, 3));  // idle [12, 3025)
    // Launched ahead (queued), then one that waits 100 us on another stream's event.
    s->OnApiCall(api(3100 * kUs, 3106 * kUs, model::ApiKind::kKernelLaunch, 4));
    s->OnKernel(Kernel(kGemm, 4002 * kUs, 5000 * kUs, 7, 4));  // idle [4000, 4002): queued
    s->OnApiCall(api(3110 * kUs, 3116 * kUs, model::ApiKind::kKernelLaunch, 5));
    s->OnKernel(Kernel(kGemm, 5100 * kUs, 6000 * kUs, 7, 5));  // idle [5000, 5100): dependency
    // A device sync returning when the GPU drains, 400 us of handling, then the next launch.
    s->OnApiCall(api(3200 * kUs, 6010 * kUs, model::ApiKind::kSync));
    s->OnApiCall(api(6410 * kUs, 6416 * kUs, model::ApiKind::kKernelLaunch, 6));
    s->OnKernel(Kernel(kGemm, 6415 * kUs, 7000 * kUs, 7, 6));  // idle [6000, 6415): sync
    // Nothing for 5 ms: no work.
    s->OnApiCall(api(12000 * kUs, 12006 * kUs, model::ApiKind::kKernelLaunch, 7));
    s->OnKernel(Kernel(kGemm, 12004 * kUs, 13000 * kUs, 7, 7));  // idle [7000, 12004)
    // No launch record.
    s->OnKernel(Kernel(kGemm, 13500 * kUs, 14000 * kUs, 7, 0));  // idle [13000, 13500)
  });
  const auto& d = OnlyDevice(w);
  EXPECT_EQ(d.idle_causes.intervals, 7u);
  EXPECT_EQ(d.idle_causes.total_ns(), d.idle_ns());  // every idle nanosecond has one cause
  // [5,10): launch. [12,3025): the end of launch 2 (1 us), 1 us of launch-paced pause, 3000 us
  // in cudaFree, a 6 us pause, the launch call until the kernel starts (5 us). [6000,6415): the
  // sync's last 10 us, 400 us handling its result, 5 us of launch. [7000,12004): the long pause
  // until 12000 (host_idle), then 4 us of launch call.
  EXPECT_EQ(Cause(d, IdleCause::kAllocation), 3000 * kUs);
  EXPECT_EQ(Cause(d, IdleCause::kLaunch), 5 * kUs + 13 * kUs + 5 * kUs + 4 * kUs);
  EXPECT_EQ(Cause(d, IdleCause::kQueued), 2 * kUs);
  EXPECT_EQ(Cause(d, IdleCause::kDependency), 100 * kUs);
  EXPECT_EQ(Cause(d, IdleCause::kSync), 410 * kUs);
  EXPECT_EQ(Cause(d, IdleCause::kHostIdle), 5000 * kUs);
  EXPECT_EQ(Cause(d, IdleCause::kUnattributed), 500 * kUs);
}

TEST_F(AggregatorTest, StepsEndWhereTheHostTakesItsTurn) {
  constexpr int64_t kUs = 1'000;
  constexpr const char* kPrefill = "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits>";
  uint32_t corr = 0;
  int64_t t = 100 * kUs;
  // Four steps: decode (2 kernels), prefill (a prefill attention kernel), decode, decode; each
  // ends with a stream sync that returns as the GPU drains, then 200 us of handling before the
  // next launch.
  auto w = Whole([&](model::EventSink* s) {
    for (int step = 0; step < 4; ++step) {
      const int64_t dur = step == 1 ? 900 * kUs : 100 * kUs;
      for (int k = 0; k < 2; ++k) {
        s->OnApiCall(Launch(t, t + 5 * kUs, ++corr));
        s->OnKernel(Kernel(step == 1 && k == 1 ? kPrefill : kGemm, t + 4 * kUs, t + 4 * kUs + dur,
                           7, corr));
        t += 4 * kUs + dur;  // the next launch call comes while the kernel runs: queued work
        t -= 3 * kUs;
      }
      model::ApiCallEvent sync = Launch(t, t + 4 * kUs, 0, model::ApiKind::kSync);
      sync.sync_type = model::SyncType::kStream;
      s->OnApiCall(sync);
      t += 4 * kUs + 200 * kUs;
    }
  });
  const auto& d = OnlyDevice(w);
  // The last step has no host turn after it: it ends with the trace, and counts too.
  EXPECT_EQ(d.steps.plain.count, 3u);
  EXPECT_EQ(d.steps.prefill.count, 1u);
  EXPECT_GT(d.steps.prefill.mean_ns(), 5 * d.steps.plain.mean_ns());
  EXPECT_EQ(d.idle_causes.total_ns(), d.idle_ns());
}

// The forward-phase split of every device of `windows`, merged (what a range query sums).
model::PhaseSplit Merged(const std::vector<model::ProfileWindow>& windows) {
  model::PhaseSplit all;
  for (const model::ProfileWindow& w : windows)
    for (const model::ProcessProfile& p : w.processes)
      for (const model::DeviceProfile& d : p.devices) all.Merge(d.phases);
  return all;
}

// Steps of two kernels each, a host turn (stream sync + 200 us) after each: prefill, decode,
// mixed (both attention kinds), unknown (GEMMs only, plus a 50 us copy), decode. The last has no
// host turn after it: it ends with the trace. `step_start` receives each step's first start.
class PhaseStepsTest : public AggregatorTest {
 public:
  static constexpr int64_t kUs = 1'000;
  static constexpr const char* kPrefill = "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits>";
  static constexpr const char* kDecode =
      "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits>";

  void Feed(model::EventSink* s, std::vector<int64_t>* step_start = nullptr,
            size_t step_count = 5) {
    const std::vector<std::pair<const char*, const char*>> steps = {
        {kGemm, kPrefill}, {kGemm, kDecode}, {kPrefill, kDecode}, {kGemm, kGemm}, {kDecode, kGemm}};
    uint32_t corr = 0;
    int64_t t = 100 * kUs;
    for (size_t step = 0; step < step_count; ++step) {
      if (step_start) step_start->push_back(t + 4 * kUs);
      for (int k = 0; k < 2; ++k) {
        s->OnApiCall(Launch(t, t + 5 * kUs, ++corr));
        s->OnKernel(Kernel(k ? steps[step].second : steps[step].first, t + 4 * kUs, t + 104 * kUs,
                           7, corr));
        t += 101 * kUs;
      }
      if (step == 3) {
        model::MemcpyEvent copy;
        copy.pid = 1;
        copy.stream = 7;
        copy.start_ns = t + 3 * kUs;
        copy.end_ns = t + 53 * kUs;
        copy.bytes = 4096;
        copy.kind = model::MemcpyKind::kDtoH;
        s->OnMemcpy(copy);
        t += 50 * kUs;
      }
      model::ApiCallEvent sync = Launch(t, t + 4 * kUs, 0, model::ApiKind::kSync);
      sync.sync_type = model::SyncType::kStream;
      s->OnApiCall(sync);
      t += 4 * kUs + 200 * kUs;
    }
  }

  std::vector<model::ProfileWindow> Windowed(int64_t window_ns, size_t step_count = 5) {
    AggregatorOptions windowed;
    windowed.window_ns = window_ns;
    std::vector<model::ProfileWindow> windows;
    Aggregator a(windowed, &names_, &classifier_,
                 [&](model::ProfileWindow&& x) { windows.push_back(std::move(x)); });
    Feed(&a, nullptr, step_count);
    a.Finish();
    return windows;
  }
};

TEST_F(PhaseStepsTest, PhasesSplitStepsByTheAttentionTheyRan) {
  auto w = Whole([&](model::EventSink* s) { Feed(s); });
  const auto& d = OnlyDevice(w);
  auto phase = [&](model::Phase p) { return d.phases.phases[static_cast<size_t>(p)]; };
  constexpr auto kAttention = static_cast<size_t>(Category::kAttention);
  constexpr auto kMatmul = static_cast<size_t>(Category::kMatmul);
  constexpr auto kMemory = static_cast<size_t>(Category::kMemory);
  for (model::Phase p : {model::Phase::kPrefill, model::Phase::kMixed}) {
    EXPECT_EQ(phase(p).steps, 1u) << model::kPhaseNames[static_cast<size_t>(p)];
    // Two back-to-back 100 us kernels 1 us apart: a 201 us step, 200 us busy.
    EXPECT_EQ(phase(p).step_ns, 201 * kUs);
    EXPECT_EQ(phase(p).busy_ns, 200 * kUs);
    EXPECT_EQ(phase(p).ops, 2u);
    EXPECT_EQ(phase(p).gpu_time_ns(), 200 * kUs);
  }
  // Two decode steps: the second and the last, which ends with the trace (its last kernel's end).
  const model::PhaseStats decode = phase(model::Phase::kDecode);
  EXPECT_EQ(decode.steps, 2u);
  EXPECT_EQ(decode.step_ns, 2 * 201 * kUs);
  EXPECT_EQ(decode.busy_ns, 400 * kUs);
  EXPECT_EQ(decode.ops, 4u);
  EXPECT_EQ(decode.category_ns[kAttention], 200 * kUs);
  EXPECT_EQ(phase(model::Phase::kPrefill).category_ns[kAttention], 100 * kUs);
  EXPECT_EQ(phase(model::Phase::kPrefill).category_ns[kMatmul], 100 * kUs);
  EXPECT_EQ(phase(model::Phase::kMixed).category_ns[kAttention], 200 * kUs);
  const model::PhaseStats unknown = phase(model::Phase::kUnknown);
  EXPECT_EQ(unknown.steps, 1u);
  EXPECT_EQ(unknown.ops, 3u);
  EXPECT_EQ(unknown.category_ns[kMatmul], 200 * kUs);
  EXPECT_EQ(unknown.category_ns[kMemory], 50 * kUs);
  EXPECT_EQ(unknown.busy_ns, 250 * kUs);
  EXPECT_EQ(unknown.step_ns, 251 * kUs);
  // Every step is whole: nothing outside.
  EXPECT_EQ(d.phases.outside_ops, 0u);
  EXPECT_EQ(d.phases.outside_time_ns(), 0);
  // Consistent with StepStats (prefill = steps with prefill attention) and with the GPU totals.
  EXPECT_EQ(d.steps.prefill.count, 2u);
  EXPECT_EQ(d.steps.plain.count, 3u);
  int64_t total = d.phases.outside_time_ns();
  for (const model::PhaseStats& p : d.phases.phases) total += p.gpu_time_ns();
  int64_t gpu_ops = 0;  // the window's categories count copies and memsets as memory too
  for (const model::CategoryStats& c : d.categories) gpu_ops += c.time_ns;
  EXPECT_EQ(total, gpu_ops);
}

TEST_F(PhaseStepsTest, AStepSpanningAWindowEdgeCountsWholeInTheWindowItEndsIn) {
  std::vector<int64_t> step_start;
  const model::ProfileWindow whole = Whole([&](model::EventSink* s) { Feed(s, &step_start); });
  const model::PhaseSplit& all = OnlyDevice(whole).phases;
  // Edges every 966 us: inside the mixed step's first kernel and inside the last step.
  const int64_t window_ns = step_start[2] + 50 * kUs;
  ASSERT_GT(step_start[4] + 201 * kUs, 2 * window_ns);
  ASSERT_LT(step_start[4], 2 * window_ns);
  const auto windows = Windowed(window_ns);
  ASSERT_EQ(windows.size(), 3u);
  const model::PhaseSplit& first = OnlyDevice(windows[0]).phases;
  const model::PhaseSplit& second = OnlyDevice(windows[1]).phases;
  const model::PhaseSplit& third = OnlyDevice(windows[2]).phases;
  // The first window: the prefill and the decode step; the mixed step's first kernel is not
  // outside but carried.
  EXPECT_EQ(first.phases[static_cast<size_t>(model::Phase::kPrefill)].steps, 1u);
  EXPECT_EQ(first.phases[static_cast<size_t>(model::Phase::kDecode)].steps, 1u);
  EXPECT_EQ(first.phases[static_cast<size_t>(model::Phase::kMixed)].steps, 0u);
  EXPECT_EQ(first.outside_ops, 0u);
  EXPECT_EQ(first.outside_time_ns(), 0);
  // The second: the mixed step whole (both kernels, its span from before the edge) and the
  // unknown step; the last decode step began in it but is carried again.
  const model::PhaseStats& mixed = second.phases[static_cast<size_t>(model::Phase::kMixed)];
  EXPECT_EQ(mixed.steps, 1u);
  EXPECT_EQ(mixed.ops, 2u);
  EXPECT_EQ(mixed.step_ns, 201 * kUs);
  EXPECT_EQ(mixed.busy_ns, 200 * kUs);
  EXPECT_EQ(mixed.gpu_time_ns(), 200 * kUs);
  EXPECT_EQ(second.phases[static_cast<size_t>(model::Phase::kUnknown)].steps, 1u);
  EXPECT_EQ(second.phases[static_cast<size_t>(model::Phase::kDecode)].steps, 0u);
  EXPECT_EQ(second.outside_ops, 0u);
  // The third: the last step, ended with the trace (Finish), whole.
  const model::PhaseStats& last = third.phases[static_cast<size_t>(model::Phase::kDecode)];
  EXPECT_EQ(last.steps, 1u);
  EXPECT_EQ(last.ops, 2u);
  EXPECT_EQ(last.step_ns, 201 * kUs);
  EXPECT_EQ(last.busy_ns, 200 * kUs);
  EXPECT_EQ(third.outside_ops, 0u);
  // The windows together: exactly the whole trace's split.
  EXPECT_EQ(Merged(windows), all);
}

TEST_F(PhaseStepsTest, WindowsOfAnyLengthGiveTheWholeTracesSplit) {
  const model::PhaseSplit all = OnlyDevice(Whole([&](model::EventSink* s) { Feed(s); })).phases;
  // Edges inside kernels, between the two kernels of a step, inside the host's turns (the idle
  // interval across an edge is still seen as the turn that ends the step) and in the copy.
  for (int64_t window_us : {37, 61, 97, 150, 230, 333, 500, 777}) {
    const auto windows = Windowed(window_us * kUs);
    EXPECT_GT(windows.size(), 2u) << window_us;
    EXPECT_EQ(Merged(windows), all) << window_us << " us windows";
  }
}

TEST_F(PhaseStepsTest, TheFinalStepCountsAfterTheLastWindowClosed) {
  // Live: the windows are closed by time (AdvanceTo) while the last step is carried; the
  // process then ends (Finish) with no window open. The step counts in one more window.
  AggregatorOptions windowed;
  windowed.window_ns = 10'000 * kUs;
  windowed.lateness_ns = 0;
  std::vector<model::ProfileWindow> windows;
  Aggregator a(windowed, &names_, &classifier_,
               [&](model::ProfileWindow&& x) { windows.push_back(std::move(x)); });
  Feed(&a, nullptr, 2);  // prefill, decode: ~1 ms in all
  a.AdvanceTo(10'000 * kUs);
  ASSERT_EQ(windows.size(), 1u);
  const model::PhaseSplit& first = OnlyDevice(windows[0]).phases;
  EXPECT_EQ(first.phases[static_cast<size_t>(model::Phase::kPrefill)].steps, 1u);
  EXPECT_EQ(first.phases[static_cast<size_t>(model::Phase::kDecode)].steps, 0u);  // carried
  EXPECT_EQ(first.outside_ops, 0u);
  a.Finish();
  ASSERT_EQ(windows.size(), 2u);
  const model::PhaseSplit& last = OnlyDevice(windows[1]).phases;
  EXPECT_EQ(last.phases[static_cast<size_t>(model::Phase::kDecode)].steps, 1u);
  EXPECT_EQ(last.phases[static_cast<size_t>(model::Phase::kDecode)].step_ns, 201 * kUs);
  EXPECT_EQ(windows[1].start_ns, windows[0].end_ns);
}

TEST_F(PhaseStepsTest, AStepIsCarriedThroughIdleWindowsUntilTheNextHostTurn) {
  // Live windows of 1 ms closed by time (AdvanceTo emits the idle ones too); the two steps end
  // by 0.72 ms, then nothing until a kernel at 5.5 ms. Whether the idle was the host's turn is
  // that kernel's host-turn test, as in one window: the decode step is carried through the idle
  // windows and counted (its span up to its last kernel's end) in the window the test runs in.
  AggregatorOptions windowed;
  windowed.window_ns = 1'000 * kUs;
  windowed.lateness_ns = 0;
  std::vector<model::ProfileWindow> windows;
  Aggregator a(windowed, &names_, &classifier_,
               [&](model::ProfileWindow&& x) { windows.push_back(std::move(x)); });
  Feed(&a, nullptr, 2);
  a.AdvanceTo(3'000 * kUs);
  ASSERT_EQ(windows.size(), 3u);
  const auto phase = [&](size_t i, model::Phase p) {
    return OnlyDevice(windows[i]).phases.phases[static_cast<size_t>(p)];
  };
  EXPECT_EQ(phase(0, model::Phase::kPrefill).steps, 1u);
  EXPECT_EQ(phase(0, model::Phase::kDecode).steps, 0u);  // carried: it may go on
  EXPECT_TRUE(OnlyDevice(windows[1]).phases.empty());    // idle: still carried
  EXPECT_TRUE(OnlyDevice(windows[2]).phases.empty());
  // The lone GEMM (no launch record, after 4.8 ms: the host's turn) ends the decode step, and is
  // a step of its own, counted at the end.
  a.OnKernel(Kernel(kGemm, 5'500 * kUs, 5'600 * kUs));
  a.Finish();
  ASSERT_EQ(windows.size(), 5u);  // [3 ms, 4 ms) was open, idle; then [5 ms, 6 ms)
  EXPECT_TRUE(OnlyDevice(windows[3]).phases.empty());
  EXPECT_EQ(phase(4, model::Phase::kDecode).steps, 1u);
  EXPECT_EQ(phase(4, model::Phase::kDecode).step_ns, 201 * kUs);
  EXPECT_EQ(phase(4, model::Phase::kDecode).busy_ns, 200 * kUs);
  EXPECT_EQ(phase(4, model::Phase::kUnknown).steps, 1u);
  EXPECT_EQ(phase(4, model::Phase::kUnknown).ops, 1u);
}

// The two ways window edges split steps analyze sees whole (the shared HTA traces showed both:
// 52 or 54 live steps for analyze's 50 on trace_filter/sampled_rank-0, depending on where the
// edges fell).
TEST_F(PhaseStepsTest, AKernelWaitingThroughAnIdleWindowContinuesItsStep) {
  // Both kernels are launched at once; the second waits 2.3 ms for something else (a peer, an
  // event) while the host polls an event at 1.5 ms: the host was ahead, no host turn, one step.
  // With 1 ms windows the device idles through [1 ms, 2 ms), which must not end the step.
  const auto feed = [&](model::EventSink* s) {
    s->OnApiCall(Launch(100 * kUs, 105 * kUs, 1));
    s->OnApiCall(Launch(110 * kUs, 115 * kUs, 2));
    s->OnApiCall(Launch(1'500 * kUs, 1'502 * kUs, 3, model::ApiKind::kQuery));
    s->OnKernel(Kernel(kGemm, 120 * kUs, 220 * kUs, 7, 1));
    s->OnKernel(Kernel(kDecode, 2'500 * kUs, 2'600 * kUs, 7, 2));
  };
  const model::PhaseSplit whole = OnlyDevice(Whole(feed)).phases;
  EXPECT_EQ(whole.phases[static_cast<size_t>(model::Phase::kDecode)].steps, 1u);
  for (int64_t window_us : {1'000, 700, 333}) {
    AggregatorOptions windowed;
    windowed.window_ns = window_us * kUs;
    std::vector<model::ProfileWindow> windows;
    Aggregator a(windowed, &names_, &classifier_,
                 [&](model::ProfileWindow&& x) { windows.push_back(std::move(x)); });
    feed(&a);
    a.Finish();
    EXPECT_EQ(Merged(windows), whole) << window_us << " us windows";
  }
}

TEST_F(PhaseStepsTest, AnOperationRunningAcrossAnEdgeLeavesNoIdleGapBehindIt) {
  // A long copy-like kernel [0.1, 1.5) ms on stream 7 spans the 1 ms edge; kernels on stream 8
  // run inside it, 100 us apart. The device is busy throughout: no idle gap (which, past the
  // 50 us host pause, would be a host turn without a launch record), one step of 1.4 ms busy,
  // then the host's turn (1.5 ms idle) and a second step.
  AggregatorOptions options;
  options.host_pause_threshold_ns = 50 * kUs;
  const auto feed = [&](model::EventSink* s) {
    s->OnKernel(Kernel(kGemm, 100 * kUs, 1'500 * kUs, 7));
    s->OnKernel(Kernel(kGemm, 1'100 * kUs, 1'200 * kUs, 8));
    s->OnKernel(Kernel(kGemm, 1'300 * kUs, 1'400 * kUs, 8));
    s->OnKernel(Kernel(kGemm, 3'000 * kUs, 3'100 * kUs, 8));
  };
  const model::PhaseSplit whole = OnlyDevice(Whole(feed, options)).phases;
  const model::PhaseStats& steps = whole.phases[static_cast<size_t>(model::Phase::kUnknown)];
  EXPECT_EQ(steps.steps, 2u);
  EXPECT_EQ(steps.busy_ns, 1'400 * kUs + 100 * kUs);
  options.window_ns = 1'000 * kUs;
  std::vector<model::ProfileWindow> windows;
  Aggregator a(options, &names_, &classifier_,
               [&](model::ProfileWindow&& x) { windows.push_back(std::move(x)); });
  feed(&a);
  a.Finish();
  ASSERT_EQ(windows.size(), 3u);  // [2 ms, 3 ms) held nothing
  EXPECT_EQ(Merged(windows), whole);
}

TEST_F(PhaseStepsTest, AStepLongerThanTheCarryLimitIsCutAsOutside) {
  // No host turn for 3.5 ms: back-to-back kernels from 0.1 to 3.6 ms, in 1 ms windows; then a
  // lone kernel at 5 ms after a long idle (the host's turn).
  const auto run = [&](int64_t max_carry_ns) {
    AggregatorOptions windowed;
    windowed.window_ns = 1'000 * kUs;
    windowed.max_step_carry_ns = max_carry_ns;
    std::vector<model::ProfileWindow> windows;
    Aggregator a(windowed, &names_, &classifier_,
                 [&](model::ProfileWindow&& x) { windows.push_back(std::move(x)); });
    for (int64_t t = 100; t < 3'600; t += 100) a.OnKernel(Kernel(kGemm, t * kUs, (t + 100) * kUs));
    a.OnKernel(Kernel(kGemm, 5'000 * kUs, 5'100 * kUs));
    a.Finish();
    EXPECT_EQ(windows.size(), 5u);  // 4 active windows, then [5 ms, 6 ms)
    return Merged(windows).phases[static_cast<size_t>(model::Phase::kUnknown)];
  };
  // Within the limit: carried over three edges, counted whole (35 kernels), then the lone one.
  const model::PhaseStats carried = run(60'000'000'000);
  EXPECT_EQ(carried.steps, 2u);
  EXPECT_EQ(carried.ops, 36u);
  EXPECT_EQ(carried.step_ns, 3'500 * kUs + 100 * kUs);
  // A 2.5 ms limit: at the third edge (3 ms) the step has run 2.9 ms and is cut: its work is
  // outside (in windows without a whole step, so not stored), only the lone kernel is a step.
  const model::PhaseStats cut = run(2'500 * kUs);
  EXPECT_EQ(cut.steps, 1u);
  EXPECT_EQ(cut.ops, 1u);
}

TEST_F(AggregatorTest, TemporalBreakdownUsesUnionsNotSums) {
  // gemm [100,200) on stream 7, all-reduce [150,300) on stream 9, gemm [400,500).
  auto w = Whole([&](model::EventSink* s) {
    s->OnKernel(Kernel(kGemm, 100, 200));
    s->OnKernel(Kernel(kNccl, 150, 300, 9));
    s->OnKernel(Kernel(kGemm, 400, 500));
  });
  const auto& d = OnlyDevice(w);
  EXPECT_EQ(d.span_ns(), 400);
  EXPECT_EQ(d.busy_ns, 300);
  EXPECT_EQ(d.idle_ns(), 100);
  EXPECT_EQ(d.compute_ns, 200);
  EXPECT_EQ(d.non_compute_ns(), 100);
  EXPECT_EQ(d.communication_ns, 150);
  EXPECT_EQ(d.communication_overlap_ns, 50);
  EXPECT_EQ(d.kernel_count, 3u);
  EXPECT_EQ(d.categories[static_cast<size_t>(Category::kMatmul)].time_ns, 200);
  EXPECT_EQ(d.categories[static_cast<size_t>(Category::kMatmul)].count, 2u);
  EXPECT_EQ(d.categories[static_cast<size_t>(Category::kCommunication)].time_ns, 150);
}

TEST_F(AggregatorTest, OutOfOrderInputGivesTheSameProfile) {
  std::vector<KernelEvent> events;
  std::vector<model::ApiCallEvent> launches;
  int64_t t = 1000;
  for (uint32_t i = 1; i <= 2000; ++i) {
    const char* name = i % 3 == 0 ? kNccl : (i % 3 == 1 ? kGemm : kNorm);
    launches.push_back(Launch(t - 500, t - 400, i));
    events.push_back(Kernel(name, t, t + 300 + (i % 7) * 50, i % 3 == 0 ? 9 : 7, i));
    t += 250 + (i % 11) * 40;
  }
  auto feed_sorted = [&](model::EventSink* s) {
    for (size_t i = 0; i < events.size(); ++i) {
      s->OnApiCall(launches[i]);
      s->OnKernel(events[i]);
    }
  };
  auto shuffled_k = events;
  auto shuffled_l = launches;
  std::mt19937 rng(42);
  std::shuffle(shuffled_k.begin(), shuffled_k.end(), rng);
  std::shuffle(shuffled_l.begin(), shuffled_l.end(), rng);
  auto feed_shuffled = [&](model::EventSink* s) {
    for (const auto& k : shuffled_k) s->OnKernel(k);  // kernels before their launches, even
    for (const auto& l : shuffled_l) s->OnApiCall(l);
  };
  const auto a = Whole(feed_sorted);
  const auto b = Whole(feed_shuffled);
  const auto& da = OnlyDevice(a);
  const auto& db = OnlyDevice(b);
  EXPECT_EQ(da.busy_ns, db.busy_ns);
  EXPECT_EQ(da.compute_ns, db.compute_ns);
  EXPECT_EQ(da.communication_overlap_ns, db.communication_overlap_ns);
  EXPECT_EQ(da.idle_gaps.host_wait.total_ns, db.idle_gaps.host_wait.total_ns);
  EXPECT_EQ(da.idle_gaps.kernel_wait.count, db.idle_gaps.kernel_wait.count);
  EXPECT_EQ(da.launch.launch_delay.total_ns, db.launch.launch_delay.total_ns);
  EXPECT_EQ(da.launch.launch_delay.count, 2000u);
  EXPECT_EQ(da.timeline.busy_ns, db.timeline.busy_ns);
  ASSERT_EQ(da.top_kernels.size(), db.top_kernels.size());
  for (size_t i = 0; i < da.top_kernels.size(); ++i) {
    EXPECT_EQ(da.top_kernels[i].name, db.top_kernels[i].name);
    EXPECT_EQ(da.top_kernels[i].duration.total_ns, db.top_kernels[i].duration.total_ns);
  }
}

TEST_F(AggregatorTest, IdleGapsSplitIntoKernelWaitHostWaitAndOther) {
  AggregatorOptions options;
  options.kernel_wait_threshold_ns = 30'000;
  auto w = Whole(
      [&](model::EventSink* s) {
        s->OnApiCall(Launch(500, 600, 1));
        s->OnKernel(Kernel(kGemm, 1'000, 2'000, 7, 1));
        s->OnApiCall(Launch(700, 800, 2));
        s->OnKernel(Kernel(kGemm, 2'010, 3'000, 7, 2));      // 10 ns gap: kernel wait
        s->OnApiCall(Launch(100'000, 100'500, 3));           // launched after the stream ran dry
        s->OnKernel(Kernel(kGemm, 101'000, 110'000, 7, 3));  // host wait of 98 us
        s->OnApiCall(Launch(101'500, 102'000, 4));           // launched in time...
        s->OnKernel(Kernel(kGemm, 200'000, 210'000, 7, 4));  // ...yet started late: other
      },
      options);
  const auto& d = OnlyDevice(w);
  EXPECT_EQ(d.idle_gaps.kernel_wait.count, 1u);
  EXPECT_EQ(d.idle_gaps.kernel_wait.total_ns, 10);
  EXPECT_EQ(d.idle_gaps.host_wait.count, 1u);
  EXPECT_EQ(d.idle_gaps.host_wait.total_ns, 98'000);
  EXPECT_EQ(d.idle_gaps.other.count, 1u);
  EXPECT_EQ(d.idle_gaps.other.total_ns, 90'000);
  EXPECT_EQ(d.launch.cpu_launch.count, 4u);
  EXPECT_EQ(d.launch.cpu_launch.total_ns, 100 + 100 + 500 + 500);
  EXPECT_EQ(d.launch.launch_delay.max_ns, 200'000 - 101'500);
}

TEST_F(AggregatorTest, SyncRecordsNameTheKernelWaitedOnAndWinOverApiCalls) {
  auto w = Whole([&](model::EventSink* s) {
    s->OnKernel(Kernel(kGemm, 1'000, 5'000));
    s->OnKernel(Kernel(kNorm, 5'000, 9'000));
    model::SyncEvent sync;
    sync.pid = 1;
    sync.device = 0;
    sync.stream = 7;
    sync.type = model::SyncType::kStream;
    sync.start_ns = 2'000;
    sync.end_ns = 9'100;
    s->OnSync(sync);
    model::ApiCallEvent call = Launch(1'990, 9'200, 0, model::ApiKind::kSync);
    call.sync_type = model::SyncType::kStream;
    s->OnApiCall(call);  // the same wait seen as an API call: must not count twice
  });
  const auto& d = OnlyDevice(w);
  const auto& stream_sync = d.syncs[static_cast<size_t>(model::SyncType::kStream)];
  EXPECT_EQ(stream_sync.wait.count, 1u);
  EXPECT_EQ(stream_sync.wait.total_ns, 7'100);
  ASSERT_EQ(stream_sync.waited_on.size(), 1u);
  EXPECT_EQ(stream_sync.waited_on[0].kernel_name, kNorm);
}

TEST_F(AggregatorTest, BlockingApiCallsAreUsedWhenThereAreNoSyncRecords) {
  auto w = Whole([&](model::EventSink* s) {
    s->OnKernel(Kernel(kGemm, 1'000, 5'000));
    model::ApiCallEvent call = Launch(2'000, 5'100, 0, model::ApiKind::kSync);
    call.sync_type = model::SyncType::kDevice;
    s->OnApiCall(call);
  });
  const auto& d = OnlyDevice(w);
  const auto& device_sync = d.syncs[static_cast<size_t>(model::SyncType::kDevice)];
  EXPECT_EQ(device_sync.wait.count, 1u);
  EXPECT_EQ(device_sync.wait.total_ns, 3'100);
  ASSERT_EQ(device_sync.waited_on.size(), 1u);
  EXPECT_EQ(device_sync.waited_on[0].kernel_name, kGemm);
}

TEST_F(AggregatorTest, CopiesAndMemsetsAreMemoryAndBusyTime) {
  auto w = Whole([&](model::EventSink* s) {
    model::MemcpyEvent c;
    c.pid = 1;
    c.stream = 7;
    c.start_ns = 100;
    c.end_ns = 1'100;
    c.bytes = 4096;
    c.kind = model::MemcpyKind::kHtoD;
    c.pageable = true;
    s->OnMemcpy(c);
    model::MemsetEvent m;
    m.pid = 1;
    m.stream = 7;
    m.start_ns = 2'000;
    m.end_ns = 2'500;
    m.bytes = 64;
    s->OnMemset(m);
  });
  const auto& d = OnlyDevice(w);
  const auto& htod = d.memcpy[static_cast<size_t>(model::MemcpyKind::kHtoD)];
  EXPECT_EQ(htod.count, 1u);
  EXPECT_EQ(htod.bytes, 4096u);
  EXPECT_EQ(htod.pageable_count, 1u);
  EXPECT_EQ(d.memset.bytes, 64u);
  EXPECT_EQ(d.busy_ns, 1'500);
  EXPECT_EQ(d.compute_ns, 0);
  EXPECT_EQ(d.categories[static_cast<size_t>(Category::kMemory)].time_ns, 1'500);
  EXPECT_EQ(d.subcategories.at("memory.memcpy_htod").count, 1u);
  EXPECT_EQ(d.subcategories.at("memory.memset").time_ns, 500);
}

TEST_F(AggregatorTest, InvalidTimestampsAreCountedAndLeftOut) {
  auto w = Whole([&](model::EventSink* s) {
    s->OnKernel(Kernel(kGemm, 100, 200));
    s->OnKernel(Kernel(kGemm, 0, 200));    // zero start
    s->OnKernel(Kernel(kGemm, 500, 400));  // reversed
  });
  ASSERT_EQ(w.processes.size(), 1u);
  const auto& q = w.processes[0].data_quality;
  EXPECT_EQ(q[static_cast<size_t>(model::DataQuality::kZeroTimestamp)], 1u);
  EXPECT_EQ(q[static_cast<size_t>(model::DataQuality::kReversedTimestamp)], 1u);
  EXPECT_EQ(w.processes[0].devices[0].kernel_count, 1u);
}

TEST_F(AggregatorTest, TopKKeepsTheHeaviestAndFoldsTheTail) {
  AggregatorOptions options;
  options.top_k = 2;
  auto w = Whole(
      [&](model::EventSink* s) {
        s->OnKernel(Kernel(kGemm, 100, 1'100));
        s->OnKernel(Kernel(kNorm, 2'000, 2'500));
        s->OnKernel(Kernel(kNccl, 3'000, 3'100));
      },
      options);
  const auto& d = OnlyDevice(w);
  ASSERT_EQ(d.top_kernels.size(), 2u);
  EXPECT_EQ(d.top_kernels[0].name, kGemm);
  EXPECT_EQ(d.top_kernels[1].name, kNorm);
  EXPECT_EQ(d.tail.distinct_names, 1u);
  EXPECT_EQ(d.tail.duration.total_ns, 100);
}

TEST_F(AggregatorTest, TimelineBinsClipKernelsAtBinEdges) {
  AggregatorOptions options;
  options.bin_ns = 100;
  auto w = Whole(
      [&](model::EventSink* s) {
        s->OnKernel(Kernel(kGemm, 1'000, 1'150));  // origin 1000: 100 in bin 0, 50 in bin 1
        s->OnKernel(Kernel(kNorm, 1'120, 1'180));
      },
      options);
  const auto& t = OnlyDevice(w).timeline;
  ASSERT_EQ(t.busy_ns.size(), 2u);
  EXPECT_EQ(t.origin_ns, 1'000);
  EXPECT_EQ(t.busy_ns[0], 100);
  EXPECT_EQ(t.busy_ns[1], 80);
  EXPECT_EQ(t.category_ns[1][static_cast<size_t>(Category::kMatmul)], 50);
  EXPECT_EQ(t.category_ns[1][static_cast<size_t>(Category::kNormalization)], 60);
}

// Without --bin the timeline's bin comes from the span, so a 300 ms trace gets a
// timeline worth looking at (not three 100 ms bins) and a long one is never cut.
TEST_F(AggregatorTest, AutoBinFollowsTheSpan) {
  EXPECT_EQ(AutoBinNs(300'000'000, 450), 1'000'000);             // 667 us -> 1 ms
  EXPECT_EQ(AutoBinNs(3'600'000'000'000, 450), 10'000'000'000);  // 8 s -> 10 s
  EXPECT_EQ(AutoBinNs(5'000, 450), 1'000);                       // never under 1 us
  EXPECT_EQ(AutoBinNs(9'000'000, 450), 20'000);                  // exactly 20 us
  AggregatorOptions options;
  options.auto_bins = 500;
  auto w = Whole(
      [&](model::EventSink* s) {
        for (int i = 0; i < 300; ++i)  // 300 ms of 0.5 ms kernels every 1 ms
          s->OnKernel(Kernel(kGemm, 1'000'000'000 + i * 1'000'000, 1'000'500'000 + i * 1'000'000));
      },
      options);
  const auto& t = OnlyDevice(w).timeline;
  EXPECT_EQ(t.bin_ns, 1'000'000);
  EXPECT_EQ(t.busy_ns.size(), 300u);
  EXPECT_FALSE(t.truncated);
  EXPECT_EQ(t.busy_ns[7], 500'000);
}

TEST_F(AggregatorTest, WindowedModeEmitsOneWindowPerIntervalAndCountsLateRecords) {
  AggregatorOptions options;
  options.window_ns = 1'000'000;
  options.lateness_ns = 0;  // no reordering horizon: anything behind is late
  std::vector<model::ProfileWindow> windows;
  Aggregator aggregator(options, &names_, &classifier_,
                        [&](model::ProfileWindow&& w) { windows.push_back(std::move(w)); });
  for (int i = 0; i < 10'000; ++i)  // enough to trigger draining mid-stream
    aggregator.OnKernel(Kernel(kGemm, 1'000 + i * 100, 1'050 + i * 100));
  aggregator.OnKernel(Kernel(kGemm, 500, 600));  // behind everything already processed
  aggregator.Finish();
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].start_ns, 0);
  EXPECT_EQ(windows[0].end_ns, 1'000'000);
  EXPECT_EQ(windows[1].start_ns, 1'000'000);
  uint64_t kernels = 0, late = 0;
  for (const auto& w : windows) {
    kernels += w.processes[0].devices[0].kernel_count;
    late += w.processes[0].data_quality[static_cast<size_t>(model::DataQuality::kLateRecord)];
  }
  EXPECT_EQ(kernels, 10'001u);
  EXPECT_EQ(late, 1u);
}

}  // namespace
}  // namespace inferscope::aggregate

namespace inferscope::aggregate {
namespace {

TEST_F(AggregatorTest, ALateRecordNeverReopensAnEmittedWindow) {
  AggregatorOptions options;
  options.window_ns = 1'000'000;
  options.lateness_ns = 0;
  std::vector<model::ProfileWindow> windows;
  Aggregator aggregator(options, &names_, &classifier_,
                        [&](model::ProfileWindow&& w) { windows.push_back(std::move(w)); });
  for (int i = 0; i < 9'000; ++i)  // fills [0, 1 ms) and starts [1 ms, 2 ms)
    aggregator.OnKernel(Kernel(kGemm, 1'000 + i * 120, 1'050 + i * 120));
  aggregator.Finish();                           // emits both windows
  aggregator.OnKernel(Kernel(kGemm, 500, 600));  // belongs to [0, 1 ms), long gone
  aggregator.Finish();
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_EQ(windows[2].start_ns, 2'000'000);  // folded into the next window, not [0, 1 ms)
  EXPECT_EQ(windows[2].processes[0].devices[0].kernel_count, 1u);
  EXPECT_EQ(
      windows[2].processes[0].data_quality[static_cast<size_t>(model::DataQuality::kLateRecord)],
      1u);
}

TEST_F(AggregatorTest, AdvanceToEmitsWindowsOnTimeEvenWhenTheGpuGoesIdle) {
  AggregatorOptions options;
  options.window_ns = 1'000'000;
  options.lateness_ns = 100'000;
  std::vector<model::ProfileWindow> windows;
  Aggregator aggregator(options, &names_, &classifier_,
                        [&](model::ProfileWindow&& w) { windows.push_back(std::move(w)); });
  aggregator.OnKernel(Kernel(kGemm, 200'000, 300'000));
  aggregator.AdvanceTo(1'050'000);  // window [0, 1 ms) ended, but within the lateness horizon
  EXPECT_TRUE(windows.empty());
  aggregator.AdvanceTo(1'100'001);
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0].processes[0].devices[0].kernel_count, 1u);
  aggregator.AdvanceTo(3'200'000);  // two idle windows follow
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_EQ(windows[2].start_ns, 2'000'000);
  ASSERT_EQ(windows[2].processes.size(), 1u);
  EXPECT_EQ(windows[2].processes[0].devices[0].kernel_count, 0u);
  EXPECT_EQ(windows[2].processes[0].devices[0].busy_ns, 0);
}

TEST_F(AggregatorTest, SyncRecordsOfNonBlockingQueriesAreNotWaits) {
  auto w = Whole([&](model::EventSink* s) {
    s->OnKernel(Kernel(kGemm, 1'000, 5'000));
    model::ApiCallEvent query = Launch(2'000, 2'100, 77, model::ApiKind::kQuery);
    s->OnApiCall(query);
    model::SyncEvent record;
    record.pid = 1;
    record.correlation_id = 77;
    record.type = model::SyncType::kEvent;
    record.start_ns = 2'010;
    record.end_ns = 2'090;
    s->OnSync(record);
  });
  const auto& d = OnlyDevice(w);
  EXPECT_EQ(d.syncs[static_cast<size_t>(model::SyncType::kEvent)].wait.count, 0u);
}

TEST_F(AggregatorTest, TheBlockingCallNamesTheSyncTypeOfItsRecord) {
  // Some Nsight versions record cudaDeviceSynchronize as an event synchronization.
  auto w = Whole([&](model::EventSink* s) {
    s->OnKernel(Kernel(kGemm, 1'000, 5'000));
    model::ApiCallEvent call = Launch(2'000, 5'200, 78, model::ApiKind::kSync);
    call.sync_type = model::SyncType::kDevice;
    s->OnApiCall(call);
    model::SyncEvent record;
    record.pid = 1;
    record.correlation_id = 78;
    record.type = model::SyncType::kEvent;
    record.start_ns = 2'010;
    record.end_ns = 5'100;
    s->OnSync(record);
  });
  const auto& d = OnlyDevice(w);
  EXPECT_EQ(d.syncs[static_cast<size_t>(model::SyncType::kEvent)].wait.count, 0u);
  EXPECT_EQ(d.syncs[static_cast<size_t>(model::SyncType::kDevice)].wait.count, 1u);
  EXPECT_EQ(d.syncs[static_cast<size_t>(model::SyncType::kDevice)].wait.total_ns, 3'090);
}

TEST_F(AggregatorTest, ANestedTwinOfTheSameCallCountsOnce) {
  auto w = Whole([&](model::EventSink* s) {
    s->OnKernel(Kernel(kGemm, 1'000, 5'000));
    s->OnApiCall(Launch(100, 2'000'100, 135, model::ApiKind::kMalloc));  // cudaMalloc
    s->OnApiCall(Launch(200, 2'000'000, 135, model::ApiKind::kMalloc));  // cudaMalloc_v3020
  });
  const auto& a = OnlyDevice(w).allocations;
  EXPECT_EQ(a.malloc_calls.count, 1u);
  EXPECT_EQ(a.slow_calls, 1u);
}

// Step ranges (AggregatorOptions::step_ranges): two steps named as the engines name them, work
// on two streams, some launched outside every step.
class StepRangesTest : public AggregatorTest {
 public:
  static constexpr int64_t kUs = 1'000;
  static constexpr const char* kPrefill = "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits>";
  static constexpr const char* kDecode =
      "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits>";

  model::NvtxEvent Range(const char* name, int64_t start, int64_t end) {
    model::NvtxEvent r;
    r.pid = 1;
    r.tid = 1;
    r.start_ns = start;
    r.end_ns = end;
    r.name = names_.Intern(name);
    return r;
  }
  void LaunchKernel(model::EventSink* s, uint32_t corr, int64_t call, const char* name,
                    int64_t start, int64_t end, uint32_t stream = 7) {
    s->OnApiCall(Launch(call, call + 5 * kUs, corr));
    s->OnKernel(Kernel(name, start, end, stream, corr));
  }
  // Ranges are delivered when they end, as CUPTI's marker records and the importers do.
  void Feed(model::EventSink* s) {
    LaunchKernel(s, 1, 10 * kUs, kGemm, 20 * kUs, 60 * kUs);  // before any step: outside
    // Step A: TensorRT-LLM's context-only iteration; its decode-shaped attention kernel runs on
    // another stream after the range ended and after step B's first kernel started.
    LaunchKernel(s, 2, 120 * kUs, kGemm, 150 * kUs, 250 * kUs);
    LaunchKernel(s, 3, 200 * kUs, kDecode, 600 * kUs, 700 * kUs, /*stream=*/8);
    s->OnNvtx(Range("[Executor] _forward_step 1: 1 ctx reqs, 0 gen reqs", 100 * kUs, 400 * kUs));
    // Step B: a ProfilerStep; its phase comes from its prefill attention kernel.
    LaunchKernel(s, 4, 520 * kUs, kPrefill, 550 * kUs, 650 * kUs);
    s->OnApiCall(Launch(530 * kUs, 535 * kUs, 5, model::ApiKind::kMemcpy));
    model::MemcpyEvent copy;
    copy.pid = 1;
    copy.stream = 7;
    copy.start_ns = 660 * kUs;
    copy.end_ns = 700 * kUs;
    copy.correlation_id = 5;
    copy.kind = model::MemcpyKind::kDtoH;
    s->OnMemcpy(copy);
    s->OnNvtx(Range("ProfilerStep#2", 500 * kUs, 800 * kUs));
    LaunchKernel(s, 6, 900 * kUs, kGemm, 950 * kUs, 1000 * kUs);  // after the steps: outside
  }
  AggregatorOptions Options() {
    AggregatorOptions o;
    o.step_ranges = true;
    return o;
  }
  std::vector<model::ProfileWindow> Windowed(AggregatorOptions o, int64_t window_ns) {
    o.window_ns = window_ns;
    std::vector<model::ProfileWindow> windows;
    Aggregator a(o, &names_, &classifier_,
                 [&](model::ProfileWindow&& x) { windows.push_back(std::move(x)); });
    Feed(&a);
    a.Finish();
    return windows;
  }
};

TEST_F(StepRangesTest, TheRangesAreTheStepsAndTheirNamesTheirPhases) {
  const auto w = Whole([&](model::EventSink* s) { Feed(s); }, Options());
  const model::DeviceProfile& d = OnlyDevice(w);
  const model::PhaseStats& prefill = d.phases.phases[static_cast<size_t>(model::Phase::kPrefill)];
  // A (prefill by its name, whatever its decode-shaped kernel says) and B (prefill by its
  // kernel): the ranges' spans, each op by its launching call, the late op on stream 8 included.
  EXPECT_EQ(prefill.steps, 2u);
  EXPECT_EQ(prefill.step_ns, 600 * kUs);
  EXPECT_EQ(prefill.ops, 4u);
  EXPECT_EQ(prefill.busy_ns, 200 * kUs + 140 * kUs);  // A: 150-250, 600-700; B: 550-650, 660-700
  EXPECT_EQ(prefill.category_ns[static_cast<size_t>(Category::kAttention)], 200 * kUs);
  EXPECT_EQ(prefill.category_ns[static_cast<size_t>(Category::kMatmul)], 100 * kUs);
  EXPECT_EQ(prefill.category_ns[static_cast<size_t>(Category::kMemory)], 40 * kUs);
  for (model::Phase p : {model::Phase::kDecode, model::Phase::kMixed, model::Phase::kUnknown})
    EXPECT_EQ(d.phases.phases[static_cast<size_t>(p)].steps, 0u);
  // The kernels launched before and after the steps are outside; no host-turn step counts.
  EXPECT_EQ(d.phases.outside_ops, 2u);
  EXPECT_EQ(d.phases.outside_time_ns(), 90 * kUs);
  EXPECT_EQ(d.steps.prefill.count, 2u);
  EXPECT_EQ(d.steps.plain.count, 0u);

  // Without the option the same events give host-turn steps, phases from the kernels.
  const auto plain = Whole([&](model::EventSink* s) { Feed(s); });
  EXPECT_NE(OnlyDevice(plain).phases, d.phases);
}

TEST_F(StepRangesTest, WindowsGiveTheWholeTracesSplit) {
  const model::PhaseSplit all =
      OnlyDevice(Whole([&](model::EventSink* s) { Feed(s); }, Options())).phases;
  for (int64_t window_us : {37, 100, 150, 300, 333, 450}) {
    const auto windows = Windowed(Options(), window_us * kUs);
    EXPECT_GT(windows.size(), 2u) << window_us;
    EXPECT_EQ(Merged(windows), all) << window_us << " us windows";
  }
}

TEST_F(StepRangesTest, AStepIsSettledStepSettleNsAfterItsEnd) {
  // Settled 50 us after its end: step A (ends at 400 us) counts when the window ending at 600 us
  // closes, before its kernel on stream 8 (starting at 600 us) arrives: that one is outside.
  AggregatorOptions o = Options();
  o.step_settle_ns = 50 * kUs;
  const auto windows = Windowed(o, 300 * kUs);
  ASSERT_GE(windows.size(), 2u);
  EXPECT_EQ(windows[1].end_ns, 600 * kUs);
  const model::PhaseSplit& second = OnlyDevice(windows[1]).phases;
  EXPECT_EQ(second.phases[static_cast<size_t>(model::Phase::kPrefill)].steps, 1u);
  EXPECT_EQ(second.phases[static_cast<size_t>(model::Phase::kPrefill)].ops, 1u);
  const model::PhaseSplit all = Merged(windows);
  EXPECT_EQ(all.phases[static_cast<size_t>(model::Phase::kPrefill)].steps, 2u);
  EXPECT_EQ(all.phases[static_cast<size_t>(model::Phase::kPrefill)].ops, 3u);
  EXPECT_EQ(all.outside_ops, 3u);
  EXPECT_EQ(all.outside_time_ns(), 190 * kUs);
}

}  // namespace
}  // namespace inferscope::aggregate
