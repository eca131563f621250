// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The two prefill/decode splits of a trace agree: the live one (the Aggregator's steps
// between host turns, DeviceProfile::phases, what `report` shows from the agent) and the offline
// steps view (`analyze --views steps`, ProfilerStep ranges). Their steps differ in kind (a host
// turn vs a profiler range), so they agree on what both can see: the phase words, which phase
// holds the GPU time, and the GPU time in total.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include "src/pipeline/trace_pipeline.h"
#include "tests/test_traces.h"

namespace inferscope::pipeline {
namespace {

struct Split {
  std::map<std::string, int64_t> gpu_ns;  // per phase with steps
  int64_t outside_ns = 0;                 // live only
  int64_t all_ops_ns = 0;                 // live only: every GPU operation of the trace
};

// The dominant phase: the most GPU time ("" when none).
std::string Dominant(const Split& s) {
  std::string best;
  int64_t best_ns = -1;
  for (const auto& [phase, ns] : s.gpu_ns)
    if (ns > best_ns) best = phase, best_ns = ns;
  return best;
}

void ComparePhases(const std::string& relative, const std::string& want_dominant) {
  SCOPED_TRACE(relative);
  TraceOptions options;
  options.views.steps = true;
  model::KernelClassifier classifier;
  std::string failed;
  std::ostringstream err;
  auto set = ImportTraces({testing::SharedTrace(relative)}, options, classifier, &failed, err);
  ASSERT_TRUE(set.ok()) << set.status().message();
  const ImportedTrace& t = set->traces.at(0);
  Split live, offline;
  for (const model::ProcessProfile& p : t.window.processes) {
    for (const model::DeviceProfile& d : p.devices) {
      for (size_t i = 0; i < model::kPhaseCount; ++i)
        if (d.phases.phases[i].steps)
          live.gpu_ns[model::kPhaseNames[i]] += d.phases.phases[i].gpu_time_ns();
      live.outside_ns += d.phases.outside_time_ns();
      for (const model::CategoryStats& c : d.categories) live.all_ops_ns += c.time_ns;
    }
  }
  for (const model::ProcessViews& p : t.views.processes)
    for (const model::PhaseRow& row : p.phases) offline.gpu_ns[row.phase] += row.gpu_time_ns;
  ASSERT_FALSE(live.gpu_ns.empty()) << "no whole live step";
  ASSERT_FALSE(offline.gpu_ns.empty()) << "no ProfilerStep";

  // Same words; every phase the attention kernels gave a live step, the offline view has too.
  for (const auto& [phase, ns] : live.gpu_ns) {
    EXPECT_TRUE(phase == "prefill" || phase == "decode" || phase == "mixed" || phase == "unknown");
    if (phase != "unknown") {
      EXPECT_TRUE(offline.gpu_ns.count(phase)) << phase;
    }
  }
  for (const auto& [phase, ns] : offline.gpu_ns) {
    if (ns > 0) {
      EXPECT_TRUE(live.gpu_ns.count(phase)) << phase;
    }
  }
  EXPECT_EQ(Dominant(live), want_dominant);
  EXPECT_EQ(Dominant(offline), want_dominant);

  // Live, every GPU operation is in one phase or outside; offline, only those launched inside a
  // ProfilerStep are in a phase.
  int64_t live_total = live.outside_ns, offline_total = 0;
  for (const auto& [phase, ns] : live.gpu_ns) live_total += ns;
  for (const auto& [phase, ns] : offline.gpu_ns) offline_total += ns;
  EXPECT_EQ(live_total, live.all_ops_ns);
  EXPECT_LE(offline_total, live_total);
}

TEST(TracePhasesTest, LiveAndOfflineSplitsAgreeOnTheSharedTraces) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  // HF transformers on H100: SDPA prefill-shaped attention, one ProfilerStep.
  ComparePhases("TraceLens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", "prefill");
  // Training traces with ProfilerSteps and no LLM attention kernels: every step unknown.
  ComparePhases("HolisticTraceAnalysis/trace_filter/sampled_rank-0.json.gz", "unknown");
  ComparePhases("HolisticTraceAnalysis/nccl_parser_config/nccl_data.json.gz", "unknown");
  ComparePhases("HolisticTraceAnalysis/df_index_resolver/df_index_resolver.json.gz", "unknown");
  ComparePhases("TraceLens/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz", "unknown");
}

// A vLLM prefill without ProfilerSteps: only the live split sees it.
TEST(TracePhasesTest, LivePrefillOfAVllmTrace) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  TraceOptions options;
  model::KernelClassifier classifier;
  std::string failed;
  std::ostringstream err;
  auto set = ImportTraces({testing::SharedTrace("TraceLens/b200/eager_trace.json.gz")}, options,
                          classifier, &failed, err);
  ASSERT_TRUE(set.ok()) << set.status().message();
  const model::DeviceProfile& d = set->traces.at(0).window.processes.at(0).devices.at(0);
  const model::PhaseStats& prefill = d.phases.phases[static_cast<size_t>(model::Phase::kPrefill)];
  EXPECT_GE(prefill.steps, 1u);
  EXPECT_GT(prefill.category_ns[static_cast<size_t>(model::Category::kAttention)], 0);
  EXPECT_EQ(d.phases.phases[static_cast<size_t>(model::Phase::kDecode)].steps, 0u);
  // Prefill holds most of the GPU time of the capture.
  int64_t total = d.phases.outside_time_ns();
  for (const model::PhaseStats& p : d.phases.phases) total += p.gpu_time_ns();
  EXPECT_GT(2 * prefill.gpu_time_ns(), total);
}

}  // namespace
}  // namespace inferscope::pipeline
