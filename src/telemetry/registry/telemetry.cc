// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/registry/telemetry.h"

#include <algorithm>
#include <chrono>

#include "src/base/json_writer.h"
#include "src/base/time_point.h"
#include "src/telemetry/nvml/gpu_sampler.h"
#include "src/telemetry/registry/telemetry_kinds.h"
#include "src/telemetry/scrape/engine_metrics_collector.h"

namespace inferscope::telemetry {
namespace {

using base::UnixNowNs;

// "ok: ...", "degraded: ...", "off: ..." (the collectors' health lines) as state + reason.
CollectorStatus FromHealthLine(const std::string& line) {
  CollectorStatus s;
  for (const auto& [prefix, state] : {std::pair<const char*, const char*>{"ok: ", "on"},
                                      {"degraded: ", "degraded"},
                                      {"off: ", "off"}}) {
    const std::string p(prefix);
    if (line.compare(0, p.size(), p) == 0) {
      s.state = state;
      s.reason = line.substr(p.size());
      return s;
    }
  }
  s.state = "on";
  s.reason = line;
  return s;
}

}  // namespace

Telemetry::Telemetry(TelemetryOptions options, WindowCallback on_window)
    : options_(std::move(options)), on_window_(std::move(on_window)) {
  if (options_.otlp) spans_ = std::make_unique<telemetry::otlp::SpanCollector>();
  if (options_.scrape) {
    telemetry::scrape::EngineMetricsOptions o;
    o.metrics_url = options_.metrics_url;
    o.proc_root = options_.proc_root;
    o.scrape_interval_ns = options_.scrape_interval_ns;
    o.clock = &UnixNowNs;  // stamp each scrape when its answer arrives
    engine_ = std::make_unique<telemetry::scrape::EngineMetricsCollector>(o);
  }
  for (const telemetry::TelemetryKind* kind : TelemetryKinds().kinds())
    if (auto c = kind->NewCollector()) collectors_.push_back(std::move(c));
}

Telemetry::~Telemetry() { Stop(); }

void Telemetry::Start() {
  sample_thread_ = std::thread([this] { SampleLoop(); });
  if (engine_) scrape_thread_ = std::thread([this] { ScrapeLoop(); });
  if (!collectors_.empty()) collect_thread_ = std::thread([this] { CollectLoop(); });
}

void Telemetry::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  wake_.notify_all();
  // The scrape and collect threads finish the poll in flight first, then the sample thread closes
  // the last windows: a GET answered after the last window closed would never be stored (its
  // engine counted it; the agent's totals would miss it).
  if (scrape_thread_.joinable()) scrape_thread_.join();
  if (collect_thread_.joinable()) collect_thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_sampling_ = true;
  }
  wake_.notify_all();
  if (sample_thread_.joinable()) sample_thread_.join();
}

void Telemetry::SetRootPids(std::vector<int> pids) {
  if (engine_) engine_->SetRootPids(std::move(pids));
}

