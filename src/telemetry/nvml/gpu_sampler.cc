// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/nvml/gpu_sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace inferscope::telemetry {
namespace {

using namespace nvml_abi;  // NOLINT(google-build-using-namespace): the ABI names, nothing else

constexpr int64_t kNsPerS = 1'000'000'000;
// The GPM header: "The interval between these two nvmlGpmSampleGet() calls should be greater than
// 100ms due to the internal sample refresh rate".
constexpr int64_t kGpmMinIntervalNs = 100'000'000;
// Bounds the events drained per Sample() so that an event storm cannot stall sampling.
constexpr int kMaxEventsPerSample = 256;

const char* ArchitectureName(unsigned int arch) {
  switch (arch) {
    case NVML_DEVICE_ARCH_KEPLER:
      return "kepler";
    case NVML_DEVICE_ARCH_MAXWELL:
      return "maxwell";
    case NVML_DEVICE_ARCH_PASCAL:
      return "pascal";
    case NVML_DEVICE_ARCH_VOLTA:
      return "volta";
    case NVML_DEVICE_ARCH_TURING:
      return "turing";
    case NVML_DEVICE_ARCH_AMPERE:
      return "ampere";
    case NVML_DEVICE_ARCH_ADA:
      return "ada";
    case NVML_DEVICE_ARCH_HOPPER:
      return "hopper";
    case NVML_DEVICE_ARCH_BLACKWELL:
      return "blackwell";
    case NVML_DEVICE_ARCH_T23X:
      return "orin";
    default:
      return "";
  }
}

// What a user can do about nvmlInit failing.
std::string InitHint(nvmlReturn_t r) {
  switch (r) {
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "the NVIDIA kernel driver is not loaded (does nvidia-smi work?)";
    case NVML_ERROR_NO_PERMISSION:
      return "no permission to open /dev/nvidia* (add the user to the device's group, or give "
             "the container GPU access)";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "libnvidia-ml and the kernel driver are different versions (reload the driver or "
             "reboot)";
    default:
      return "";
  }
}

const std::vector<std::string> kGpmMetrics = {kGpmSmActivePct, kGpmSmOccupancyPct,
                                              kGpmTensorActivePct, kGpmDramBwUtilPct};
const unsigned int kGpmMetricIds[] = {NVML_GPM_METRIC_SM_UTIL, NVML_GPM_METRIC_SM_OCCUPANCY,
                                      NVML_GPM_METRIC_ANY_TENSOR_UTIL,
                                      NVML_GPM_METRIC_DRAM_BW_UTIL};

}  // namespace

GpuSampler::GpuSampler(const std::string& library_path) : GpuSampler(LoadNvml(library_path)) {}

GpuSampler::GpuSampler(base::StatusOr<std::unique_ptr<NvmlApi>> api) {
  if (!api.ok()) {
    off_reason_ = api.status().message();
    return;
  }
  if (*api == nullptr) {
    off_reason_ = "no NVML library given";
    return;
  }
  api_ = std::move(*api);
  const nvmlReturn_t r = api_->Init();
  if (r != NVML_SUCCESS) {
    const std::string hint = InitHint(r);
    off_reason_ = "nvmlInit failed: " + api_->ErrorString(r) + " (" + ReturnCodeName(r) + ")" +
                  (hint.empty() ? "" : ": " + hint);
    api_.reset();  // nothing to shut down; unloads the library
    return;
  }
  Discover();
}

GpuSampler::~GpuSampler() {
  std::lock_guard<std::mutex> lock(mu_);
  if (api_ == nullptr) return;
  for (Device& d : devices_) {
    if (d.gpm_prev != nullptr) api_->GpmSampleFree(d.gpm_prev);
    if (d.gpm_cur != nullptr) api_->GpmSampleFree(d.gpm_cur);
  }
  if (event_set_ != nullptr) api_->EventSetFree(event_set_);
  api_.reset();  // nvmlShutdown, dlclose
}

