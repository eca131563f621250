// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/registry/telemetry_kinds.h"

#include "src/telemetry/nvml/gpu_metrics_window.h"
#include "src/telemetry/otlp/span_window.h"
#include "src/telemetry/scrape/engine_window.h"

namespace inferscope::telemetry {

telemetry::TelemetryRegistry& TelemetryKinds() {
  // The one list of kinds. The order is the report's (text sections and JSON keys): changing it
  // changes every report.
  static auto* registry = new telemetry::TelemetryRegistry({
      &GpuMetricsKind(),
      &telemetry::scrape::EngineMetricsKind(),
      &telemetry::otlp::SpanKind(),
  });
  return *registry;
}

}  // namespace inferscope::telemetry
