// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/scrape/engine_map.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace inferscope::telemetry::scrape {
namespace {

enum class RowKind : uint8_t { kCounter, kGauge, kStage };

// How a row reads its family.
enum class Source : uint8_t {
  kCounter,       // a counter's samples (`x_total`, or `x` with `_total` samples in OpenMetrics)
  kGauge,         // a gauge's samples
  kHistogram,     // a histogram (or summary) family
  kHistogramSum,  // the `_sum` of a histogram, as a counter (TGI's token-length histograms)
};

// One way to get one signal from one engine. For each (engine, signal), rows are tried in table
// order and the first family that exists wins: newest names come first, so an exposition that
// carries both a name and its deprecated alias is not counted twice.
struct Row {
  Engine engine;
  RowKind kind;
  uint8_t signal;
  Source source;
  std::string_view family;
  std::string_view label = {};  // only samples whose `label` is `value`
  std::string_view value = {};
};

constexpr uint8_t C(CounterSignal s) { return uint8_t(s); }
constexpr uint8_t G(GaugeSignal s) { return uint8_t(s); }
constexpr uint8_t S(Stage s) { return uint8_t(s); }
using CS = CounterSignal;
using GS = GaugeSignal;
using ST = Stage;
constexpr auto kC = RowKind::kCounter;
constexpr auto kG = RowKind::kGauge;
constexpr auto kS = RowKind::kStage;
constexpr auto kV = Engine::kVllm;
constexpr auto kSg = Engine::kSglang;
constexpr auto kTgi = Engine::kTgi;
constexpr auto kTrt = Engine::kTensorRtLlm;
constexpr auto kDyn = Engine::kDynamo;

// docs/engine-metrics.md lists these with their versions and where the names come from.
constexpr Row kRows[] = {
    // vLLM (V1 engine; V0 names where they differ).
    {kV, kC, C(CS::kRequestsFinished), Source::kCounter, "vllm:request_success_total"},
    {kV, kC, C(CS::kPromptTokens), Source::kCounter, "vllm:prompt_tokens_total"},
    {kV, kC, C(CS::kGenerationTokens), Source::kCounter, "vllm:generation_tokens_total"},
    {kV, kC, C(CS::kPreemptions), Source::kCounter, "vllm:num_preemptions_total"},
    {kV, kG, G(GS::kRunningRequests), Source::kGauge, "vllm:num_requests_running"},
    {kV, kG, G(GS::kWaitingRequests), Source::kGauge, "vllm:num_requests_waiting"},
    {kV, kG, G(GS::kKvCacheUsage), Source::kGauge, "vllm:kv_cache_usage_perc"},
    {kV, kG, G(GS::kKvCacheUsage), Source::kGauge, "vllm:gpu_cache_usage_perc"},  // <= 0.10
    {kV, kS, S(ST::kQueue), Source::kHistogram, "vllm:request_queue_time_seconds"},
    {kV, kS, S(ST::kPrefill), Source::kHistogram, "vllm:request_prefill_time_seconds"},
    {kV, kS, S(ST::kDecode), Source::kHistogram, "vllm:request_decode_time_seconds"},
    {kV, kS, S(ST::kTtft), Source::kHistogram, "vllm:time_to_first_token_seconds"},
    {kV, kS, S(ST::kInterToken), Source::kHistogram, "vllm:inter_token_latency_seconds"},
    {kV, kS, S(ST::kInterToken), Source::kHistogram, "vllm:time_per_output_token_seconds"},
    {kV, kS, S(ST::kE2e), Source::kHistogram, "vllm:e2e_request_latency_seconds"},

    // SGLang (--enable-metrics).
    {kSg, kC, C(CS::kRequestsFinished), Source::kCounter, "sglang:num_requests_total"},
    {kSg, kC, C(CS::kPromptTokens), Source::kCounter, "sglang:prompt_tokens_total"},
    {kSg, kC, C(CS::kGenerationTokens), Source::kCounter, "sglang:generation_tokens_total"},
    {kSg, kC, C(CS::kPreemptions), Source::kCounter, "sglang:num_retracted_requests_total"},
    {kSg, kG, G(GS::kRunningRequests), Source::kGauge, "sglang:num_running_reqs"},
    {kSg, kG, G(GS::kWaitingRequests), Source::kGauge, "sglang:num_queue_reqs"},
    {kSg, kG, G(GS::kKvCacheUsage), Source::kGauge, "sglang:token_usage"},
    {kSg, kS, S(ST::kQueue), Source::kHistogram, "sglang:queue_time_seconds"},
    {kSg, kS, S(ST::kPrefill), Source::kHistogram, "sglang:per_stage_req_latency_seconds", "stage",
     "prefill_forward"},
    {kSg, kS, S(ST::kDecode), Source::kHistogram, "sglang:per_stage_req_latency_seconds", "stage",
     "decode_forward"},
    {kSg, kS, S(ST::kTtft), Source::kHistogram, "sglang:time_to_first_token_seconds"},
    {kSg, kS, S(ST::kInterToken), Source::kHistogram, "sglang:inter_token_latency_seconds"},
    {kSg, kS, S(ST::kE2e), Source::kHistogram, "sglang:e2e_request_latency_seconds"},

    // Hugging Face TGI: no token counters, but the per-request length histograms' sums are them.
    {kTgi, kC, C(CS::kRequestsFinished), Source::kCounter, "tgi_request_success"},
    {kTgi, kC, C(CS::kPromptTokens), Source::kHistogramSum, "tgi_request_input_length"},
    {kTgi, kC, C(CS::kGenerationTokens), Source::kHistogramSum, "tgi_request_generated_tokens"},
    {kTgi, kG, G(GS::kRunningRequests), Source::kGauge, "tgi_batch_current_size"},
    {kTgi, kG, G(GS::kWaitingRequests), Source::kGauge, "tgi_queue_size"},
    {kTgi, kS, S(ST::kQueue), Source::kHistogram, "tgi_request_queue_duration"},
    {kTgi, kS, S(ST::kInterToken), Source::kHistogram, "tgi_request_mean_time_per_token_duration"},
    {kTgi, kS, S(ST::kE2e), Source::kHistogram, "tgi_request_duration"},

    // TensorRT-LLM: trtllm-serve (/prometheus/metrics), then the Triton backend's gauges.
    {kTrt, kC, C(CS::kRequestsFinished), Source::kCounter, "trtllm_request_success_total"},
    {kTrt, kC, C(CS::kRequestsFinished), Source::kCounter, "trtllm_num_requests_completed_total"},
    {kTrt, kC, C(CS::kRequestsFinished), Source::kCounter, "nv_inference_request_success"},
    {kTrt, kC, C(CS::kPromptTokens), Source::kCounter, "trtllm_prompt_tokens_total"},
    {kTrt, kC, C(CS::kGenerationTokens), Source::kCounter, "trtllm_generation_tokens_total"},
    {kTrt, kG, G(GS::kRunningRequests), Source::kGauge, "trtllm_num_requests_running"},
    {kTrt, kG, G(GS::kRunningRequests), Source::kGauge, "nv_trt_llm_request_metrics",
     "request_type", "active"},
    {kTrt, kG, G(GS::kWaitingRequests), Source::kGauge, "trtllm_num_requests_waiting"},
    {kTrt, kG, G(GS::kWaitingRequests), Source::kGauge, "nv_trt_llm_request_metrics",
     "request_type", "waiting"},
    {kTrt, kG, G(GS::kKvCacheUsage), Source::kGauge, "trtllm_kv_cache_utilization"},
    {kTrt, kG, G(GS::kKvCacheUsage), Source::kGauge, "nv_trt_llm_kv_cache_block_metrics",
     "kv_cache_block_type", "fraction"},
    {kTrt, kS, S(ST::kQueue), Source::kHistogram, "trtllm_request_queue_time_seconds"},
    {kTrt, kS, S(ST::kPrefill), Source::kHistogram, "trtllm_request_prefill_time_seconds"},
    {kTrt, kS, S(ST::kDecode), Source::kHistogram, "trtllm_request_decode_time_seconds"},
    {kTrt, kS, S(ST::kTtft), Source::kHistogram, "trtllm_time_to_first_token_seconds"},
    {kTrt, kS, S(ST::kInterToken), Source::kHistogram, "trtllm_time_per_output_token_seconds"},
    {kTrt, kS, S(ST::kE2e), Source::kHistogram, "trtllm_e2e_request_latency_seconds"},

    // NVIDIA Dynamo frontend (used for what a passed-through backend engine does not give).
    {kDyn, kC, C(CS::kRequestsFinished), Source::kCounter, "dynamo_frontend_requests_total"},
    {kDyn, kC, C(CS::kPromptTokens), Source::kHistogramSum,
     "dynamo_frontend_input_sequence_tokens"},
    {kDyn, kC, C(CS::kGenerationTokens), Source::kCounter, "dynamo_frontend_output_tokens_total"},
    {kDyn, kG, G(GS::kRunningRequests), Source::kGauge, "dynamo_frontend_active_requests"},
    {kDyn, kG, G(GS::kRunningRequests), Source::kGauge, "dynamo_frontend_inflight_requests"},
    {kDyn, kG, G(GS::kWaitingRequests), Source::kGauge, "dynamo_frontend_queued_requests"},
    {kDyn, kS, S(ST::kTtft), Source::kHistogram, "dynamo_frontend_time_to_first_token_seconds"},
    {kDyn, kS, S(ST::kInterToken), Source::kHistogram,
     "dynamo_frontend_inter_token_latency_seconds"},
    {kDyn, kS, S(ST::kE2e), Source::kHistogram, "dynamo_frontend_request_duration_seconds"},
};

struct Prefix {
  std::string_view text;
  Engine engine;
};
constexpr Prefix kPrefixes[] = {
    {"vllm:", Engine::kVllm},
    {"sglang:", Engine::kSglang},
    {"tgi_", Engine::kTgi},
    {"trtllm_", Engine::kTensorRtLlm},
    {"nv_trt_llm_", Engine::kTensorRtLlm},
    {"dynamo_", Engine::kDynamo},
};
constexpr size_t kEngineCount = 6;

// Labels that tell apart copies of one scheduler's view (SGLang exports its scheduler metrics
// once per tensor/pipeline/expert-parallel rank): series differing only in these are one series.
bool IsReplicaLabel(std::string_view name) {
  return name == "tp_rank" || name == "pp_rank" || name == "moe_ep_rank";
}

constexpr uint64_t kFnvOffset = 1469598103934665603ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;
void Fnv(uint64_t* h, std::string_view s) {
  for (unsigned char c : s) {
    *h ^= c;
    *h *= kFnvPrime;
  }
  *h ^= 0xff;  // separator: ("ab","c") and ("a","bc") hash differently
  *h *= kFnvPrime;
}

// Hash of family + label set (sorted by name, `le` dropped, replica labels dropped if asked).
uint64_t SeriesKey(std::string_view family, const Sample& sample, bool drop_replicas) {
  std::vector<const Label*> labels;
  labels.reserve(sample.labels.size());
  for (const Label& l : sample.labels) {
    if (l.name == "le" || (drop_replicas && IsReplicaLabel(l.name))) continue;
    labels.push_back(&l);
  }
  std::sort(labels.begin(), labels.end(),
            [](const Label* a, const Label* b) { return a->name < b->name; });
  uint64_t h = kFnvOffset;
  Fnv(&h, family);
  for (const Label* l : labels) {
    Fnv(&h, l->name);
    Fnv(&h, l->value);
  }
  return h;
}

bool Matches(const Row& row, const Sample& sample) {
  if (row.label.empty()) return true;
  const std::string* value = sample.FindLabel(row.label);
  return value && *value == row.value;
}

// The family a row reads, or nullptr when the exposition does not have it (with a usable type).
const MetricFamily* FindFamily(const Exposition& e, const Row& row) {
  const MetricFamily* f = e.Find(row.family);
  switch (row.source) {
    case Source::kCounter:
      if (f && f->type != MetricType::kHistogram && f->type != MetricType::kSummary) return f;
      // OpenMetrics style: `# TYPE x counter` with samples `x_total`.
      if (row.family.ends_with("_total")) {
        f = e.Find(row.family.substr(0, row.family.size() - 6));
        if (f && f->type == MetricType::kCounter) return f;
      }
      return nullptr;
    case Source::kGauge:
      return f && f->type != MetricType::kHistogram && f->type != MetricType::kSummary ? f
                                                                                       : nullptr;
    case Source::kHistogram:
    case Source::kHistogramSum:
      return f && (f->type == MetricType::kHistogram || f->type == MetricType::kSummary) ? f
                                                                                         : nullptr;
  }
  return nullptr;
}

// Counter values of a row, one per series; copies across replica labels keep the largest.
std::vector<CounterSeries> ReadCounter(const MetricFamily& f, const Row& row) {
  std::unordered_map<uint64_t, double> by_key;
  std::vector<uint64_t> order;
  for (const Sample& s : f.samples) {
    const bool wanted = row.source == Source::kHistogramSum
                            ? s.role == SampleRole::kSum
                            : (s.role == SampleRole::kValue || s.role == SampleRole::kTotal);
    if (!wanted || !Matches(row, s) || !std::isfinite(s.value)) continue;
    const uint64_t key = SeriesKey(f.name, s, /*drop_replicas=*/true);
    auto [it, inserted] = by_key.emplace(key, s.value);
    if (inserted) {
      order.push_back(key);
    } else {
      it->second = std::max(it->second, s.value);
    }
  }
  std::vector<CounterSeries> out;
  out.reserve(order.size());
  for (uint64_t key : order) out.push_back({key, by_key[key]});
  return out;
}

// A gauge summed over label sets (copies across replica labels count once, the largest); the KV
// cache fraction is averaged instead, since fractions of different engines do not add.
double ReadGauge(const MetricFamily& f, const Row& row, bool average) {
  std::unordered_map<uint64_t, double> by_key;
  for (const Sample& s : f.samples) {
    if (s.role != SampleRole::kValue || !Matches(row, s) || !std::isfinite(s.value)) continue;
    const uint64_t key = SeriesKey(f.name, s, /*drop_replicas=*/true);
    auto [it, inserted] = by_key.emplace(key, s.value);
    if (!inserted) it->second = std::max(it->second, s.value);
  }
  double total = 0;
  for (const auto& [key, value] : by_key) total += value;
  if (average && !by_key.empty()) total /= double(by_key.size());
  return total;
}

std::vector<HistogramSeries> ReadHistogram(const MetricFamily& f, const Row& row,
                                           uint64_t* skipped) {
  struct Build {
    uint64_t reduced_key = 0;
    std::vector<std::pair<double, double>> buckets;  // (le, cumulative)
    double sum = 0;
    double count = 0;
    bool has_count = false;
    bool bad = false;
  };
  std::unordered_map<uint64_t, Build> groups;
  std::vector<uint64_t> order;
  for (const Sample& s : f.samples) {
    if (s.role != SampleRole::kBucket && s.role != SampleRole::kSum && s.role != SampleRole::kCount)
      continue;
    if (!Matches(row, s)) continue;
    const uint64_t key = SeriesKey(f.name, s, /*drop_replicas=*/false);
    auto [it, inserted] = groups.try_emplace(key);
    Build& b = it->second;
    if (inserted) {
      order.push_back(key);
      b.reduced_key = SeriesKey(f.name, s, /*drop_replicas=*/true);
    }
    if (s.role == SampleRole::kSum) {
      b.sum = s.value;
    } else if (s.role == SampleRole::kCount) {
      b.count = s.value;
      b.has_count = true;
    } else {
      const std::string* le = s.FindLabel("le");
      double bound;
      if (!le || !ParsePrometheusFloat(*le, &bound) || std::isnan(bound)) {
        b.bad = true;
        continue;
      }
      b.buckets.emplace_back(bound, s.value);
    }
  }
  std::unordered_map<uint64_t, size_t> by_reduced;  // reduced key -> index in out
  std::vector<HistogramSeries> out;
  for (uint64_t key : order) {
    Build& b = groups[key];
    HistogramSeries h;
    h.key = b.reduced_key;
    h.sum = b.sum;
    h.count = b.count;
    if (!b.buckets.empty()) {
      std::sort(b.buckets.begin(), b.buckets.end());
      if (!std::isinf(b.buckets.back().first) || b.buckets.back().first < 0) {
        if (!b.has_count) b.bad = true;
        b.buckets.emplace_back(std::numeric_limits<double>::infinity(), b.count);
      }
      for (size_t i = 0; i < b.buckets.size() && !b.bad; ++i) {
        const auto [le, cumulative] = b.buckets[i];
        if (!std::isfinite(cumulative) || cumulative < 0) b.bad = true;
        if (i > 0 && (le == b.buckets[i - 1].first || cumulative < b.buckets[i - 1].second))
          b.bad = true;
        if (std::isinf(le) && i + 1 != b.buckets.size()) b.bad = true;  // -Inf bound
        if (!std::isinf(le)) h.bounds.push_back(le);
        h.cumulative.push_back(cumulative);
      }
      if (!b.has_count) h.count = b.buckets.back().second;
    }
    if (b.bad || !std::isfinite(h.sum) || !std::isfinite(h.count)) {
      ++*skipped;
      continue;
    }
    auto [it, inserted] = by_reduced.emplace(h.key, out.size());
    if (inserted) {
      out.push_back(std::move(h));
    } else if (h.count > out[it->second].count) {
      out[it->second] = std::move(h);
    }
  }
  return out;
}

std::string LabelText(const Sample& s) {
  std::string out;
  for (const Label& l : s.labels) {
    if (!out.empty()) out += ',';
    out += l.name;
    out += "=\"";
    for (char c : l.value) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    out += '"';
    if (out.size() > OtherSeries::kMaxLabelText) break;
  }
  if (out.size() > OtherSeries::kMaxLabelText) out.resize(OtherSeries::kMaxLabelText);
  return ValidUtf8(out);  // also repairs a multi-byte character the cut split
}

void ApplyRows(const Exposition& e, Engine engine, EngineSnapshot* snap,
               std::unordered_set<const MetricFamily*>* mapped) {
  for (const Row& row : kRows) {
    if (row.engine != engine) continue;
    uint32_t* present = row.kind == kC   ? &snap->counters_present
                        : row.kind == kG ? &snap->gauges_present
                                         : &snap->stages_present;
    if (*present >> row.signal & 1) continue;  // an earlier row (newer name) already gave it
    const MetricFamily* f = FindFamily(e, row);
    if (!f) continue;
    // A row that selects by label (SGLang's per-stage histogram) exists only if a sample has it.
    if (!row.label.empty() && std::none_of(f->samples.begin(), f->samples.end(),
                                           [&row](const Sample& s) { return Matches(row, s); }))
      continue;
    *present |= 1u << row.signal;
    if (mapped->insert(f).second) snap->mapped_families.push_back(f->name);
    switch (row.kind) {
      case RowKind::kCounter:
        snap->counters[row.signal] = ReadCounter(*f, row);
        break;
      case RowKind::kGauge:
        snap->gauges[row.signal] =
            ReadGauge(*f, row, /*average=*/row.signal == G(GS::kKvCacheUsage));
        break;
      case RowKind::kStage:
        snap->stages[row.signal] = ReadHistogram(*f, row, &snap->histogram_series_skipped);
        break;
    }
  }
}

bool HasPrefixOf(std::string_view name, Engine engine) {
  for (const Prefix& p : kPrefixes)
    if (p.engine == engine && name.starts_with(p.text)) return true;
  return false;
}

}  // namespace

