// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/nvml/gpu_metrics_window.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace inferscope::telemetry {
namespace {

// Values are kept within +-9e18: integral ones that large are still exact in a double and in an
// int64, which is how they are written. Only corrupt input comes anywhere near it.
constexpr double kMaxMagnitude = 9e18;

// Rounds to the precision JsonWriter::Double keeps (4 decimals), or to an integer when the value
// is too large for 4 decimals to survive in a double. The result is a fixed point: Quantize(q) ==
// q, which is what makes the JSON round trip exact.
double Quantize(double v) {
  if (!std::isfinite(v)) return 0;
  v = std::clamp(v, -kMaxMagnitude, kMaxMagnitude);
  if (v == std::trunc(v)) return v;
  if (std::fabs(v) >= 1e10) return std::round(v);
  const double q = std::round(v * 1e4) / 1e4;
  return q == 0 ? 0 : q;  // no -0
}

// Integral values as JSON integers (exact); the others have at most 4 decimals and |v| < 1e10, so
// JsonWriter::Double writes them exactly.
void WriteNumber(base::JsonWriter& w, double v) {
  v = Quantize(v);
  if (v == std::trunc(v)) {
    w.Int(static_cast<int64_t>(v));
  } else {
    w.Double(v);
  }
}

std::string DeviceKey(const GpuDeviceWindow& d) {
  return d.uuid.empty() ? "#" + std::to_string(d.index) + "/" + d.name : d.uuid;
}

void SortDevices(std::vector<GpuDeviceWindow>* devices) {
  std::sort(devices->begin(), devices->end(), [](const auto& a, const auto& b) {
    return std::tie(a.index, a.uuid) < std::tie(b.index, b.uuid);
  });
}

// --- JSON reading -------------------------------------------------------------------------------

using simdjson::dom::element;
using simdjson::dom::object;

base::Status Bad(std::string_view what) {
  return base::DataLossError("GPU metrics window JSON: " + std::string(what));
}

base::Status ReadDouble(element e, std::string_view key, double* out) {
  double v;
  if (e.get_double().get(v) != simdjson::SUCCESS) {
    return Bad("'" + std::string(key) + "' is not a number");
  }
  *out = Quantize(v);
  return base::OkStatus();
}

base::Status ReadUInt(element e, std::string_view key, uint64_t* out) {
  if (e.get_uint64().get(*out) != simdjson::SUCCESS) {
    return Bad("'" + std::string(key) + "' is not a non-negative integer");
  }
  return base::OkStatus();
}

base::Status ReadInt(element e, std::string_view key, int64_t* out) {
  if (e.get_int64().get(*out) != simdjson::SUCCESS) {
    return Bad("'" + std::string(key) + "' is not an integer");
  }
  return base::OkStatus();
}

base::Status ReadString(element e, std::string_view key, std::string* out) {
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) {
    return Bad("'" + std::string(key) + "' is not a string");
  }
  *out = std::string(s);
  return base::OkStatus();
}

base::Status ReadObject(element e, std::string_view key, object* out) {
  if (e.get_object().get(*out) != simdjson::SUCCESS) {
    return Bad("'" + std::string(key) + "' is not an object");
  }
  return base::OkStatus();
}

base::Status ReadMetric(element e, std::string_view name, GpuMetricStats* m) {
  object o;
  RETURN_IF_ERROR(ReadObject(e, name, &o));
  for (auto [key, value] : o) {
    if (key == "unit") {
      RETURN_IF_ERROR(ReadString(value, key, &m->unit));
    } else if (key == "samples") {
      RETURN_IF_ERROR(ReadUInt(value, key, &m->samples));
    } else if (key == "min") {
      RETURN_IF_ERROR(ReadDouble(value, key, &m->min));
    } else if (key == "max") {
      RETURN_IF_ERROR(ReadDouble(value, key, &m->max));
    } else if (key == "sum") {
      RETURN_IF_ERROR(ReadDouble(value, key, &m->sum));
    }  // "mean" is derived from sum/samples; other keys are ignored (newer writers)
  }
  return base::OkStatus();
}