void GpuSampler::Discover() {
  api_->SystemGetDriverVersion(&driver_version_);
  unsigned int count = 0;
  const nvmlReturn_t r = api_->DeviceGetCount(&count);
  if (r != NVML_SUCCESS) {
    off_reason_ = "nvmlDeviceGetCount failed: " + api_->ErrorString(r);
    return;
  }
  if (count == 0) {
    off_reason_ = "the NVIDIA driver reports no GPUs (is this container given GPU access?)";
    return;
  }
  for (unsigned int i = 0; i < count; ++i) {
    Device d;
    d.acc.index = static_cast<int32_t>(i);
    const nvmlReturn_t hr = api_->DeviceGetHandleByIndex(i, &d.handle);
    if (hr != NVML_SUCCESS) {
      // A GPU this user may not open (or one already broken): list it, with the reason, and
      // sample the others.
      const std::string why = hr == NVML_ERROR_NO_PERMISSION
                                  ? "no permission to open this GPU"
                                  : "cannot open: " + api_->ErrorString(hr);
      d.handle = nullptr;
      d.lost = hr == NVML_ERROR_GPU_IS_LOST;
      d.acc.lost = d.lost;
      d.permanent_missing["device"] = why;
      if (!d.lost) unopened_.push_back(fmt::format("GPU {}: {}", i, why));
      devices_.push_back(std::move(d));
      continue;
    }
    api_->DeviceGetName(d.handle, &d.acc.name);
    api_->DeviceGetUUID(d.handle, &d.acc.uuid);
    nvmlPciInfo_t pci{};
    if (api_->DeviceGetPciInfo(d.handle, &pci) == NVML_SUCCESS) {
      d.acc.pci_bus_id = std::string(pci.busId, strnlen(pci.busId, sizeof(pci.busId)));
    }
    nvmlDeviceArchitecture_t arch = 0;
    if (api_->DeviceGetArchitecture(d.handle, &arch) == NVML_SUCCESS) {
      d.acc.architecture = ArchitectureName(arch);
    } else {
      arch = 0;
    }
    int major = 0, minor = 0;
    if (api_->DeviceGetCudaComputeCapability(d.handle, &major, &minor) == NVML_SUCCESS) {
      d.acc.compute_capability = fmt::format("{}.{}", major, minor);
    } else {
      major = 0;
    }
    SetUpGpm(d, arch, major);
    devices_.push_back(std::move(d));
  }
  SetUpXid();
}

void GpuSampler::SetUpGpm(Device& d, unsigned int arch, int cc_major) {
  auto disable = [&](const std::string& why) {
    for (const std::string& m : kGpmMetrics) d.permanent_missing[m] = why;
  };
  // Compute capability is the better test (Orin's architecture id is above Hopper's).
  const bool pre_hopper = cc_major > 0
                              ? cc_major < 9
                              : (arch >= NVML_DEVICE_ARCH_KEPLER && arch < NVML_DEVICE_ARCH_HOPPER);
  if (pre_hopper) return disable("GPM needs Hopper or newer");
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;
  nvmlReturn_t r = api_->GpmQueryDeviceSupport(d.handle, &support);
  if (r == NVML_ERROR_FUNCTION_NOT_FOUND) {
    return disable("driver too old (symbol nvmlGpmQueryDeviceSupport missing)");
  }
  if (r == NVML_ERROR_NO_PERMISSION) return disable("no permission");
  if (r != NVML_SUCCESS) return disable("GPM query failed: " + api_->ErrorString(r));
  if (support.isSupportedDevice == 0) {
    return disable(arch == 0 && cc_major == 0 ? "GPM not supported (needs Hopper or newer)"
                                              : "GPM not supported by this GPU");
  }
  r = api_->GpmSampleAlloc(&d.gpm_prev);
  if (r == NVML_SUCCESS) r = api_->GpmSampleAlloc(&d.gpm_cur);
  if (r != NVML_SUCCESS) {
    if (d.gpm_prev != nullptr) api_->GpmSampleFree(d.gpm_prev);
    d.gpm_prev = d.gpm_cur = nullptr;
    return disable(r == NVML_ERROR_FUNCTION_NOT_FOUND
                       ? "driver too old (symbol nvmlGpmSampleAlloc missing)"
                       : "GPM sample allocation failed: " + api_->ErrorString(r));
  }
  d.gpm = true;
}

