// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/otlp/span_window.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/base/human_format.h"

namespace inferscope::telemetry::otlp {

// ---------------------------------------------------------------------------------------------
// LatencyHistogram

namespace {

// Durations are bounded (a day per span) but merged sums of a long-lived store could in theory
// reach int64's limit: saturate rather than wrap.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::numeric_limits<int64_t>::max();
  return r;
}

}  // namespace

const std::vector<int64_t>& LatencyHistogram::BoundsNs() {
  // Integer bounds (no pow()), so every build and every host agrees on bucket edges exactly.
  static const std::vector<int64_t> kBounds = [] {
    std::vector<int64_t> b;
    static constexpr int64_t kSteps[] = {10, 15, 20, 30, 50, 70};  // x 10^k us / 100
    for (int64_t decade = 10'000; decade <= 10'000'000'000; decade *= 10)
      for (int64_t step : kSteps) b.push_back(decade * step);
    return b;  // 100 us, 150 us, ..., 700 s
  }();
  return kBounds;
}

size_t LatencyHistogram::BucketFor(int64_t ns) {
  const auto& b = BoundsNs();
  return static_cast<size_t>(std::upper_bound(b.begin(), b.end(), ns) - b.begin());
}

void LatencyHistogram::Add(int64_t ns) {
  if (ns < 0) return;
  if (buckets_.empty()) buckets_.assign(BucketCount(), 0);
  ++buckets_[BucketFor(ns)];
  min_ns_ = count_ ? std::min(min_ns_, ns) : ns;
  max_ns_ = count_ ? std::max(max_ns_, ns) : ns;
  ++count_;
  sum_ns_ = SaturatingAdd(sum_ns_, ns);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  if (buckets_.empty()) buckets_.assign(BucketCount(), 0);
  for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  min_ns_ = count_ ? std::min(min_ns_, other.min_ns_) : other.min_ns_;
  max_ns_ = count_ ? std::max(max_ns_, other.max_ns_) : other.max_ns_;
  count_ += other.count_;
  sum_ns_ = SaturatingAdd(sum_ns_, other.sum_ns_);
}

int64_t LatencyHistogram::PercentileNs(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  double rank = std::max(1.0, std::ceil(q * static_cast<double>(count_)));
  const auto& bounds = BoundsNs();
  uint64_t before = 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    if (buckets_[b] == 0) continue;
    if (static_cast<double>(before + buckets_[b]) >= rank) {
      double lo = b == 0 ? static_cast<double>(min_ns_) : static_cast<double>(bounds[b - 1]);
      double hi =
          b + 1 == buckets_.size() ? static_cast<double>(max_ns_) : static_cast<double>(bounds[b]);
      lo = std::max(lo, static_cast<double>(min_ns_));
      hi = std::min(hi, static_cast<double>(max_ns_));
      if (hi < lo) hi = lo;
      double frac = (rank - static_cast<double>(before)) / static_cast<double>(buckets_[b]);
      return static_cast<int64_t>(std::llround(lo + (hi - lo) * frac));
    }
    before += buckets_[b];
  }
  return max_ns_;
}

void LatencyHistogram::WriteJson(base::JsonWriter& w) const {
  w.BeginObject();
  w.Key("count").UInt(count_);
  w.Key("sum_ns").Int(sum_ns_);
  w.Key("min_ns").Int(min_ns());
  w.Key("max_ns").Int(max_ns());
  // Derived for API readers; FromJson ignores them (the buckets are the truth).
  w.Key("p50_ns").Int(PercentileNs(0.5));
  w.Key("p90_ns").Int(PercentileNs(0.9));
  w.Key("p99_ns").Int(PercentileNs(0.99));
  // Sparse: [bucket index, count] pairs; bucket i holds [bound[i-1], bound[i]) (docs).
  w.Key("buckets").BeginArray();
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (buckets_[i] == 0) continue;
    w.BeginArray();
    w.UInt(i);
    w.UInt(buckets_[i]);
    w.EndArray();
  }
  w.EndArray();
  w.EndObject();
}

base::StatusOr<LatencyHistogram> LatencyHistogram::FromParts(uint64_t count, int64_t sum_ns,
                                                             int64_t min_ns, int64_t max_ns,
                                                             const std::vector<uint64_t>& buckets) {
  LatencyHistogram h;
  if (count == 0) return h;
  if (buckets.size() != BucketCount())
    return base::InvalidArgumentError("histogram has the wrong number of buckets");
  uint64_t total = 0;
  for (uint64_t c : buckets) total += c;
  if (total != count) return base::InvalidArgumentError("histogram buckets do not sum to count");
  if (min_ns < 0 || max_ns < min_ns || sum_ns < 0)
    return base::InvalidArgumentError("histogram min/max/sum inconsistent");
  h.count_ = count;
  h.sum_ns_ = sum_ns;
  h.min_ns_ = min_ns;
  h.max_ns_ = max_ns;
  h.buckets_ = buckets;
  return h;
}