std::string_view EngineName(Engine engine) {
  switch (engine) {
    case Engine::kUnknown:
      return "unknown";
    case Engine::kVllm:
      return "vllm";
    case Engine::kSglang:
      return "sglang";
    case Engine::kTgi:
      return "tgi";
    case Engine::kTensorRtLlm:
      return "tensorrt_llm";
    case Engine::kDynamo:
      return "dynamo";
  }
  return "unknown";
}

Detection DetectEngine(const Exposition& exposition) {
  std::array<size_t, kEngineCount> families{};
  for (const MetricFamily& f : exposition.families) {
    if (f.samples.empty()) continue;
    for (const Prefix& p : kPrefixes) {
      if (f.name.starts_with(p.text)) {
        ++families[size_t(p.engine)];
        break;
      }
    }
  }
  Engine best = Engine::kUnknown;
  for (size_t i = 1; i < kEngineCount; ++i) {
    if (Engine(i) == Engine::kDynamo) continue;
    if (families[i] > families[size_t(best)] || (best == Engine::kUnknown && families[i] > 0))
      best = Engine(i);
  }
  Detection d;
  if (families[size_t(Engine::kDynamo)] > 0) {
    d.engine = Engine::kDynamo;
    d.backend = best;
  } else {
    d.engine = best;
  }
  return d;
}

