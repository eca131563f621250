// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// What each `analyze --views` view costs on its own: a real trace's events, recorded once, replayed
// into the whole-trace Aggregator (the work the views sit beside) and into a ViewCollector with
// one view on (no Aggregator behind it). Single-threaded and free of I/O and parsing, so the
// ratio is steady on a loaded machine where end-to-end times swing.
//   view_collector_benchmark              the shared df_index_resolver (Kineto) and
//                                         mfu_2gpu_before (Nsight) traces
//   view_collector_benchmark --file=PATH  any trace

#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>

#include "src/aggregate/aggregator.h"
#include "src/aggregate/view_collector.h"
#include "src/import/trace_importer.h"
#include "src/model/event_buffer.h"
#include "tests/trace_paths.h"

namespace inferscope::aggregate {
namespace {

struct Recorded {
  model::NameTable names;
  model::EventBuffer events;
  bool ok = false;
};

std::shared_ptr<Recorded> Record(const std::string& path) {
  auto r = std::make_shared<Recorded>();
  if (path.empty()) return r;
  import::ImportOptions options;
  options.host_ops = true;          // what the ops view reads
  options.gpu_annotations = true;   // and the ranges view
  options.kernel_resources = true;  // and the kernel statistics' launch configurations
  r->ok = import::ImportTrace(path, &r->names, &r->events, options).ok();
  return r;
}

void BM_Aggregator(benchmark::State& state, std::shared_ptr<Recorded> r) {
  if (!r->ok) return state.SkipWithError("trace not available");
  model::KernelClassifier classifier;
  for (auto _ : state) {
    model::ProfileWindow w = AggregateWholeTrace(
        {}, &r->names, &classifier, [&](model::EventSink* sink) { r->events.ReplayInto(sink); });
    benchmark::DoNotOptimize(w.processes.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * r->events.size()));
}

// Only the replay (the benchmark's own cost in every BM_View: decoding the recorded events and one
// virtual call each), to read a view's own cost as BM_View minus this.
struct NullSink final : model::EventSink {
  void OnProcess(const model::ProcessInfo&) override {}
  void OnDevice(const model::DeviceInfo&) override {}
  void OnKernel(const model::KernelEvent& e) override { sum += e.end_ns; }
  void OnMemcpy(const model::MemcpyEvent&) override {}
  void OnMemset(const model::MemsetEvent&) override {}
  void OnSync(const model::SyncEvent&) override {}
  void OnApiCall(const model::ApiCallEvent& e) override { sum += e.end_ns; }
  void OnNvtx(const model::NvtxEvent& e) override { sum += e.end_ns; }
  void OnDataQuality(uint32_t, model::DataQuality, uint64_t) override {}
  int64_t sum = 0;
};

void BM_ReplayOnly(benchmark::State& state, std::shared_ptr<Recorded> r) {
  if (!r->ok) return state.SkipWithError("trace not available");
  for (auto _ : state) {
    NullSink sink;
    r->events.ReplayInto(&sink);
    benchmark::DoNotOptimize(sink.sum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * r->events.size()));
}

void BM_View(benchmark::State& state, std::shared_ptr<Recorded> r, model::ViewSelection selection) {
  if (!r->ok) return state.SkipWithError("trace not available");
  model::KernelClassifier classifier;
  ViewOptions options;
  options.selection = selection;
  for (auto _ : state) {
    ViewCollector views(options, &r->names, &classifier, nullptr);
    r->events.ReplayInto(&views);
    model::TraceViews v = views.Finish();
    benchmark::DoNotOptimize(v.processes.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * r->events.size()));
}

void Register(const std::string& name, const std::string& path) {
  auto r = Record(path);
  benchmark::RegisterBenchmark((name + "/aggregator").c_str(), BM_Aggregator, r)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark((name + "/replay").c_str(), BM_ReplayOnly, r)
      ->Unit(benchmark::kMillisecond);
  const std::pair<const char*, model::ViewSelection> kViews[] = {
      {"kernels", {true, false, false, false, false}},
      {"streams", {false, true, false, false, false}},
      {"steps", {false, false, true, false, false}},
      {"ranges", {false, false, false, true, false}},
      {"ops", {false, false, false, false, true}},
      {"all", {true, true, true, true, true}}};
  for (const auto& [view, selection] : kViews)
    benchmark::RegisterBenchmark((name + "/views:" + view).c_str(), BM_View, r, selection)
        ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace inferscope::aggregate

int main(int argc, char** argv) {
  using inferscope::aggregate::Register;
  const std::string file = inferscope::testing::TakeFileFlag(&argc, argv);
  if (!file.empty()) {
    Register("BM_Replay/file", file);
  } else {
    const std::string kineto = inferscope::testing::SharedTrace(
        "HolisticTraceAnalysis/df_index_resolver/df_index_resolver.json.gz");
    if (kineto.empty()) {
      std::fprintf(stderr,
                   "view_collector_benchmark: ../shared/traces not found (set "
                   "INFERSCOPE_SHARED_TRACES or pass --file=PATH); skipping\n");
      return 0;
    }
    Register("BM_Replay/df_index_resolver", kineto);
    Register("BM_Replay/mfu_2gpu_before",
             inferscope::testing::SharedTrace("nsys-ai/mfu_2gpu_before.sqlite"));
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