// ---------------------------------------------------------------------------------------------
// SpanCounters

namespace {

// Every counter with its JSON name, so WriteJson, FromJson and Merge cannot drift apart.
template <typename Fn>
void ForEachCounter(SpanCounters& c, Fn fn) {
  fn("requests_accepted", c.requests_accepted);
  fn("requests_rejected", c.requests_rejected);
  fn("spans_received", c.spans_received);
  fn("spans_decoded", c.spans_decoded);
  fn("request_spans", c.request_spans);
  fn("stage_spans", c.stage_spans);
  fn("other_spans", c.other_spans);
  fn("dropped_over_limit", c.dropped_over_limit);
  fn("dropped_bad_timestamps", c.dropped_bad_timestamps);
  fn("dropped_late", c.dropped_late);
  fn("dropped_future", c.dropped_future);
  fn("dropped_buffer_full", c.dropped_buffer_full);
  fn("attributes_over_limit", c.attributes_over_limit);
  fn("bad_attribute_values", c.bad_attribute_values);
}

}  // namespace

void SpanCounters::Merge(const SpanCounters& o) {
  SpanCounters copy = o;
  std::vector<uint64_t> values;
  ForEachCounter(copy, [&](std::string_view, uint64_t& v) { values.push_back(v); });
  size_t i = 0;
  ForEachCounter(*this, [&](std::string_view, uint64_t& v) { v += values[i++]; });
}

// ---------------------------------------------------------------------------------------------
// SpanWindow

namespace {

// Slowest first; ties broken by hash, then end time, so merge order never changes the result.
bool SlowerThan(const SpanExemplar& a, const SpanExemplar& b) {
  if (a.e2e_ns() != b.e2e_ns()) return a.e2e_ns() > b.e2e_ns();
  if (a.request_hash != b.request_hash) return a.request_hash < b.request_hash;
  return a.end_unix_ns < b.end_unix_ns;
}

constexpr std::string_view kOtherModel = "(other)";

}  // namespace

void SpanWindow::AddModel(const std::string& model, uint64_t n) {
  auto it = requests_per_model.find(model);
  if (it != requests_per_model.end()) {
    it->second += n;
  } else if (requests_per_model.size() < kMaxModels) {
    requests_per_model.emplace(model, n);
  } else {
    requests_per_model[std::string(kOtherModel)] += n;
  }
}

void SpanWindow::AddExemplar(SpanExemplar e) {
  if (max_exemplars == 0) return;
  if (exemplars.size() >= max_exemplars && !SlowerThan(e, exemplars.back())) return;
  exemplars.insert(std::upper_bound(exemplars.begin(), exemplars.end(), e, SlowerThan),
                   std::move(e));
  if (exemplars.size() > max_exemplars) exemplars.resize(max_exemplars);
}

void SpanWindow::Add(const SpanRecord& span) {
  if (span.role == SpanRole::kOther) return;
  for (size_t s = 0; s < kStageCount; ++s) {
    if (span.stage_ns[s] >= 0) stages[s].Add(span.stage_ns[s]);
  }
  if (span.role != SpanRole::kRequest) return;
  ++requests;
  if (span.prompt_tokens > 0) prompt_tokens += static_cast<uint64_t>(span.prompt_tokens);
  if (span.completion_tokens > 0)
    completion_tokens += static_cast<uint64_t>(span.completion_tokens);
  AddModel(span.model, 1);
  SpanExemplar e;
  e.request_hash = span.request_hash;
  e.model = span.model;
  e.service = span.service;
  e.end_unix_ns = span.end_unix_ns;
  e.stage_ns = span.stage_ns;
  e.prompt_tokens = span.prompt_tokens;
  e.completion_tokens = span.completion_tokens;
  e.sampling = span.sampling;
  AddExemplar(std::move(e));
}

