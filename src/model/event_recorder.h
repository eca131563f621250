// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "src/model/events.h"

namespace inferscope::model {

// An EventSink that keeps every event as delivered, in order per kind: what `export` and a live
// capture need (every event on its stream or thread, not the Aggregator's windows), and what the
// importers' tests inspect. Memory grows with the events.
class EventRecorder : public EventSink {
 public:
  void OnProcess(const ProcessInfo& p) override { processes.push_back(p); }
  void OnDevice(const DeviceInfo& d) override { devices.push_back(d); }
  void OnKernel(const KernelEvent& e) override { kernels.push_back(e); }
  void OnMemcpy(const MemcpyEvent& e) override { memcpys.push_back(e); }
  void OnMemset(const MemsetEvent& e) override { memsets.push_back(e); }
  void OnSync(const SyncEvent& e) override { syncs.push_back(e); }
  void OnApiCall(const ApiCallEvent& e) override { api_calls.push_back(e); }
  void OnNvtx(const NvtxEvent& e) override { nvtx.push_back(e); }
  void OnViewRange(const ViewRangeEvent& e) override { view_ranges.push_back(e); }
  void OnKernelResources(const KernelResourcesEvent& e) override { kernel_resources.push_back(e); }
  void OnDataQuality(uint32_t pid, DataQuality counter, uint64_t count) override {
    quality[counter] += count;
    quality_pids.push_back(pid);
  }

  std::vector<ProcessInfo> processes;
  std::vector<DeviceInfo> devices;
  std::vector<KernelEvent> kernels;
  std::vector<MemcpyEvent> memcpys;
  std::vector<MemsetEvent> memsets;
  std::vector<SyncEvent> syncs;
  std::vector<ApiCallEvent> api_calls;
  std::vector<NvtxEvent> nvtx;
  std::vector<ViewRangeEvent> view_ranges;
  std::vector<KernelResourcesEvent> kernel_resources;
  std::map<DataQuality, uint64_t> quality;  // counts per data-quality counter
  std::vector<uint32_t> quality_pids;       // the pid of each OnDataQuality call
};

}  // namespace inferscope::model
