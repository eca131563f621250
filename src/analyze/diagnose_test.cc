// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/analyze/diagnose.h"

#include <gtest/gtest.h>

#include "src/analyze/analysis.h"
#include "src/analyze/test_profiles.h"

namespace inferscope::analyze {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;

// A hand-built single-rank analysis over 1 s that crosses no threshold: busy 70%, the idle time in
// back-to-back kernel-wait gaps, kernel time spread over matmul / attention / elementwise, no
// syncs, copies, allocations or communication. Each test bends one part of it.
class DiagnoseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_.ranks.resize(1);
    RankAnalysis& r = a_.ranks[0];
    for (const char* kind : {"host_wait", "kernel_wait", "other"}) {
      r.idle_gaps.push_back({kind, 0, 0, 0, 0});
    }
    for (const char* type : model::kSyncTypeNames) r.syncs.push_back({type, 0, 0, 0, 0, {}});
    for (const char* dir : {"unknown", "htod", "dtoh", "dtod", "htoh", "ptop", "memset"})
      r.transfers.push_back({dir, 0, 0, 0, 0, 0});
    r.kernel_count = 1000;
    r.launch.cpu_launch_count = 1000;
    r.launch.cpu_launch_total_ns = 5 * kMs;
    a_.summary.rank_count = 1;
    for (const char* c : model::kCategoryNames) a_.summary.categories.push_back({c, 0, 0, 0});
    a_.summary.idle_gaps = r.idle_gaps;
    SetBusy(70);
    SetGaps(0, 0, 1000, 300 * kMs, 0, 0);
    SetKernelTime({{"matmul", 40}, {"attention", 30}, {"elementwise", 30}});
    AddKernel("ampere_bf16_gemm", "gemm", "matmul", "matmul.cublas", 25, 500, 200 * kUs);
    AddKernel("flash_fwd_kernel", "flash::flash_fwd_kernel", "attention", "attention.prefill", 20,
              100, 200 * kUs);
  }

  void SetBusy(double busy_pct) {
    TemporalBreakdown& t = a_.summary.temporal;
    t.span_ns = 1000 * kMs;
    t.busy_ns = static_cast<int64_t>(busy_pct * 10 * kMs);
    t.compute_ns = t.busy_ns;
    t.Finalize();
    a_.summary.span_ns = t.span_ns;
    a_.ranks[0].temporal = t;
  }

  void SetGaps(uint64_t host_n, int64_t host_ns, uint64_t kernel_n, int64_t kernel_ns,
               uint64_t other_n, int64_t other_ns) {
    auto& g = a_.summary.idle_gaps;
    g[0].count = host_n, g[0].total_ns = host_ns;
    g[1].count = kernel_n, g[1].total_ns = kernel_ns;
    g[2].count = other_n, g[2].total_ns = other_ns;
    a_.ranks[0].idle_gaps = g;
  }

  // Category shares of the kernel time (equal to the busy time, so pct of kernel time == pct of
  // busy time); each gets a sub-category "<category>.x" holding half of it.
  void SetKernelTime(std::initializer_list<std::pair<const char*, double>> shares) {
    const int64_t kt = a_.summary.temporal.busy_ns;
    a_.summary.kernel_time_ns = kt;
    a_.summary.kernel_count = 1000;
    a_.summary.subcategories.clear();
    for (CategoryRow& c : a_.summary.categories) c.time_ns = 0, c.pct = 0;
    for (const auto& [name, pct] : shares) {
      for (CategoryRow& c : a_.summary.categories)
        if (c.name == name) c.pct = pct, c.time_ns = static_cast<int64_t>(pct / 100 * kt);
      a_.summary.subcategories.push_back(
          {std::string(name) + ".x", static_cast<int64_t>(pct / 200 * kt), 10, pct / 2});
    }
    a_.summary.communication_ns = 0;
    for (const auto& [name, pct] : shares)
      if (std::string_view(name) == "communication")
        a_.summary.communication_ns = static_cast<int64_t>(pct / 100 * kt);
    a_.ranks[0].kernel_time_ns = kt;
  }

  // The causal idle split of the job (ms per cause, model::kIdleCauseNames names).
  void SetCauses(std::initializer_list<std::pair<const char*, int64_t>> ms) {
    auto& rows = a_.summary.idle_causes;
    rows.clear();
    for (const char* c : model::kIdleCauseNames) rows.push_back({c, 0, 0});
    for (const auto& [name, v] : ms)
      for (IdleCauseRow& r : rows)
        if (r.cause == name) r.total_ns = v * kMs;
    a_.ranks[0].idle_causes = rows;
  }

  void SetSubcategory(const char* name, double pct) {
    const int64_t ns = static_cast<int64_t>(pct / 100 * a_.summary.kernel_time_ns);
    for (CategoryRow& s : a_.summary.subcategories)
      if (s.name == name) {
        s.pct = pct, s.time_ns = ns;
        return;
      }
    a_.summary.subcategories.push_back({name, ns, 10, pct});
  }

  void AddKernel(const char* name, const char* display, const char* category, const char* sub,
                 double pct, uint64_t count, int64_t mean_ns) {
    KernelRow k;
    k.name = name;
    k.display_name = display;
    k.category = category;
    k.subcategory = sub;
    k.count = count;
    k.pct = pct;
    k.total_ns = static_cast<int64_t>(pct / 100 * a_.summary.kernel_time_ns);
    k.mean_ns = mean_ns;
    a_.summary.top_kernels.push_back(k);
    std::stable_sort(
        a_.summary.top_kernels.begin(), a_.summary.top_kernels.end(),
        [](const KernelRow& x, const KernelRow& y) { return x.total_ns > y.total_ns; });
  }

  Diagnosis Run() const { return Diagnose(a_, host_, t_); }

  const Finding* Find(const Diagnosis& d, std::string_view id) const {
    for (const Finding& f : d.findings)
      if (f.id == id) return &f;
    return nullptr;
  }

  static double EvidenceValue(const Finding& f, std::string_view name) {
    for (const Evidence& e : f.evidence)
      if (e.name == name) return e.value;
    ADD_FAILURE() << "no evidence " << name << " in " << f.id;
    return -1;
  }

  Analysis a_;
  HostSignals host_;
  DiagnosisThresholds t_;
};