void SpanWindow::Merge(const SpanWindow& other) {
  bool this_empty = start_unix_ns == 0 && end_unix_ns == 0;
  start_unix_ns = this_empty ? other.start_unix_ns : std::min(start_unix_ns, other.start_unix_ns);
  end_unix_ns = this_empty ? other.end_unix_ns : std::max(end_unix_ns, other.end_unix_ns);
  requests += other.requests;
  prompt_tokens += other.prompt_tokens;
  completion_tokens += other.completion_tokens;
  for (size_t s = 0; s < kStageCount; ++s) stages[s].Merge(other.stages[s]);
  for (const auto& [model, n] : other.requests_per_model) AddModel(model, n);
  for (const SpanExemplar& e : other.exemplars) AddExemplar(e);
  counters.Merge(other.counters);
}

namespace {

void WriteSampling(base::JsonWriter& w, const SamplingParams& p) {
  w.BeginObject();
  auto put = [&](std::string_view key, const std::optional<double>& v) {
    if (v) w.Key(key).Double(*v);
  };
  put("temperature", p.temperature);
  put("top_p", p.top_p);
  put("top_k", p.top_k);
  put("max_tokens", p.max_tokens);
  put("n", p.n);
  put("best_of", p.best_of);
  w.EndObject();
}

}  // namespace

void SpanWindow::WriteJson(base::JsonWriter& w) const {
  w.BeginObject();
  w.Key("start_unix_ns").UInt(start_unix_ns);
  w.Key("end_unix_ns").UInt(end_unix_ns);
  w.Key("requests").UInt(requests);
  w.Key("prompt_tokens").UInt(prompt_tokens);
  w.Key("completion_tokens").UInt(completion_tokens);
  w.Key("stages").BeginObject();
  for (size_t s = 0; s < kStageCount; ++s) {
    w.Key(StageName(static_cast<Stage>(s)));
    stages[s].WriteJson(w);
  }
  w.EndObject();
  w.Key("models").BeginArray();
  for (const auto& [model, n] : requests_per_model) {
    w.BeginObject();
    w.Key("model").String(model);
    w.Key("requests").UInt(n);
    w.EndObject();
  }
  w.EndArray();
  w.Key("max_exemplars").UInt(max_exemplars);
  w.Key("exemplars").BeginArray();
  for (const SpanExemplar& e : exemplars) {
    w.BeginObject();
    w.Key("request_hash").String(e.request_hash);
    w.Key("model").String(e.model);
    w.Key("service").String(e.service);
    w.Key("end_unix_ns").UInt(e.end_unix_ns);
    w.Key("stages_ns").BeginObject();
    for (size_t s = 0; s < kStageCount; ++s) {
      if (e.stage_ns[s] >= 0) w.Key(StageName(static_cast<Stage>(s))).Int(e.stage_ns[s]);
    }
    w.EndObject();
    w.Key("prompt_tokens").Int(e.prompt_tokens);
    w.Key("completion_tokens").Int(e.completion_tokens);
    w.Key("sampling");
    WriteSampling(w, e.sampling);
    w.EndObject();
  }
  w.EndArray();
  w.Key("counters").BeginObject();
  SpanCounters c = counters;
  ForEachCounter(c, [&](std::string_view name, uint64_t& v) { w.Key(name).UInt(v); });
  w.EndObject();
  w.EndObject();
}

std::string SpanWindow::ToJson() const {
  base::JsonWriter w;
  WriteJson(w);
  return w.str();
}

namespace {

using simdjson::dom::element;

base::Status Bad(std::string_view what) {
  return base::DataLossError("malformed span window JSON: " + std::string(what));
}

base::Status GetU64(element obj, std::string_view key, uint64_t* out) {
  if (obj[key].get_uint64().get(*out) != simdjson::SUCCESS) return Bad(key);
  return base::OkStatus();
}

base::Status GetI64(element obj, std::string_view key, int64_t* out) {
  if (obj[key].get_int64().get(*out) != simdjson::SUCCESS) return Bad(key);
  return base::OkStatus();
}

base::Status GetString(element obj, std::string_view key, std::string* out) {
  std::string_view s;
  if (obj[key].get_string().get(s) != simdjson::SUCCESS) return Bad(key);
  out->assign(s);
  return base::OkStatus();
}

base::StatusOr<LatencyHistogram> ReadHistogram(element h) {
  uint64_t count = 0;
  int64_t sum = 0, min = 0, max = 0;
  RETURN_IF_ERROR(GetU64(h, "count", &count));
  RETURN_IF_ERROR(GetI64(h, "sum_ns", &sum));
  RETURN_IF_ERROR(GetI64(h, "min_ns", &min));
  RETURN_IF_ERROR(GetI64(h, "max_ns", &max));
  std::vector<uint64_t> buckets(LatencyHistogram::BucketCount(), 0);
  simdjson::dom::array arr;
  if (h["buckets"].get_array().get(arr) != simdjson::SUCCESS) return Bad("buckets");
  for (element pair : arr) {
    simdjson::dom::array p;
    uint64_t idx = 0, n = 0;
    if (pair.get_array().get(p) != simdjson::SUCCESS || p.size() != 2 ||
        p.at(0).get_uint64().get(idx) != simdjson::SUCCESS ||
        p.at(1).get_uint64().get(n) != simdjson::SUCCESS || idx >= buckets.size())
      return Bad("bucket entry");
    buckets[idx] += n;
  }
  return LatencyHistogram::FromParts(count, sum, min, max, buckets);
}

base::StatusOr<SamplingParams> ReadSampling(element obj) {
  SamplingParams p;
  if (!obj.is_object()) return Bad("sampling");
  auto get = [&](std::string_view key, std::optional<double>* dst) {
    double d;
    if (obj[key].get_double().get(d) == simdjson::SUCCESS) *dst = d;
  };
  get("temperature", &p.temperature);
  get("top_p", &p.top_p);
  get("top_k", &p.top_k);
  get("max_tokens", &p.max_tokens);
  get("n", &p.n);
  get("best_of", &p.best_of);
  return p;
}

}  // namespace