base::Status ReadDevice(element e, GpuDeviceWindow* d) {
  object o;
  RETURN_IF_ERROR(ReadObject(e, "device", &o));
  for (auto [key, value] : o) {
    if (key == "index") {
      int64_t index;
      RETURN_IF_ERROR(ReadInt(value, key, &index));
      if (index < INT32_MIN || index > INT32_MAX) return Bad("'index' out of range");
      d->index = static_cast<int32_t>(index);
    } else if (key == "uuid") {
      RETURN_IF_ERROR(ReadString(value, key, &d->uuid));
    } else if (key == "name") {
      RETURN_IF_ERROR(ReadString(value, key, &d->name));
    } else if (key == "pci_bus_id") {
      RETURN_IF_ERROR(ReadString(value, key, &d->pci_bus_id));
    } else if (key == "architecture") {
      RETURN_IF_ERROR(ReadString(value, key, &d->architecture));
    } else if (key == "compute_capability") {
      RETURN_IF_ERROR(ReadString(value, key, &d->compute_capability));
    } else if (key == "samples") {
      RETURN_IF_ERROR(ReadUInt(value, key, &d->samples));
    } else if (key == "lost") {
      if (value.get_bool().get(d->lost) != simdjson::SUCCESS) return Bad("'lost' is not a bool");
    } else if (key == "metrics") {
      object metrics;
      RETURN_IF_ERROR(ReadObject(value, key, &metrics));
      for (auto [name, m] : metrics) {
        RETURN_IF_ERROR(ReadMetric(m, name, &d->metrics[std::string(name)]));
      }
    } else if (key == "throttle_samples") {
      RETURN_IF_ERROR(ReadUInt(value, key, &d->throttle_samples));
    } else if (key == "throttle") {
      object reasons;
      RETURN_IF_ERROR(ReadObject(value, key, &reasons));
      for (auto [reason, r] : reasons) {
        object ro;
        RETURN_IF_ERROR(ReadObject(r, reason, &ro));
        element active;
        if (ro["active_samples"].get(active) != simdjson::SUCCESS) {
          return Bad("throttle reason without 'active_samples'");
        }
        RETURN_IF_ERROR(
            ReadUInt(active, "active_samples", &d->throttle_active[std::string(reason)]));
      }
    } else if (key == "xid_count") {
      RETURN_IF_ERROR(ReadUInt(value, key, &d->xid_count));
    } else if (key == "last_xid") {
      RETURN_IF_ERROR(ReadUInt(value, key, &d->last_xid));
    } else if (key == "last_xid_unix_ns") {
      RETURN_IF_ERROR(ReadInt(value, key, &d->last_xid_unix_ns));
    } else if (key == "missing") {
      object missing;
      RETURN_IF_ERROR(ReadObject(value, key, &missing));
      for (auto [name, reason] : missing) {
        RETURN_IF_ERROR(ReadString(reason, name, &d->missing[std::string(name)]));
      }
    }
  }
  return base::OkStatus();
}

// --- Text ---------------------------------------------------------------------------------------

std::string Gib(double bytes) { return fmt::format("{:.1f}", bytes / (1024.0 * 1024 * 1024)); }

// "35" or "-" when the metric has no samples.
std::string MeanOf(const GpuDeviceWindow& d, const char* metric, const char* format = "{:.0f}") {
  auto it = d.metrics.find(metric);
  if (it == d.metrics.end() || it->second.samples == 0) return "-";
  return fmt::format(fmt::runtime(format), it->second.mean());
}

std::string UtilCell(const GpuDeviceWindow& d) {
  auto it = d.metrics.find(kGpuUtilPct);
  if (it == d.metrics.end() || it->second.samples == 0) return "-";
  const GpuMetricStats& m = it->second;
  return fmt::format("{:.0f} ({:.0f}-{:.0f})", m.mean(), m.min, m.max);
}

std::string MemCell(const GpuDeviceWindow& d) {
  auto used = d.metrics.find(kMemUsedBytes);
  auto total = d.metrics.find(kMemTotalBytes);
  if (used == d.metrics.end() || used->second.samples == 0) return "-";
  std::string s = Gib(used->second.max);
  if (total != d.metrics.end() && total->second.samples > 0) s += "/" + Gib(total->second.max);
  return s;
}

