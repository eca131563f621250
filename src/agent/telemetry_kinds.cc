// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agent/telemetry_kinds.h"

#include "src/agent/nvml/gpu_metrics_window.h"
#include "src/agent/otlp/span_window.h"
#include "src/agent/scrape/engine_window.h"

namespace inferscope::agent {

collector::TelemetryRegistry& TelemetryKinds() {
  // The one list of kinds. The order is the report's (text sections and JSON keys): changing it
  // changes every report.
  static auto* registry = new collector::TelemetryRegistry({
      &GpuMetricsKind(),
      &scrape::EngineMetricsKind(),
      &otlp::SpanKind(),
  });
  return *registry;
}

}  // namespace inferscope::agent