void GpuSampler::SetUpXid() {
  auto all_missing = [&](const std::string& why) {
    for (Device& d : devices_) d.permanent_missing.emplace(kXidEvents, why);
  };
  nvmlReturn_t r = api_->EventSetCreate(&event_set_);
  if (r != NVML_SUCCESS) {
    event_set_ = nullptr;
    return all_missing(r == NVML_ERROR_FUNCTION_NOT_FOUND
                           ? "driver too old (symbol nvmlEventSetCreate missing)"
                           : "event set creation failed: " + api_->ErrorString(r));
  }
  int registered = 0;
  for (Device& d : devices_) {
    if (d.handle == nullptr) continue;
    unsigned long long types = 0;
    r = api_->DeviceGetSupportedEventTypes(d.handle, &types);
    if (r == NVML_SUCCESS && (types & nvmlEventTypeXidCriticalError) == 0) {
      d.permanent_missing[kXidEvents] = "not supported by this GPU";
      continue;
    }
    r = api_->DeviceRegisterEvents(d.handle, nvmlEventTypeXidCriticalError, event_set_);
    if (r == NVML_SUCCESS) {
      ++registered;
    } else if (r == NVML_ERROR_NOT_SUPPORTED) {
      d.permanent_missing[kXidEvents] = "not supported by this GPU";
    } else if (r == NVML_ERROR_NO_PERMISSION) {
      d.permanent_missing[kXidEvents] = "no permission";
    } else if (r == NVML_ERROR_FUNCTION_NOT_FOUND) {
      d.permanent_missing[kXidEvents] = "driver too old (symbol nvmlDeviceRegisterEvents missing)";
    } else {
      d.permanent_missing[kXidEvents] = "event registration failed: " + api_->ErrorString(r);
    }
  }
  if (registered == 0) {
    api_->EventSetFree(event_set_);
    event_set_ = nullptr;
  }
}

bool GpuSampler::Wanted(const Device& d, const std::string& metric) const {
  return d.permanent_missing.count(metric) == 0;
}

void GpuSampler::Add(Device& d, const char* metric, const char* unit, double value) {
  GpuMetricStats& m = d.acc.metrics[metric];
  if (m.unit.empty()) m.unit = unit;
  m.Add(value);
  d.history.push_back({sample_unix_ns_, metric, unit, value});
  while (!d.history.empty() && (d.history.size() > kHistoryPoints ||
                                d.history.front().unix_ns < sample_unix_ns_ - kHistoryNs))
    d.history.pop_front();
}

std::vector<GpuSampleSeries> GpuSampler::Samples(int64_t from_unix_ns, int64_t to_unix_ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<GpuSampleSeries> out;
  for (const Device& d : devices_) {
    GpuSampleSeries& series = out.emplace_back();
    series.index = d.acc.index;
    series.uuid = d.acc.uuid;
    // The last sample before the range, per metric (metric names are the k* constants: their
    // addresses identify them).
    std::map<const char*, GpuSampleSeries::Point> before;
    for (const auto& p : d.history) {
      if (p.unix_ns > to_unix_ns) break;
      if (p.unix_ns < from_unix_ns) {
        before[p.metric] = p;
      } else {
        series.points.push_back(p);
      }
    }
    std::vector<GpuSampleSeries::Point> first;
    for (const auto& [metric, p] : before) first.push_back(p);
    std::stable_sort(first.begin(), first.end(),
                     [](const auto& a, const auto& b) { return a.unix_ns < b.unix_ns; });
    series.points.insert(series.points.begin(), first.begin(), first.end());
  }
  return out;
}

