// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/scrape/engine_window.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "src/base/human_format.h"

namespace inferscope::telemetry::scrape {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Moves per-bucket `counts` over `from` onto the buckets of `to` (both: finite ascending upper
// bounds, counts with one extra +Inf bucket). A finite source bucket is spread over the target
// buckets it overlaps in proportion to the overlap; the +Inf bucket, and a first bucket without a
// finite lower edge, go whole to the target bucket holding their upper edge.
std::vector<double> Rebucket(const std::vector<double>& from, const std::vector<double>& counts,
                             const std::vector<double>& to) {
  std::vector<double> out(to.size() + 1, 0.0);
  if (from == to) {
    for (size_t i = 0; i < out.size() && i < counts.size(); ++i) out[i] = counts[i];
    return out;
  }
  auto bucket_holding = [&to](double value) {
    return size_t(std::lower_bound(to.begin(), to.end(), value) - to.begin());
  };
  for (size_t i = 0; i < counts.size(); ++i) {
    const double c = counts[i];
    if (c == 0) continue;
    if (i >= from.size()) {  // +Inf
      out[to.size()] += c;
      continue;
    }
    const double hi = from[i];
    const double lo = i == 0 ? (hi > 0 ? 0.0 : -kInf) : from[i - 1];
    if (!(hi - lo < kInf) || hi <= lo) {
      out[bucket_holding(hi)] += c;
      continue;
    }
    double assigned = 0;
    for (size_t j = bucket_holding(lo); j <= to.size(); ++j) {
      const double t_hi = j < to.size() ? to[j] : kInf;
      const double t_lo = j == 0 ? (to.empty() || to[0] > 0 ? 0.0 : -kInf) : to[j - 1];
      if (t_lo >= hi) break;
      const double overlap = std::min(hi, t_hi) - std::max(lo, t_lo);
      if (overlap <= 0) continue;
      const double part = overlap >= hi - lo ? c : c * (overlap / (hi - lo));
      out[j] += part;
      assigned += part;
    }
    // Whatever fell outside the target's range (negative bounds) stays with the upper edge.
    if (assigned < c) out[bucket_holding(hi)] += c - assigned;
  }
  return out;
}

// Doubles are written so that FromJson gives back the very same value: JsonWriter::Double rounds
// to 4 decimals, so a value that rounding would change goes out as a string with its shortest
// exact form (readers accept both).
void WriteExact(base::JsonWriter& w, double value) {
  if (std::isfinite(value) && std::fabs(value) < 1e15 && std::round(value * 1e4) / 1e4 == value &&
      !(value == 0 && std::signbit(value))) {
    w.Double(value);
    return;
  }
  if (std::isnan(value)) return w.String("NaN");
  if (std::isinf(value)) return w.String(value > 0 ? "+Inf" : "-Inf");
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  w.String(std::string_view(buffer, size_t(result.ptr - buffer)));
}

void WriteGauge(base::JsonWriter& w, const GaugeStats& g) {
  w.BeginObject();
  w.Key("min");
  WriteExact(w, g.min);
  w.Key("max");
  WriteExact(w, g.max);
  w.Key("sum");
  WriteExact(w, g.sum);
  w.Key("samples").UInt(g.samples);
  w.EndObject();
}

void WriteHistogram(base::JsonWriter& w, const StageHistogram& h) {
  w.BeginObject();
  w.Key("bounds").BeginArray();
  for (double b : h.bounds) WriteExact(w, b);
  w.EndArray();
  w.Key("counts").BeginArray();
  for (double c : h.counts) WriteExact(w, c);
  w.EndArray();
  w.Key("sum");
  WriteExact(w, h.sum);
  w.Key("count");
  WriteExact(w, h.count);
  w.EndObject();
}

// --- Reading back -----------------------------------------------------------------------------

using simdjson::dom::element;

base::Status Malformed(std::string_view what) {
  return base::DataLossError("engine metrics window JSON: " + std::string(what));
}

bool ReadDouble(element e, double* out) {
  switch (e.type()) {
    case simdjson::dom::element_type::INT64:
      *out = double(int64_t(e));
      return true;
    case simdjson::dom::element_type::UINT64:
      *out = double(uint64_t(e));
      return true;
    case simdjson::dom::element_type::DOUBLE:
      *out = double(e);
      return true;
    case simdjson::dom::element_type::STRING: {
      const std::string_view s = std::string_view(e);
      if (s == "NaN") {
        *out = std::numeric_limits<double>::quiet_NaN();
        return true;
      }
      if (s == "+Inf" || s == "-Inf") {
        *out = s[0] == '+' ? kInf : -kInf;
        return true;
      }
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
      return ec == std::errc() && ptr == s.data() + s.size();
    }
    default:
      return false;
  }
}

bool ReadDoubleField(simdjson::dom::object o, std::string_view key, double* out) {
  element e;
  if (o[key].get(e) != simdjson::SUCCESS) return false;
  return ReadDouble(e, out);
}

bool ReadUIntField(simdjson::dom::object o, std::string_view key, uint64_t* out) {
  element e;
  if (o[key].get(e) != simdjson::SUCCESS) return false;
  if (e.is_uint64()) {
    *out = uint64_t(e);
    return true;
  }
  if (e.is_int64() && int64_t(e) >= 0) {
    *out = uint64_t(int64_t(e));
    return true;
  }
  return false;
}

bool ReadIntField(simdjson::dom::object o, std::string_view key, int64_t* out) {
  element e;
  if (o[key].get(e) != simdjson::SUCCESS || !e.is_int64()) return false;
  *out = int64_t(e);
  return true;
}

bool ReadStringField(simdjson::dom::object o, std::string_view key, std::string* out) {
  std::string_view s;
  if (o[key].get(s) != simdjson::SUCCESS) return false;
  out->assign(s);
  return true;
}

bool ReadGauge(element e, GaugeStats* g) {
  simdjson::dom::object o;
  if (e.get(o) != simdjson::SUCCESS) return false;
  return ReadDoubleField(o, "min", &g->min) && ReadDoubleField(o, "max", &g->max) &&
         ReadDoubleField(o, "sum", &g->sum) && ReadUIntField(o, "samples", &g->samples);
}

bool ReadDoubleArray(simdjson::dom::object o, std::string_view key, std::vector<double>* out) {
  simdjson::dom::array a;
  if (o[key].get(a) != simdjson::SUCCESS) return false;
  for (element item : a) {
    double v;
    if (!ReadDouble(item, &v)) return false;
    out->push_back(v);
  }
  return true;
}

bool ReadHistogram(element e, StageHistogram* h) {
  simdjson::dom::object o;
  if (e.get(o) != simdjson::SUCCESS) return false;
  if (!ReadDoubleArray(o, "bounds", &h->bounds) || !ReadDoubleArray(o, "counts", &h->counts) ||
      !ReadDoubleField(o, "sum", &h->sum) || !ReadDoubleField(o, "count", &h->count))
    return false;
  if (!h->counts.empty() && h->counts.size() != h->bounds.size() + 1) return false;
  if (h->counts.empty() && !h->bounds.empty()) return false;
  for (size_t i = 1; i < h->bounds.size(); ++i)
    if (!(h->bounds[i - 1] < h->bounds[i])) return false;
  return true;
}

template <typename Enum, size_t N>
bool EnumFromName(std::string_view name, std::string_view (*to_name)(Enum), Enum* out) {
  for (size_t i = 0; i < N; ++i) {
    if (to_name(Enum(i)) == name) {
      *out = Enum(i);
      return true;
    }
  }
  return false;
}

// The report's one duration style (its engine table sits among the profile's tables).
std::string FormatSeconds(double seconds) { return base::FormatSeconds(seconds); }

std::string FormatCount(double value) {
  const double a = std::fabs(value);
  if (a >= 1e6) return fmt::format("{:.1f}M", value / 1e6);
  if (a >= 1e4) return fmt::format("{:.1f}k", value / 1e3);
  if (a >= 100) return fmt::format("{:.0f}", value);
  return fmt::format("{:.1f}", value);
}

// Length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates, at most
// U+10FFFF), or 0.
size_t ValidSequenceLength(std::string_view s, size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  if (lead < 0x80) return 1;
  size_t length;
  uint32_t code;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07;
  } else {
    return 0;
  }
  if (s.size() - i < length) return 0;
  for (size_t k = 1; k < length; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    code = code << 6 | (c & 0x3F);
  }
  if ((length == 3 && (code < 0x800 || (code >= 0xD800 && code <= 0xDFFF))) ||
      (length == 4 && (code < 0x10000 || code > 0x10FFFF)))
    return 0;
  return length;
}

}  // namespace

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = ValidSequenceLength(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string_view CounterSignalName(CounterSignal signal) {
  switch (signal) {
    case CounterSignal::kRequestsFinished:
      return "requests_finished";
    case CounterSignal::kPromptTokens:
      return "prompt_tokens";
    case CounterSignal::kGenerationTokens:
      return "generation_tokens";
    case CounterSignal::kPreemptions:
      return "preemptions";
  }
  return "?";
}

std::string_view GaugeSignalName(GaugeSignal signal) {
  switch (signal) {
    case GaugeSignal::kRunningRequests:
      return "running_requests";
    case GaugeSignal::kWaitingRequests:
      return "waiting_requests";
    case GaugeSignal::kKvCacheUsage:
      return "kv_cache_usage";
  }
  return "?";
}

std::string_view StageName(Stage stage) {
  switch (stage) {
    case Stage::kQueue:
      return "queue";
    case Stage::kPrefill:
      return "prefill";
    case Stage::kDecode:
      return "decode";
    case Stage::kTtft:
      return "ttft";
    case Stage::kInterToken:
      return "inter_token";
    case Stage::kE2e:
      return "e2e";
  }
  return "?";
}

// --- GaugeStats, StageHistogram ---------------------------------------------------------------

void GaugeStats::Add(double value) {
  if (std::isnan(value)) return;
  if (samples == 0) {
    min = max = value;
  } else {
    min = std::min(min, value);
    max = std::max(max, value);
  }
  sum += value;
  ++samples;
}

void GaugeStats::Merge(const GaugeStats& other) {
  if (other.samples == 0) return;
  if (samples == 0) {
    *this = other;
    return;
  }
  min = std::min(min, other.min);
  max = std::max(max, other.max);
  sum += other.sum;
  samples += other.samples;
}

void StageHistogram::AddBuckets(const std::vector<double>& other_bounds,
                                const std::vector<double>& other_counts) {
  StageHistogram other;
  other.bounds = other_bounds;
  other.counts = other_counts;
  const double keep_sum = sum, keep_count = count;
  Merge(other);
  sum = keep_sum;
  count = keep_count;
}

void StageHistogram::Merge(const StageHistogram& other) {
  sum += other.sum;
  count += other.count;
  if (!other.has_buckets()) return;
  if (!has_buckets()) {
    bounds = other.bounds;
    counts = other.counts;
    return;
  }
  if (bounds == other.bounds) {
    for (size_t i = 0; i < counts.size(); ++i) counts[i] += other.counts[i];
    return;
  }
  std::vector<double> merged;
  std::set_union(bounds.begin(), bounds.end(), other.bounds.begin(), other.bounds.end(),
                 std::back_inserter(merged));
  merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  if (merged.size() > kMaxBuckets) merged = bounds;
  std::vector<double> mine = Rebucket(bounds, counts, merged);
  const std::vector<double> theirs = Rebucket(other.bounds, other.counts, merged);
  for (size_t i = 0; i < mine.size(); ++i) mine[i] += theirs[i];
  bounds = std::move(merged);
  counts = std::move(mine);
}

std::optional<double> StageHistogram::Quantile(double q) const {
  if (counts.empty() || std::isnan(q)) return std::nullopt;
  q = std::clamp(q, 0.0, 1.0);
  double total = 0;
  for (double c : counts) total += c;
  if (!(total > 0)) return std::nullopt;
  const double rank = q * total;
  double cumulative = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double c = counts[i];
    if (c <= 0 || cumulative + c < rank) {
      cumulative += std::max(c, 0.0);
      continue;
    }
    if (i >= bounds.size()) {  // the +Inf bucket: all we know is "above the last bound"
      if (bounds.empty()) return std::nullopt;
      return bounds.back();
    }
    const double hi = bounds[i];
    const double lo = i == 0 ? (hi > 0 ? 0.0 : hi) : bounds[i - 1];
    return lo + (hi - lo) * std::clamp((rank - cumulative) / c, 0.0, 1.0);
  }
  return bounds.empty() ? std::nullopt : std::optional<double>(bounds.back());
}

