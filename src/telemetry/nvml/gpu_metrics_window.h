// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// GpuMetricsWindow: what the NVML sampler saw on a host's GPUs during one window
// [start_unix_ns, end_unix_ns): per device and metric the sample count, min, max and sum (so the
// mean of a merged range is exact), the fraction of samples each clock-event ("throttle") reason
// was active, XID errors, and which metrics are missing and why. Metric names, units and the
// reasons are documented in docs/gpu-metrics.md.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/json_writer.h"
#include "src/base/status.h"
#include "src/telemetry/telemetry_kind.h"

namespace inferscope::telemetry {

// Fixed metric names (snake_case, unit in the name).
inline constexpr char kGpuUtilPct[] = "gpu_util_pct";
inline constexpr char kMemUtilPct[] = "mem_util_pct";
inline constexpr char kMemUsedBytes[] = "mem_used_bytes";
inline constexpr char kMemTotalBytes[] = "mem_total_bytes";
inline constexpr char kPowerW[] = "power_w";
inline constexpr char kEnergyPowerW[] = "energy_power_w";
inline constexpr char kTemperatureC[] = "temperature_c";
inline constexpr char kSmClockMhz[] = "sm_clock_mhz";
inline constexpr char kMemClockMhz[] = "mem_clock_mhz";
inline constexpr char kPcieTxBytesPerS[] = "pcie_tx_bytes_per_s";
inline constexpr char kPcieRxBytesPerS[] = "pcie_rx_bytes_per_s";
inline constexpr char kNvlinkTxBytesPerS[] = "nvlink_tx_bytes_per_s";
inline constexpr char kNvlinkRxBytesPerS[] = "nvlink_rx_bytes_per_s";
inline constexpr char kGpmSmActivePct[] = "gpm_sm_active_pct";
inline constexpr char kGpmSmOccupancyPct[] = "gpm_sm_occupancy_pct";
inline constexpr char kGpmTensorActivePct[] = "gpm_tensor_active_pct";
inline constexpr char kGpmDramBwUtilPct[] = "gpm_dram_bw_util_pct";
// Not metrics, but things that can be missing too.
inline constexpr char kClockEventReasons[] = "clock_event_reasons";
inline constexpr char kXidEvents[] = "xid_events";

// Count/min/max/sum of one metric's samples. Values are stored rounded to 4 decimals (integers
// stay exact) so that the JSON form, which keeps 4 decimals, reads back bit-identical.
struct GpuMetricStats {
  std::string unit;  // "%", "bytes", "W", "C", "MHz", "bytes/s"
  uint64_t samples = 0;
  double min = 0;
  double max = 0;
  double sum = 0;

  void Add(double value);
  void Merge(const GpuMetricStats& other);
  double mean() const { return samples == 0 ? 0 : sum / static_cast<double>(samples); }
  bool operator==(const GpuMetricStats&) const = default;
};

// One device's share of a window. Devices merge when their UUIDs match.
struct GpuDeviceWindow {
  int32_t index = -1;  // NVML index on its host
  std::string uuid;    // "GPU-..."; the merge key
  std::string name;
  std::string pci_bus_id;
  std::string architecture;        // "hopper", "ampere", ... or "" when unknown
  std::string compute_capability;  // "9.0" or ""
  uint64_t samples = 0;            // Sample() calls that read this device
  bool lost = false;               // fell off the bus (NVML_ERROR_GPU_IS_LOST); no longer sampled
  std::map<std::string, GpuMetricStats> metrics;
  // Samples where the clock-event reasons were read, and per reason those where it was active.
  uint64_t throttle_samples = 0;
  std::map<std::string, uint64_t> throttle_active;
  uint64_t xid_count = 0;
  uint64_t last_xid = 0;  // XID code of the newest event; 0 = none (999 = unknown XID)
  int64_t last_xid_unix_ns = 0;
  // metric (or kClockEventReasons / kXidEvents) -> why it has no samples.
  std::map<std::string, std::string> missing;

  // Fraction of throttle samples in which `reason` was active (0 when never read).
  double ThrottleFraction(const std::string& reason) const;
  void Merge(const GpuDeviceWindow& other);
  bool operator==(const GpuDeviceWindow&) const = default;
};

// A host's (or, merged, a fleet's) GPU telemetry for a time range.
struct GpuMetricsWindow {
  int64_t start_unix_ns = 0;
  int64_t end_unix_ns = 0;
  // Why there are no devices when the sampler is off ("libnvidia-ml.so.1 not found: ..."); "" when
  // NVML works.
  std::string unavailable;
  std::vector<GpuDeviceWindow> devices;  // by index, then uuid

  // Widens the range to cover both, merges same-UUID devices and appends the others.
  void Merge(const GpuMetricsWindow& other);
  void WriteJson(base::JsonWriter& w) const;
  static base::StatusOr<GpuMetricsWindow> FromJson(std::string_view json);
  bool operator==(const GpuMetricsWindow&) const = default;
};

// The clock-event reason names, in bit order (bit 0 = gpu_idle).
const std::vector<std::string>& ClockEventReasonNames();

// Per slowdown reason (sw_power_cap, hw_slowdown, sw_thermal_slowdown, hw_thermal_slowdown,
// hw_power_brake), the share of samples it was active on the GPU where it was most active; reasons
// never sampled are absent. What the diagnosis's `throttling` rule reads (HostSignals).
std::map<std::string, double> SlowdownShares(const GpuMetricsWindow& window);

// A few terminal lines: one row per device (utilization, memory, power, temperature, SM clock, GPM
// SM active/occupancy/tensor; the table fits 100 columns), full names too long for the table, each
// device's clock-event (throttle) reasons with their share of samples, then XID errors, lost
// devices and missing metrics.
void RenderGpuMetricsText(const GpuMetricsWindow& window, std::string* out);

// GPU metrics as a kind of host telemetry: record kind "gpu", report key "gpu_metrics".
const telemetry::WindowKind<GpuMetricsWindow>& GpuMetricsKind();

}  // namespace inferscope::telemetry