GpuSampler::Outcome GpuSampler::Check(Device& d, nvmlReturn_t r,
                                      const std::vector<std::string>& metrics, const char* symbol) {
  if (r == NVML_SUCCESS) return Outcome::kOk;
  std::string permanent;
  switch (r) {
    case NVML_ERROR_GPU_IS_LOST:
      d.lost = true;
      d.acc.lost = true;
      return Outcome::kLost;
    case NVML_ERROR_NOT_SUPPORTED:
      permanent = "not supported by this GPU";
      break;
    case NVML_ERROR_NO_PERMISSION:
      permanent = "no permission";
      break;
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      permanent = fmt::format("driver too old (symbol {} missing)", symbol);
      break;
    case NVML_ERROR_DEPRECATED:
      permanent = fmt::format("{} is deprecated in this driver", symbol);
      break;
    default:
      break;
  }
  for (const std::string& m : metrics) {
    if (!permanent.empty()) {
      d.permanent_missing.emplace(m, permanent);
    } else {
      d.window_errors[m] = fmt::format("{} failed: {}", symbol, api_->ErrorString(r));
    }
  }
  return Outcome::kFailed;
}

double GpuSampler::Rate(Counter& c, unsigned long long value, int64_t now_unix_ns, double scale) {
  double rate = -1;
  if (c.valid && now_unix_ns > c.unix_ns && value >= c.value) {
    const double seconds = static_cast<double>(now_unix_ns - c.unix_ns) / kNsPerS;
    rate = static_cast<double>(value - c.value) * scale / seconds;
  }
  c.valid = true;
  c.value = value;
  c.unix_ns = now_unix_ns;
  return rate;
}

void GpuSampler::Sample(int64_t now_unix_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (api_ == nullptr || !off_reason_.empty()) return;
  sample_unix_ns_ = now_unix_ns;
  for (Device& d : devices_) {
    if (d.handle == nullptr || d.lost) continue;
    SampleDevice(d, now_unix_ns);
    if (!d.lost) ++d.acc.samples;
  }
  if (event_set_ != nullptr) DrainXidEvents(now_unix_ns);
}

