// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The registry of host telemetry kinds this build knows (src/telemetry/telemetry_kind.h):
// the store's telemetry records, the range query's merge, the report's telemetry sections and
// `diff` all iterate it, so a new kind is one line in telemetry_kinds.cc.

#include "src/telemetry/telemetry_kind.h"

namespace inferscope::telemetry {

// The process-wide registry, built-in kinds first (GPU metrics, engine metrics, request spans:
// the report's order).
telemetry::TelemetryRegistry& TelemetryKinds();

}  // namespace inferscope::telemetry