TEST_F(DiagnoseTest, BaselineIsHealthy) {
  const Diagnosis d = Run();
  ASSERT_EQ(d.findings.size(), 1u);
  EXPECT_EQ(d.primary, "healthy");
  EXPECT_EQ(d.findings[0].severity, "info");
  EXPECT_DOUBLE_EQ(EvidenceValue(d.findings[0], "busy_pct"), 70);
  EXPECT_TRUE(d.findings[0].fixes.empty());
}

TEST_F(DiagnoseTest, EmptyAnalysisHasInsufficientEvidence) {
  const Diagnosis d = Diagnose(Analysis{}, HostSignals{}, DiagnosisThresholds{});
  ASSERT_EQ(d.findings.size(), 1u);
  EXPECT_EQ(d.primary, "insufficient_evidence");
  EXPECT_EQ(d.findings[0].severity, "info");
  EXPECT_NE(d.findings[0].summary.find("not enough GPU activity to judge: 0 kernels"),
            std::string::npos)
      << d.findings[0].summary;
}

TEST_F(DiagnoseTest, BelowTheEvidenceFloorNoRuleJudges) {
  // An Nsight export holding one 1.5 us memset beside two start-up cudaMallocs: the allocations'
  // time is "100% of the span", which made a critical allocation_stalls.
  SetBusy(0);
  TemporalBreakdown& t = a_.summary.temporal;
  t.span_ns = 1470, t.busy_ns = 1470, t.compute_ns = 0;
  t.Finalize();
  a_.ranks[0].temporal = t;
  a_.summary.kernel_count = 0;
  a_.ranks[0].kernel_count = 0;
  a_.ranks[0].transfers.back().count = 1;  // the memset
  SetGaps(0, 0, 0, 0, 0, 0);
  a_.ranks[0].allocations.slow_calls = 2;
  a_.ranks[0].allocations.slow_total_ns = 250 * kMs;
  const Diagnosis d = Run();
  EXPECT_EQ(d.primary, "insufficient_evidence");
  for (const Finding& f : d.findings) EXPECT_NE(f.severity, "critical") << f.id;
  EXPECT_EQ(Find(d, "allocation_stalls"), nullptr);
  EXPECT_NE(d.findings[0].summary.find("0 kernels and 1 GPU operation in all"), std::string::npos)
      << d.findings[0].summary;
  EXPECT_DOUBLE_EQ(EvidenceValue(d.findings[0], "gpu_operations"), 1);

  // The floor is the kernel count and the GPU work: 19 kernels is under it, 20 over 1 ms is not.
  SetBusy(70);
  a_.summary.kernel_count = 19;
  EXPECT_EQ(Run().primary, "insufficient_evidence");
  a_.summary.kernel_count = 20;
  EXPECT_NE(Run().primary, "insufficient_evidence");

  // What the host says about requests does not stand on the trace: it stays, as a note.
  a_.summary.kernel_count = 0;
  host_.queue_share_of_e2e = 0.5;
  const Diagnosis q = Run();
  EXPECT_EQ(q.primary, "insufficient_evidence");
  const Finding* batching = Find(q, "batching");
  ASSERT_NE(batching, nullptr);
  EXPECT_EQ(batching->severity, "info");
}

TEST_F(DiagnoseTest, StartupLaunchIsWarmupNotLaunchOverhead) {
  // AlexNet-like: the first launch of a module loads it (3 s), while the GPU idles; the steady
  // launches take 5 us. Counted as launch idle it made launch_overhead with CUDA graphs as fix.
  SetBusy(40);
  SetCauses({{"launch", 300}, {"host_idle", 300}});
  a_.ranks[0].launch.cpu_launch_count = 1000;
  a_.ranks[0].launch.cpu_launch_total_ns = 280 * kMs + 999 * 5 * kUs;
  a_.ranks[0].launch.cpu_launch_max_ns = 280 * kMs;
  a_.ranks[0].launch.short_kernels = 900;
  const Diagnosis d = Run();
  EXPECT_EQ(Find(d, "launch_overhead"), nullptr);  // 20 ms of steady launch idle: 2%
  ASSERT_EQ(d.findings.back().id, "warmup");
  const Finding& w = d.findings.back();
  EXPECT_EQ(w.severity, "info");
  EXPECT_NE(d.primary, "warmup");
  EXPECT_DOUBLE_EQ(EvidenceValue(w, "startup_launch_ms"), 280);
  EXPECT_DOUBLE_EQ(EvidenceValue(w, "startup_idle_ms"), 280);
  EXPECT_NEAR(EvidenceValue(w, "steady_launch_mean_us"), 5, 1e-9);
  EXPECT_TRUE(w.fixes.empty());

  // The first cudaMalloc creates the context (6 s on AlexNet): start-up, not an allocation stall.
  SetCauses({{"allocation", 400}, {"host_idle", 200}});
  a_.ranks[0].launch.cpu_launch_max_ns = 0;
  a_.ranks[0].allocations.slow_calls = 3;
  a_.ranks[0].allocations.slow_total_ns = 390 * kMs;
  a_.ranks[0].allocations.malloc_max_ns = 350 * kMs;
  const Diagnosis alloc = Run();
  const Finding* stalls = Find(alloc, "allocation_stalls");
  ASSERT_NE(stalls, nullptr);
  EXPECT_NEAR(stalls->score, 0.05, 1e-9);  // 400 - 350 ms of idle, not 40%
  EXPECT_DOUBLE_EQ(EvidenceValue(*stalls, "slow_alloc_calls"), 2);
  ASSERT_EQ(alloc.findings.back().id, "warmup");
  EXPECT_DOUBLE_EQ(EvidenceValue(alloc.findings.back(), "startup_alloc_idle_ms"), 350);
  SetCauses({{"launch", 300}, {"host_idle", 300}});
  a_.ranks[0].allocations = {};

  // Launch calls under warmup_launch_min_ms are the steady state: no warmup, launch idle counts.
  a_.ranks[0].launch.cpu_launch_max_ns = 4 * kMs;
  const Diagnosis steady = Run();
  EXPECT_EQ(Find(steady, "warmup"), nullptr);
  EXPECT_NE(Find(steady, "launch_overhead"), nullptr);
}

