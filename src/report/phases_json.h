// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The JSON value of a report's `phases` key (docs/report-schema.md), for other documents that
// show a forward-phase split the same way (the fleet view, `report --source clickhouse://`). Its
// own header so that those documents do not pull in the whole report interface.

#include "src/analyze/analysis.h"
#include "src/base/json_writer.h"

namespace inferscope::report {

void WritePhasesJson(base::JsonWriter& w, const analyze::PhaseSummary& phases);

}  // namespace inferscope::report