// --- EngineMetricsWindow -----------------------------------------------------------------------

std::optional<double> EngineMetricsWindow::Rate(CounterSignal s) const {
  const int64_t span_ns = end_unix_ns - start_unix_ns;
  if (!has_counter(s) || span_ns <= 0) return std::nullopt;
  return counter(s) / (double(span_ns) / 1e9);
}

std::optional<double> EngineMetricsWindow::FrontendOverheadMean() const {
  const StageHistogram& ttft = stage(Stage::kTtft);
  const StageHistogram& queue = stage(Stage::kQueue);
  const StageHistogram& prefill = stage(Stage::kPrefill);
  if (!has_stage(Stage::kTtft) || !has_stage(Stage::kQueue) || !has_stage(Stage::kPrefill))
    return std::nullopt;
  const auto t = ttft.KnownMean(), q = queue.KnownMean(), p = prefill.KnownMean();
  if (!t || !q || !p) return std::nullopt;
  return *t - *q - *p;
}

void EngineMetricsWindow::AddModelName(std::string_view raw) {
  if (raw.empty()) return;
  const std::string name = ValidUtf8(raw.substr(0, kMaxModelNameBytes));
  auto it = std::lower_bound(model_names.begin(), model_names.end(), name);
  if (it != model_names.end() && *it == name) return;
  if (model_names.size() >= kMaxModelNames) return;
  model_names.insert(it, name);
}