void Telemetry::SampleLoop() {
  if (options_.nvml) {
    auto sampler = std::make_unique<GpuSampler>(options_.nvml_library);
    std::lock_guard<std::mutex> lock(mu_);
    gpu_ = std::move(sampler);
  }
  gpu_ready_ = true;
  const int64_t window = options_.window_ns;
  int64_t now = UnixNowNs();
  int64_t window_end = (now / window + 1) * window;  // the wall-clock grid the processes use
  spans_taken_end_ = window_end - window;
  int64_t next_sample = now;
  const bool sampling = gpu_ && gpu_->enabled();
  while (true) {
    now = UnixNowNs();
    if (sampling && now >= next_sample) {
      gpu_->Sample(now);
      next_sample += options_.gpu_sample_interval_ns;
      if (next_sample <= now) next_sample = now + options_.gpu_sample_interval_ns;
    }
    if (now >= window_end) {
      CloseWindow(window_end - window, window_end, now - options_.span_grace_ns);
      window_end += window;
      if (window_end <= now) window_end = (now / window + 1) * window;  // slept through some
    }
    const int64_t until = sampling ? std::min(next_sample, window_end) : window_end;
    std::unique_lock<std::mutex> lock(mu_);
    if (wake_.wait_for(lock, std::chrono::nanoseconds(std::max<int64_t>(until - now, 1'000'000)),
                       [this] { return stop_sampling_; }))
      break;
  }
  // A window whose end passed while the other threads finished: closed as usual.
  now = UnixNowNs();
  if (now >= window_end) {
    CloseWindow(window_end - window, window_end, now - options_.span_grace_ns);
    window_end += window;
    if (window_end <= now) window_end = (now / window + 1) * window;  // slept through some
  }
  // The partial window, and the span windows still in their grace period: what was collected is
  // not lost at shutdown. Exports arriving after this point would be acknowledged and never
  // stored: the receiver refuses them first (503, which the SDKs retry).
  if (spans_) spans_->Close();
  CloseWindow(window_end - window, window_end, window_end);
}

std::vector<GpuSampleSeries> Telemetry::GpuSamples(int64_t from_unix_ns, int64_t to_unix_ns) const {
  // gpu_ is assigned once, before gpu_ready_ is set, and never again.
  if (!gpu_ready_ || gpu_ == nullptr) return {};
  return gpu_->Samples(from_unix_ns, to_unix_ns);
}

void Telemetry::ScrapeLoop() {
  while (true) {
    engine_->Poll(UnixNowNs());  // scrapes when its interval has passed
    std::unique_lock<std::mutex> lock(mu_);
    if (wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) return;
  }
}