std::string GpmCell(const GpuDeviceWindow& d) {
  const std::string a = MeanOf(d, kGpmSmActivePct);
  const std::string o = MeanOf(d, kGpmSmOccupancyPct);
  const std::string t = MeanOf(d, kGpmTensorActivePct);
  if (a == "-" && o == "-" && t == "-") return "-";
  return a + "/" + o + "/" + t;
}

std::string ThrottleCell(const GpuDeviceWindow& d) {
  if (d.throttle_samples == 0) return "-";
  std::vector<std::pair<double, std::string>> active;
  for (const auto& [reason, n] : d.throttle_active) {
    if (n > 0) active.emplace_back(d.ThrottleFraction(reason), reason);
  }
  if (active.empty()) return "none";
  std::sort(active.begin(), active.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::string s;
  for (const auto& [fraction, reason] : active) {
    if (!s.empty()) s += ", ";
    s += fmt::format("{} {:.0f}%", reason, fraction * 100);
  }
  return s;
}

}  // namespace

// --- GpuMetricStats -----------------------------------------------------------------------------

void GpuMetricStats::Add(double value) {
  value = Quantize(value);
  if (samples == 0) {
    min = max = value;
  } else {
    min = std::min(min, value);
    max = std::max(max, value);
  }
  sum = Quantize(sum + value);
  ++samples;
}

void GpuMetricStats::Merge(const GpuMetricStats& other) {
  if (unit.empty()) unit = other.unit;
  if (other.samples == 0) return;
  if (samples == 0) {
    min = other.min;
    max = other.max;
  } else {
    min = std::min(min, other.min);
    max = std::max(max, other.max);
  }
  sum = Quantize(sum + other.sum);
  samples += other.samples;
}

// --- GpuDeviceWindow ----------------------------------------------------------------------------

double GpuDeviceWindow::ThrottleFraction(const std::string& reason) const {
  auto it = throttle_active.find(reason);
  if (it == throttle_active.end() || throttle_samples == 0) return 0;
  return static_cast<double>(it->second) / static_cast<double>(throttle_samples);
}

void GpuDeviceWindow::Merge(const GpuDeviceWindow& other) {
  if (uuid.empty()) uuid = other.uuid;
  if (name.empty()) name = other.name;
  if (pci_bus_id.empty()) pci_bus_id = other.pci_bus_id;
  if (architecture.empty()) architecture = other.architecture;
  if (compute_capability.empty()) compute_capability = other.compute_capability;
  if (index < 0) index = other.index;
  samples += other.samples;
  lost = lost || other.lost;
  for (const auto& [metric, stats] : other.metrics) metrics[metric].Merge(stats);
  throttle_samples += other.throttle_samples;
  for (const auto& [reason, n] : other.throttle_active) throttle_active[reason] += n;
  xid_count += other.xid_count;
  if (other.xid_count > 0 && other.last_xid_unix_ns >= last_xid_unix_ns) {
    last_xid = other.last_xid;
    last_xid_unix_ns = other.last_xid_unix_ns;
  }
  for (const auto& [metric, reason] : other.missing) missing.emplace(metric, reason);
}

// --- GpuMetricsWindow ---------------------------------------------------------------------------

const std::vector<std::string>& ClockEventReasonNames() {
  static const auto* names = new std::vector<std::string>{
      "gpu_idle",      "applications_clocks_setting", "sw_power_cap",        "hw_slowdown",
      "sync_boost",    "sw_thermal_slowdown",         "hw_thermal_slowdown", "hw_power_brake",
      "display_clocks"};
  return *names;
}

