// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The replay engine's core: a trace imported into memory per process, and the replay of one
// process's events as CUPTI activity records and callbacks through the fake CUPTI.

#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "src/model/events.h"
#include "src/model/name_table.h"

namespace inferscope::fakes {

// Everything one process (rank) did, in the order the importer delivered it.
struct ProcessTrace {
  model::ProcessInfo info;
  std::vector<model::KernelEvent> kernels;
  // Per kernel (same index), the registers and shared memory the trace recorded for it (the
  // importer's KernelResourcesEvents, in delivery order): replayed in the CUPTI record.
  std::vector<model::KernelResources> kernel_resources;
  std::vector<model::MemcpyEvent> memcpys;
  std::vector<model::MemsetEvent> memsets;
  std::vector<model::SyncEvent> syncs;
  std::vector<model::ApiCallEvent> api_calls;
  std::vector<model::NvtxEvent> ranges;  // NVTX ranges / Kineto user_annotation
};

// Collects a trace's events per pid (importers call it from one thread at a time).
class CollectingSink : public model::EventSink {
 public:
  std::map<uint32_t, ProcessTrace>& processes() { return processes_; }

  void OnProcess(const model::ProcessInfo& p) override { processes_[p.pid].info = p; }
  void OnDevice(const model::DeviceInfo&) override {}
  void OnKernel(const model::KernelEvent& e) override {
    ProcessTrace& p = At(e.pid);
    p.kernels.push_back(e);
    p.kernel_resources.push_back(e.name < resources_.size() ? resources_[e.name]
                                                            : model::KernelResources{});
  }
  void OnKernelResources(const model::KernelResourcesEvent& e) override {
    if (e.name == model::kNoName) return;
    if (e.name >= resources_.size()) resources_.resize(static_cast<size_t>(e.name) + 1);
    resources_[e.name] = e.resources;
  }
  void OnMemcpy(const model::MemcpyEvent& e) override { At(e.pid).memcpys.push_back(e); }
  void OnMemset(const model::MemsetEvent& e) override { At(e.pid).memsets.push_back(e); }
  void OnSync(const model::SyncEvent& e) override { At(e.pid).syncs.push_back(e); }
  void OnApiCall(const model::ApiCallEvent& e) override { At(e.pid).api_calls.push_back(e); }
  void OnNvtx(const model::NvtxEvent& e) override { At(e.pid).ranges.push_back(e); }
  void OnDataQuality(uint32_t, model::DataQuality, uint64_t) override {}

 private:
  ProcessTrace& At(uint32_t pid) {
    ProcessTrace& p = processes_[pid];
    p.info.pid = pid;
    return p;
  }
  std::map<uint32_t, ProcessTrace> processes_;
  std::vector<model::KernelResources> resources_;  // by NameId: the last delivered
};

// A plausible CUPTI callback id for an API name: the runtime (cupti_runtime_cbid.h) or driver
// (cupti_driver_cbid.h) id of the name without version suffixes, else a default for its kind.
struct ApiCbid {
  bool driver = false;
  uint32_t cbid = 0;
};
ApiCbid CbidForApi(std::string_view name, model::ApiKind kind, model::SyncType sync);

// One CUDA graph launch of a trace: its kernels (indices into ProcessTrace::kernels, by start
// time), the launch's correlation id and graph id (synthesized from the kernel sequence when the
// trace ties the kernels to their cudaGraphLaunch only by correlation id), and its span.
struct GraphLaunch {
  uint32_t correlation_id = 0;
  uint32_t graph_id = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::vector<uint32_t> kernels;
};
std::vector<GraphLaunch> FindGraphLaunches(const ProcessTrace& trace,
                                           const model::NameTable& names);

struct ReplayOptions {
  double speed = 1.0;  // 0 = as fast as possible
  // Every Nth kernel record gets zero timestamps and every Nth+1 reversed ones, as CUPTI produces
  // in long runs short of device memory (0 = never). Counted in ReplayCounts.
  uint64_t corrupt_every = 0;
  // Keep replaying the trace until this much wall time has passed since the first loop began (a
  // loop under way is finished; 0 = play it once). Each loop is shifted to start when it begins,
  // never before the previous loop's last record, and its correlation ids are made unique, so the
  // tool sees one long, consistent run (a server handling request after request).
  double loop_for_s = 0;
  // Loops start at most once per this many seconds; the process idles in between (0 = back to
  // back). With --speed 0 this bounds the CPU a long run costs: one burst per period.
  double loop_period_s = 0;
  // When not empty: a DEVICE record per device the trace uses (when the tool enabled the kind),
  // CUDA ordinal d with the UUID the fake NVML gives index nvml_index_of_device[d] (the order
  // CUDA_VISIBLE_DEVICES would give: CUDA 0 = NVML 1 for {1, 0}).
  std::vector<uint32_t> nvml_index_of_device;
};

struct ReplayCounts {
  uint64_t kernels = 0, graph_launches = 0, memcpys = 0, memsets = 0, syncs = 0, api_calls = 0,
           allocations = 0, written = 0, filtered = 0, dropped = 0;
  uint64_t zeroed = 0, reversed = 0;  // kernel records corrupted on purpose (corrupt_every)
  uint64_t kernels_written = 0;       // kernel records the tool received (not filtered/dropped)
  uint64_t loops = 0;                 // times the trace was played
  uint64_t graph_node_launches = 0;   // graph launches replayed as node records (GRAPH_TRACE off)
  uint64_t graphs_captured = 0;       // graphs whose capture was shown to the tool
  // The longest and the median play of the trace, wall time: a tool callback that blocks the
  // application (say, on a dead agent) lengthens the play it happens in beyond the others, however
  // far behind real time a slow (sanitized, loaded) build plays them all.
  double longest_loop_ms = 0, median_loop_ms = 0;
  uint64_t ranges = 0;  // NVTX ranges replayed as marker start/end records (MARKER enabled)
};

// Emits `trace` through the fake CUPTI in time order, at record end times, shifted so the trace's
// first event starts at the current cuptiGetTimestamp time (NVTX ranges, when the tool enabled
// CUPTI_ACTIVITY_KIND_MARKER: a START record at the range's start, an END at its end, paired by
// id, on the range's thread);
// first event starts at the current cuptiGetTimestamp time; paced at `speed` x real time; repeated
// as `loop_for_s` / `loop_period_s` say.
ReplayCounts ReplayProcess(const ProcessTrace& trace, const model::NameTable& names,
                           const ReplayOptions& options);

}  // namespace inferscope::fakes
