// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The live NVTX range table (AggregatorOptions::ranges, RangeTracker) through the Aggregator.

#include "src/aggregate/range_tracker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/aggregate/aggregator.h"

namespace inferscope::aggregate {
namespace {

class RangeTableTest : public ::testing::Test {
 protected:
  model::NvtxEvent Range(const char* name, int64_t start, int64_t end, uint32_t tid = 1) {
    model::NvtxEvent n;
    n.pid = 1;
    n.tid = tid;
    n.start_ns = start;
    n.end_ns = end;
    n.name = names_.Intern(name);
    return n;
  }
  model::ApiCallEvent Launch(int64_t start, uint32_t corr, uint32_t tid = 1,
                             model::ApiKind kind = model::ApiKind::kKernelLaunch) {
    model::ApiCallEvent a;
    a.pid = 1;
    a.tid = tid;
    a.start_ns = start;
    a.end_ns = start + 5;
    a.correlation_id = corr;
    a.kind = kind;
    a.name = names_.Intern("cudaLaunchKernel");
    return a;
  }
  model::KernelEvent Kernel(int64_t start, int64_t end, uint32_t corr) {
    model::KernelEvent k;
    k.pid = 1;
    k.start_ns = start;
    k.end_ns = end;
    k.correlation_id = corr;
    k.name = names_.Intern("ampere_sgemm_128x64_tn");
    return k;
  }
  const model::RangeStats* Row(const model::RangeTable& t, const std::string& name) {
    for (const model::RangeStats& r : t.rows)
      if (r.name == name) return &r;
    return nullptr;
  }

  model::NameTable names_;
  model::KernelClassifier classifier_;
};

TEST_F(RangeTableTest, CountsRangesAndProjectsTheGpuWorkLaunchedInside) {
  AggregatorOptions options;
  options.ranges = true;
  const model::ProfileWindow w =
      AggregateWholeTrace(options, &names_, &classifier_, [&](model::EventSink* s) {
        s->OnNvtx(Range("step", 100, 1000));
        s->OnNvtx(Range("forward, seq = 1, op_id = 7", 100, 400));  // grouped as "forward"
        s->OnNvtx(Range("forward, seq = 2, op_id = 8", 500, 800));
        s->OnNvtx(Range("forward", 550, 600));  // nested in itself: its ops count once
        s->OnNvtx(Range("other thread", 100, 1000, /*tid=*/2));
        s->OnApiCall(Launch(100, 1));  // at the ranges' first instant: inside
        s->OnKernel(Kernel(2000, 2100, 1));
        s->OnApiCall(Launch(560, 2));  // in step, forward (twice nested)
        s->OnKernel(Kernel(2200, 2250, 2));
        s->OnApiCall(Launch(800, 3));  // at forward's end: step only
        s->OnKernel(Kernel(2300, 2310, 3));
        s->OnApiCall(Launch(1500, 4, 1, model::ApiKind::kMemcpy));  // outside every range
        model::MemcpyEvent m;
        m.pid = 1;
        m.start_ns = 2400;
        m.end_ns = 2500;
        m.correlation_id = 4;
        s->OnMemcpy(m);
      });
  ASSERT_EQ(w.processes.size(), 1u);
  const model::RangeTable& t = w.processes[0].ranges;
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.instances(), 5u);
  // By total host time: the two 900 ns ranges (by name), then forward (300 + 300 + 50).
  EXPECT_EQ(t.rows[0].name, "other thread");
  EXPECT_EQ(t.rows[1].name, "step");
  EXPECT_EQ(t.rows[2].name, "forward");
  const model::RangeStats* step = Row(t, "step");
  EXPECT_EQ(step->duration.count, 1u);
  EXPECT_EQ(step->gpu_ops, 3u);
  EXPECT_EQ(step->gpu_time_ns, 100 + 50 + 10);
  const model::RangeStats* fwd = Row(t, "forward");
  EXPECT_EQ(fwd->duration.count, 3u);
  EXPECT_EQ(fwd->duration.total_ns, 650);
  EXPECT_EQ(fwd->duration.min_ns, 50);
  EXPECT_EQ(fwd->gpu_ops, 2u);
  EXPECT_EQ(fwd->gpu_time_ns, 150);
  EXPECT_EQ(Row(t, "other thread")->gpu_ops, 0u);  // launches on thread 1 only
  EXPECT_EQ(t.late, 0u);
}

TEST_F(RangeTableTest, OffByDefaultAndTopKWithATail) {
  auto feed = [&](model::EventSink* s) {
    for (int i = 0; i < 5; ++i) {
      const std::string name = "r" + std::to_string(i);
      s->OnNvtx(Range(name.c_str(), 100, 200 + 100 * i));
    }
  };
  AggregatorOptions options;
  EXPECT_TRUE(AggregateWholeTrace(options, &names_, &classifier_, feed).processes.empty());
  options.ranges = true;
  options.top_k = 2;
  const model::ProfileWindow w = AggregateWholeTrace(options, &names_, &classifier_, feed);
  ASSERT_EQ(w.processes.size(), 1u);  // ranges alone make a process entry
  const model::RangeTable& t = w.processes[0].ranges;
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].name, "r4");
  EXPECT_EQ(t.rows[1].name, "r3");
  EXPECT_EQ(t.tail_names, 3u);
  EXPECT_EQ(t.tail.duration.count, 3u);
  EXPECT_EQ(t.tail.duration.total_ns, 100 + 200 + 300);
}

