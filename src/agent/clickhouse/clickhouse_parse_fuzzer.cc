// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The ClickHouse-side parsers on arbitrary bytes: the credentials file, URLs, labels, error lines
// and TabSeparated answers. None may crash; a parsed TabSeparated answer has rows of one width.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "src/agent/clickhouse/clickhouse_config.h"
#include "src/agent/clickhouse/fleet_query.h"

using namespace inferscope::agent::clickhouse;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseCredentials(text);
  (void)ParseClickHouseUrl(text);
  Labels labels;
  (void)ParseLabel(text, &labels);
  (void)ClickHouseErrorLine(text);
  auto rows = ParseTabSeparated(text);
  if (rows.ok())
    for (const auto& row : *rows)
      if (row.size() != rows->front().size()) std::abort();
  return 0;
}
