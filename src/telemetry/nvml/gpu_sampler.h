// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// GpuSampler: reads every GPU metric of every device once per Sample() call (the agent calls it
// every --gpu-sample-interval, 1 s by default) and summarizes them per window. docs/gpu-metrics.md
// lists the metrics, their units and how each one degrades.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/telemetry/nvml/gpu_metrics_window.h"
#include "src/telemetry/nvml/nvml_api.h"

namespace inferscope::telemetry {

// One device's samples over a time range, each value as read (GpuSampler::Samples): what a live
// capture turns into counter tracks beside its kernels.
struct GpuSampleSeries {
  int32_t index = -1;  // NVML index
  std::string uuid;    // "GPU-...": what maps a process's CUDA ordinal to it
  struct Point {
    int64_t unix_ns = 0;
    const char* metric = "";  // one of the k* metric names of gpu_metrics_window.h
    const char* unit = "";
    double value = 0;
  };
  std::vector<Point> points;  // in time order
};

// Samples NVML with times the caller gives; no threads of its own, no global state. Never fails
// and never throws: without NVML (no driver, init failure) it is "off" and Sample() does nothing;
// a metric a GPU or driver cannot give is left out with a reason; a lost GPU stops being sampled.
// All methods are thread-safe (one mutex), so the agent may sample on one thread and take windows
// or read health() on another.
class GpuSampler {
 public:
  // Loads NVML from `library_path` (LoadNvml), calls nvmlInit and discovers the devices. nvmlInit
  // can take seconds on a host without persistence mode: construct it on the sampling thread.
  explicit GpuSampler(const std::string& library_path = "libnvidia-ml.so.1");
  // Uses an already loaded (or failed) API: in-process fakes, or a caller that loaded it itself.
  explicit GpuSampler(base::StatusOr<std::unique_ptr<NvmlApi>> api);
  ~GpuSampler();
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  // Reads every metric of every live device once. Rates (energy, PCIe and NVLink bytes) come from
  // the counter deltas between consecutive calls, over the difference of their `now_unix_ns`.
  void Sample(int64_t now_unix_ns);

  // Everything sampled since the previous TakeWindow, labelled [start_unix_ns, end_unix_ns);
  // resets the accumulators (counters and GPM keep their previous reading, so no interval is lost).
  GpuMetricsWindow TakeWindow(int64_t start_unix_ns, int64_t end_unix_ns);

  // Every device's samples taken in [from_unix_ns, to_unix_ns], preceded per metric by its last
  // sample before `from` (the value in force when the range starts). Samples are kept for
  // kHistoryNs (at most kHistoryPoints per device), independently of TakeWindow.
  std::vector<GpuSampleSeries> Samples(int64_t from_unix_ns, int64_t to_unix_ns) const;
  // Long enough for the longest capture (60 s) and the time its trace takes to be written after.
  static constexpr int64_t kHistoryNs = 90'000'000'000;
  static constexpr size_t kHistoryPoints = 1 << 16;

  // One line a user can act on: "ok: 2 GPUs (driver 550.54.15)", "degraded: GPU 1 lost; ...",
  // or "off: libnvidia-ml.so.1 not found: no NVIDIA driver on this host".
  std::string health() const;
  // False when the sampler is off (no NVML or no GPUs): the agent can skip its sampling thread.
  bool enabled() const;

 private:
  // A cumulative counter's previous reading, to turn the next one into a rate.
  struct Counter {
    bool valid = false;
    unsigned long long value = 0;
    int64_t unix_ns = 0;
  };
  struct Device {
    nvml_abi::nvmlDevice_t handle = nullptr;
    GpuDeviceWindow acc;  // identity fields persist; the rest is reset by TakeWindow
    // Metrics that will never work on this device (not supported, no permission, old driver):
    // no longer queried, reported as missing in every window.
    std::map<std::string, std::string> permanent_missing;
    // Metrics whose call failed transiently in this window (reported only if they got no sample).
    std::map<std::string, std::string> window_errors;
    Counter energy, pcie_tx, pcie_rx, nvlink_tx, nvlink_rx;
    bool pcie_from_fields = true;  // cumulative byte fields; else nvmlDeviceGetPcieThroughput
    bool gpm = false;
    nvml_abi::nvmlGpmSample_t gpm_prev = nullptr;
    nvml_abi::nvmlGpmSample_t gpm_cur = nullptr;
    bool gpm_have_prev = false;
    int64_t gpm_prev_unix_ns = 0;
    bool lost = false;
    std::deque<GpuSampleSeries::Point> history;  // the last kHistoryNs of samples, oldest first
  };
  enum class Outcome { kOk, kFailed, kLost };

  void Discover();
  void SetUpGpm(Device& d, unsigned int arch, int cc_major);
  void SetUpXid();
  void SampleDevice(Device& d, int64_t now_unix_ns);
  void SampleGpm(Device& d, int64_t now_unix_ns);
  void DrainXidEvents(int64_t now_unix_ns);
  // Records the outcome of one NVML call made for `metrics`; `symbol` names the newest NVML entry
  // point behind it (for "driver too old" reasons).
  Outcome Check(Device& d, nvml_abi::nvmlReturn_t r, const std::vector<std::string>& metrics,
                const char* symbol);
  bool Wanted(const Device& d, const std::string& metric) const;
  void Add(Device& d, const char* metric, const char* unit, double value);
  // The rate since the previous reading, or -1 when there is none (first reading, counter went
  // backwards after a wrap or driver reload, or time did not advance).
  static double Rate(Counter& c, unsigned long long value, int64_t now_unix_ns, double scale);

  mutable std::mutex mu_;
  std::unique_ptr<NvmlApi> api_;
  std::string off_reason_;  // non-empty: off
  std::string driver_version_;
  std::vector<Device> devices_;
  std::vector<std::string> unopened_;  // "GPU 1: no permission" for handles NVML refused
  int64_t sample_unix_ns_ = 0;         // the time of the Sample() call in progress
  nvml_abi::nvmlEventSet_t event_set_ = nullptr;
};

}  // namespace inferscope::telemetry