TEST_F(DiagnoseTest, BatchingFromQueueShareAtTheEdge) {
  host_.queue_share_of_e2e = 0.30;  // exactly the threshold: fires
  host_.queue_mean_s = 0.6;
  host_.e2e_mean_s = 2.0;
  host_.kv_cache_usage_max = 0.97;
  Diagnosis d = Run();
  ASSERT_EQ(d.primary, "batching");
  const Finding& f = d.findings[0];
  EXPECT_DOUBLE_EQ(f.score, 0.30);
  EXPECT_EQ(f.severity, "critical");
  EXPECT_GE(f.confidence, 0.8);  // host signals are direct evidence
  EXPECT_DOUBLE_EQ(EvidenceValue(f, "queue_share_pct"), 30);
  EXPECT_NE(f.summary.find("0.60 s of 2.00 s"), std::string::npos) << f.summary;
  bool kv_fix = false;
  for (const std::string& fix : f.fixes) kv_fix = kv_fix || fix.find("KV cache") != fix.npos;
  EXPECT_TRUE(kv_fix);

  host_.queue_share_of_e2e = 0.29;
  EXPECT_EQ(Run().primary, "healthy");
}

TEST_F(DiagnoseTest, BatchingFromLongIdleGaps) {
  SetBusy(40);
  SetKernelTime({{"matmul", 40}, {"attention", 30}, {"elementwise", 30}});
  // 600 ms idle: 120 host-wait gaps of 5 ms each (GPU runs a burst, then waits for work).
  SetGaps(120, 600 * kMs, 0, 0, 0, 0);
  Diagnosis d = Run();
  ASSERT_EQ(d.primary, "batching");
  const Finding& f = d.findings[0];
  EXPECT_NEAR(f.score, 0.6, 1e-9);
  EXPECT_LT(f.confidence, 0.6);  // inferred from gaps only
  EXPECT_DOUBLE_EQ(EvidenceValue(f, "host_wait_gap_mean_ms"), 5);
  EXPECT_EQ(Find(d, "launch_overhead"), nullptr);  // the gaps are long, not launch gaps

  // "Other" gaps with launch records: the work was launched and waited on a dependency (another
  // stream, an event), which is no idle host.
  SetGaps(0, 0, 0, 0, 100, 600 * kMs);
  EXPECT_EQ(Find(Run(), "batching"), nullptr);
  // Without launch records "other" only means "unknown launch": counted as between bursts.
  a_.ranks[0].launch.cpu_launch_count = 0;
  EXPECT_EQ(Run().primary, "batching");
  a_.ranks[0].launch.cpu_launch_count = 1000;
  SetGaps(120, 600 * kMs, 0, 0, 0, 0);

  // No fix that contradicts the evidence. Idle gaps alone, or an engine whose queue is
  // empty, do not call for higher batch limits ("so waiting requests join" when none wait).
  auto offers_batch_limits = [](const Finding& finding) {
    for (const std::string& fix : finding.fixes)
      if (fix.find("waiting requests join") != std::string::npos) return true;
    return false;
  };
  EXPECT_FALSE(offers_batch_limits(*Find(Run(), "batching")));
  host_.waiting_requests_mean = 0;
  EXPECT_FALSE(offers_batch_limits(*Find(Run(), "batching")));
  host_.waiting_requests_mean = 12;
  EXPECT_TRUE(offers_batch_limits(*Find(Run(), "batching")));
  host_.waiting_requests_mean.reset();

  // Known light load: requests do not queue, so the idle GPU is not a batching problem.
  host_.queue_share_of_e2e = 0.02;
  d = Run();
  EXPECT_EQ(d.primary, "healthy");
  EXPECT_NE(d.findings[0].summary.find("load is light"), std::string::npos);
}

TEST_F(DiagnoseTest, BatchingSmallGemmsRaiseConfidence) {
  SetBusy(40);
  SetKernelTime({{"matmul", 40}, {"attention", 30}, {"elementwise", 30}});
  SetGaps(120, 600 * kMs, 0, 0, 0, 0);
  const double before = Find(Run(), "batching")->confidence;
  for (KernelRow& k : a_.summary.top_kernels)
    if (k.category == "matmul") k.mean_ns = 8 * kUs;
  const Diagnosis d = Run();
  EXPECT_GT(Find(d, "batching")->confidence, before);
  EXPECT_DOUBLE_EQ(EvidenceValue(*Find(d, "batching"), "small_gemm_pct"), 100);
}

TEST_F(DiagnoseTest, LaunchOverhead) {
  SetBusy(30);
  SetKernelTime({{"matmul", 40}, {"attention", 30}, {"elementwise", 30}});
  // 700 ms idle in 7000 host-wait gaps of 100 us: the GPU drains between launches.
  SetGaps(7000, 700 * kMs, 0, 0, 0, 0);
  a_.ranks[0].launch.short_kernels = 600;  // 60% of 1000 kernels
  Diagnosis d = Run();
  ASSERT_EQ(d.primary, "launch_overhead");
  const Finding& f = d.findings[0];
  EXPECT_NEAR(f.score, 0.7, 1e-9);
  EXPECT_EQ(f.severity, "critical");
  EXPECT_DOUBLE_EQ(EvidenceValue(f, "host_wait_gap_mean_us"), 100);
  EXPECT_DOUBLE_EQ(EvidenceValue(f, "short_kernel_pct"), 60);
  EXPECT_NE(f.fixes[0].find("CUDA graphs"), std::string::npos);
  EXPECT_EQ(Find(d, "batching"), nullptr);

  // Few short kernels: the host gaps alone do not make it launch-bound.
  a_.ranks[0].launch.short_kernels = 299;
  EXPECT_EQ(Find(Run(), "launch_overhead"), nullptr);
  a_.ranks[0].launch.short_kernels = 300;  // 30%: exactly the threshold
  EXPECT_NE(Find(Run(), "launch_overhead"), nullptr);

  // A busier GPU is not launch-bound.
  SetBusy(76);
  SetGaps(2400, 240 * kMs, 0, 0, 0, 0);
  EXPECT_EQ(Find(Run(), "launch_overhead"), nullptr);
}

