// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The fields of a range table in JSON (docs/report-schema.md, views `ranges`), for every document
// that shows one: the report's views and the fleet view's groups (`report --source
// clickhouse://...`). Its own header so that those documents do not pull in the whole report
// interface.

#include <cstdint>
#include <vector>

#include "src/base/json_writer.h"
#include "src/model/views.h"

namespace inferscope::report {

// Writes `instances`, `list` (each `{name, duration, gpu: {ops, time_ns}}`) and `other`
// (`{distinct_names, count, total_ns, gpu}`) into the object the caller opened. `exact`: the
// durations carry order statistics (traces); else (live windows) median, p99 and stddev are null.
void WriteRangeTableFields(base::JsonWriter& w, uint64_t instances,
                           const std::vector<model::RangeRow>& rows, uint64_t tail_names,
                           const model::RangeRow& tail, bool exact);

}  // namespace inferscope::report
