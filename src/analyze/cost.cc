// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/analyze/cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <utility>

#include "src/base/file.h"
#include "src/base/human_format.h"

namespace inferscope::analyze {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<double> PriceFor(const std::string& device_name, const CostInputs& inputs) {
  if (inputs.gpu_hourly_usd) return inputs.gpu_hourly_usd;
  const std::string name = Lower(device_name);
  for (const GpuPriceTable::Entry& e : inputs.table.entries)
    if (!e.match.empty() && name.find(Lower(e.match)) != std::string::npos) return e.usd_per_hour;
  return inputs.table.default_usd_per_hour;
}

bool Positive(const std::optional<double>& v) { return v && std::isfinite(*v) && *v > 0; }

CostShare Share(std::string name, double share, const Cost& cost) {
  CostShare s;
  s.name = std::move(name);
  s.share = share;
  if (cost.usd_per_request) s.usd_per_request = *cost.usd_per_request * share;
  if (cost.usd_per_million_tokens) s.usd_per_million_tokens = *cost.usd_per_million_tokens * share;
  return s;
}

}  // namespace

base::StatusOr<GpuPriceTable> ParseGpuPriceTable(std::string_view text) {
  GpuPriceTable table;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (const size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;
    const size_t eq = line.rfind('=');
    auto bad = [line_no](const std::string& why) {
      return base::InvalidArgumentError(fmt::format("line {}: {}", line_no, why));
    };
    if (eq == std::string_view::npos) return bad("expected MODEL = USD_PER_HOUR");
    std::string_view model = Trim(line.substr(0, eq));
    const std::string_view value = Trim(line.substr(eq + 1));
    if (model.size() >= 2 && model.front() == '"' && model.back() == '"')
      model = model.substr(1, model.size() - 2);
    if (model.empty()) return bad("empty GPU model before '='");
    double price = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), price);
    if (ec != std::errc() || ptr != value.data() + value.size() || !std::isfinite(price) ||
        price < 0)
      return bad("'" + std::string(value) + "' is not a price in USD per hour");
    if (model == "default")
      table.default_usd_per_hour = price;
    else
      table.entries.push_back({std::string(model), price});
  }
  return table;
}

Cost ComputeCost(const Analysis& analysis, const CostInputs& inputs) {
  Cost cost;
  std::set<std::pair<std::string, uint32_t>> seen;
  for (const RankAnalysis& r : analysis.ranks) {
    if (!seen.insert({r.hostname, r.device}).second) continue;  // two processes, one GPU
    const auto price = PriceFor(r.device_name, inputs);
    if (!price) {
      cost.reason = r.device_name.empty()
                        ? fmt::format(
                              "no price for GPU {} (its model is unknown): give "
                              "--gpu-hourly-cost or a 'default' price",
                              r.device)
                        : fmt::format(
                              "no price for GPU '{}': add it to the price table or give "
                              "--gpu-hourly-cost",
                              r.device_name);
      return cost;
    }
    cost.usd_per_hour += *price;
  }
  cost.gpus = seen.size();
  if (cost.gpus == 0) {
    cost.reason = "no GPU activity in the range";
    return cost;
  }
  cost.available = true;
  const double usd_per_s = cost.usd_per_hour / 3600.0;
  if (Positive(inputs.requests_per_s)) cost.usd_per_request = usd_per_s / *inputs.requests_per_s;
  if (Positive(inputs.generation_tokens_per_s))
    cost.usd_per_million_tokens = usd_per_s / *inputs.generation_tokens_per_s * 1e6;

  // GPU time: the busy part split by category in proportion to kernel time (concurrent kernels
  // both count, so kernel time can exceed busy time: proportions, not raw times), plus idle.
  const JobSummary& s = analysis.summary;
  if (s.temporal.span_ns > 0) {
    const double busy =
        std::clamp(static_cast<double>(s.temporal.busy_ns) / s.temporal.span_ns, 0.0, 1.0);
    std::vector<std::pair<int64_t, std::string>> cats;
    for (const CategoryRow& c : s.categories)
      if (c.time_ns > 0) cats.push_back({c.time_ns, c.name});
    std::sort(cats.begin(), cats.end(), std::greater<>());
    const double kernel_time = static_cast<double>(s.kernel_time_ns);
    if (kernel_time > 0)
      for (const auto& [t, name] : cats)
        cost.by_category.push_back(Share(name, busy * static_cast<double>(t) / kernel_time, cost));
    cost.by_category.push_back(Share("idle", kernel_time > 0 ? 1 - busy : 1, cost));
  }

  // Request stages: queue, prefill and decode as shares of the end-to-end latency; the rest
  // (tokenization, detokenization, network) is "other".
  if (Positive(inputs.e2e_mean_s) && inputs.queue_mean_s && inputs.prefill_mean_s &&
      inputs.decode_mean_s) {
    const double q = std::max(*inputs.queue_mean_s, 0.0);
    const double p = std::max(*inputs.prefill_mean_s, 0.0);
    const double d = std::max(*inputs.decode_mean_s, 0.0);
    const double total = std::max(*inputs.e2e_mean_s, q + p + d);
    cost.by_stage.push_back(Share("queue", q / total, cost));
    cost.by_stage.push_back(Share("prefill", p / total, cost));
    cost.by_stage.push_back(Share("decode", d / total, cost));
    cost.by_stage.push_back(Share("other", (total - q - p - d) / total, cost));
  }
  return cost;
}