void GpuSampler::SampleDevice(Device& d, int64_t now) {
  // Each block reads one NVML call; a lost GPU ends the sample (and all later ones) for it.
  bool lost = false;
  const auto ok = [&](nvmlReturn_t r, const std::vector<std::string>& metrics, const char* symbol) {
    if (r == NVML_SUCCESS) return true;
    if (Check(d, r, metrics, symbol) == Outcome::kLost) lost = true;
    return false;
  };
  if (Wanted(d, kGpuUtilPct)) {
    nvmlUtilization_t u{};
    const nvmlReturn_t r = api_->DeviceGetUtilizationRates(d.handle, &u);
    if (ok(r, {kGpuUtilPct, kMemUtilPct}, "nvmlDeviceGetUtilizationRates")) {
      Add(d, kGpuUtilPct, "%", u.gpu);
      Add(d, kMemUtilPct, "%", u.memory);
    }
    if (lost) return;
  }
  if (Wanted(d, kMemUsedBytes)) {
    unsigned long long total = 0, used = 0;
    const nvmlReturn_t r = api_->DeviceGetMemoryInfo(d.handle, &total, &used);
    if (ok(r, {kMemUsedBytes, kMemTotalBytes}, "nvmlDeviceGetMemoryInfo_v2")) {
      Add(d, kMemUsedBytes, "bytes", static_cast<double>(used));
      Add(d, kMemTotalBytes, "bytes", static_cast<double>(total));
    }
    if (lost) return;
  }
  if (Wanted(d, kPowerW)) {
    unsigned int mw = 0;
    const nvmlReturn_t r = api_->DeviceGetPowerUsage(d.handle, &mw);
    if (ok(r, {kPowerW}, "nvmlDeviceGetPowerUsage")) {
      Add(d, kPowerW, "W", mw / 1000.0);
    }
    if (lost) return;
  }
  if (Wanted(d, kEnergyPowerW)) {
    unsigned long long mj = 0;
    const nvmlReturn_t r = api_->DeviceGetTotalEnergyConsumption(d.handle, &mj);
    if (ok(r, {kEnergyPowerW}, "nvmlDeviceGetTotalEnergyConsumption")) {
      const double watts = Rate(d.energy, mj, now, 1e-3);  // mJ/s -> W
      if (watts >= 0) Add(d, kEnergyPowerW, "W", watts);
    }
    if (lost) return;
  }
  if (Wanted(d, kTemperatureC)) {
    int c = 0;
    const nvmlReturn_t r = api_->DeviceGetTemperature(d.handle, &c);
    if (ok(r, {kTemperatureC}, "nvmlDeviceGetTemperatureV")) {
      Add(d, kTemperatureC, "C", c);
    }
    if (lost) return;
  }
  for (const auto& [metric, type] :
       {std::pair<const char*, nvmlClockType_t>{kSmClockMhz, NVML_CLOCK_SM},
        {kMemClockMhz, NVML_CLOCK_MEM}}) {
    if (!Wanted(d, metric)) continue;
    unsigned int mhz = 0;
    const nvmlReturn_t r = api_->DeviceGetClockInfo(d.handle, type, &mhz);
    if (ok(r, {metric}, "nvmlDeviceGetClockInfo")) Add(d, metric, "MHz", mhz);
    if (lost) return;
  }
  if (Wanted(d, kClockEventReasons)) {
    unsigned long long mask = 0;
    const nvmlReturn_t r = api_->DeviceGetClocksEventReasons(d.handle, &mask);
    if (ok(r, {kClockEventReasons}, "nvmlDeviceGetCurrentClocksEventReasons")) {
      ++d.acc.throttle_samples;
      const auto& names = ClockEventReasonNames();
      for (size_t bit = 0; bit < names.size(); ++bit) {
        if (mask & (1ull << bit)) ++d.acc.throttle_active[names[bit]];
      }
    }
    if (lost) return;
  }
  // PCIe: the cumulative byte counters average over the whole interval and cost nothing;
  // nvmlDeviceGetPcieThroughput (KB/s) samples only 20 ms and blocks for it, so it is the fallback.
  if (Wanted(d, kPcieTxBytesPerS) && d.pcie_from_fields) {
    nvmlFieldValue_t v[2] = {};
    v[0].fieldId = NVML_FI_DEV_PCIE_COUNT_TX_BYTES;
    v[1].fieldId = NVML_FI_DEV_PCIE_COUNT_RX_BYTES;
    nvmlReturn_t r = api_->DeviceGetFieldValues(d.handle, 2, v);
    if (r == NVML_SUCCESS && (v[0].nvmlReturn != NVML_SUCCESS || v[1].nvmlReturn != NVML_SUCCESS)) {
      r = v[0].nvmlReturn != NVML_SUCCESS ? v[0].nvmlReturn : v[1].nvmlReturn;
    }
    if (r == NVML_ERROR_GPU_IS_LOST) {
      Check(d, r, {}, "nvmlDeviceGetFieldValues");
      return;
    }
    if (r == NVML_SUCCESS) {
      const double tx = Rate(d.pcie_tx, v[0].value.ullVal, now, 1.0);
      const double rx = Rate(d.pcie_rx, v[1].value.ullVal, now, 1.0);
      if (tx >= 0) Add(d, kPcieTxBytesPerS, "bytes/s", tx);
      if (rx >= 0) Add(d, kPcieRxBytesPerS, "bytes/s", rx);
    } else if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND ||
               r == NVML_ERROR_NO_PERMISSION || r == NVML_ERROR_INVALID_ARGUMENT) {
      d.pcie_from_fields = false;  // older GPU or driver: use the throughput call from now on
    } else {
      Check(d, r, {kPcieTxBytesPerS, kPcieRxBytesPerS}, "nvmlDeviceGetFieldValues");
    }
  }
  if (Wanted(d, kPcieTxBytesPerS) && !d.pcie_from_fields) {
    unsigned int tx = 0, rx = 0;
    nvmlReturn_t r = api_->DeviceGetPcieThroughput(d.handle, NVML_PCIE_UTIL_TX_BYTES, &tx);
    if (r == NVML_SUCCESS)
      r = api_->DeviceGetPcieThroughput(d.handle, NVML_PCIE_UTIL_RX_BYTES, &rx);
    if (ok(r, {kPcieTxBytesPerS, kPcieRxBytesPerS}, "nvmlDeviceGetPcieThroughput")) {
      Add(d, kPcieTxBytesPerS, "bytes/s", tx * 1024.0);  // KB/s with 1 KiB granularity
      Add(d, kPcieRxBytesPerS, "bytes/s", rx * 1024.0);
    }
    if (lost) return;
  }
  if (Wanted(d, kNvlinkTxBytesPerS)) {
    nvmlFieldValue_t v[2] = {};
    v[0].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
    v[1].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
    v[0].scopeId = v[1].scopeId = kScopeAllLinks;
    nvmlReturn_t r = api_->DeviceGetFieldValues(d.handle, 2, v);
    if (r == NVML_SUCCESS && (v[0].nvmlReturn != NVML_SUCCESS || v[1].nvmlReturn != NVML_SUCCESS)) {
      r = v[0].nvmlReturn != NVML_SUCCESS ? v[0].nvmlReturn : v[1].nvmlReturn;
    }
    if (r == NVML_ERROR_INVALID_ARGUMENT) {
      // A driver that predates the field ids rejects them; asking again will not help.
      for (const char* m : {kNvlinkTxBytesPerS, kNvlinkRxBytesPerS}) {
        d.permanent_missing.emplace(m, "not supported by this driver (NVLink throughput fields)");
      }
    } else if (ok(r, {kNvlinkTxBytesPerS, kNvlinkRxBytesPerS}, "nvmlDeviceGetFieldValues")) {
      const double tx = Rate(d.nvlink_tx, v[0].value.ullVal, now, 1024.0);  // KiB counters
      const double rx = Rate(d.nvlink_rx, v[1].value.ullVal, now, 1024.0);
      if (tx >= 0) Add(d, kNvlinkTxBytesPerS, "bytes/s", tx);
      if (rx >= 0) Add(d, kNvlinkRxBytesPerS, "bytes/s", rx);
    }
    if (lost) return;
  }
  if (d.gpm) SampleGpm(d, now);
}