void Telemetry::CollectLoop() {
  std::vector<int64_t> next_poll(collectors_.size(), 0);
  while (true) {
    const int64_t now = UnixNowNs();
    int64_t until = now + 1'000'000'000;
    for (size_t i = 0; i < collectors_.size(); ++i) {
      if (now >= next_poll[i]) {
        collectors_[i]->Poll(now);
        next_poll[i] = now + std::max<int64_t>(collectors_[i]->poll_interval_ns(), 1'000'000);
      }
      until = std::min(until, next_poll[i]);
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (wake_.wait_for(lock, std::chrono::nanoseconds(std::max<int64_t>(until - now, 1'000'000)),
                       [this] { return stop_; }))
      return;
  }
}

void Telemetry::CloseWindow(int64_t start_ns, int64_t end_ns, int64_t spans_until_ns) {
  TelemetryWindow out;
  const int64_t now = UnixNowNs();
  // Each kind's record under its registered record kind, as its TelemetryData writes it.
  auto record = [&](const auto& kind, int64_t start, int64_t end, const auto& window) {
    base::JsonWriter w;
    window.WriteJson(w);
    out.records.push_back(store::TelemetryRecord{kind.record_kind(), start, end, now, w.str()});
  };
  if (gpu_ && gpu_->enabled()) {
    auto g = std::make_unique<GpuMetricsWindow>(gpu_->TakeWindow(start_ns, end_ns));
    if (!g->devices.empty()) {
      record(GpuMetricsKind(), start_ns, end_ns, *g);
      std::lock_guard<std::mutex> lock(status_mu_);
      last_devices_ = g->devices;
      out.gpu = std::move(g);
    }
  }
  if (engine_) {
    auto e = std::make_unique<telemetry::scrape::EngineMetricsWindow>(
        engine_->TakeWindow(start_ns, end_ns));
    // A window of failed scrapes only is stored too: its failures (and abandoned GETs) count.
    if (e->scrapes > 0 || e->scrape_failures > 0) {
      record(telemetry::scrape::EngineMetricsKind(), start_ns, end_ns, *e);
      if (e->scrapes > 0) {
        std::lock_guard<std::mutex> lock(status_mu_);
        last_engine_ = e->engine;
      }
      out.engine = std::move(e);
    }
  }
  for (const auto& c : collectors_) {
    std::unique_ptr<telemetry::TelemetryData> d = c->TakeWindow(start_ns, end_ns);
    if (!d) continue;
    out.records.push_back(
        store::TelemetryRecord{d->kind().record_kind(), start_ns, end_ns, now, d->ToJson()});
    out.others.Merge(std::move(d));
  }
  // Span windows on the same grid, each taken once its grace period is over. Normally one per
  // call; several at shutdown (or after the machine slept), each emitted on its own so /metrics
  // counts every one. After a long sleep the missed windows are taken as one, not one by one.
  const int64_t window = options_.window_ns;
  constexpr int64_t kMaxWindowsBehind = 1000;
  while (spans_ && spans_taken_end_ + window <= spans_until_ns) {
    int64_t span_end = spans_taken_end_ + window;
    if ((spans_until_ns - spans_taken_end_) / window > kMaxWindowsBehind)
      span_end = spans_until_ns / window * window;
    std::unique_ptr<telemetry::otlp::SpanWindow> s = TakeSpanWindow(spans_taken_end_, span_end);
    if (s) {
      if (out.spans) {
        if (on_window_) on_window_(std::move(out));
        out = TelemetryWindow();
      }
      record(telemetry::otlp::SpanKind(), spans_taken_end_, span_end, *s);
      out.spans = std::move(s);
    }
    spans_taken_end_ = span_end;
  }
  if (!out.records.empty() && on_window_) on_window_(std::move(out));
}

std::unique_ptr<telemetry::otlp::SpanWindow> Telemetry::TakeSpanWindow(int64_t start_ns,
                                                                       int64_t end_ns) {
  auto s = std::make_unique<telemetry::otlp::SpanWindow>(
      spans_->TakeWindow(static_cast<uint64_t>(start_ns), static_cast<uint64_t>(end_ns)));
  const telemetry::otlp::SpanCounters& c = s->counters;
  const uint64_t dropped = telemetry::otlp::DroppedSpans(c);
  if (dropped > 0 && options_.log) {
    // Never silent: the user learns at once that the figures undercount, and why.
    options_.log("request spans dropped, taking window " + base::FormatLocalTime(start_ns) + " - " +
                 base::FormatLocalTime(end_ns) + ": " + telemetry::otlp::DescribeDrops(c) +
                 " (docs/request-spans.md)");
  }
  if (s->requests == 0 && c.spans_received == 0 && c.requests_rejected == 0 && dropped == 0)
    return nullptr;
  return s;
}

TelemetryStatus Telemetry::status() const {
  TelemetryStatus s;
  if (!options_.nvml) {
    s.nvml = {"off", "disabled (--no-nvml)", ""};
  } else if (!gpu_ready_) {
    s.nvml = {"off", "starting (loading NVML)", ""};
  } else {
    s.nvml = FromHealthLine(gpu_->health());
  }
  if (!engine_) {
    s.scrape = {"off", "disabled (--no-scrape)", ""};
  } else {
    s.scrape = FromHealthLine(engine_->health());
    s.scrape.detail = engine_->endpoint();
    s.scrape_targets = engine_->targets();
  }
  if (!spans_) {
    s.otlp = {"off", "disabled (--no-otlp)", ""};
  } else {
    const telemetry::otlp::CollectorHealth h = spans_->health();
    const telemetry::otlp::SpanCounters totals = spans_->totals();
    s.otlp = FromHealthLine(h.message);
    // Listening but nothing sent yet is "on" (waiting), not a fault; anything else not ok is.
    const bool waiting = totals.requests_accepted == 0 && totals.requests_rejected == 0;
    if (!h.ok && !waiting) s.otlp.state = "degraded";
    s.spans_received = totals.spans_received;
  }
  std::lock_guard<std::mutex> lock(status_mu_);
  s.devices = last_devices_;
  s.engine = last_engine_;
  return s;
}

}  // namespace inferscope::telemetry