TEST_F(DiagnoseTest, CausalLaunchGapsAreLaunchOverheadWhateverTheirLength) {
  // Tiny kernels, launch calls longer than them: every gap is under the 30 us kernel-wait
  // threshold, so HTA's split calls none of it host wait, but the launching thread was issuing
  // calls through all of it.
  SetBusy(34);
  SetGaps(0, 0, 20000, 660 * kMs, 0, 0);
  SetCauses({{"launch", 600}, {"sync", 40}, {"queued", 20}});
  a_.ranks[0].launch.short_kernels = 900;
  const Diagnosis d = Run();
  ASSERT_EQ(d.primary, "launch_overhead");
  EXPECT_NEAR(d.findings[0].score, 0.60, 1e-9);
  EXPECT_DOUBLE_EQ(EvidenceValue(d.findings[0], "launch_idle_pct"), 60);
  EXPECT_DOUBLE_EQ(EvidenceValue(d.findings[0], "host_wait_idle_pct"), 0);
}

TEST_F(DiagnoseTest, HostWaitEvidenceIsTheIdleGapTablesShare) {
  // Long host-wait gaps (mean 2 ms) on several streams: 1.2 s of stream idle on a GPU idle 660 ms.
  // The evidence prints the share the "Idle gaps" table prints, host wait / stream idle (75%),
  // not 0 because the gaps are long, nor a share of the device idle above 100%.
  SetBusy(34);
  SetGaps(450, 900 * kMs, 1000, 240 * kMs, 10, 60 * kMs);
  SetCauses({{"launch", 600}, {"sync", 40}, {"queued", 20}});
  a_.ranks[0].launch.short_kernels = 900;
  const Diagnosis d = Run();
  const Finding* f = Find(d, "launch_overhead");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(EvidenceValue(*f, "host_wait_idle_pct"), 75);
}

TEST_F(DiagnoseTest, CausalAllocationIdleIsNotBatching) {
  // The GPU idles between bursts because the host sits in cudaMalloc/cudaFree.
  SetBusy(55);
  SetGaps(300, 450 * kMs, 0, 0, 0, 0);  // 1.5 ms mean host-wait gaps: "between bursts"
  SetCauses({{"allocation", 350}, {"host_idle", 40}, {"launch", 60}});
  a_.ranks[0].allocations.slow_calls = 120;
  a_.ranks[0].allocations.slow_total_ns = 380 * kMs;
  const Diagnosis d = Run();
  ASSERT_EQ(d.primary, "allocation_stalls");
  EXPECT_NEAR(d.findings[0].score, 0.35, 1e-9);
  EXPECT_EQ(Find(d, "batching"), nullptr);  // 4% host_idle
  // The same calls while the GPU computes cost nothing.
  SetCauses({{"host_idle", 390}, {"launch", 60}});
  EXPECT_EQ(Find(Run(), "allocation_stalls"), nullptr);
  EXPECT_EQ(Run().primary, "batching");
}

TEST_F(DiagnoseTest, CausalSyncStakeIsTheIdleItCaused) {
  SyncRow& device = a_.ranks[0].syncs[static_cast<int>(model::SyncType::kDevice)];
  device.count = 100;
  device.total_ns = 500 * kMs;  // blocked half the time...
  SetCauses({{"sync", 30}, {"queued", 270}});
  EXPECT_EQ(Find(Run(), "host_sync"), nullptr);  // ...but the GPU idled 3% because of it
  SetCauses({{"sync", 200}, {"queued", 100}});
  const Diagnosis d = Run();
  const Finding* f = Find(d, "host_sync");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->score, 0.20, 1e-9);
}

TEST_F(DiagnoseTest, PrefillStakeIsThePrefillStepsExcessOverADecodeStep) {
  SetBusy(95);
  SetKernelTime({{"matmul", 60}, {"attention", 30}, {"normalization", 10}});
  SetSubcategory("attention.prefill", 10);
  SetSubcategory("attention.decode", 20);
  // 4 prefill steps of 60 ms among 100 decode steps of 7 ms: decode waited 4 x 53 ms.
  a_.summary.steps = {100, 4, 700 * kMs, 240 * kMs, 7 * kMs, 60 * kMs};
  const Diagnosis d = Run();
  const Finding* f = Find(d, "prefill_interference");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->score, 0.212, 1e-9);
  EXPECT_DOUBLE_EQ(EvidenceValue(*f, "prefill_steps"), 4);
  EXPECT_DOUBLE_EQ(EvidenceValue(*f, "decode_step_mean_ms"), 7);
  // Prefill steps no longer than decode steps delay nothing, whatever the kernel shares say.
  a_.summary.steps = {100, 4, 700 * kMs, 28 * kMs, 7 * kMs, 7 * kMs};
  SetSubcategory("attention.prefill", 40);
  EXPECT_EQ(Find(Run(), "prefill_interference"), nullptr);
}

TEST_F(DiagnoseTest, KernelBoundStakeIsTheExcessOverTheUsualShare) {
  // Attention at 70% of a 95% busy GPU: 30 points over its usual 40%. The stake is that excess
  // (what FP8 KV or a faster backend could win), not the kernel's whole time.
  SetBusy(95);
  SetKernelTime({{"attention", 70}, {"matmul", 20}, {"elementwise", 10}});
  a_.summary.top_kernels.clear();
  AddKernel("_ZN10flashinfer16BatchDecodeKernelEv", "flashinfer::BatchDecodeKernel", "attention",
            "attention.decode", 62, 5000, 120 * kUs);
  const Diagnosis d = Run();
  ASSERT_EQ(d.primary, "kernel_bound");
  const Finding& f = d.findings[0];
  EXPECT_NE(f.summary.find("attention kernels take 70%"), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("flashinfer::BatchDecodeKernel, 62%"), std::string::npos) << f.summary;
  EXPECT_NEAR(f.score, 0.95 * 0.30, 1e-9);
  EXPECT_EQ(f.severity, "warning");
  EXPECT_DOUBLE_EQ(EvidenceValue(f, "kernel_pct"), 62);
  EXPECT_DOUBLE_EQ(EvidenceValue(f, "usual_category_pct"), 40);
  EXPECT_NE(f.fixes[0].find("attention backend"), std::string::npos);
}