void GpuSampler::SampleGpm(Device& d, int64_t now) {
  const auto stop = [&](nvmlReturn_t r, const char* symbol) {
    // Any failure but a transient one ends GPM for this device; a transient one restarts pairing.
    if (Check(d, r, kGpmMetrics, symbol) == Outcome::kLost || !Wanted(d, kGpmSmActivePct)) {
      d.gpm = false;
    }
    d.gpm_have_prev = false;
  };
  nvmlReturn_t r = api_->GpmSampleGet(d.handle, d.gpm_cur);
  if (r != NVML_SUCCESS) return stop(r, "nvmlGpmSampleGet");
  if (!d.gpm_have_prev) {
    std::swap(d.gpm_prev, d.gpm_cur);
    d.gpm_have_prev = true;
    d.gpm_prev_unix_ns = now;
    return;
  }
  // Too soon after the previous sample: keep the older one as the pair's start.
  if (now - d.gpm_prev_unix_ns < kGpmMinIntervalNs) return;
  nvmlGpmMetricsGet_t get{};
  get.version = NVML_GPM_METRICS_GET_VERSION;
  get.numMetrics = static_cast<unsigned int>(kGpmMetrics.size());
  get.sample1 = d.gpm_prev;
  get.sample2 = d.gpm_cur;
  for (size_t i = 0; i < kGpmMetrics.size(); ++i) get.metrics[i].metricId = kGpmMetricIds[i];
  r = api_->GpmMetricsGet(&get);
  std::swap(d.gpm_prev, d.gpm_cur);
  d.gpm_prev_unix_ns = now;
  if (r != NVML_SUCCESS) return stop(r, "nvmlGpmMetricsGet");
  for (size_t i = 0; i < kGpmMetrics.size(); ++i) {
    const std::string& metric = kGpmMetrics[i];
    if (!Wanted(d, metric)) continue;
    if (get.metrics[i].nvmlReturn == NVML_SUCCESS) {
      Add(d, metric.c_str(), "%", get.metrics[i].value);
    } else {
      Check(d, get.metrics[i].nvmlReturn, {metric}, "nvmlGpmMetricsGet");
    }
  }
}

