// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The ClickHouse-side parsers on arbitrary bytes: the credentials file, URLs, labels, error lines
// and TabSeparated answers (also folded as phase and range rows of the fleet reads, and read as
// launch configuration keys, which must re-encode to the same text), and the
// sink's split of (spooled) JSONEachRow bodies into inserts. None may crash; a parsed
// TabSeparated answer has rows of one width; every insert row starts with its batch id.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "src/fleet/query/fleet_profile.h"
#include "src/fleet/query/fleet_query.h"
#include "src/fleet/sink/clickhouse_config.h"
#include "src/fleet/sink/row_encoder.h"

using namespace inferscope::fleet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseCredentials(text);
  (void)ParseClickHouseUrl(text);
  (void)ParseClickHouseUrl("clickhouses://" + std::string(text));  // the TLS parameters
  RowBatch batch;
  batch.body[RowBatch::kTelemetry] = std::string(text);
  uint64_t id = 0;
  for (const Insert& in : SplitIntoInserts(batch, [&] { return ++id; }))
    if (in.rows == 0 || in.body.rfind("{\"batch_id\":" + std::to_string(in.batch_id) + ",", 0) != 0)
      std::abort();
  Labels labels;
  (void)ParseLabel(text, &labels);
  (void)ClickHouseErrorLine(text);
  inferscope::model::LaunchConfig config;
  if (ParseLaunchConfigKey(std::string(text), &config)) {
    // A key that parses is ten plain integers: written back the way ClickHouse writes it, it
    // parses to the same configuration.
    std::string again = "[";
    for (int32_t v : config.key()) again += (again.size() > 1 ? "," : "") + std::to_string(v);
    inferscope::model::LaunchConfig back;
    if (!ParseLaunchConfigKey(again + "]", &back) || back.key() != config.key()) std::abort();
  }
  auto rows = ParseTabSeparated(text);
  if (rows.ok()) {
    inferscope::model::PhaseSplit split;
    inferscope::model::RangeTable ranges;
    for (const auto& row : *rows) {
      if (row.size() != rows->front().size()) std::abort();
      for (size_t at : {size_t{0}, size_t{1}}) {
        (void)FoldPhaseRow(row, at, &split);
        (void)FoldPhaseCategoryRow(row, at, &split);
        (void)FoldRangeRow(row, at, &ranges);
      }
    }
    ranges.Trim(20, /*sort=*/true);
  }
  return 0;
}