TEST_F(DiagnoseTest, PrefillAttentionHasNoUsualShareToExceed) {
  // Long prompts make prefill attention FLOP-bound and large; that is the prompt, not a fault.
  SetBusy(95);
  SetKernelTime({{"attention", 70}, {"matmul", 25}, {"normalization", 5}});
  SetSubcategory("attention.prefill", 60);
  a_.summary.top_kernels.clear();
  AddKernel("_Z15fmha_prefill_v2", "fmha_prefill_v2", "attention", "attention.prefill", 60, 100,
            kMs);
  EXPECT_EQ(Find(Run(), "kernel_bound"), nullptr);
  SetSubcategory("attention.prefill", 10);  // decode attention at 60%: 20 points over 40%
  const Diagnosis d = Run();
  const Finding* f = Find(d, "kernel_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->score, 0.95 * 0.20, 1e-9);
  EXPECT_NE(f->summary.find("attention (decode) kernels take 60%"), std::string::npos)
      << f->summary;
}

TEST_F(DiagnoseTest, BusyGpuSpreadTheUsualWayIsHealthyWithANote) {
  // A dense decode: GEMMs own half the time, one GEMM a third of it. That is the model's work.
  SetBusy(90);
  SetKernelTime({{"matmul", 55}, {"attention", 30}, {"normalization", 15}});
  a_.summary.top_kernels.clear();
  AddKernel("nvjet_tst_gemm", "nvjet_tst_gemm", "matmul", "matmul.cublas", 33, 5000, 50 * kUs);
  const Diagnosis d = Run();
  ASSERT_EQ(d.primary, "healthy");
  EXPECT_EQ(d.findings[0].severity, "info");
  EXPECT_NE(d.findings[0].summary.find("matmul 55%"), std::string::npos) << d.findings[0].summary;
  EXPECT_NE(d.findings[0].summary.find("nvjet_tst_gemm, 33%"), std::string::npos);
}

TEST_F(DiagnoseTest, FlashAttention2ForwardOnHopperIsKernelBound) {
  SetBusy(90);
  SetKernelTime({{"attention", 40}, {"matmul", 45}, {"elementwise", 15}});
  a_.summary.top_kernels.clear();
  AddKernel("_ZN5flash16flash_fwd_kernelEv", "flash::flash_fwd_kernel", "attention",
            "attention.prefill", 40, 100, 2 * kMs);
  EXPECT_EQ(Find(Run(), "kernel_bound"), nullptr);  // not on an A100
  a_.ranks[0].device_name = "NVIDIA H100 80GB HBM3";
  const Diagnosis d = Run();
  const Finding* f = Find(d, "kernel_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->score, 0.9 * 0.40 * 0.33, 1e-9);
  EXPECT_NE(f->summary.find("FlashAttention 3"), std::string::npos) << f->summary;
  EXPECT_NE(f->fixes[0].find("FlashAttention 3"), std::string::npos);
  // The FA3 fix goes with FA2 evidence only: on an elementwise finding it addresses nothing.
  SetKernelTime({{"attention", 20}, {"matmul", 20}, {"elementwise", 60}});
  a_.summary.top_kernels[0].pct = 20;
  const Diagnosis glue_d = Run();
  const Finding* glue = Find(glue_d, "kernel_bound");
  ASSERT_NE(glue, nullptr);
  EXPECT_NE(glue->summary.find("elementwise kernels take 60%"), std::string::npos) << glue->summary;
  for (const std::string& fix : glue->fixes)
    EXPECT_EQ(fix.find("FlashAttention"), std::string::npos) << fix;
  SetKernelTime({{"attention", 40}, {"matmul", 45}, {"elementwise", 15}});
  a_.summary.top_kernels[0].pct = 40;
  // Split-KV decode is bound by reading the KV cache: FA3 would not make it faster.
  a_.summary.top_kernels[0].name = "_ZN5flash24flash_fwd_splitkv_kernelEv";
  EXPECT_EQ(Find(Run(), "kernel_bound"), nullptr);
}

TEST_F(DiagnoseTest, CudaGraphsAndUnclassifiedKernelsAreNoKernelBound) {
  // The live path's default: each graph launch is one "[cuda graph N]" record of category other.
  SetBusy(95);
  SetKernelTime({{"other", 100}});
  a_.summary.top_kernels.clear();
  AddKernel("[cuda graph 37]", "[cuda graph 37]", "other", "other", 60, 500, 2 * kMs);
  AddKernel("[cuda graph 12]", "[cuda graph 12]", "other", "other", 40, 500, kMs);
  EXPECT_EQ(Run().primary, "healthy");
  // Unclassified kernels have no usual share: nothing says how much of their time is recoverable.
  a_.summary.top_kernels.clear();
  AddKernel("my_custom_kernel", "my_custom_kernel", "other", "other", 60, 500, 2 * kMs);
  EXPECT_EQ(Run().primary, "healthy");
}

TEST_F(DiagnoseTest, KernelBoundFallsBackToCategoryAndSkipsCommunication) {
  SetBusy(92);
  SetKernelTime({{"communication", 20}, {"elementwise", 55}, {"matmul", 25}});
  a_.summary.top_kernels.clear();
  AddKernel("nccl", "ncclDevKernel_AllReduce", "communication", "communication.all_reduce", 20, 10,
            kMs);
  AddKernel("ew", "at::native::elementwise_kernel", "elementwise", "elementwise.x", 12, 10, kMs);
  Diagnosis d = Run();
  const Finding* f = Find(d, "kernel_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("elementwise kernels take 55%"), std::string::npos) << f->summary;
  EXPECT_NEAR(f->score, 0.92 * 0.40, 1e-9);
  EXPECT_NE(f->fixes[0].find("Fuse"), std::string::npos);

  // Below the busy threshold, no kernel can "bound" the GPU.
  SetBusy(79);
  SetKernelTime({{"communication", 20}, {"elementwise", 55}, {"matmul", 25}});
  EXPECT_EQ(Find(Run(), "kernel_bound"), nullptr);
}

TEST_F(DiagnoseTest, HardwareSaturatedNeedsGpmCounters) {
  SetBusy(95);
  host_.gpu_util_pct_mean = 100;
  EXPECT_EQ(Find(Run(), "hardware_saturated"), nullptr);  // utilization alone is no verdict

  host_.gpm_dram_bw_util_pct = 70;  // exactly the threshold
  host_.gpm_sm_active_pct = 97;
  Diagnosis d = Run();
  ASSERT_EQ(d.primary, "hardware_saturated");
  EXPECT_NE(d.findings[0].summary.find("DRAM bandwidth at 70%"), std::string::npos);
  EXPECT_DOUBLE_EQ(EvidenceValue(d.findings[0], "gpm_sm_active_pct"), 97);
  EXPECT_NEAR(d.findings[0].score, 0.95, 1e-9);

  host_.gpm_dram_bw_util_pct = 69.9;
  host_.gpm_tensor_active_pct = 65;
  d = Run();
  ASSERT_NE(Find(d, "hardware_saturated"), nullptr);
  EXPECT_NE(Find(d, "hardware_saturated")->summary.find("tensor cores"), std::string::npos);

  SetBusy(60);  // a high counter on a half-idle GPU is no saturation
  EXPECT_EQ(Find(Run(), "hardware_saturated"), nullptr);
}

TEST_F(DiagnoseTest, HardwareSaturatedFromUtilizationWithoutTrace) {
  Analysis empty;
  HostSignals h;
  h.gpu_util_pct_mean = 99;
  h.gpm_sm_occupancy_pct = 75;
  const Diagnosis d = Diagnose(empty, h, t_);
  EXPECT_EQ(d.primary, "hardware_saturated");
}

TEST_F(DiagnoseTest, CommunicationExposed) {
  SetKernelTime({{"communication", 30}, {"matmul", 40}, {"elementwise", 30}});
  // Communication 210 ms of busy 700 ms; overlap 50 ms -> exposed 160 ms = 16% of the span.
  a_.summary.communication_overlap_ns = 50 * kMs;
  a_.summary.comm_compute_overlap_pct = Pct(50, 210);
  SetSubcategory("communication.all_reduce", 30);
  Diagnosis d = Run();
  ASSERT_EQ(d.primary, "communication");
  EXPECT_NEAR(d.findings[0].score, 0.16, 1e-9);
  EXPECT_EQ(d.findings[0].rank, -1);
  EXPECT_NE(d.findings[0].summary.find("communication.all_reduce"), std::string::npos);

  a_.summary.communication_overlap_ns = 120 * kMs;  // exposed 90 ms: under 10%
  EXPECT_EQ(Find(Run(), "communication"), nullptr);
}

TEST_F(DiagnoseTest, CommunicationStragglerNamesTheRank) {
  a_.ranks.resize(2);
  a_.ranks[1] = a_.ranks[0];
  a_.ranks[1].rank = 1;
  a_.summary.temporal.span_ns *= 2;  // two ranks of 1 s
  a_.summary.temporal.busy_ns *= 2;
  a_.summary.temporal.compute_ns *= 2;
  a_.summary.temporal.Finalize();
  a_.comparison.straggler_rank = 1;
  a_.comparison.compute.imbalance = 0.25;
  a_.comparison.straggler_excess_compute_ns = 100 * kMs;
  // Rank 1 computes 200 ms more than rank 0, which waits that long for it in collectives.
  a_.comparison.ranks = {{0, 0, 1000 * kMs, 700 * kMs, 300 * kMs, 500 * kMs, 0, 70},
                         {1, 0, 1000 * kMs, 900 * kMs, 100 * kMs, 700 * kMs, 0, 90}};
  Diagnosis d = Run();
  const Finding* f = Find(d, "communication");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->rank, 1);
  EXPECT_NEAR(f->score, 0.1, 1e-9);  // 200 ms of waiting over 2 s of summed span
  EXPECT_NEAR(EvidenceValue(*f, "straggler_wait_pct"), 10, 1e-9);
  EXPECT_NE(f->summary.find("rank 1"), std::string::npos);

  a_.comparison.compute.imbalance = 0.09;
  EXPECT_EQ(Find(Run(), "communication"), nullptr);
}

TEST_F(DiagnoseTest, HostSyncNamesTypeAndKernel) {
  SyncRow& stream = a_.ranks[0].syncs[static_cast<int>(model::SyncType::kStream)];
  stream.count = 40;
  stream.total_ns = 250 * kMs;
  // The placeholder for "nothing finished" carries the most wait but names no culprit.
  stream.waited_on.push_back({"[no GPU work finished during the wait]",
                              "[no GPU work finished during the wait]", 5, 240 * kMs});
  stream.waited_on.push_back({"_Z4gemmv", "gemm_kernel", 30, 200 * kMs});
  stream.waited_on.push_back({"[memcpy dtoh]", "[memcpy dtoh]", 10, 50 * kMs});
  // A GPU-side wait is not a host block.
  a_.ranks[0].syncs[static_cast<int>(model::SyncType::kStreamWaitEvent)].total_ns = 900 * kMs;
  Diagnosis d = Run();
  ASSERT_EQ(d.primary, "host_sync");
  const Finding& f = d.findings[0];
  EXPECT_NE(f.summary.find("stream synchronization 25%"), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("waiting on gemm_kernel"), std::string::npos) << f.summary;
  EXPECT_DOUBLE_EQ(EvidenceValue(f, "sync_wait_pct"), 25);
  EXPECT_DOUBLE_EQ(EvidenceValue(f, "stream_sync_wait_ms"), 250);
  EXPECT_NEAR(f.score, 0.25, 1e-9);  // under the 30% idle time

  EXPECT_EQ(f.summary.rfind("GPU idle 25% of the time for host syncs", 0), 0u) << f.summary;

  // On a busy GPU the wait costs at most the idle time, and the headline says so first (issue
  // 19: headline and stake never disagree).
  SetBusy(95);
  EXPECT_NEAR(Find(Run(), "host_sync")->score, 0.05, 1e-9);
  EXPECT_EQ(Find(Run(), "host_sync")->summary.rfind("GPU idle 5% of the time for host syncs", 0),
            0u)
      << Find(Run(), "host_sync")->summary;

  stream.total_ns = 99 * kMs;
  EXPECT_EQ(Find(Run(), "host_sync"), nullptr);
}

TEST_F(DiagnoseTest, MemoryTransferByTimeAndByPageableCopies) {
  TransferRow& htod = a_.ranks[0].transfers[1];
  htod.count = 20;
  htod.bytes = 2'000'000'000;
  htod.time_ns = 100 * kMs;  // 10% of the span
  Diagnosis d = Run();
  ASSERT_EQ(d.primary, "memory_transfer");
  EXPECT_NE(d.findings[0].summary.find("20 htod copies, 2.00 GB at 20.0 GB/s"), std::string::npos)
      << d.findings[0].summary;

  htod.time_ns = 10 * kMs;  // 1%: too little time...
  EXPECT_EQ(Find(Run(), "memory_transfer"), nullptr);
  a_.ranks[0].transfers[2] = {"dtoh", 12, 1200, kMs, 0, 12};  // ...but pageable copies in the loop
  d = Run();
  ASSERT_NE(Find(d, "memory_transfer"), nullptr);
  EXPECT_EQ(Find(d, "memory_transfer")->severity, "info");
  EXPECT_DOUBLE_EQ(EvidenceValue(*Find(d, "memory_transfer"), "pageable_copies"), 12);
  EXPECT_NE(Find(d, "memory_transfer")->summary.find("12 copies between GPU and pageable host"),
            std::string::npos);

  // Device-to-device copies are not host transfers.
  a_.ranks[0].transfers[1].time_ns = 0;
  a_.ranks[0].transfers[2] = {"dtoh", 0, 0, 0, 0, 0};
  a_.ranks[0].transfers[3] = {"dtod", 100, 1'000'000'000, 500 * kMs, 0, 0};
  EXPECT_EQ(Find(Run(), "memory_transfer"), nullptr);
}

TEST_F(DiagnoseTest, AllocationStalls) {
  AllocationSummary& al = a_.ranks[0].allocations;
  al.malloc_calls = 10;
  al.slow_calls = 3;
  al.slow_total_ns = 60 * kMs;
  al.malloc_max_ns = 30 * kMs;
  Diagnosis d = Run();
  ASSERT_EQ(d.primary, "allocation_stalls");
  EXPECT_NEAR(d.findings[0].score, 0.06, 1e-9);
  EXPECT_EQ(d.findings[0].severity, "info");
  EXPECT_DOUBLE_EQ(EvidenceValue(d.findings[0], "alloc_max_ms"), 30);

  al.slow_calls = 1;  // one slow call is start-up (context creation, warm-up), not a stall
  EXPECT_EQ(Find(Run(), "allocation_stalls"), nullptr);
}

TEST_F(DiagnoseTest, PrefillInterferenceFromTrace) {
  SetBusy(90);
  SetKernelTime({{"attention", 40}, {"matmul", 35}, {"elementwise", 25}});
  SetSubcategory("attention.prefill", 30);
  SetSubcategory("attention.decode", 10);
  Diagnosis d = Run();
  const Finding* f = Find(d, "prefill_interference");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->score, 0.9 * 0.3, 1e-9);
  EXPECT_NE(f->summary.find("prefill attention takes 30%"), std::string::npos) << f->summary;
  const double trace_confidence = f->confidence;

  // Host signals agree: more confident.
  host_.prefill_mean_s = 0.4;
  host_.decode_mean_s = 0.6;
  d = Run();
  EXPECT_GT(Find(d, "prefill_interference")->confidence, trace_confidence);

  // Without decode in the window nothing is interfered with (a prefill-only trace).
  host_ = {};
  SetKernelTime({{"attention", 40}, {"matmul", 35}, {"elementwise", 25}});
  SetSubcategory("attention.prefill", 40);
  EXPECT_EQ(Find(Run(), "prefill_interference"), nullptr);
}

TEST_F(DiagnoseTest, PrefillInterferenceFromHostSignalsOnly) {
  host_.prefill_mean_s = 0.5;
  host_.decode_mean_s = 1.0;  // prefill a third of the request's GPU phases
  host_.e2e_mean_s = 2.5;
  const Diagnosis d = Run();
  const Finding* f = Find(d, "prefill_interference");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->score, 0.2, 1e-9);  // prefill / e2e
  host_.prefill_mean_s = 0.2;
  EXPECT_EQ(Find(Run(), "prefill_interference"), nullptr);
}

// A 25% hardware slowdown (NVML clock-event reasons) is a finding, not a silent column.
TEST_F(DiagnoseTest, ThrottlingFromClockEventReasons) {
  SetBusy(85);
  EXPECT_EQ(Find(Run(), "throttling"), nullptr);
  host_.slowdown_share = {{"hw_slowdown", 0.25}, {"sw_power_cap", 0.02}};
  Diagnosis d = Run();
  const Finding* f = Find(d, "throttling");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->score, 0.25, 1e-9);
  EXPECT_EQ(f->severity, "warning");
  EXPECT_EQ(d.primary, "throttling");
  EXPECT_NE(f->summary.find("hardware slowdown 25%"), std::string::npos) << f->summary;
  EXPECT_EQ(f->summary.find("power cap"), std::string::npos) << f->summary;  // under 5%
  EXPECT_DOUBLE_EQ(EvidenceValue(*f, "hw_slowdown_pct"), 25);
  ASSERT_EQ(f->fixes.size(), 1u);
  // Most of the time at its power cap: still a warning (NVML does not say how much slower).
  host_.slowdown_share = {{"sw_power_cap", 0.9}};
  const Diagnosis capped = Run();  // kept: the finding points into it
  f = Find(capped, "throttling");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, "warning");
  // Reasons that are no slowdown (an idle GPU clocks down) are no finding.
  host_.slowdown_share = {{"gpu_idle", 0.9}};
  EXPECT_EQ(Find(Run(), "throttling"), nullptr);
}