TEST_F(RangeTableTest, WindowEdgesCountARangeWhereItStartsAndLateOnesWhereTheyArrive) {
  AggregatorOptions options;
  options.ranges = true;
  options.window_ns = 1000;
  options.lateness_ns = 100;
  std::vector<model::ProfileWindow> windows;
  Aggregator a(options, &names_, &classifier_,
               [&](model::ProfileWindow&& w) { windows.push_back(std::move(w)); });
  a.OnNvtx(Range("edge", 900, 1300));  // starts in window 0, ends in window 1
  a.OnApiCall(Launch(950, 1));
  a.OnKernel(Kernel(1100, 1200, 1));  // the GPU op is in window 1: its time is there
  a.AdvanceTo(2500);
  // A range that began in window 0 but whose end came only now (longer than the horizon).
  a.OnNvtx(Range("long", 500, 2400));
  a.AdvanceTo(3500);
  a.Finish();
  ASSERT_GE(windows.size(), 3u);
  const model::RangeTable& w0 = windows[0].processes.at(0).ranges;
  ASSERT_EQ(w0.rows.size(), 1u);
  EXPECT_EQ(w0.rows[0].duration.count, 1u);
  EXPECT_EQ(w0.rows[0].duration.total_ns, 400);  // whole duration, in its start's window
  EXPECT_EQ(w0.rows[0].gpu_ops, 0u);
  const model::RangeTable& w1 = windows[1].processes.at(0).ranges;
  ASSERT_EQ(w1.rows.size(), 1u);
  EXPECT_EQ(w1.rows[0].name, "edge");
  EXPECT_EQ(w1.rows[0].duration.count, 0u);
  EXPECT_EQ(w1.rows[0].gpu_time_ns, 100);
  // The late range is in the window open when it arrived, marked late; no late_record counted.
  const model::RangeTable& w2 = windows[2].processes.at(0).ranges;
  ASSERT_EQ(w2.rows.size(), 1u);
  EXPECT_EQ(w2.rows[0].name, "long");
  EXPECT_EQ(w2.late, 1u);
  EXPECT_EQ(
      windows[2].processes[0].data_quality[static_cast<size_t>(model::DataQuality::kLateRecord)],
      0u);
}

TEST(RangeGroupTextTest, DropsPyTorchAnnotations) {
  EXPECT_EQ(RangeGroupText("aten::mm, seq = 12, op_id = 345, sizes = [[1]]"), "aten::mm");
  EXPECT_EQ(RangeGroupText("aten::mm, sizes = [[1]]"), "aten::mm");
  EXPECT_EQ(RangeGroupText("a, b"), "a, b");
  EXPECT_EQ(RangeGroupText(""), "");
}

TEST(RangeGroupTextTest, GroupsTheEnginesIterationsByEngine) {
  EXPECT_EQ(RangeGroupText("[Executor] _forward_step 17: 0 ctx reqs, 64 gen reqs"),
            "[Executor] _forward_step");
  EXPECT_EQ(RangeGroupText("_forward_step: 1 ctx reqs, 0 gen reqs"), "_forward_step");
  EXPECT_EQ(RangeGroupText("execute_context_1(2048)_generation_31(31)"), "execute_context");
  EXPECT_EQ(RangeGroupText("ProfilerStep#3"), "ProfilerStep#3");  // as before
}

TEST(RangeTableMergeTest, MergesByNameAndKeepsTopK) {
  model::RangeTable a, b;
  auto row = [](const char* name, int64_t total, uint64_t ops) {
    model::RangeStats r;
    r.name = name;
    r.duration.Add(total);
    r.gpu_ops = ops;
    r.gpu_time_ns = static_cast<int64_t>(ops) * 10;
    return r;
  };
  a.rows = {row("x", 100, 1), row("y", 50, 2)};
  b.rows = {row("y", 80, 3), row("z", 60, 4)};
  b.tail = row("", 5, 1);
  b.tail_names = 4;
  b.late = 1;
  a.Merge(b, 2);
  ASSERT_EQ(a.rows.size(), 2u);
  EXPECT_EQ(a.rows[0].name, "y");  // 130
  EXPECT_EQ(a.rows[0].duration.count, 2u);
  EXPECT_EQ(a.rows[0].gpu_ops, 5u);
  EXPECT_EQ(a.rows[1].name, "x");  // 100; z (60) joins the tail
  EXPECT_EQ(a.tail.duration.count, 2u);
  EXPECT_EQ(a.tail.duration.total_ns, 65);
  EXPECT_EQ(a.tail.gpu_ops, 5u);
  EXPECT_EQ(a.tail_names, 5u);
  EXPECT_EQ(a.late, 1u);
  EXPECT_EQ(a.instances(), 5u);
}

// The rows grow while the join looks names up (the agent's rollups merge windows of different
// names: a heap-use-after-free under ASan when the rows reallocated under the map's keys).
TEST(RangeTableMergeTest, NewNamesBeforeKnownOnesWhileTheRowsGrow) {
  auto row = [](std::string name, int64_t total) {
    model::RangeStats r;
    r.name = std::move(name);
    r.duration.Add(total);
    r.gpu_ops = 1;
    return r;
  };
  model::RangeTable a, b;
  for (int i = 0; i < 3; ++i) a.rows.push_back(row("known" + std::to_string(i), 100 + i));
  a.rows.shrink_to_fit();  // full: the first new row reallocates
  for (int i = 0; i < 40; ++i) b.rows.push_back(row("new" + std::to_string(i), 1000 + i));
  for (int i = 0; i < 3; ++i) b.rows.push_back(row("known" + std::to_string(i), 10));
  a.Merge(b, 1000);
  ASSERT_EQ(a.rows.size(), 43u);
  EXPECT_EQ(a.instances(), 46u);
  for (const model::RangeStats& r : a.rows)
    if (r.name.starts_with("known")) {
      EXPECT_EQ(r.duration.count, 2u) << r.name;
      EXPECT_EQ(r.gpu_ops, 2u) << r.name;
    }
}

}  // namespace
}  // namespace inferscope::aggregate