base::StatusOr<SpanWindow> SpanWindow::FromJson(std::string_view json) {
  simdjson::dom::parser parser;
  element root;
  if (auto err = parser.parse(json.data(), json.size()).get(root); err != simdjson::SUCCESS)
    return base::DataLossError(std::string("malformed span window JSON: ") +
                               simdjson::error_message(err));
  if (!root.is_object()) return Bad("not an object");
  SpanWindow w;
  RETURN_IF_ERROR(GetU64(root, "start_unix_ns", &w.start_unix_ns));
  RETURN_IF_ERROR(GetU64(root, "end_unix_ns", &w.end_unix_ns));
  RETURN_IF_ERROR(GetU64(root, "requests", &w.requests));
  RETURN_IF_ERROR(GetU64(root, "prompt_tokens", &w.prompt_tokens));
  RETURN_IF_ERROR(GetU64(root, "completion_tokens", &w.completion_tokens));
  element stages;
  if (root["stages"].get(stages) != simdjson::SUCCESS || !stages.is_object()) return Bad("stages");
  for (size_t s = 0; s < kStageCount; ++s) {
    element h;
    if (stages[StageName(static_cast<Stage>(s))].get(h) != simdjson::SUCCESS) continue;
    ASSIGN_OR_RETURN(w.stages[s], ReadHistogram(h));
  }
  simdjson::dom::array arr;
  if (root["models"].get_array().get(arr) != simdjson::SUCCESS) return Bad("models");
  for (element m : arr) {
    std::string model;
    uint64_t n = 0;
    RETURN_IF_ERROR(GetString(m, "model", &model));
    RETURN_IF_ERROR(GetU64(m, "requests", &n));
    w.requests_per_model[model] += n;
  }
  uint64_t max_exemplars = 0;
  RETURN_IF_ERROR(GetU64(root, "max_exemplars", &max_exemplars));
  if (max_exemplars > 100000) return Bad("max_exemplars");
  w.max_exemplars = static_cast<size_t>(max_exemplars);
  if (root["exemplars"].get_array().get(arr) != simdjson::SUCCESS) return Bad("exemplars");
  for (element x : arr) {
    SpanExemplar e;
    RETURN_IF_ERROR(GetString(x, "request_hash", &e.request_hash));
    RETURN_IF_ERROR(GetString(x, "model", &e.model));
    RETURN_IF_ERROR(GetString(x, "service", &e.service));
    RETURN_IF_ERROR(GetU64(x, "end_unix_ns", &e.end_unix_ns));
    element st;
    if (x["stages_ns"].get(st) != simdjson::SUCCESS || !st.is_object()) return Bad("stages_ns");
    for (size_t s = 0; s < kStageCount; ++s) {
      int64_t v;
      if (st[StageName(static_cast<Stage>(s))].get_int64().get(v) == simdjson::SUCCESS)
        e.stage_ns[s] = v;
    }
    RETURN_IF_ERROR(GetI64(x, "prompt_tokens", &e.prompt_tokens));
    RETURN_IF_ERROR(GetI64(x, "completion_tokens", &e.completion_tokens));
    element sampling;
    if (x["sampling"].get(sampling) != simdjson::SUCCESS) return Bad("sampling");
    ASSIGN_OR_RETURN(e.sampling, ReadSampling(sampling));
    w.exemplars.push_back(std::move(e));
  }
  // Keep the invariant Merge relies on: sorted slowest first, at most max_exemplars.
  std::sort(w.exemplars.begin(), w.exemplars.end(), SlowerThan);
  if (w.exemplars.size() > w.max_exemplars) w.exemplars.resize(w.max_exemplars);
  element counters;
  if (root["counters"].get(counters) != simdjson::SUCCESS || !counters.is_object())
    return Bad("counters");
  base::Status status;
  ForEachCounter(w.counters, [&](std::string_view name, uint64_t& v) {
    if (counters[name].get_uint64().get(v) != simdjson::SUCCESS && status.ok()) status = Bad(name);
  });
  RETURN_IF_ERROR(status);
  return w;
}