void WriteCostJson(const Cost& cost, base::JsonWriter& w) {
  // Per 1,000 requests: JsonWriter rounds to 4 decimals, which would zero a per-request cost.
  auto opt = [&w](const char* key, const std::optional<double>& v, double scale = 1) {
    w.Key(key);
    if (v)
      w.Double(*v * scale);
    else
      w.Null();
  };
  auto shares = [&](const char* key, const std::vector<CostShare>& list) {
    w.Key(key).BeginArray();
    for (const CostShare& s : list) {
      w.BeginObject();
      w.Key("name").String(s.name);
      w.Key("share").Double(s.share);
      opt("usd_per_1k_requests", s.usd_per_request, 1e3);
      opt("usd_per_million_tokens", s.usd_per_million_tokens);
      w.EndObject();
    }
    w.EndArray();
  };
  w.BeginObject();
  w.Key("available").Bool(cost.available);
  w.Key("reason").String(cost.reason);
  w.Key("gpus").UInt(cost.gpus);
  w.Key("usd_per_hour").Double(cost.usd_per_hour);
  opt("usd_per_1k_requests", cost.usd_per_request, 1e3);
  opt("usd_per_million_tokens", cost.usd_per_million_tokens);
  shares("by_category", cost.by_category);
  shares("by_stage", cost.by_stage);
  w.EndObject();
}

void RenderCostText(const Cost& cost, std::string* out) {
  if (!cost.available) {
    *out += "cost: not available (" + cost.reason + ")\n";
    return;
  }
  *out += fmt::format("{} GPU{} at {}/h", cost.gpus, cost.gpus == 1 ? "" : "s",
                      base::FormatUsd(cost.usd_per_hour));
  if (cost.usd_per_request)
    *out += fmt::format(", {} per request", base::FormatUsd(*cost.usd_per_request));
  if (cost.usd_per_million_tokens)
    *out += fmt::format(", {} per million generated tokens",
                        base::FormatUsd(*cost.usd_per_million_tokens));
  *out += "\n";
  if (!cost.usd_per_request && !cost.usd_per_million_tokens)
    *out += "  (no request or token rates from the engine: per-request cost unknown)\n";
  auto list = [out](const char* title, const std::vector<CostShare>& shares) {
    if (shares.empty()) return;
    *out += std::string("  by ") + title + ":\n";
    for (const CostShare& s : shares) {
      if (s.share < 0.005) continue;  // under half a percent: noise in a cost table
      *out += fmt::format("    {:<16} {:>5.1f}%", s.name, s.share * 100);
      if (s.usd_per_request) *out += "  " + base::FormatUsd(*s.usd_per_request) + "/request";
      if (s.usd_per_million_tokens)
        *out += "  " + base::FormatUsd(*s.usd_per_million_tokens) + "/M tokens";
      *out += "\n";
    }
  };
  list("category (share of GPU time)", cost.by_category);
  list("stage (share of e2e latency)", cost.by_stage);
}

base::StatusOr<GpuPriceTable> LoadGpuPriceTableFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, base::ReadSmallFile(path, "the GPU price table"));
  auto table = ParseGpuPriceTable(text);
  if (!table.ok()) return base::InvalidArgumentError(path + ": " + table.status().message());
  return table;
}

}  // namespace inferscope::analyze