void EngineMetricsWindow::Merge(const EngineMetricsWindow& o) {
  if (o.start_unix_ns != 0 || o.end_unix_ns != 0) {
    if (start_unix_ns == 0 && end_unix_ns == 0) {
      start_unix_ns = o.start_unix_ns;
      end_unix_ns = o.end_unix_ns;
    } else {
      start_unix_ns = std::min(start_unix_ns, o.start_unix_ns);
      end_unix_ns = std::max(end_unix_ns, o.end_unix_ns);
    }
  }
  auto merge_name = [](std::string& mine, const std::string& theirs) {
    if (theirs.empty() || mine == theirs) return;
    mine = mine.empty() ? theirs : "mixed";
  };
  merge_name(engine, o.engine);
  merge_name(backend, o.backend);
  for (const std::string& name : o.model_names) AddModelName(name);
  scrapes += o.scrapes;
  scrape_failures += o.scrape_failures;
  scrapes_abandoned += o.scrapes_abandoned;
  abandoned_spanned += o.abandoned_spanned;
  covered_ns += o.covered_ns;
  parse_bad_lines += o.parse_bad_lines;
  parse_dropped_series += o.parse_dropped_series;
  counters_present |= o.counters_present;
  gauges_present |= o.gauges_present;
  stages_present |= o.stages_present;
  for (size_t i = 0; i < kCounterSignalCount; ++i) counters[i] += o.counters[i];
  for (size_t i = 0; i < kGaugeSignalCount; ++i) gauges[i].Merge(o.gauges[i]);
  for (size_t i = 0; i < kStageCount; ++i) stages[i].Merge(o.stages[i]);
  for (const auto& [key, series] : o.other) {
    auto it = other.find(key);
    if (it == other.end()) {
      if (other.size() >= other_series_limit) {
        ++other_series_dropped;
        continue;
      }
      other.emplace(key, series);
      continue;
    }
    it->second.delta += series.delta;
    it->second.gauge.Merge(series.gauge);
  }
  other_series_dropped += o.other_series_dropped;
}