// ---------------------------------------------------------------------------------------------
// Text

namespace {

// The report's one duration style (its request table sits among the profile's tables).
std::string FormatNs(int64_t ns) { return base::FormatDuration(ns); }

}  // namespace

namespace {

// Why spans were dropped, per counter: short enough for one report line each.
struct DropReason {
  uint64_t SpanCounters::*counter;
  const char* why;
};
constexpr DropReason kDropReasons[] = {
    {&SpanCounters::dropped_late,
     "late: arrived after their window's grace period (agent --span-grace)"},
    {&SpanCounters::dropped_over_limit, "over the per-export span limit"},
    {&SpanCounters::dropped_bad_timestamps, "with missing or reversed timestamps"},
    {&SpanCounters::dropped_future, "ending over an hour after the window (clock skew)"},
    {&SpanCounters::dropped_buffer_full, "lost to a full pending-span buffer"},
};

}  // namespace

uint64_t DroppedSpans(const SpanCounters& c) {
  uint64_t n = 0;
  for (const DropReason& r : kDropReasons) n += c.*r.counter;
  return n;
}

std::string DescribeDrops(const SpanCounters& c) {
  std::string out;
  for (const DropReason& r : kDropReasons) {
    if (c.*r.counter == 0) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("{} {}", c.*r.counter, r.why);
  }
  return out;
}

void RenderSpanText(const SpanWindow& window, std::string* out) {
  const SpanCounters& c = window.counters;
  *out += fmt::format("Request spans: {} requests, {} prompt / {} completion tokens\n",
                      window.requests, window.prompt_tokens, window.completion_tokens);
  // The figures above undercount by these: each reason on a line of its own, never cut off.
  for (const DropReason& r : kDropReasons)
    if (c.*r.counter > 0) *out += fmt::format("  dropped: {} spans {}\n", c.*r.counter, r.why);
  if (c.requests_rejected > 0)
    *out += fmt::format(
        "  rejected: {} exports (undecodable, unsupported or too large: inferscope status)\n",
        c.requests_rejected);
  bool any = false;
  for (size_t s = 0; s < kStageCount; ++s) {
    const LatencyHistogram& h = window.stages[s];
    if (h.count() == 0) continue;
    any = true;
    *out += fmt::format("  {:<10} n={:<7} p50 {:>9}  p90 {:>9}  p99 {:>9}  max {:>9}\n",
                        StageName(static_cast<Stage>(s)), h.count(), FormatNs(h.PercentileNs(0.5)),
                        FormatNs(h.PercentileNs(0.9)), FormatNs(h.PercentileNs(0.99)),
                        FormatNs(h.max_ns()));
  }
  if (!any) *out += "  (no request spans in this range)\n";
  size_t shown = std::min<size_t>(window.exemplars.size(), 3);
  if (shown > 0) *out += "  slowest requests:\n";
  for (size_t i = 0; i < shown; ++i) {
    const SpanExemplar& e = window.exemplars[i];
    std::string split;
    for (Stage st : {Stage::kQueue, Stage::kPrefill, Stage::kDecode, Stage::kTtft}) {
      int64_t v = e.stage_ns[static_cast<size_t>(st)];
      if (v >= 0) split += fmt::format(" {} {}", StageName(st), FormatNs(v));
    }
    *out += fmt::format("    {} e2e {}{}  tokens {}/{}{}{}\n", e.request_hash, FormatNs(e.e2e_ns()),
                        split, std::max<int64_t>(e.prompt_tokens, 0),
                        std::max<int64_t>(e.completion_tokens, 0), e.model.empty() ? "" : "  ",
                        e.model);
  }
}

const telemetry::WindowKind<SpanWindow>& SpanKind() {
  static const auto* kind = new telemetry::WindowKind<SpanWindow>(
      "spans", "requests", "Requests (OpenTelemetry spans)", &RenderSpanText);
  return *kind;
}

}  // namespace inferscope::telemetry::otlp