TEST_F(DiagnoseTest, RankingByScoreThenSeverity) {
  // memory_transfer 10%, allocation_stalls 6%, host_sync 25%.
  a_.ranks[0].transfers[1] = {"htod", 20, 2'000'000'000, 100 * kMs, 0, 0};
  a_.ranks[0].allocations.slow_calls = 3;
  a_.ranks[0].allocations.slow_total_ns = 60 * kMs;
  SyncRow& stream = a_.ranks[0].syncs[static_cast<int>(model::SyncType::kStream)];
  stream.count = 40;
  stream.total_ns = 250 * kMs;
  Diagnosis d = Run();
  ASSERT_EQ(d.findings.size(), 3u);
  EXPECT_EQ(d.findings[0].id, "host_sync");
  EXPECT_EQ(d.findings[1].id, "memory_transfer");
  EXPECT_EQ(d.findings[2].id, "allocation_stalls");
  EXPECT_EQ(d.primary, "host_sync");
  for (const Finding& f : d.findings) EXPECT_NE(f.id, "healthy");

  // Equal scores and severities: kFindingIds order decides, so the output is deterministic.
  a_.ranks[0].allocations.slow_total_ns = 100 * kMs;
  stream.total_ns = 0;
  stream.count = 0;
  d = Run();
  ASSERT_EQ(d.findings.size(), 2u);
  EXPECT_DOUBLE_EQ(d.findings[0].score, d.findings[1].score);
  EXPECT_EQ(d.findings[0].id, "memory_transfer");
}

TEST_F(DiagnoseTest, CriticalNeverRanksBelowAWarning) {
  // Exposed communication (critical, 35%) and a warning-level kernel excess: severity orders them.
  SetBusy(95);
  SetKernelTime({{"communication", 40}, {"elementwise", 35}, {"matmul", 25}});
  a_.summary.communication_ns = 350 * kMs;
  const Diagnosis d = Run();
  ASSERT_GE(d.findings.size(), 2u);
  EXPECT_EQ(d.primary, "communication");
  for (size_t i = 1; i < d.findings.size(); ++i)
    EXPECT_LE(d.findings[i].score, d.findings[i - 1].score);
}

TEST_F(DiagnoseTest, ThresholdsChangeVerdicts) {
  a_.ranks[0].transfers[1] = {"htod", 20, 2'000'000'000, 100 * kMs, 0, 0};
  EXPECT_EQ(Run().primary, "memory_transfer");
  auto t = ParseThresholds("transfer_min_share = 0.2\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  t_ = *t;
  EXPECT_EQ(Run().primary, "healthy");
}

TEST(ParseThresholdsTest, GoodFileWithComments) {
  auto t = ParseThresholds(
      "# tuned for a latency-critical service\n"
      "\n"
      "  batching_min_queue_share = 0.1   # queue is bad early\n"
      "burst_gap_ms=2.5\r\n"
      "kernel_bound_min_busy_pct = 90\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_DOUBLE_EQ(t->batching_min_queue_share, 0.1);
  EXPECT_DOUBLE_EQ(t->burst_gap_ms, 2.5);
  EXPECT_DOUBLE_EQ(t->kernel_bound_min_busy_pct, 90);
  EXPECT_DOUBLE_EQ(t->launch_max_busy_pct, DiagnosisThresholds{}.launch_max_busy_pct);
  EXPECT_TRUE(ParseThresholds("").ok());
}

TEST(ParseThresholdsTest, Errors) {
  auto unknown = ParseThresholds("burst_gap_ms = 1\nqueue_share = 0.3\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("line 2"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("unknown threshold 'queue_share'"), std::string::npos);

  for (const char* bad : {"burst_gap_ms = abc", "burst_gap_ms =", "burst_gap_ms = 1.5ms",
                          "burst_gap_ms = nan", "burst_gap_ms = inf", "burst_gap_ms 1"}) {
    auto r = ParseThresholds(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
  EXPECT_NE(ParseThresholds("warning_score = x").status().message().find("not a number"),
            std::string::npos);
  EXPECT_NE(ParseThresholds("warning_score = 1.5").status().message().find("out of range"),
            std::string::npos);
  EXPECT_FALSE(ParseThresholds("launch_max_busy_pct = 101").ok());
  EXPECT_FALSE(ParseThresholds("burst_gap_ms = -1").ok());
  EXPECT_NE(ParseThresholds("burst_gap_ms = 1\nburst_gap_ms = 2").status().message().find("twice"),
            std::string::npos);
}

TEST(ParseThresholdsTest, EveryNameParses) {
  const std::vector<std::string> names = ThresholdNames();
  EXPECT_EQ(names.size(), 36u);
  std::string text;
  for (const std::string& n : names) text += n + " = 0.5\n";
  auto t = ParseThresholds(text);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_DOUBLE_EQ(t->prefill_min_host_share, 0.5);
  EXPECT_DOUBLE_EQ(t->throttle_min_share, 0.5);
  EXPECT_DOUBLE_EQ(t->critical_score, 0.5);
}

TEST(AnalyzeDiagnosisTest, AnalyzeFillsTheDiagnosis) {
  const model::ProfileWindow w = testing::MakeWindow(1, 0, 600, 450);
  const Analysis a = Analyze({{"t.json", "kineto_json", &w}}, AnalysisOptions{});
  ASSERT_FALSE(a.diagnosis.findings.empty());
  EXPECT_EQ(a.diagnosis.primary, a.diagnosis.findings[0].id);
  // The hand-built window: 2 ms of slow allocations over a 1 us span, HtoD copies 4% of it.
  bool alloc = false;
  for (const Finding& f : a.diagnosis.findings) alloc = alloc || f.id == "allocation_stalls";
  EXPECT_FALSE(alloc);  // a single slow call
}

}  // namespace
}  // namespace inferscope::analyze
