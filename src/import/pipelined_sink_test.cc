// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/pipelined_sink.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/import/trace_importer.h"
#include "tests/test_traces.h"

namespace inferscope::import {
namespace {

// Records what it receives, in order, as compact strings.
class RecordingSink final : public model::EventSink {
 public:
  void OnProcess(const model::ProcessInfo& e) override { Add("P", e.pid); }
  void OnDevice(const model::DeviceInfo& e) override { Add("D", e.device); }
  void OnKernel(const model::KernelEvent& e) override { Add("K", e.start_ns); }
  void OnMemcpy(const model::MemcpyEvent& e) override { Add("C", e.start_ns); }
  void OnMemset(const model::MemsetEvent& e) override { Add("S", e.start_ns); }
  void OnSync(const model::SyncEvent& e) override { Add("Y", e.start_ns); }
  void OnApiCall(const model::ApiCallEvent& e) override { Add("A", e.start_ns); }
  void OnNvtx(const model::NvtxEvent& e) override { Add("N", e.start_ns); }
  void OnViewRange(const model::ViewRangeEvent& e) override { Add("V", e.start_ns); }
  void OnDataQuality(uint32_t pid, model::DataQuality c, uint64_t n) override {
    Add("Q", pid * 1000 + static_cast<int64_t>(c) * 10 + static_cast<int64_t>(n));
  }
  std::vector<std::string> seen;

 private:
  void Add(const char* kind, int64_t v) { seen.push_back(kind + std::to_string(v)); }
};

void Feed(model::EventSink* s, int n) {
  s->OnProcess(model::ProcessInfo{7, 0, 1, model::kNoName});
  s->OnDevice(model::DeviceInfo{7, 3, model::kNoName});
  for (int i = 0; i < n; ++i) {
    const int64_t t = 1000 + i;
    switch (i % 7) {
      case 0: {
        model::KernelEvent e;
        e.start_ns = t;
        s->OnKernel(e);
        break;
      }
      case 1: {
        model::MemcpyEvent e;
        e.start_ns = t;
        s->OnMemcpy(e);
        break;
      }
      case 2: {
        model::MemsetEvent e;
        e.start_ns = t;
        s->OnMemset(e);
        break;
      }
      case 3: {
        model::SyncEvent e;
        e.start_ns = t;
        s->OnSync(e);
        break;
      }
      case 4: {
        model::ApiCallEvent e;
        e.start_ns = t;
        s->OnApiCall(e);
        break;
      }
      case 5: {
        model::NvtxEvent e;
        e.start_ns = t;
        s->OnNvtx(e);
        break;
      }
      default:
        s->OnDataQuality(7, model::DataQuality::kMalformedEvent, 2);
        break;
    }
  }
}

TEST(PipelinedSinkTest, DeliversEverythingInOrder) {
  RecordingSink direct;
  Feed(&direct, 10'000);
  RecordingSink downstream;
  {
    PipelinedSink pipe(&downstream, /*batch_events=*/64, /*max_batches=*/2);
    Feed(&pipe, 10'000);
    pipe.Close();
    EXPECT_EQ(downstream.seen, direct.seen);  // complete as soon as Close() returns
  }
}

// Runs of view ranges (OnViewRanges) travel beside the events and arrive where they were sent:
// between events, several in a row, first and last, and across batch boundaries.
TEST(PipelinedSinkTest, DeliversRunsOfViewRangesInPlace) {
  auto feed = [](model::EventSink* s) {
    std::vector<model::ViewRangeEvent> run;
    int64_t t = 0;
    for (int i = 0; i < 3000; ++i) {
      run.resize(static_cast<size_t>(i % 5 == 0 ? 0 : i % 700));
      for (model::ViewRangeEvent& e : run) e.start_ns = ++t;
      s->OnViewRanges(run.data(), run.size());
      if (i % 3 == 0) s->OnViewRanges(run.data(), run.size());  // two runs in a row
      if (i % 4 != 1) {
        model::KernelEvent k;
        k.start_ns = ++t;
        s->OnKernel(k);
      }
    }
  };
  RecordingSink direct;
  feed(&direct);
  for (size_t batch : {1, 64, 1024}) {
    RecordingSink downstream;
    PipelinedSink pipe(&downstream, batch, /*max_batches=*/2);
    feed(&pipe);
    pipe.Close();
    EXPECT_EQ(downstream.seen.size(), direct.seen.size()) << batch;
    EXPECT_EQ(downstream.seen, direct.seen) << batch;
  }
  EXPECT_GT(direct.seen.size(), 500'000u);
}

TEST(PipelinedSinkTest, TinyQueueStillCompletesUnderBackpressure) {
  RecordingSink downstream;
  PipelinedSink pipe(&downstream, /*batch_events=*/1, /*max_batches=*/1);
  Feed(&pipe, 5'000);
  pipe.Close();
  pipe.Close();  // idempotent
  EXPECT_EQ(downstream.seen.size(), 5'002u);
}

TEST(PipelinedSinkTest, DestructorFlushesWithoutExplicitClose) {
  RecordingSink downstream;
  {
    PipelinedSink pipe(&downstream);
    Feed(&pipe, 100);
  }
  EXPECT_EQ(downstream.seen.size(), 102u);
}

// The pipelined path and the direct path give the same profile on a real trace, with names
// interned on the importer thread while the aggregator classifies them on the other.
TEST(PipelinedSinkTest, RealTraceProfileIsIdenticalToTheDirectPath) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  for (const char* rel : {"TraceLens/b200/eager_trace.json.gz", "nsys-ai/mfu_2gpu_before.sqlite"}) {
    const std::string path = testing::SharedTrace(rel);
    model::KernelClassifier classifier;
    model::NameTable names_a, names_b;
    const auto direct = aggregate::AggregateWholeTrace(
        {}, &names_a, &classifier,
        [&](model::EventSink* s) { ASSERT_TRUE(ImportTrace(path, &names_a, s).ok()); });
    const auto piped =
        aggregate::AggregateWholeTrace({}, &names_b, &classifier, [&](model::EventSink* s) {
          PipelinedSink pipe(s, 256, 4);
          ASSERT_TRUE(ImportTrace(path, &names_b, &pipe).ok());
          pipe.Close();
        });
    ASSERT_EQ(direct.processes.size(), piped.processes.size()) << rel;
    for (size_t p = 0; p < direct.processes.size(); ++p) {
      const auto& da = direct.processes[p].devices;
      const auto& db = piped.processes[p].devices;
      ASSERT_EQ(da.size(), db.size()) << rel;
      for (size_t d = 0; d < da.size(); ++d) {
        EXPECT_EQ(da[d].busy_ns, db[d].busy_ns) << rel;
        EXPECT_EQ(da[d].compute_ns, db[d].compute_ns) << rel;
        EXPECT_EQ(da[d].kernel_count, db[d].kernel_count) << rel;
        EXPECT_EQ(da[d].idle_gaps.host_wait.total_ns, db[d].idle_gaps.host_wait.total_ns) << rel;
        ASSERT_EQ(da[d].top_kernels.size(), db[d].top_kernels.size()) << rel;
        for (size_t k = 0; k < da[d].top_kernels.size(); ++k) {
          EXPECT_EQ(da[d].top_kernels[k].name, db[d].top_kernels[k].name) << rel;
          EXPECT_EQ(da[d].top_kernels[k].duration.total_ns, db[d].top_kernels[k].duration.total_ns);
        }
      }
    }
  }
}

}  // namespace
}  // namespace inferscope::import