void EngineMetricsWindow::WriteJson(base::JsonWriter& w) const {
  w.BeginObject();
  w.Key("start_unix_ns").Int(start_unix_ns);
  w.Key("end_unix_ns").Int(end_unix_ns);
  w.Key("engine").String(engine);
  w.Key("backend").String(backend);
  w.Key("model_names").BeginArray();
  for (const std::string& name : model_names) w.String(name);
  w.EndArray();
  w.Key("scrapes").UInt(scrapes);
  w.Key("scrape_failures").UInt(scrape_failures);
  w.Key("scrapes_abandoned").UInt(scrapes_abandoned);
  w.Key("abandoned_spanned").UInt(abandoned_spanned);
  w.Key("covered_ns").Int(covered_ns);
  w.Key("parse_bad_lines").UInt(parse_bad_lines);
  w.Key("parse_dropped_series").UInt(parse_dropped_series);
  w.Key("counters").BeginObject();
  for (size_t i = 0; i < kCounterSignalCount; ++i) {
    if (!has_counter(CounterSignal(i))) continue;
    w.Key(CounterSignalName(CounterSignal(i)));
    WriteExact(w, counters[i]);
  }
  w.EndObject();
  w.Key("gauges").BeginObject();
  for (size_t i = 0; i < kGaugeSignalCount; ++i) {
    if (!has_gauge(GaugeSignal(i))) continue;
    w.Key(GaugeSignalName(GaugeSignal(i)));
    WriteGauge(w, gauges[i]);
  }
  w.EndObject();
  w.Key("stages").BeginObject();
  for (size_t i = 0; i < kStageCount; ++i) {
    if (!has_stage(Stage(i))) continue;
    w.Key(StageName(Stage(i)));
    WriteHistogram(w, stages[i]);
  }
  w.EndObject();
  w.Key("other").BeginObject();
  w.Key("limit").UInt(other_series_limit);
  w.Key("dropped").UInt(other_series_dropped);
  w.Key("series").BeginArray();
  for (const auto& [key, series] : other) {
    w.BeginObject();
    w.Key("key").String(key);
    w.Key("family").String(series.family);
    w.Key("labels").String(series.labels);
    w.Key("type").String(series.counter ? "counter" : "gauge");
    if (series.counter) {
      w.Key("delta");
      WriteExact(w, series.delta);
    } else {
      w.Key("gauge");
      WriteGauge(w, series.gauge);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  // Derived figures for readers of the JSON (the HTTP API, dashboards). FromJson ignores them:
  // they are recomputed from the mergeable fields above.
  w.Key("derived").BeginObject();
  for (size_t i = 0; i < kCounterSignalCount; ++i) {
    if (auto rate = Rate(CounterSignal(i)))
      w.Key(std::string(CounterSignalName(CounterSignal(i))) + "_per_s").Double(*rate);
  }
  for (size_t i = 0; i < kGaugeSignalCount; ++i) {
    if (has_gauge(GaugeSignal(i)) && gauges[i].samples)
      w.Key(std::string(GaugeSignalName(GaugeSignal(i))) + "_mean").Double(gauges[i].mean());
  }
  for (size_t i = 0; i < kStageCount; ++i) {
    const StageHistogram& h = stages[i];
    if (!has_stage(Stage(i)) || !(h.count > 0)) continue;
    const std::string name(StageName(Stage(i)));
    if (auto mean = h.KnownMean()) w.Key(name + "_mean_s").Double(*mean);
    if (auto p = h.Quantile(0.5)) w.Key(name + "_p50_s").Double(*p);
    if (auto p = h.Quantile(0.9)) w.Key(name + "_p90_s").Double(*p);
    if (auto p = h.Quantile(0.99)) w.Key(name + "_p99_s").Double(*p);
  }
  if (auto overhead = FrontendOverheadMean()) w.Key("frontend_overhead_mean_s").Double(*overhead);
  w.EndObject();
  w.EndObject();
}

base::StatusOr<EngineMetricsWindow> EngineMetricsWindow::FromJson(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json.data(), json.size()).get(root) != simdjson::SUCCESS)
    return Malformed("not valid JSON");
  simdjson::dom::object o;
  if (root.get(o) != simdjson::SUCCESS) return Malformed("not an object");
  EngineMetricsWindow w;
  if (!ReadIntField(o, "start_unix_ns", &w.start_unix_ns) ||
      !ReadIntField(o, "end_unix_ns", &w.end_unix_ns) || !ReadStringField(o, "engine", &w.engine) ||
      !ReadStringField(o, "backend", &w.backend) || !ReadUIntField(o, "scrapes", &w.scrapes) ||
      !ReadUIntField(o, "scrape_failures", &w.scrape_failures) ||
      !ReadIntField(o, "covered_ns", &w.covered_ns) ||
      !ReadUIntField(o, "parse_bad_lines", &w.parse_bad_lines) ||
      !ReadUIntField(o, "parse_dropped_series", &w.parse_dropped_series))
    return Malformed("missing or mistyped header field");
  // Added later: records stored before them have neither (nothing abandoned was counted then).
  for (auto [key, field] :
       {std::pair<std::string_view, uint64_t*>{"scrapes_abandoned", &w.scrapes_abandoned},
        {"abandoned_spanned", &w.abandoned_spanned}}) {
    if (o[key].error() != simdjson::NO_SUCH_FIELD && !ReadUIntField(o, key, field))
      return Malformed("mistyped " + std::string(key));
  }
  simdjson::dom::array models;
  if (o["model_names"].get(models) != simdjson::SUCCESS) return Malformed("no model_names");
  for (element m : models) {
    std::string_view name;
    if (m.get(name) != simdjson::SUCCESS) return Malformed("model name not a string");
    w.AddModelName(name);
  }
  simdjson::dom::object section;
  if (o["counters"].get(section) != simdjson::SUCCESS) return Malformed("no counters");
  for (auto field : section) {
    CounterSignal s;
    if (!EnumFromName<CounterSignal, kCounterSignalCount>(field.key, CounterSignalName, &s))
      return Malformed("unknown counter " + std::string(field.key));
    if (!ReadDouble(field.value, &w.counters[size_t(s)])) return Malformed("bad counter value");
    w.counters_present |= 1u << size_t(s);
  }
  if (o["gauges"].get(section) != simdjson::SUCCESS) return Malformed("no gauges");
  for (auto field : section) {
    GaugeSignal s;
    if (!EnumFromName<GaugeSignal, kGaugeSignalCount>(field.key, GaugeSignalName, &s))
      return Malformed("unknown gauge " + std::string(field.key));
    if (!ReadGauge(field.value, &w.gauges[size_t(s)])) return Malformed("bad gauge");
    w.gauges_present |= 1u << size_t(s);
  }
  if (o["stages"].get(section) != simdjson::SUCCESS) return Malformed("no stages");
  for (auto field : section) {
    Stage s;
    if (!EnumFromName<Stage, kStageCount>(field.key, StageName, &s))
      return Malformed("unknown stage " + std::string(field.key));
    if (!ReadHistogram(field.value, &w.stages[size_t(s)])) return Malformed("bad histogram");
    w.stages_present |= 1u << size_t(s);
  }
  if (o["other"].get(section) != simdjson::SUCCESS ||
      !ReadUIntField(section, "limit", &w.other_series_limit) ||
      !ReadUIntField(section, "dropped", &w.other_series_dropped))
    return Malformed("bad other section");
  simdjson::dom::array series;
  if (section["series"].get(series) != simdjson::SUCCESS) return Malformed("no other series");
  for (element item : series) {
    simdjson::dom::object s;
    if (item.get(s) != simdjson::SUCCESS) return Malformed("other series not an object");
    std::string key, type;
    OtherSeries out;
    if (!ReadStringField(s, "key", &key) || !ReadStringField(s, "family", &out.family) ||
        !ReadStringField(s, "labels", &out.labels) || !ReadStringField(s, "type", &type))
      return Malformed("bad other series");
    out.counter = type == "counter";
    if (out.counter) {
      if (!ReadDoubleField(s, "delta", &out.delta)) return Malformed("bad other counter");
    } else {
      element g;
      if (type != "gauge" || s["gauge"].get(g) != simdjson::SUCCESS || !ReadGauge(g, &out.gauge))
        return Malformed("bad other gauge");
    }
    w.other.emplace(std::move(key), std::move(out));
  }
  return w;
}

