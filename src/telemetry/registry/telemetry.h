// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The agent's host telemetry: GPU metrics (NVML), the engine's Prometheus metrics and OTLP
// request spans, each summarized per window on the same wall-clock grid the injected processes
// use (multiples of the window length), so `inferscope report` can put them beside the kernel
// profile of the same window. Two threads: one samples NVML and closes windows, one scrapes
// (a scrape may block for its HTTP timeouts; GPU sampling must not wait for it). Spans arrive on
// the HTTP server's threads (SpanCollector is thread-safe). Kinds registered with a generic
// collector (TelemetryKinds(), TelemetryKind::NewCollector) are polled on a third thread.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/store/sqlite_store.h"
#include "src/telemetry/nvml/gpu_metrics_window.h"
#include "src/telemetry/nvml/gpu_sampler.h"
#include "src/telemetry/otlp/span_collector.h"
#include "src/telemetry/scrape/engine_metrics_collector.h"
#include "src/telemetry/scrape/engine_window.h"
#include "src/telemetry/telemetry_kind.h"

namespace inferscope::telemetry {

struct TelemetryOptions {
  int64_t window_ns = 10'000'000'000;  // the injection library's default window
  bool nvml = true;
  std::string nvml_library = "libnvidia-ml.so.1";
  int64_t gpu_sample_interval_ns = 1'000'000'000;
  bool scrape = true;
  std::string metrics_url;  // overrides discovery
  int64_t scrape_interval_ns = 5'000'000'000;
  std::string proc_root = "/proc";
  bool otlp = true;
  // How long a span window stays open after its end. The OpenTelemetry SDKs' batch processors
  // export every 5 s (scheduledDelayMillis), so a span arrives up to ~5 s after it ended: its
  // window is taken (and stored) only at end + grace. Spans arriving later still are dropped as
  // late, logged and counted.
  int64_t span_grace_ns = 10'000'000'000;
  // One line per event worth telling the user (spans dropped); unset = silent.
  std::function<void(const std::string&)> log;
};

// A collector's state for `inferscope status` and /api/v1/status.
struct CollectorStatus {
  std::string state;   // "on", "degraded" or "off"
  std::string reason;  // one line; what to do when not "on"
  std::string detail;  // scrape: the URL scraped; nvml: the device list
};

struct TelemetryStatus {
  CollectorStatus nvml, scrape, otlp;
  std::vector<GpuDeviceWindow> devices;  // identity fields only (index, uuid, name)
  std::string engine;                    // scrape: the engine detected, "" when none
  std::vector<telemetry::scrape::ScrapeTargetStats>
      scrape_targets;  // scrapes, failures, abandoned GETs
  uint64_t spans_received = 0;
};

// What a closed window produced: records for the store and the values for /metrics. The span
// window lags the others by the grace period: its record carries its own bounds.
struct TelemetryWindow {
  std::vector<store::TelemetryRecord>
      records;  // one per kind with data, under its record_kind(); empty ones left out
  std::unique_ptr<GpuMetricsWindow> gpu;
  std::unique_ptr<telemetry::scrape::EngineMetricsWindow> engine;
  std::unique_ptr<telemetry::otlp::SpanWindow> spans;
  // The windows of the registered kinds' generic collectors (TelemetryKind::NewCollector).
  telemetry::TelemetrySet others;
};

class Telemetry {
 public:
  using WindowCallback = std::function<void(TelemetryWindow&&)>;
  Telemetry(TelemetryOptions options, WindowCallback on_window);
  ~Telemetry();  // stops
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;

  void Start();
  // Closes the current (partial) window and every span window still in its grace period, emits
  // them and joins the threads. Idempotent.
  void Stop();

  // The profiled processes: where the scraper looks for the engine's metrics endpoint.
  void SetRootPids(std::vector<int> pids);
  // The OTLP receiver (mount HandleTraces on POST /v1/traces); null when OTLP is off.
  telemetry::otlp::SpanCollector* spans() { return spans_.get(); }
  TelemetryStatus status() const;
  // The NVML samples of [from, to] on the wall clock (GpuSampler::Samples), for a capture's
  // counter tracks; empty while the sampler starts, or without NVML. Thread-safe.
  std::vector<GpuSampleSeries> GpuSamples(int64_t from_unix_ns, int64_t to_unix_ns) const;

 private:
  void SampleLoop();
  void ScrapeLoop();
  void CollectLoop();  // polls collectors_
  // Emits GPU and engine metrics of [start_ns, end_ns), and the span windows ending at or before
  // `spans_until_ns` not taken yet (end + grace has passed, or at shutdown all up to end_ns).
  void CloseWindow(int64_t start_ns, int64_t end_ns, int64_t spans_until_ns);
  std::unique_ptr<telemetry::otlp::SpanWindow> TakeSpanWindow(int64_t start_ns, int64_t end_ns);

  const TelemetryOptions options_;
  WindowCallback on_window_;
  std::unique_ptr<telemetry::otlp::SpanCollector> spans_;
  std::unique_ptr<telemetry::scrape::EngineMetricsCollector> engine_;
  std::unique_ptr<GpuSampler> gpu_;  // built on the sample thread (nvmlInit can be slow)
  // One per registered kind that has a generic collector; windows taken with the GPU's.
  std::vector<std::unique_ptr<telemetry::Collector>> collectors_;

  mutable std::mutex mu_;  // guards stop_, stop_sampling_ (and the assignment of gpu_)
  std::condition_variable wake_;
  bool stop_ = false;
  bool stop_sampling_ = false;  // set once the scrape and collect threads are joined
  std::thread sample_thread_, scrape_thread_, collect_thread_;
  std::atomic<bool> gpu_ready_{false};  // gpu_ is set (or stays null) and never changes again
  int64_t spans_taken_end_ = 0;         // sample thread only: spans before it were taken

  mutable std::mutex status_mu_;  // guards the last window's facts below
  std::vector<GpuDeviceWindow> last_devices_;
  std::string last_engine_;
};

}  // namespace inferscope::telemetry
