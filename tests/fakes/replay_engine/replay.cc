// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "tests/fakes/replay_engine/replay.h"

#include <cupti.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "src/model/cuda_api.h"
#include "tests/fakes/fake_cupti/callback_names.h"
#include "tests/fakes/fake_cupti/fake_cupti_control.h"

namespace inferscope::fakes {
namespace {

using model::ApiKind;
using model::SyncType;

uint32_t DefaultRuntimeCbid(ApiKind kind, SyncType sync) {
  switch (kind) {
    case ApiKind::kKernelLaunch:
      return CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    case ApiKind::kGraphLaunch:
      return CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000;
    case ApiKind::kMemcpy:
      return CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
    case ApiKind::kMemset:
      return CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020;
    case ApiKind::kMalloc:
      return CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020;
    case ApiKind::kFree:
      return CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020;
    case ApiKind::kQuery:
      return CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020;
    case ApiKind::kSync:
      switch (sync) {
        case SyncType::kDevice:
          return CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020;
        case SyncType::kEvent:
          return CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020;
        case SyncType::kStreamWaitEvent:
          return CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020;
        default:
          return CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020;
      }
    default:
      return CUPTI_RUNTIME_TRACE_CBID_INVALID;
  }
}

CUpti_ActivitySynchronizationType SyncTypeToCupti(SyncType t) {
  switch (t) {
    case SyncType::kDevice:
      return CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    case SyncType::kStream:
      return CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    case SyncType::kEvent:
      return CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
    case SyncType::kStreamWaitEvent:
      return CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
    default:
      return CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN;
  }
}

uint8_t CopyKindToCupti(model::MemcpyKind k) {
  switch (k) {
    case model::MemcpyKind::kHtoD:
      return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    case model::MemcpyKind::kDtoH:
      return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    case model::MemcpyKind::kDtoD:
      return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    case model::MemcpyKind::kHtoH:
      return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
    case model::MemcpyKind::kPtoP:
      return CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    default:
      return CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
  }
}

// Fake contexts: pointer = context id << 4, context id = device + 1 (fake_cupti_api.cc decodes it).
CUcontext FakeContext(uint32_t device) {
  return reinterpret_cast<CUcontext>(static_cast<uintptr_t>(device + 1) << 4);
}
uint32_t Dev(uint32_t device) { return device == model::kUnknownDevice ? 0 : device; }

// One record to emit, at `at_ns` (trace clock) - the activity's end, when CUPTI would have it.
struct Item {
  int64_t at_ns;
  uint8_t type;  // 0 kernel, 1 graph, 2 memcpy, 3 memset, 4 sync, 5 api
  uint32_t index;
};

}  // namespace

std::vector<GraphLaunch> FindGraphLaunches(const ProcessTrace& t, const model::NameTable& names) {
  std::set<uint32_t> graph_launch_correlations;  // cudaGraphLaunch calls (older traces)
  for (const model::ApiCallEvent& a : t.api_calls)
    if (a.kind == ApiKind::kGraphLaunch && a.correlation_id != 0)
      graph_launch_correlations.insert(a.correlation_id);
  std::map<std::pair<uint32_t, uint32_t>, GraphLaunch> by_key;  // (correlation, graph id)
  for (uint32_t i = 0; i < t.kernels.size(); ++i) {
    const model::KernelEvent& k = t.kernels[i];
    const bool tied = k.graph_id != 0 ||
                      (k.correlation_id != 0 && graph_launch_correlations.count(k.correlation_id));
    if (!tied) continue;
    GraphLaunch& g = by_key[{k.correlation_id, k.graph_id}];
    if (g.kernels.empty()) {
      g.correlation_id = k.correlation_id;
      g.graph_id = k.graph_id;
      g.start_ns = k.start_ns;
      g.end_ns = k.end_ns;
    }
    g.kernels.push_back(i);
    g.start_ns = std::min(g.start_ns, k.start_ns);
    g.end_ns = std::max(g.end_ns, k.end_ns);
  }
  // A launch known only by correlation gets a graph id from its kernel sequence: the launches of
  // one graph replay the same kernels, so they share an id, as CUPTI's records would.
  std::map<std::vector<model::NameId>, uint32_t> ids_by_sequence;
  std::vector<GraphLaunch> out;
  for (auto& [key, g] : by_key) {
    std::sort(g.kernels.begin(), g.kernels.end(), [&](uint32_t a, uint32_t b) {
      return t.kernels[a].start_ns < t.kernels[b].start_ns;
    });
    if (g.graph_id == 0) {
      std::vector<model::NameId> sequence;
      for (uint32_t k : g.kernels) sequence.push_back(t.kernels[k].name);
      auto [it, added] = ids_by_sequence.try_emplace(
          sequence, static_cast<uint32_t>(1'000'000 + ids_by_sequence.size()));
      g.graph_id = it->second;
    }
    out.push_back(std::move(g));
  }
  (void)names;
  return out;
}

ApiCbid CbidForApi(std::string_view name, ApiKind kind, SyncType sync) {
  const std::string_view base = model::StripApiSuffixes(name);
  for (const CbidName& c : kCbids)
    if (model::StripApiSuffixes(c.full) == base) return {c.driver, c.cbid};
  const bool driver = name.starts_with("cu") && !name.starts_with("cuda");
  if (!driver) return {false, DefaultRuntimeCbid(kind, sync)};
  return {true, kind == ApiKind::kKernelLaunch ? uint32_t{CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel}
                                               : uint32_t{CUPTI_DRIVER_TRACE_CBID_INVALID}};
}

ReplayCounts ReplayProcess(const ProcessTrace& t, const model::NameTable& names,
                           const ReplayOptions& options) {
  ReplayCounts counts;
  auto count = [&](FakeCuptiEmitResult r) {
    counts.written += r == FAKE_CUPTI_WRITTEN;
    counts.filtered += r == FAKE_CUPTI_FILTERED;
    counts.dropped += r == FAKE_CUPTI_DROPPED;
    return r;
  };
  auto emit = [&](const auto& record) {
    return count(fake_cupti_emit(reinterpret_cast<const CUpti_Activity*>(&record)));
  };

  // CUDA graph launches: a trace's graph kernels are tied to their launch by `graph id` args
  // (newer Kineto) or only by sharing the cudaGraphLaunch's correlation id (older builds, as in
  // the B300 SGLang traces). Each launch is one item at its end; when it is emitted, the fake's
  // current mode decides what CUPTI would deliver: one GraphTrace record while GRAPH_TRACE is
  // enabled, the node kernels otherwise (the injection library switches between the two).
  std::vector<GraphLaunch> launches = FindGraphLaunches(t, names);
  std::vector<bool> in_launch(t.kernels.size(), false);
  for (const GraphLaunch& g : launches)
    for (uint32_t k : g.kernels) in_launch[k] = true;
  std::vector<Item> items;
  int64_t first = INT64_MAX;
  std::set<uint32_t> devices;
  for (uint32_t i = 0; i < t.kernels.size(); ++i) {
    const model::KernelEvent& k = t.kernels[i];
    first = std::min(first, k.start_ns);
    devices.insert(k.device);
    if (!in_launch[i]) items.push_back({k.end_ns, 0, i});
  }
  for (uint32_t i = 0; i < launches.size(); ++i) items.push_back({launches[i].end_ns, 1, i});
  for (uint32_t i = 0; i < t.memcpys.size(); ++i) {
    items.push_back({t.memcpys[i].end_ns, 2, i});
    first = std::min(first, t.memcpys[i].start_ns);
  }
  for (uint32_t i = 0; i < t.memsets.size(); ++i) {
    items.push_back({t.memsets[i].end_ns, 3, i});
    first = std::min(first, t.memsets[i].start_ns);
  }
  for (uint32_t i = 0; i < t.syncs.size(); ++i) {
    items.push_back({t.syncs[i].end_ns, 4, i});
    first = std::min(first, t.syncs[i].start_ns);
  }
  for (uint32_t i = 0; i < t.api_calls.size(); ++i) {
    items.push_back({t.api_calls[i].end_ns, 5, i});
    first = std::min(first, t.api_calls[i].start_ns);
  }
  // NVTX ranges as CUPTI delivers them with the marker activity on: a START record (with the
  // name) when the range opens, an END record (no name) when it closes, sharing an id.
  const bool markers = fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_MARKER);
  if (markers) {
    for (uint32_t i = 0; i < t.ranges.size(); ++i) {
      items.push_back({t.ranges[i].start_ns, 6, i});
      items.push_back({t.ranges[i].end_ns, 7, i});
      first = std::min(first, t.ranges[i].start_ns);
    }
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.at_ns < b.at_ns; });
  if (items.empty()) return counts;

  const uint32_t pid = static_cast<uint32_t>(getpid());
  for (uint32_t d : devices) {  // the driver creates a context per device before any work
    CUpti_ResourceData resource = {};
    resource.context = FakeContext(Dev(d));
    fake_cupti_fire_callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                             &resource);
  }

  // DEVICE records: CUPTI writes one per device when the kind is enabled.
  if (!options.nvml_index_of_device.empty() &&
      fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_DEVICE)) {
    for (uint32_t d : devices) {
      const uint32_t device = Dev(d);
      if (device >= options.nvml_index_of_device.size()) continue;
      CUpti_ActivityDevice5 r{};
      r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
      r.id = device;
      r.name = "NVIDIA H100 80GB HBM3";
      // The fake NVML's UUID of index i: GPU-fa4e0000-0000-0000-0000-<i as 12 digits>.
      const uint32_t index = options.nvml_index_of_device[device];
      const unsigned char head[2] = {0xfa, 0x4e};
      std::memcpy(r.uuid.bytes, head, 2);
      char digits[13];
      std::snprintf(digits, sizeof(digits), "%012u", index);
      for (int i = 0; i < 6; ++i)
        r.uuid.bytes[10 + i] =
            static_cast<char>((digits[2 * i] - '0') << 4 | (digits[2 * i + 1] - '0'));
      emit(r);
    }
  }

  // CUDA graphs are captured before they are launched: for each graph, what a stream capture
  // shows CUPTI (cudaStreamBeginCapture; per kernel node its cudaLaunchKernel callbacks with the
  // symbol name and, inside the call, GRAPHNODE_CREATED; cudaStreamEndCapture; then
  // GRAPHEXEC_CREATED at instantiation). Callbacks reach the tool only if it enabled them.
  {
    std::set<uint32_t> captured;
    const CUcontext ctx = FakeContext(devices.empty() ? 0 : Dev(*devices.begin()));
    for (const GraphLaunch& g : launches) {
      if (!captured.insert(g.graph_id).second) continue;
      fake_cupti_fire_api_call(CUPTI_CB_DOMAIN_RUNTIME_API,
                               CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
                               "cudaStreamBeginCapture_v10000", 0, ctx);
      CUpti_GraphData graph = {};
      graph.graph = fake_cupti_graph_handle(g.graph_id);
      CUpti_ResourceData resource = {};
      resource.context = ctx;
      resource.resourceDescriptor = &graph;
      for (uint32_t k : g.kernels) {
        CUpti_CallbackData launch = {};
        const std::string_view name = names.Get(t.kernels[k].name);
        launch.functionName = "cudaLaunchKernel_v7000";
        launch.symbolName = name.data();
        launch.context = ctx;
        launch.callbackSite = CUPTI_API_ENTER;
        fake_cupti_fire_callback(CUPTI_CB_DOMAIN_RUNTIME_API,
                                 CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch);
        graph.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
        fake_cupti_fire_callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
                                 &resource);
        launch.callbackSite = CUPTI_API_EXIT;
        fake_cupti_fire_callback(CUPTI_CB_DOMAIN_RUNTIME_API,
                                 CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch);
      }
      fake_cupti_fire_api_call(CUPTI_CB_DOMAIN_RUNTIME_API,
                               CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
                               "cudaStreamEndCapture_v10000", 0, ctx);
      graph.graphExec = fake_cupti_graph_exec_handle(g.graph_id);
      fake_cupti_fire_callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED,
                               &resource);
      ++counts.graphs_captured;
    }
  }

  // CUPTI's correlation ids only grow: each loop's are moved past the previous loop's.
  uint32_t max_correlation = 0;
  for (const auto& k : t.kernels) max_correlation = std::max(max_correlation, k.correlation_id);
  for (const auto& m : t.memcpys) max_correlation = std::max(max_correlation, m.correlation_id);
  for (const auto& m : t.memsets) max_correlation = std::max(max_correlation, m.correlation_id);
  for (const auto& s : t.syncs) max_correlation = std::max(max_correlation, s.correlation_id);
  for (const auto& a : t.api_calls) max_correlation = std::max(max_correlation, a.correlation_id);
  const int64_t last = items.back().at_ns;  // the latest end time of the trace

  using Clock = std::chrono::steady_clock;
  const auto run_start = Clock::now();
  const auto loop_deadline =
      run_start + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(std::max(0.0, options.loop_for_s)));
  const auto loop_period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::max(0.0, options.loop_period_s)));
  uint64_t next_address = 0x7f0000000000ull;
  uint64_t not_before = 0;      // a loop starts no earlier than the previous one's last record
  std::vector<double> loop_ms;  // wall time of each play
  for (;;) {
    const auto wall_start = Clock::now();
    uint64_t now = 0;
    cuptiGetTimestamp(&now);
    const int64_t shift = static_cast<int64_t>(std::max(now, not_before)) - first;
    auto ts = [&](int64_t trace_ns) { return static_cast<uint64_t>(trace_ns + shift); };
    const uint32_t correlation_offset = static_cast<uint32_t>(counts.loops) * (max_correlation + 1);
    auto corr = [&](uint32_t id) { return id == 0 ? 0 : id + correlation_offset; };
    std::vector<uint64_t> live_allocations;
    // A kernel record; graph kernels carry their graph's id and their node's position in it.
    auto emit_kernel = [&](uint32_t index, uint32_t graph_id, uint32_t node) {
      const model::KernelEvent& k = t.kernels[index];
      CUpti_ActivityKernel10 r;
      std::memset(&r, 0, sizeof(r));
      r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      r.start = ts(k.start_ns);
      r.end = ts(k.end_ns);
      r.completed = r.end;
      r.deviceId = Dev(k.device);
      r.contextId = Dev(k.device) + 1;
      r.streamId = k.stream;
      r.gridX = k.grid[0], r.gridY = k.grid[1], r.gridZ = k.grid[2];
      r.blockX = k.block[0], r.blockY = k.block[1], r.blockZ = k.block[2];
      // The trace's registers and shared memory where it recorded them (32 registers and none
      // where not). Kineto records only the shared-memory sum: it goes in as dynamic.
      const model::KernelResources res =
          index < t.kernel_resources.size() ? t.kernel_resources[index] : model::KernelResources{};
      r.registersPerThread =
          static_cast<uint16_t>(res.registers_per_thread >= 0 ? res.registers_per_thread : 32);
      if (res.static_shared_bytes >= 0 || res.dynamic_shared_bytes >= 0) {
        r.staticSharedMemory = std::max(res.static_shared_bytes, 0);
        r.dynamicSharedMemory = std::max(res.dynamic_shared_bytes, 0);
      } else if (res.shared_bytes >= 0) {
        r.dynamicSharedMemory = res.shared_bytes;
      }
      r.correlationId = corr(k.correlation_id);
      r.gridId = static_cast<int64_t>(counts.kernels + 1);
      r.name = names.Get(k.name).data();  // NameTable strings are NUL-terminated and stable
      const bool latency = fake_cupti_latency_timestamps_enabled();
      r.queued = latency ? r.start : CUPTI_TIMESTAMP_UNKNOWN;
      r.submitted = latency ? r.start : CUPTI_TIMESTAMP_UNKNOWN;
      r.graphId = graph_id;
      r.graphNodeId = graph_id != 0 ? (uint64_t{graph_id} << 32) + (node ? node : index + 1) : 0;
      r.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
      r.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
      if (options.corrupt_every > 0 && counts.kernels % options.corrupt_every == 0) {
        r.start = r.end = 0;  // "no timing information could be collected"
        ++counts.zeroed;
      } else if (options.corrupt_every > 0 && counts.kernels % options.corrupt_every == 1) {
        const uint64_t start = r.start;  // packed fields: no references
        r.start = r.end;
        r.end = start;
        ++counts.reversed;
      }
      counts.kernels_written += emit(r) == FAKE_CUPTI_WRITTEN;
      ++counts.kernels;
    };
    for (const Item& item : items) {
      if (options.speed > 0) {
        const auto due = wall_start + std::chrono::nanoseconds(static_cast<int64_t>(
                                          static_cast<double>(item.at_ns - first) / options.speed));
        std::this_thread::sleep_until(due);
      }
      switch (item.type) {
        case 0:
          emit_kernel(item.index, t.kernels[item.index].graph_id, 0);
          break;
        case 1: {
          const GraphLaunch& g = launches[item.index];
          if (!fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_GRAPH_TRACE)) {
            // Node-level: the graph's kernels, sharing the launch's correlation id.
            for (uint32_t n = 0; n < g.kernels.size(); ++n)
              emit_kernel(g.kernels[n], g.graph_id, n + 1);
            ++counts.graph_node_launches;
            break;
          }
          const model::KernelEvent& any = t.kernels[g.kernels.front()];
          CUpti_ActivityGraphTrace2 r;
          std::memset(&r, 0, sizeof(r));
          r.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
          r.correlationId = corr(g.correlation_id);
          r.start = ts(g.start_ns);
          r.end = ts(g.end_ns);
          r.deviceId = r.endDeviceId = Dev(any.device);
          r.contextId = r.endContextId = r.deviceId + 1;
          r.graphId = g.graph_id;
          r.streamId = any.stream;
          emit(r);
          ++counts.graph_launches;
          break;
        }
        case 2: {
          const model::MemcpyEvent& m = t.memcpys[item.index];
          CUpti_ActivityMemcpy6 r;
          std::memset(&r, 0, sizeof(r));
          r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
          r.copyKind = CopyKindToCupti(m.kind);
          const uint8_t host =
              m.pageable ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
          const uint8_t dev = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
          const bool src_host =
              m.kind == model::MemcpyKind::kHtoD || m.kind == model::MemcpyKind::kHtoH;
          const bool dst_host =
              m.kind == model::MemcpyKind::kDtoH || m.kind == model::MemcpyKind::kHtoH;
          r.srcKind = src_host ? host : dev;
          r.dstKind = dst_host ? host : dev;
          r.flags = m.pageable ? 0 : CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
          r.bytes = m.bytes;
          r.start = ts(m.start_ns);
          r.end = ts(m.end_ns);
          r.deviceId = Dev(m.device);
          r.contextId = Dev(m.device) + 1;
          r.streamId = m.stream;
          r.correlationId = corr(m.correlation_id);
          r.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
          r.copyCount = 1;
          emit(r);
          ++counts.memcpys;
          break;
        }
        case 3: {
          const model::MemsetEvent& m = t.memsets[item.index];
          CUpti_ActivityMemset4 r;
          std::memset(&r, 0, sizeof(r));
          r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
          r.bytes = m.bytes;
          r.start = ts(m.start_ns);
          r.end = ts(m.end_ns);
          r.deviceId = Dev(m.device);
          r.contextId = Dev(m.device) + 1;
          r.streamId = m.stream;
          r.correlationId = corr(m.correlation_id);
          r.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
          r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
          emit(r);
          ++counts.memsets;
          break;
        }
        case 4: {
          const model::SyncEvent& s = t.syncs[item.index];
          CUpti_ActivitySynchronization2 r;
          std::memset(&r, 0, sizeof(r));
          r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
          r.type = SyncTypeToCupti(s.type);
          r.start = ts(s.start_ns);
          r.end = ts(s.end_ns);
          r.correlationId = corr(s.correlation_id);
          r.contextId = Dev(s.device) + 1;
          // streamId is not valid for context/event syncs, cudaEventId only for event ones.
          const bool has_stream =
              s.stream != model::kUnknownStream &&
              (s.type == SyncType::kStream || s.type == SyncType::kStreamWaitEvent);
          r.streamId = has_stream ? s.stream : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
          const bool has_event = s.type == SyncType::kEvent || s.type == SyncType::kStreamWaitEvent;
          r.cudaEventId = has_event ? item.index + 1 : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
          r.cudaEventSyncId = has_event ? item.index + 1 : 0;
          emit(r);
          ++counts.syncs;
          break;
        }
        case 6:
        case 7: {
          const model::NvtxEvent& n = t.ranges[item.index];
          CUpti_ActivityMarker2 r;
          std::memset(&r, 0, sizeof(r));
          r.kind = CUPTI_ACTIVITY_KIND_MARKER;
          const bool start = item.type == 6;
          r.flags = start ? CUPTI_ACTIVITY_FLAG_MARKER_START : CUPTI_ACTIVITY_FLAG_MARKER_END;
          r.timestamp = ts(start ? n.start_ns : n.end_ns);
          r.id = item.index + 1;  // ranges of one loop are all closed before the next
          r.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
          r.objectId.pt.processId = pid;
          r.objectId.pt.threadId = n.tid;
          r.name = start && n.name != model::kNoName ? names.Get(n.name).data() : nullptr;
          r.domain = nullptr;
          emit(r);
          counts.ranges += start;
          break;
        }
        case 5: {
          const model::ApiCallEvent& a = t.api_calls[item.index];
          const std::string_view name = names.Get(a.name);
          const ApiCbid id = CbidForApi(name, a.kind, a.sync_type);
          const CUpti_CallbackDomain domain =
              id.driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
          fake_cupti_fire_api_call(domain, id.cbid, name.data(), corr(a.correlation_id),
                                   FakeContext(Dev(a.device)));
          CUpti_ActivityAPI r;
          std::memset(&r, 0, sizeof(r));
          r.kind = id.driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
          r.cbid = id.cbid;
          r.start = ts(a.start_ns);
          r.end = ts(a.end_ns);
          r.processId = pid;
          r.threadId = a.tid;
          r.correlationId = corr(a.correlation_id);
          emit(r);
          ++counts.api_calls;
          if (a.kind == ApiKind::kMalloc || a.kind == ApiKind::kFree) {
            CUpti_ActivityMemory4 m;
            std::memset(&m, 0, sizeof(m));
            m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
            const bool alloc = a.kind == ApiKind::kMalloc;
            m.memoryOperationType = alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                          : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
            m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
            m.correlationId = corr(a.correlation_id);
            if (alloc) {
              m.address = next_address;
              next_address += (a.bytes + 0xfffff) & ~uint64_t{0xfffff};
              live_allocations.push_back(m.address);
            } else if (!live_allocations.empty()) {
              m.address = live_allocations.back();
              live_allocations.pop_back();
            }
            m.bytes = a.bytes;
            m.timestamp = ts(a.end_ns);
            m.processId = pid;
            m.deviceId = Dev(a.device);
            m.contextId = Dev(a.device) + 1;
            emit(m);
            ++counts.allocations;
          }
          break;
        }
      }
    }
    ++counts.loops;
    loop_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - wall_start).count());
    not_before = ts(last) + 1000;
    if (options.loop_for_s <= 0) break;
    const auto next = wall_start + loop_period;
    if (std::max(next, Clock::now()) >= loop_deadline) break;
    std::this_thread::sleep_until(next);
  }
  std::sort(loop_ms.begin(), loop_ms.end());
  counts.longest_loop_ms = loop_ms.back();
  counts.median_loop_ms = loop_ms[loop_ms.size() / 2];
  return counts;
}

}  // namespace inferscope::fakes
