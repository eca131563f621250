// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The tools/list answer. Kept terse on purpose: every client puts these definitions in its
// model's context on every turn, so all six together stay under 2,000 tokens (mcp_tools_test).

#include <string>
#include <string_view>

#include "src/mcp/tools.h"

namespace inferscope::mcp {
namespace {

// Shared argument schemas, spliced into each tool's inputSchema.
#define RANGE_SCHEMA                                                                            \
  R"("range":{"type":"object","description":"default {\"last\":\"15m\"}; or from/to",)"         \
  R"("properties":{"last":{"type":"string"},"from":{"type":"string"},"to":{"type":"string"}},)" \
  R"("additionalProperties":false})"
#define FILTERS_SCHEMA                                                                             \
  R"("filters":{"type":"object","properties":{"host":{"type":"string"},"pid":{"type":"integer"},)" \
  R"("rank":{"type":"integer"},"device":{"type":"integer"},"engine":{"type":"string"}},)"          \
  R"("additionalProperties":false})"
#define CUT_PROPS R"("truncated":{"type":"boolean"},"hint":{"type":"string"})"

constexpr std::string_view kDefinitions =
    R"([)"
    R"({"name":"list_targets","description":"Hosts, processes, ranks, GPUs, engines and models with data in the range: the values filters take.",)"
    R"("inputSchema":{"type":"object","properties":{)" RANGE_SCHEMA
    R"(},"additionalProperties":false},)"
    R"("outputSchema":{"type":"object","properties":{"targets":{"type":"array","items":{"type":"object"}},"engines":{"type":"array"},"models":{"type":"array"},)" CUT_PROPS
    R"(},"required":["targets","truncated"]}},)"

    R"({"name":"get_context","description":"Start here. One bounded text for the range: diagnosis with evidence, GPU time by category and kernel, idle causes, syncs, GPU metrics, engine latencies, data quality, tags. budget in tokens (default 6000).",)"
    R"("inputSchema":{"type":"object","properties":{)" RANGE_SCHEMA "," FILTERS_SCHEMA
    R"(,"budget":{"type":"integer","minimum":200,"maximum":8000}},"additionalProperties":false},)"
    R"("outputSchema":{"type":"object","properties":{"text":{"type":"string"},"tokens":{"type":"integer"},"omitted":{"type":"array","items":{"type":"string"}},)" CUT_PROPS
    R"(},"required":["text","truncated"]}},)"

    R"({"name":"get_breakdown","description":"GPU time by category, subcategory, kernel or rank (busy time), heaviest first, with the rest as one row.",)"
    R"("inputSchema":{"type":"object","properties":{)" RANGE_SCHEMA "," FILTERS_SCHEMA
    R"(,"group_by":{"enum":["category","subcategory","kernel","rank"]},"top_n":{"type":"integer","minimum":1,"maximum":100}},"additionalProperties":false},)"
    R"("outputSchema":{"type":"object","properties":{"total_ns":{"type":"integer"},"rows":{"type":"array","items":{"type":"object","required":["key","time_ns","share_pct"]}},"rest":{"type":"object"},)" CUT_PROPS
    R"(},"required":["rows","rest","truncated"]}},)"

    R"({"name":"get_findings","description":"The diagnosis: findings most important first, with severity, share of GPU time at stake, evidence and fixes.",)"
    R"("inputSchema":{"type":"object","properties":{)" RANGE_SCHEMA "," FILTERS_SCHEMA
    R"(},"additionalProperties":false},)"
    R"("outputSchema":{"type":"object","properties":{"findings":{"type":"array","items":{"type":"object","required":["id","severity","score","summary"]}},)" CUT_PROPS
    R"(},"required":["findings","truncated"]}},)"

    R"({"name":"compare","description":"What changed from range_a (baseline) to range_b: busy share, category and kernel shares, findings; with NVTX ranges (run --nvtx), ranges: the top 10 range names by GPU time change, other, notes. For regressions.",)"
    R"("inputSchema":{"type":"object","properties":{"range_a":{"$ref":"#/$defs/r"},"range_b":{"$ref":"#/$defs/r"},)" FILTERS_SCHEMA
    R"(},"additionalProperties":false,)"
    R"("$defs":{"r":{"type":"object","properties":{"last":{"type":"string"},"from":{"type":"string"},"to":{"type":"string"}},"additionalProperties":false}}},)"
    R"("outputSchema":{"type":"object","properties":{"a":{"type":"object"},"b":{"type":"object"},"categories":{"type":"array"},"kernels":{"type":"array"},"ranges":{"type":"object"},)" CUT_PROPS
    R"(},"required":["a","b","categories","kernels","truncated"]}},)"

    R"({"name":"get_timeseries","description":"One metric over the range in steps: busy_pct, idle_pct or <category>_pct (e.g. attention_pct). Points are [seconds from start, value].",)"
    R"("inputSchema":{"type":"object","properties":{)" RANGE_SCHEMA "," FILTERS_SCHEMA
    R"(,"metric":{"type":"string"},"step":{"type":"string","description":"e.g. 10s; default: about 60 points"}},"additionalProperties":false},)"
    R"("outputSchema":{"type":"object","properties":{"metric":{"type":"string"},"step_s":{"type":"number"},"points":{"type":"array","items":{"type":"array","items":{"type":"number"}}},)" CUT_PROPS
    R"(},"required":["metric","points","truncated"]}})"
    R"(])";

#undef RANGE_SCHEMA
#undef FILTERS_SCHEMA
#undef CUT_PROPS

}  // namespace

const std::string& Tools::DefinitionsJson() {
  static const std::string* json = new std::string(kDefinitions);
  return *json;
}

bool Tools::Has(std::string_view name) {
  return name == "list_targets" || name == "get_context" || name == "get_breakdown" ||
         name == "get_findings" || name == "compare" || name == "get_timeseries";
}

}  // namespace inferscope::mcp