EngineSnapshot MapExposition(const Exposition& e, size_t max_other_series) {
  EngineSnapshot snap;
  snap.detection = DetectEngine(e);
  std::unordered_set<const MetricFamily*> mapped;
  // A backend's own names first: they are per engine, the Dynamo frontend's are per request path.
  if (snap.detection.backend != Engine::kUnknown)
    ApplyRows(e, snap.detection.backend, &snap, &mapped);
  if (snap.detection.engine != Engine::kUnknown)
    ApplyRows(e, snap.detection.engine, &snap, &mapped);

  // Model names from the engine's own families.
  for (const MetricFamily& f : e.families) {
    if (snap.model_names.size() >= EngineMetricsWindow::kMaxModelNames) break;
    if (!HasPrefixOf(f.name, snap.detection.engine) && !HasPrefixOf(f.name, snap.detection.backend))
      continue;
    for (const Sample& s : f.samples) {
      const std::string* model = s.FindLabel("model_name");
      if (!model) model = s.FindLabel("model");
      if (!model || model->empty()) continue;
      const std::string name = model->substr(0, EngineMetricsWindow::kMaxModelNameBytes);
      if (std::find(snap.model_names.begin(), snap.model_names.end(), name) ==
          snap.model_names.end()) {
        snap.model_names.push_back(name);
        if (snap.model_names.size() >= EngineMetricsWindow::kMaxModelNames) break;
      }
    }
  }

  // Everything else that is a counter or gauge. prometheus_client's `<name>_created` gauges
  // (creation timestamps of counters and histograms) carry no load information and are skipped.
  for (const MetricFamily& f : e.families) {
    if (mapped.count(&f)) continue;
    const bool counter = f.type == MetricType::kCounter;
    if (!counter && f.type != MetricType::kGauge && f.type != MetricType::kUntyped) continue;
    if (f.name.ends_with("_created")) continue;
    for (const Sample& s : f.samples) {
      if (s.role == SampleRole::kCreated || !std::isfinite(s.value)) continue;
      if (snap.other.size() >= max_other_series) {
        ++snap.other_dropped;
        continue;
      }
      OtherSnapshotSeries o;
      o.key = SeriesKey(f.name, s, /*drop_replicas=*/false);
      o.family = f.name;
      o.labels = LabelText(s);
      o.counter = counter;
      o.value = s.value;
      snap.other.push_back(std::move(o));
    }
  }
  return snap;
}

}  // namespace inferscope::telemetry::scrape