void RenderEngineMetricsText(const EngineMetricsWindow& w, std::string* out) {
  if (w.scrapes == 0) {
    if (w.scrape_failures > 0)
      *out += fmt::format("engine metrics: none ({} failed scrapes, {} abandoned)\n",
                          w.scrape_failures, w.scrapes_abandoned);
    else
      *out += "engine metrics: none\n";
    return;
  }
  std::string engine = w.engine;
  if (!w.backend.empty()) engine += " (" + w.backend + ")";
  std::string models;
  for (const std::string& m : w.model_names) models += (models.empty() ? "" : ", ") + m;
  *out += fmt::format("engine {}{}: {} scrapes", engine, models.empty() ? "" : " serving " + models,
                      w.scrapes);
  if (w.scrape_failures)
    *out += fmt::format(", {} failed ({} abandoned)", w.scrape_failures, w.scrapes_abandoned);
  *out += '\n';

  std::string line;
  if (auto r = w.Rate(CounterSignal::kRequestsFinished))
    line += fmt::format("  requests {}/s", FormatCount(*r));
  if (auto r = w.Rate(CounterSignal::kPromptTokens))
    line += fmt::format("  prompt {} tok/s", FormatCount(*r));
  if (auto r = w.Rate(CounterSignal::kGenerationTokens))
    line += fmt::format("  generation {} tok/s", FormatCount(*r));
  if (w.has_counter(CounterSignal::kPreemptions))
    line += fmt::format("  preemptions {:.0f}", w.counter(CounterSignal::kPreemptions));
  if (!line.empty()) *out += line + '\n';

  line.clear();
  auto gauge_text = [&w](GaugeSignal s, const char* label, bool percent) -> std::string {
    if (!w.has_gauge(s) || w.gauge(s).samples == 0) return "";
    const GaugeStats& g = w.gauge(s);
    if (percent)
      return fmt::format("  {} {:.0f}% (max {:.0f}%)", label, g.mean() * 100, g.max * 100);
    return fmt::format("  {} {:.1f} (min {:.0f}, max {:.0f})", label, g.mean(), g.min, g.max);
  };
  line += gauge_text(GaugeSignal::kRunningRequests, "running", false);
  line += gauge_text(GaugeSignal::kWaitingRequests, "waiting", false);
  line += gauge_text(GaugeSignal::kKvCacheUsage, "KV cache", true);
  if (!line.empty()) *out += line + '\n';

  bool header = false;
  for (size_t i = 0; i < kStageCount; ++i) {
    const StageHistogram& h = w.stages[i];
    if (!w.has_stage(Stage(i)) || !(h.count > 0)) continue;
    if (!header) {
      *out += fmt::format("  {:<12} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "latency", "mean", "p50",
                          "p90", "p99", "count");
      header = true;
    }
    auto q = [&h](double p) {
      auto v = h.Quantile(p);
      return v ? FormatSeconds(*v) : std::string("-");
    };
    *out += fmt::format("  {:<12} {:>9} {:>9} {:>9} {:>9} {:>9}\n", StageName(Stage(i)),
                        h.KnownMean() ? FormatSeconds(*h.KnownMean()) : std::string("-"), q(0.5),
                        q(0.9), q(0.99), FormatCount(h.count));
  }
  if (auto overhead = w.FrontendOverheadMean())
    *out += fmt::format("  frontend overhead (ttft - queue - prefill, means): {}\n",
                        FormatSeconds(*overhead));
}

const telemetry::WindowKind<EngineMetricsWindow>& EngineMetricsKind() {
  static const auto* kind = new telemetry::WindowKind<EngineMetricsWindow>(
      "engine", "engine", "Engine load and stage latency (Prometheus metrics)",
      &RenderEngineMetricsText);
  return *kind;
}

}  // namespace inferscope::telemetry::scrape