void GpuMetricsWindow::Merge(const GpuMetricsWindow& other) {
  const bool empty_range = start_unix_ns == 0 && end_unix_ns == 0;
  if (empty_range) {
    start_unix_ns = other.start_unix_ns;
    end_unix_ns = other.end_unix_ns;
  } else if (other.start_unix_ns != 0 || other.end_unix_ns != 0) {
    start_unix_ns = std::min(start_unix_ns, other.start_unix_ns);
    end_unix_ns = std::max(end_unix_ns, other.end_unix_ns);
  }
  for (const GpuDeviceWindow& od : other.devices) {
    const std::string key = DeviceKey(od);
    auto it = std::find_if(devices.begin(), devices.end(),
                           [&](const GpuDeviceWindow& d) { return DeviceKey(d) == key; });
    if (it == devices.end()) {
      devices.push_back(od);
    } else {
      it->Merge(od);
    }
  }
  SortDevices(&devices);
  // A reason for "no GPUs" only matters while no window of the range had any.
  if (!devices.empty()) {
    unavailable.clear();
  } else if (unavailable.empty()) {
    unavailable = other.unavailable;
  }
}

void GpuMetricsWindow::WriteJson(base::JsonWriter& w) const {
  w.BeginObject();
  w.Key("start_unix_ns").Int(start_unix_ns);
  w.Key("end_unix_ns").Int(end_unix_ns);
  w.Key("unavailable").String(unavailable);
  w.Key("devices").BeginArray();
  for (const GpuDeviceWindow& d : devices) {
    w.BeginObject();
    w.Key("index").Int(d.index);
    w.Key("uuid").String(d.uuid);
    w.Key("name").String(d.name);
    w.Key("pci_bus_id").String(d.pci_bus_id);
    w.Key("architecture").String(d.architecture);
    w.Key("compute_capability").String(d.compute_capability);
    w.Key("samples").UInt(d.samples);
    w.Key("lost").Bool(d.lost);
    w.Key("metrics").BeginObject();
    for (const auto& [name, m] : d.metrics) {
      w.Key(name).BeginObject();
      w.Key("unit").String(m.unit);
      w.Key("samples").UInt(m.samples);
      w.Key("min");
      WriteNumber(w, m.min);
      w.Key("mean");
      WriteNumber(w, m.mean());
      w.Key("max");
      WriteNumber(w, m.max);
      w.Key("sum");
      WriteNumber(w, m.sum);
      w.EndObject();
    }
    w.EndObject();
    w.Key("throttle_samples").UInt(d.throttle_samples);
    w.Key("throttle").BeginObject();
    for (const auto& [reason, n] : d.throttle_active) {
      w.Key(reason).BeginObject();
      w.Key("active_samples").UInt(n);
      w.Key("fraction").Double(d.ThrottleFraction(reason));
      w.EndObject();
    }
    w.EndObject();
    w.Key("xid_count").UInt(d.xid_count);
    w.Key("last_xid").UInt(d.last_xid);
    w.Key("last_xid_unix_ns").Int(d.last_xid_unix_ns);
    w.Key("missing").BeginObject();
    for (const auto& [name, reason] : d.missing) w.Key(name).String(reason);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

base::StatusOr<GpuMetricsWindow> GpuMetricsWindow::FromJson(std::string_view json) {
  simdjson::dom::parser parser;
  element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS) {
    return Bad("not valid JSON");
  }
  object o;
  RETURN_IF_ERROR(ReadObject(doc, "window", &o));
  GpuMetricsWindow window;
  for (auto [key, value] : o) {
    if (key == "start_unix_ns") {
      RETURN_IF_ERROR(ReadInt(value, key, &window.start_unix_ns));
    } else if (key == "end_unix_ns") {
      RETURN_IF_ERROR(ReadInt(value, key, &window.end_unix_ns));
    } else if (key == "unavailable") {
      RETURN_IF_ERROR(ReadString(value, key, &window.unavailable));
    } else if (key == "devices") {
      simdjson::dom::array devices;
      if (value.get_array().get(devices) != simdjson::SUCCESS) return Bad("'devices' not an array");
      for (element d : devices) {
        GpuDeviceWindow device;
        RETURN_IF_ERROR(ReadDevice(d, &device));
        window.devices.push_back(std::move(device));
      }
    }
  }
  return window;
}

std::map<std::string, double> SlowdownShares(const GpuMetricsWindow& window) {
  std::map<std::string, double> shares;
  for (const GpuDeviceWindow& d : window.devices) {
    if (d.throttle_samples == 0) continue;
    for (const char* reason : {"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown",
                               "hw_thermal_slowdown", "hw_power_brake"}) {
      double& share = shares[reason];
      share = std::max(share, d.ThrottleFraction(reason));
    }
  }
  return shares;
}

void RenderGpuMetricsText(const GpuMetricsWindow& window, std::string* out) {
  if (window.devices.empty()) {
    *out += "GPU metrics: " +
            (window.unavailable.empty() ? std::string("no GPUs sampled") : window.unavailable) +
            "\n";
    return;
  }
  // The table fits 100 columns; what does not fit a column gets its own line below instead of
  // being cut (a throttle reason cut to "sw..." hid a 25% hardware slowdown).
  constexpr size_t kNameWidth = 24;
  *out += fmt::format("{:<4} {:<24} {:>15} {:>11} {:>7} {:>6} {:>7} {:>12}\n", "GPU", "name",
                      "util% (min-max)", "mem GiB", "power W", "temp C", "SM MHz", "act/occ/tc %");
  bool long_names = false;
  for (const GpuDeviceWindow& d : window.devices) {
    std::string name = d.name;
    if (name.size() > kNameWidth) {
      name = name.substr(0, kNameWidth - 1) + "*";  // the full name follows the table
      long_names = true;
    }
    *out += fmt::format("{:<4} {:<24} {:>15} {:>11} {:>7} {:>6} {:>7} {:>12}\n", d.index, name,
                        UtilCell(d), MemCell(d), MeanOf(d, kPowerW), MeanOf(d, kTemperatureC),
                        MeanOf(d, kSmClockMhz), GpmCell(d));
  }
  if (long_names) {
    for (const GpuDeviceWindow& d : window.devices)
      if (d.name.size() > kNameWidth) *out += fmt::format("* GPU {}: {}\n", d.index, d.name);
  }
  // Clock-event (throttle) reasons: the share of samples each was active, every reason shown.
  for (const GpuDeviceWindow& d : window.devices) {
    if (d.throttle_samples == 0) continue;
    *out += fmt::format("GPU {} clock events (share of samples): {}\n", d.index, ThrottleCell(d));
  }
  for (const GpuDeviceWindow& d : window.devices) {
    if (d.lost)
      *out += fmt::format("GPU {}: lost (fell off the bus); not sampled since\n", d.index);
    if (d.xid_count > 0) {
      *out += fmt::format("GPU {}: {} XID error{}, last XID {}\n", d.index, d.xid_count,
                          d.xid_count == 1 ? "" : "s", d.last_xid);
    }
  }
  // Missing metrics, one line per reason and set of GPUs, so that eight identical GPUs read as one
  // line: "missing on GPU 2, 3 (GPM needs Hopper or newer): gpm_sm_active_pct, ...".
  std::map<std::string, std::map<std::string, std::string>> by_metric;  // reason -> metric -> GPUs
  for (const GpuDeviceWindow& d : window.devices) {
    for (const auto& [metric, reason] : d.missing) {
      std::string& gpus = by_metric[reason][metric];
      gpus += (gpus.empty() ? "" : ", ") + std::to_string(d.index);
    }
  }
  for (const auto& [reason, metrics] : by_metric) {
    std::map<std::string, std::string> by_gpus;  // GPUs -> metrics
    for (const auto& [metric, gpus] : metrics) {
      std::string& names = by_gpus[gpus];
      names += (names.empty() ? "" : ", ") + metric;
    }
    for (const auto& [gpus, names] : by_gpus) {
      *out += fmt::format("missing on GPU {} ({}): {}\n", gpus, reason, names);
    }
  }
}

const telemetry::WindowKind<GpuMetricsWindow>& GpuMetricsKind() {
  static const auto* kind = new telemetry::WindowKind<GpuMetricsWindow>(
      "gpu", "gpu_metrics", "GPU metrics (NVML, same range)", &RenderGpuMetricsText);
  return *kind;
}

}  // namespace inferscope::telemetry
