// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agentd/capture_gpu.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "src/telemetry/nvml/gpu_metrics_window.h"

namespace inferscope::agentd {

void AddCaptureGpus(const CaptureTarget& target,
                    const std::vector<telemetry::GpuSampleSeries>& samples, int64_t from_unix_ns,
                    int64_t to_unix_ns, perfetto::EventSet* set) {
  std::set<uint32_t> used;
  for (const auto& e : set->events.kernels) used.insert(e.device);
  for (const auto& e : set->events.memcpys) used.insert(e.device);
  for (const auto& e : set->events.memsets) used.insert(e.device);
  for (const uint32_t device : used) {
    auto known = std::find_if(target.devices.begin(), target.devices.end(),
                              [&](const CaptureDevice& d) { return d.device == device; });
    if (known == target.devices.end() || known->uuid.empty()) continue;
    model::DeviceInfo info;
    info.pid = target.pid;
    info.device = device;
    info.name = set->names->Intern(known->name);
    info.uuid = set->names->Intern(known->uuid);
    set->events.OnDevice(info);
    auto gpu =
        std::find_if(samples.begin(), samples.end(),
                     [&](const telemetry::GpuSampleSeries& s) { return s.uuid == known->uuid; });
    if (gpu == samples.end()) continue;
    // By metric, in the order they first appear (one sample reads them in a fixed order).
    std::map<std::string, size_t> index;
    std::vector<perfetto::GpuCounterSeries> series;
    for (const telemetry::GpuSampleSeries::Point& p : gpu->points) {
      if (p.unix_ns > to_unix_ns || std::strcmp(p.metric, telemetry::kMemTotalBytes) == 0) continue;
      auto [it, fresh] = index.try_emplace(p.metric, series.size());
      if (fresh) {
        perfetto::GpuCounterSeries& s = series.emplace_back();
        s.pid = target.pid;
        s.device = device;
        s.name = std::string("nvml: ") + p.metric;
        s.unit = p.unit;
      }
      // The sample in force at `from` is moved there; a sample taken at `from` replaces it.
      auto& points = series[it->second].points;
      const int64_t ts = std::max(p.unix_ns, from_unix_ns);
      if (!points.empty() && points.back().first == ts) {
        points.back().second = p.value;
      } else {
        points.emplace_back(ts, p.value);
      }
    }
    for (auto& s : series) set->gpu_counters.push_back(std::move(s));
  }
}

}  // namespace inferscope::agentd