void GpuSampler::DrainXidEvents(int64_t now) {
  for (int i = 0; i < kMaxEventsPerSample; ++i) {
    nvmlEventData_t data{};
    const nvmlReturn_t r = api_->EventSetWait(event_set_, &data, 0);
    if (r != NVML_SUCCESS) return;  // TIMEOUT: none pending; anything else: try next time
    if ((data.eventType & nvmlEventTypeXidCriticalError) == 0) continue;
    for (Device& d : devices_) {
      if (d.handle != nullptr && d.handle == data.device) {
        ++d.acc.xid_count;
        d.acc.last_xid = data.eventData;
        d.acc.last_xid_unix_ns = now;
        break;
      }
    }
  }
}

GpuMetricsWindow GpuSampler::TakeWindow(int64_t start_unix_ns, int64_t end_unix_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  GpuMetricsWindow w;
  w.start_unix_ns = start_unix_ns;
  w.end_unix_ns = end_unix_ns;
  w.unavailable = off_reason_;
  if (!off_reason_.empty()) return w;
  for (Device& d : devices_) {
    GpuDeviceWindow out = d.acc;
    out.missing = d.permanent_missing;
    for (const auto& [metric, error] : d.window_errors) {
      auto it = out.metrics.find(metric);
      if (it == out.metrics.end() || it->second.samples == 0) out.missing.emplace(metric, error);
    }
    if (d.lost && out.samples == 0) out.missing.emplace("device", "GPU lost (fell off the bus)");
    w.devices.push_back(std::move(out));
    // Reset the window's accumulators; identity and lost flag persist.
    d.acc.samples = 0;
    d.acc.metrics.clear();
    d.acc.throttle_samples = 0;
    d.acc.throttle_active.clear();
    d.acc.xid_count = 0;
    d.acc.last_xid = 0;
    d.acc.last_xid_unix_ns = 0;
    d.window_errors.clear();
  }
  return w;
}

std::string GpuSampler::health() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!off_reason_.empty()) return "off: " + off_reason_;
  std::vector<std::string> problems;
  size_t live = 0;
  for (const Device& d : devices_) {
    if (d.lost) {
      problems.push_back(
          fmt::format("GPU {} lost (fell off the bus; check dmesg for XID 79)", d.acc.index));
    } else if (d.handle != nullptr) {
      ++live;
    }
  }
  for (const std::string& u : unopened_) problems.push_back(u);
  size_t missing = 0;
  for (const Device& d : devices_) missing += d.permanent_missing.size();
  std::string driver = driver_version_.empty() ? "" : ", driver " + driver_version_;
  std::string tail = missing == 0 ? "" : fmt::format("; {} device metrics unavailable", missing);
  if (problems.empty()) {
    return fmt::format("ok: {} GPU{}{}{}", live, live == 1 ? "" : "s", driver, tail);
  }
  std::string s = fmt::format("degraded: {} of {} GPUs sampled{}", live, devices_.size(), driver);
  for (const std::string& p : problems) s += "; " + p;
  return s;
}

bool GpuSampler::enabled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return off_reason_.empty() && api_ != nullptr;
}

}  // namespace inferscope::telemetry
