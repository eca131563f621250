// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Fuzzes GpuMetricsWindow::FromJson (the store's stored form): never crashes, and whatever it
// accepts writes back to JSON that reads back to the same window.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "src/telemetry/nvml/gpu_metrics_window.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto w = inferscope::telemetry::GpuMetricsWindow::FromJson(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!w.ok()) return 0;
  inferscope::base::JsonWriter writer;
  w->WriteJson(writer);
  auto back = inferscope::telemetry::GpuMetricsWindow::FromJson(writer.str());
  if (!back.ok()) abort();
  inferscope::base::JsonWriter again;
  back->WriteJson(again);
  if (again.str() != writer.str() || !(*back == *w)) abort();
  // Merging must not crash either.
  back->Merge(*w);
  return 0;
}
