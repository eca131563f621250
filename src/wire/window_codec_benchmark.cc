// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Encode/decode cost of a realistic window: one process, one GPU, 20 top kernels with histograms,
// a 100-bin timeline (10 s at 100 ms), syncs with waited-on lists.

#include <benchmark/benchmark.h>

#include <string>

#include "src/wire/framing.h"
#include "src/wire/test_windows.h"
#include "src/wire/window_codec.h"

namespace inferscope::wire {
namespace {

model::ProfileWindow RealisticWindow() {
  model::ProfileWindow w = testing::FullWindow(/*top_kernels=*/20, /*bins=*/100);
  w.processes.resize(1);
  w.processes[0].devices.resize(1);
  return w;
}

void BM_EncodeWindow(benchmark::State& state) {
  const model::ProfileWindow w = RealisticWindow();
  std::string out;
  for (auto _ : state) {
    out.clear();
    EncodeWindow(w, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["bytes"] = static_cast<double>(out.size());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
}
BENCHMARK(BM_EncodeWindow);

void BM_DecodeWindow(benchmark::State& state) {
  std::string bytes;
  EncodeWindow(RealisticWindow(), &bytes);
  for (auto _ : state) {
    auto w = DecodeWindow(bytes);
    benchmark::DoNotOptimize(w.ok());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(BM_DecodeWindow);

void BM_FrameRoundTrip(benchmark::State& state) {
  std::string payload;
  EncodeWindow(RealisticWindow(), &payload);
  std::string stream;
  Frame frame;
  for (auto _ : state) {
    stream.clear();
    (void)FrameWriter::Append(FrameType::kWindow, payload, &stream);
    FrameReader reader;
    reader.Append(stream);
    benchmark::DoNotOptimize(reader.Next(&frame));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * stream.size()));
}
BENCHMARK(BM_FrameRoundTrip);

}  // namespace
}  // namespace inferscope::wire

BENCHMARK_MAIN();
