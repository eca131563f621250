// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/session.h"

// <cupti.h> (via session.h) brings the runtime and driver callback ids (cupti_*_cbid.h).

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <iterator>

#include "src/inject/log.h"
#include "src/model/cuda_api.h"

namespace inferscope::inject {

std::atomic<Session*> Session::instance_{nullptr};

namespace {

// CUPTI's device-side record buffers, pinned at init (cupti_activity.h, DEVICE_BUFFER_SIZE,
// PRE_ALLOCATE_VALUE, POOL_LIMIT: "buffer allocation happens in the main application thread" and
// the default pool limit is 250 buffers per context). Inference servers reserve ~90% of HBM at
// start, so a buffer allocated later is the one that fails: 3 buffers of 4 MiB (~130k records
// each, 390k records between two 500 ms flushes) are allocated with the context, and at most one
// more may follow. Device memory per context is bounded by 16 MiB.
constexpr size_t kDeviceBufferBytes = 4u << 20;
constexpr size_t kDeviceBuffersPreallocated = 3;
constexpr size_t kDeviceBufferPoolLimit = 4;  // must exceed the pre-allocation (header)

// The stream-capture calls (runtime and driver), Begin ids first: a sample never starts while a
// graph is being captured.
constexpr uint32_t kRuntimeCaptureCbids[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_ptsz_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000};
constexpr uint32_t kDriverCaptureCbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture,
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz};
constexpr size_t kRuntimeCaptureBegins = 4, kDriverCaptureBegins = 6;

// Kernel launches whose callbacks are enabled while a stream capture runs (and only then): their
// symbol name is the name of the graph kernel node the capture creates inside the call.
constexpr uint32_t kRuntimeLaunchCbids[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060};
constexpr uint32_t kDriverLaunchCbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz};
// The graph resource events the capture recorder listens to (cupti_callbacks.h).
constexpr uint32_t kGraphResourceCbids[] = {
    CUPTI_CBID_RESOURCE_GRAPH_CLONED, CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING,
    CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED,
    CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING};
// 13.0 only: a node of an instantiated graph was updated (its shares no longer hold).
constexpr uint32_t kGraphNodeUpdated = 22, kGraphNodeSetParams = 23;

// The symbol of the kernel launch in progress on this thread during a capture (the graph node
// the capture creates inside that launch call is named by it). Only written while capturing.
thread_local std::string t_capture_symbol;

template <size_t N>
bool Contains(const uint32_t (&ids)[N], uint32_t id) {
  for (uint32_t x : ids)
    if (x == id) return true;
  return false;
}

// +1 for a capture begin, -1 for a capture end, 0 for any other call.
int CaptureDelta(bool runtime, uint32_t cbid) {
  const uint32_t* ids = runtime ? kRuntimeCaptureCbids : kDriverCaptureCbids;
  const size_t count = runtime ? std::size(kRuntimeCaptureCbids) : std::size(kDriverCaptureCbids);
  const size_t begins = runtime ? kRuntimeCaptureBegins : kDriverCaptureBegins;
  for (size_t i = 0; i < count; ++i)
    if (ids[i] == cbid) return i < begins ? 1 : -1;
  return 0;
}

// Skew between CUPTI's clock and CLOCK_REALTIME above which a flush is flagged (docs/design).
constexpr int64_t kClockSkewLimitNs = 1'000'000;

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Starts `fn` on a new thread with every signal blocked: the application's handlers (SIGINT in
// a Python server, SIGCHLD, ...) must run on its own threads, never on ours.
std::thread StartThreadWithSignalsBlocked(std::function<void()> fn) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  std::thread t;
  try {
    t = std::thread(std::move(fn));
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return t;
}

}  // namespace

std::string Session::CuptiError(const char* call, CUptiResult r) const {
  const char* text = nullptr;
  if (api_.GetResultString(r, &text) != CUPTI_SUCCESS) text = nullptr;
  return std::string(call) + " failed: " + (text ? text : "unknown CUPTI error") + " (" +
         std::to_string(static_cast<int>(r)) + ")";
}

int64_t Session::CuptiNow() const {
  uint64_t t = 0;
  return api_.GetTimestamp(&t) == CUPTI_SUCCESS ? static_cast<int64_t>(t) : 0;
}

Session::Session(const Config& config, const CuptiBinding& binding, WindowCallback on_window,
                 TickCallback on_tick)
    : config_(config),
      binding_(binding),
      api_(binding_.api),
      pid_(static_cast<uint32_t>(::getpid())),
      on_window_(std::move(on_window)),
      on_tick_(std::move(on_tick)),
      pool_(config.buffer_bytes, config.buffer_count),
      graphs_(pid_, config.window_ns, &names_, &classifier_),
      decoder_(&names_, pid_, &binding_.api, binding.layout) {
  decoder_.set_graph_attribution(&graphs_);
  decoder_.set_capture(&event_capture_);
  aggregate::AggregatorOptions options;
  options.window_ns = config.window_ns;
  options.lateness_ns = config.lateness_ns;
  options.bin_ns = config.bin_ns;
  options.top_k = config.top_k;
  options.ranges = config.nvtx;
  // With the NVTX ranges the engine's step ranges define the steps (and their phases), as
  // `analyze --views steps` counts them offline.
  options.step_ranges = config.nvtx;
  // Grid, block, registers and shared memory per top kernel (the decoder announces resources).
  options.launch_configs = true;
  aggregator_ = std::make_unique<aggregate::Aggregator>(
      options, &names_, &classifier_, [this](model::ProfileWindow&& w) {
        // The profiler's own CPU since the previous window is charged to this one.
        const int64_t total = cpu_ns_.load(std::memory_order_relaxed);
        for (model::ProcessProfile& p : w.processes)
          if (p.pid == pid_) p.profiler_cpu_ns = total - cpu_reported_ns_;
        cpu_reported_ns_ = total;
        graphs_.FillWindow(&w);  // the CUDA graph attribution of this window's launches
        on_window_(std::move(w));
      });
  model::ProcessInfo process;
  process.pid = pid_;
  process.rank = config.rank;
  process.world_size = config.world_size;
  aggregator_->OnProcess(process);
}

Session* Session::Start(const Config& config, const CuptiBinding& binding, WindowCallback on_window,
                        TickCallback on_tick, std::string* why) {
  if (Instance() != nullptr) return Instance();
  if (!binding.ok || binding.layout == CuptiLayout::kNone) {
    *why = binding.ok ? "no known CUPTI record layout" : binding.why;
    return nullptr;
  }
  // Never freed once started: CUPTI may call back until the process ends, after static destructors.
  auto* session = new Session(config, binding, std::move(on_window), std::move(on_tick));
  if (!session->Subscribe(why)) {
    // Safe to free: Subscribe undid what it did, and the static buffer callbacks find no
    // Instance() (it is published only below).
    delete session;
    return nullptr;
  }
  instance_.store(session, std::memory_order_release);
  session->active_.store(true, std::memory_order_release);
  try {
    session->drain_ = StartThreadWithSignalsBlocked([session] { session->DrainLoop(); });
  } catch (...) {
    // No drain thread: nothing would ever flush or send. Undo and run on without profiling.
    session->active_.store(false);
    session->DisableActivity();
    *why = "cannot start the drain thread";
    return nullptr;
  }
  if (!session->settings_refused_.empty())
    Log(config.log_level, LogLevel::kInfo, "CUPTI refused settings: " + session->settings_refused_);
  Log(config.log_level, LogLevel::kInfo,
      "profiling " + DescribeBinding(binding) + " (window " +
          std::to_string(config.window_ns / 1'000'000) + " ms, agent " + config.socket_path + ")");
  return session;
}

// Settings for a long-running serving process; each is documented at the constant or here with
// the header text that motivates it (docs/design/inject.md, "CUPTI settings"). A refused setting
// is noted, never fatal: older CUPTIs lack some attributes.
void Session::ApplySettings() {
  auto set_u8 = [&](CUpti_ActivityAttribute attr, uint8_t value, const char* name) {
    size_t size = sizeof(value);
    if (CUptiResult r = api_.ActivitySetAttribute(attr, &size, &value); r != CUPTI_SUCCESS)
      settings_refused_ += std::string(settings_refused_.empty() ? "" : ", ") + name + " (" +
                           std::to_string(static_cast<int>(r)) + ")";
  };
  auto set_size = [&](CUpti_ActivityAttribute attr, size_t value, const char* name) {
    size_t size = sizeof(value);
    if (CUptiResult r = api_.ActivitySetAttribute(attr, &size, &value); r != CUPTI_SUCCESS)
      settings_refused_ += std::string(settings_refused_.empty() ? "" : ", ") + name + " (" +
                           std::to_string(static_cast<int>(r)) + ")";
  };
  // "The default value is 1" in 13.0 (0 in 12.x): with per-thread buffers every CUDA-calling
  // thread (NCCL proxy, watchdog, async output) pins a buffer of our pool and drains it. Must be
  // set "before registering the buffer callbacks ... and before any of the kinds are enabled".
  set_u8(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, 0, "PER_THREAD_ACTIVITY_BUFFER=0");
  // With 0, "CUPTI will zero out the buffer in the main thread": a 4 MiB memset on a launching
  // thread per buffer. Our pool hands out zeroed buffers instead (BufferPool::Release).
  set_u8(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, 1, "ZEROED_OUT_ACTIVITY_BUFFER=1");
  set_size(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, kDeviceBufferBytes, "DEVICE_BUFFER_SIZE");
  set_size(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, kDeviceBufferPoolLimit,
           "DEVICE_BUFFER_POOL_LIMIT");
  set_size(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, kDeviceBuffersPreallocated,
           "DEVICE_BUFFER_PRE_ALLOCATE_VALUE");
  // API records carry the OS thread id, which is what the agent and the traces use.
  if (CUptiResult r = api_.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
      r != CUPTI_SUCCESS)
    settings_refused_ += std::string(settings_refused_.empty() ? "" : ", ") +
                         "thread id type SYSTEM (" + std::to_string(static_cast<int>(r)) + ")";
}

bool Session::Subscribe(std::string* why) {
  CUptiResult r = api_.Subscribe(&subscriber_, &Session::OnCallback, this);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    *why = "another CUPTI tool is attached (Nsight Systems, torch.profiler, ...)";
    return false;
  }
  if (r != CUPTI_SUCCESS) {
    *why = CuptiError("cuptiSubscribe", r);
    return false;
  }
  ApplySettings();
  r = api_.ActivityRegisterCallbacks(&Session::BufferRequested, &Session::BufferCompleted);
  if (r != CUPTI_SUCCESS) {
    *why = CuptiError("cuptiActivityRegisterCallbacks", r);
    api_.Unsubscribe(subscriber_);
    return false;
  }
  if (!EnableActivity(why)) {
    DisableActivity();
    api_.Unsubscribe(subscriber_);
    return false;
  }
  // Stream captures in progress (no graph sample starts during one): callbacks on the capture
  // calls only, which run while a server builds its graphs, not in steady state.
  for (uint32_t cbid : kRuntimeCaptureCbids)
    api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  for (uint32_t cbid : kDriverCaptureCbids)
    api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  // Graph contents at capture time (docs/design/cuda-graphs.md): resource events of graphs, which
  // happen while graphs are built and instantiated, never per launch.
  if (!config_.graph_nodes && api_.GetGraphId != nullptr && api_.GetGraphExecId != nullptr) {
    for (uint32_t cbid : kGraphResourceCbids)
      api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, cbid);
    if (binding_.api_version >= 130000)
      for (uint32_t cbid : {kGraphNodeUpdated, kGraphNodeSetParams})
        api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, cbid);
  }
  return true;
}

void Session::SetLaunchCallbacks(bool enable) {
  for (uint32_t cbid : kRuntimeLaunchCbids)
    api_.EnableCallback(enable ? 1 : 0, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  for (uint32_t cbid : kDriverLaunchCbids)
    api_.EnableCallback(enable ? 1 : 0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
}

// On an application thread, inside a graph API call: record, copy what is needed, never call the
// driver (CUPTI's graph id getters only).
void Session::OnResource(CUpti_CallbackId cbid, const CUpti_ResourceData* data) {
  const auto* g =
      data != nullptr ? static_cast<const CUpti_GraphData*>(data->resourceDescriptor) : nullptr;
  if (g == nullptr) return;
  std::lock_guard<std::mutex> lock(captures_.mu);
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED: {
      std::string name;
      if (g->nodeType == CU_GRAPH_NODE_TYPE_KERNEL)
        name = t_capture_symbol.empty() ? "[graph kernel node]" : t_capture_symbol;
      else if (g->nodeType == CU_GRAPH_NODE_TYPE_MEMCPY)
        name = "[graph memcpy node]";
      else if (g->nodeType == CU_GRAPH_NODE_TYPE_MEMSET)
        name = "[graph memset node]";
      t_capture_symbol.clear();
      if (captures_.graph_nodes.size() >= 4096) return;
      CaptureRecorder::Graph& graph = captures_.graph_nodes[g->graph];
      // Conditional nodes (CUDA 12.3+) run different bodies per launch: an old sample's split
      // may not describe the next launch.
#if CUDA_VERSION >= 12030  // conditional nodes exist from CUDA 12.3's headers on
      if (g->nodeType == CU_GRAPH_NODE_TYPE_CONDITIONAL) graph.conditional = true;
#endif
      if (!name.empty() && graph.nodes.size() < 100'000) graph.nodes.push_back(std::move(name));
      return;
    }
    case CUPTI_CBID_RESOURCE_GRAPH_CLONED: {
      auto it = captures_.graph_nodes.find(g->originalGraph);
      if (it != captures_.graph_nodes.end() && captures_.graph_nodes.size() < 4096)
        captures_.graph_nodes[g->graph] = it->second;
      return;
    }
    case CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING:
      captures_.graph_nodes.erase(g->graph);
      return;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED: {
      auto it = captures_.graph_nodes.find(g->graph);
      if (it == captures_.graph_nodes.end()) return;
      // Which id graph-launch records carry (the exec's or the source graph's) is not documented:
      // the composition is filed under both.
      uint32_t exec_id = 0, graph_id = 0;
      if (api_.GetGraphExecId(g->graphExec, &exec_id) == CUPTI_SUCCESS)
        captures_.compositions.push_back({exec_id, it->second});
      if (api_.GetGraphId(g->graph, &graph_id) == CUPTI_SUCCESS && graph_id != exec_id)
        captures_.compositions.push_back({graph_id, it->second});
      return;
    }
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING:
    case kGraphNodeUpdated:
    case kGraphNodeSetParams: {
      uint32_t exec_id = 0;
      if (g->graphExec != nullptr && api_.GetGraphExecId(g->graphExec, &exec_id) == CUPTI_SUCCESS)
        captures_.forgotten.push_back(exec_id);
      return;
    }
    default:
      return;
  }
}

void Session::TakeCaptures() {
  std::vector<CaptureRecorder::Composition> compositions;
  std::vector<uint32_t> forgotten;
  {
    std::lock_guard<std::mutex> lock(captures_.mu);
    compositions.swap(captures_.compositions);
    forgotten.swap(captures_.forgotten);
  }
  if (compositions.empty() && forgotten.empty()) return;
  std::lock_guard<std::mutex> lock(aggregator_mu_);
  for (uint32_t id : forgotten) graphs_.Forget(id);
  for (const CaptureRecorder::Composition& c : compositions) {
    std::vector<model::NameId> kernels;
    kernels.reserve(c.graph.nodes.size());
    for (const std::string& n : c.graph.nodes) kernels.push_back(names_.Intern(n));
    graphs_.SetComposition(c.id, std::move(kernels), c.graph.conditional);
  }
}

bool Session::EnableActivity(std::string* why) {
  auto enable = [&](CUpti_ActivityKind kind) {
    const CUptiResult r = api_.ActivityEnable(kind);
    if (r != CUPTI_SUCCESS) {
      *why = CuptiError("cuptiActivityEnable", r) + " for activity kind " +
             std::to_string(static_cast<int>(kind));
      return false;
    }
    enabled_kinds_.push_back(kind);
    return true;
  };
  // CONTEXT records map the contexts of sync records to devices. Graph launches: one record per
  // launch unless per-node tracing was asked for.
  std::vector<CUpti_ActivityKind> kinds = {
      CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
      CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMCPY2,
      CUPTI_ACTIVITY_KIND_MEMSET,  CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};
  if (!config_.graph_nodes) kinds.push_back(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  for (CUpti_ActivityKind kind : kinds)
    if (!enable(kind)) return false;
  // DEVICE records carry each device's UUID (the CUDA ordinal -> NVML index mapping). Optional:
  // without them profiling works and the agent falls back to the ordinal.
  if (const CUptiResult r = api_.ActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE); r == CUPTI_SUCCESS)
    enabled_kinds_.push_back(CUPTI_ACTIVITY_KIND_DEVICE);
  // NVTX ranges on request (--nvtx): every push/pop then goes through CUPTI. Optional too: a
  // CUPTI that refuses the kind leaves the rest of the profile as it is.
  if (config_.nvtx) {
    if (const CUptiResult r = api_.ActivityEnable(CUPTI_ACTIVITY_KIND_MARKER); r == CUPTI_SUCCESS)
      enabled_kinds_.push_back(CUPTI_ACTIVITY_KIND_MARKER);
    else
      Log(config_.log_level, LogLevel::kError,
          CuptiError("cuptiActivityEnable", r) + " for NVTX markers: no range table");
  }

  // Runtime/driver API records: on 13.x only the calls the analyses use (launches, copies,
  // allocations, syncs, queries: whatever the shared classifier names), not every call of a
  // Python server. 12.x has no per-call switch: every call is recorded.
  if (api_.ActivityEnableRuntimeApi != nullptr && api_.ActivityEnableDriverApi != nullptr) {
    struct Domain {
      CUpti_CallbackDomain domain;
      uint32_t size;
      CUptiResult(CUPTIAPI* enable)(CUpti_CallbackId, uint8_t);
      std::vector<uint32_t>* enabled;
    };
    const Domain domains[] = {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                               api_.ActivityEnableRuntimeApi, &enabled_runtime_cbids_},
                              {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
                               api_.ActivityEnableDriverApi, &enabled_driver_cbids_}};
    for (const Domain& d : domains) {
      for (uint32_t cbid = 1; cbid < d.size; ++cbid) {
        const char* name = nullptr;
        if (api_.GetCallbackName(d.domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr)
          continue;
        if (model::ClassifyCudaApi(name).kind == model::ApiKind::kOther) continue;
        if (const CUptiResult r = d.enable(cbid, 1); r != CUPTI_SUCCESS) {
          *why = CuptiError("cuptiActivityEnableRuntimeApi/DriverApi", r) + " for " + name;
          return false;
        }
        d.enabled->push_back(cbid);
      }
    }
  } else {
    if (!enable(CUPTI_ACTIVITY_KIND_RUNTIME) || !enable(CUPTI_ACTIVITY_KIND_DRIVER)) return false;
  }
  // 13.x: no sync record for an event/stream query whose work is not done yet, i.e. for every
  // poll of a spinning cudaEventQuery loop. (12.x records them; the Aggregator discounts syncs
  // whose API call is a query, the same way for every source.)
  if (api_.ActivityEnableAllSyncRecords != nullptr) api_.ActivityEnableAllSyncRecords(0);
  return true;
}

void Session::DisableActivity() {
  for (CUpti_ActivityKind kind : enabled_kinds_) api_.ActivityDisable(kind);
  enabled_kinds_.clear();
  for (uint32_t cbid : enabled_runtime_cbids_) api_.ActivityEnableRuntimeApi(cbid, 0);
  for (uint32_t cbid : enabled_driver_cbids_) api_.ActivityEnableDriverApi(cbid, 0);
  enabled_runtime_cbids_.clear();
  enabled_driver_cbids_.clear();
}

void CUPTIAPI Session::OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                  CUpti_CallbackId cbid, const void* data) {
  // Enabled: the stream-capture calls, graph resource events, and kernel launches only while a
  // capture runs (per-launch callbacks in steady state would cost on every launch).
  auto* s = static_cast<Session*>(userdata);
  if (s == nullptr || data == nullptr) return;
  try {
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      s->OnResource(cbid, static_cast<const CUpti_ResourceData*>(data));
      return;
    }
    const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API && !runtime) return;
    const auto* d = static_cast<const CUpti_CallbackData*>(data);
    if (Contains(kRuntimeLaunchCbids, cbid) || Contains(kDriverLaunchCbids, cbid)) {
      if (d->callbackSite == CUPTI_API_ENTER && s->Capturing())
        t_capture_symbol = d->symbolName != nullptr ? d->symbolName : "";
      return;
    }
    if (d->callbackSite != CUPTI_API_EXIT) return;
    std::atomic<int>& depth = runtime ? s->runtime_captures_ : s->driver_captures_;
    const int delta = CaptureDelta(runtime, cbid);
    const bool was_capturing = s->Capturing();
    if (delta > 0)
      depth.fetch_add(1, std::memory_order_relaxed);
    else if (delta < 0 && depth.load(std::memory_order_relaxed) > 0)
      depth.fetch_sub(1, std::memory_order_relaxed);
    if (!s->config_.graph_nodes && was_capturing != s->Capturing())
      s->SetLaunchCallbacks(s->Capturing());
  } catch (...) {
    // Nothing may escape into the application's CUDA call; the capture's composition is lost.
  }
}

int64_t Session::NextWakeNs() const {
  const int64_t flush = config_.flush_period_ns;
  if (config_.graph_nodes || config_.graph_sample_ns <= 0) return flush;
  const int64_t period = config_.graph_sample_period_ns;
  const int64_t phase = RealtimeNs() % period;
  // Sampling: wake at the window's end; idle: at the next window's start.
  const int64_t to_boundary =
      phase < config_.graph_sample_ns ? config_.graph_sample_ns - phase : period - phase;
  return std::max<int64_t>(1'000'000, std::min(flush, to_boundary));
}

bool Session::CaptureWantsGraphNodes() {
  if (config_.graph_nodes) return false;  // node-level tracing is always on
  std::lock_guard<std::mutex> lock(aggregator_mu_);
  // Two drain cycles ahead of the span: two flush periods, or two of the longest recent cycles
  // when decoding makes them longer (the switch happens only between cycles).
  const int64_t lead = 2 * std::max(config_.flush_period_ns, longest_cycle_ns_);
  return event_capture_.WantsGraphNodes(RealtimeNs(), lead);
}

// Graph sampling, one step per drain cycle. Samples sit on the wall clock's grid
// ([k x period, k x period + duration)), so that the tensor-parallel ranks of a job sample the same
// launches (one rank tracing its nodes would slow all of them through the collectives).
void Session::StepGraphSampling() {
  if (config_.graph_nodes) {
    // Node-level tracing always on: account the measured launches every cycle.
    std::lock_guard<std::mutex> lock(aggregator_mu_);
    const int64_t now = CuptiNow();
    graphs_.EndSample(now);
    graphs_.BeginSample(now);
    return;
  }
  const bool capture_nodes = CaptureWantsGraphNodes();  // a capture asked for graph nodes
  if (config_.graph_sample_ns <= 0 && !capture_nodes && sample_state_ == SampleState::kIdle) return;
  const int64_t phase =
      config_.graph_sample_ns > 0 ? RealtimeNs() % config_.graph_sample_period_ns : INT64_MAX;
  const bool in_window = phase < config_.graph_sample_ns || capture_nodes;
  switch (sample_state_) {
    case SampleState::kIdle:
      if (!in_window) {
        skipped_this_window_ = false;
        break;
      }
      if (Capturing()) {  // a graph being built: its nodes must not change tracing mode mid-way
        if (!skipped_this_window_) graph_samples_skipped_.fetch_add(1);
        skipped_this_window_ = true;
        break;
      }
      // A graph capture ended inside a sampling window: wait for the next window (ranks sample
      // the same wall-clock windows). A --graph-nodes capture instead switches as soon as no graph
      // is being built: it would otherwise skip node tracing for its whole duration.
      if (skipped_this_window_ && !capture_nodes) break;
      if (api_.ActivityDisable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) != CUPTI_SUCCESS) break;
      {
        std::lock_guard<std::mutex> lock(aggregator_mu_);
        graphs_.BeginSample(CuptiNow());
      }
      graph_samples_.fetch_add(1);
      sample_state_ = SampleState::kSampling;
      break;
    case SampleState::kSampling:
      if (in_window) break;
      api_.ActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
      sample_state_ = SampleState::kDraining;  // launches in flight finish before it is learned
      break;
    case SampleState::kDraining: {
      std::lock_guard<std::mutex> lock(aggregator_mu_);
      graphs_.EndSample(CuptiNow());
      sample_state_ = SampleState::kIdle;
      break;
    }
  }
}

void CUPTIAPI Session::BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  Session* s = Instance();
  *max_records = 0;  // as many as fit
  *buffer =
      s != nullptr && s->active_.load(std::memory_order_acquire) ? s->pool_.Acquire() : nullptr;
  *size = *buffer != nullptr ? s->pool_.buffer_bytes() : 0;
}

void CUPTIAPI Session::BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                       size_t, size_t valid_size) {
  Session* s = Instance();
  if (s == nullptr || buffer == nullptr) return;
  try {
    // Records this context's queue lost for want of a buffer (the count resets on every call).
    size_t dropped = 0;
    if (context != nullptr &&
        s->api_.ActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS)
      s->dropped_pending_.fetch_add(dropped, std::memory_order_relaxed);
    if (s->active_.load(std::memory_order_acquire)) s->Complete(buffer, valid_size);
  } catch (...) {
    // Fail safe: stop profiling and keep the application running. CUPTI is not called from
    // inside its own callback: the drain thread disables the activity kinds.
    s->active_.store(false);
    s->failed_.store(true);
    s->wake_.notify_one();
  }
  s->pool_.Release(buffer, valid_size);
}

void Session::Complete(uint8_t* buffer, size_t valid_size) {
  const int64_t cpu_start = ThreadCpuNs();
  const bool drain_thread = std::this_thread::get_id() == drain_tid_.load();
  {
    std::lock_guard<std::mutex> lock(aggregator_mu_);
    // Inside our own flush, which can decode for seconds on a loaded host: the agent's capture
    // requests are taken before each buffer's records are decoded, so that a span that started
    // during the flush is recorded from its first records (a non-blocking read of the socket).
    if (drain_thread && on_tick_) on_tick_(/*after_flush=*/false);
    records_decoded_.fetch_add(decoder_.Decode(buffer, valid_size, aggregator_.get()),
                               std::memory_order_relaxed);
  }
  buffers_completed_.fetch_add(1, std::memory_order_relaxed);
  const int64_t decode_ns = ThreadCpuNs() - cpu_start;
  cpu_ns_.fetch_add(decode_ns, std::memory_order_relaxed);
  if (drain_thread)  // inside our own flush: see DrainLoop
    drain_thread_decode_ns_.fetch_add(decode_ns, std::memory_order_relaxed);
}

// Per-window data quality of the live path: records CUPTI dropped, buffer requests the pool
// refused, records of unknown kinds, graph launches without a device. Drain thread only.
void Session::CountDataQuality() {
  // CUPTI resets a queue's count when it is read: each read is what was lost since the last one.
  size_t dropped = 0;
  if (api_.ActivityGetNumDroppedRecords(nullptr, 0, &dropped) != CUPTI_SUCCESS) dropped = 0;
  dropped += dropped_pending_.exchange(0, std::memory_order_relaxed);
  const uint64_t exhausted = pool_.exhausted();
  std::lock_guard<std::mutex> lock(aggregator_mu_);
  auto charge = [&](model::DataQuality q, uint64_t n) {
    if (n > 0) aggregator_->OnDataQuality(pid_, q, n);
  };
  charge(model::DataQuality::kRecordsDropped, dropped);
  charge(model::DataQuality::kBufferRequestsRefused, exhausted - pool_exhausted_reported_);
  lost_records_ += dropped + (exhausted - pool_exhausted_reported_);
  event_capture_.NoteLostRecords(lost_records_, exhausted);
  pool_exhausted_reported_ = exhausted;
  charge(model::DataQuality::kUnknownRecord, decoder_.unknown_records() - unknown_reported_);
  unknown_reported_ = decoder_.unknown_records();
  charge(model::DataQuality::kMalformedEvent,
         decoder_.deviceless_graph_launches() - deviceless_reported_);
  deviceless_reported_ = decoder_.deviceless_graph_launches();
  if (graphs_.durations_dropped() > 0 && !durations_full_logged_) {
    durations_full_logged_ = true;
    Log(config_.log_level, LogLevel::kInfo,
        "CUDA graphs: the kernel duration table is full (" +
            std::to_string(GraphAttribution::kMaxDurations) +
            " entries): graphs not sampled yet whose kernels were first seen after are split by "
            "count");
  }
}

// A calibration pair at every flush: CUPTI's clock read between two CLOCK_REALTIME reads. Windows
// are placed on the wall clock by CUPTI's timestamps, so a skew beyond 1 ms (beyond the reads'
// own uncertainty) is flagged in data quality and logged once.
void Session::CheckClock() {
  const int64_t before = RealtimeNs();
  const int64_t cupti = CuptiNow();
  const int64_t after = RealtimeNs();
  if (cupti == 0) return;
  const int64_t mid = before + (after - before) / 2;
  const int64_t skew = cupti > mid ? cupti - mid : mid - cupti;
  if (skew - (after - before) / 2 <= kClockSkewLimitNs) return;
  {
    std::lock_guard<std::mutex> lock(aggregator_mu_);
    aggregator_->OnDataQuality(pid_, model::DataQuality::kClockSkew, 1);
  }
  if (!skew_logged_) {
    skew_logged_ = true;
    Log(config_.log_level, LogLevel::kError,
        "CUPTI's clock is " + std::to_string(skew / 1'000'000) +
            " ms away from the system clock: window times may be off (counted as clock_skew)");
  }
}

void Session::StopAfterFailure(const char* what) {
  active_.store(false);
  DisableActivity();
  Log(config_.log_level, LogLevel::kError,
      std::string("profiling stopped: ") + what + "; the application runs on unprofiled");
}

void Session::DrainLoop() {
  drain_tid_.store(std::this_thread::get_id());
  pthread_setname_np(pthread_self(), "inferscope-drn");  // 15 characters at most
  try {
    while (true) {
      {
        std::unique_lock<std::mutex> lock(stop_mu_);
        wake_.wait_for(lock, std::chrono::nanoseconds(NextWakeNs()),
                       [this] { return stop_ || failed_.load(); });
        if (stop_) return;
      }
      if (failed_.load()) {
        StopAfterFailure("decoding a CUPTI buffer failed");
        return;
      }
      const int64_t cpu_start = ThreadCpuNs();
      // The longest of the last drain cycles (sleep, flush, ticks): how early a --graph-nodes
      // capture's switch must be taken (CaptureWantsGraphNodes).
      const int64_t cycle_start = RealtimeNs();
      if (last_cycle_start_ns_ > 0) {
        recent_cycles_ns_[next_cycle_++ % recent_cycles_ns_.size()] =
            cycle_start - last_cycle_start_ns_;
        longest_cycle_ns_ = *std::max_element(recent_cycles_ns_.begin(), recent_cycles_ns_.end());
      }
      last_cycle_start_ns_ = cycle_start;
      // The agent's capture requests that came during the sleep, before the flush: a flush can
      // take longer than the agent's lead (1 s) on a loaded host or a sanitizer build, and
      // records of the span decoded by it before the request is taken would be lost.
      if (on_tick_) {
        {
          std::lock_guard<std::mutex> lock(aggregator_mu_);
          on_tick_(/*after_flush=*/false);
        }
        if (sample_state_ == SampleState::kIdle && CaptureWantsGraphNodes()) StepGraphSampling();
      }
      // Never while holding a lock of ours: the flush calls BufferCompleted on this thread.
      api_.ActivityFlushAll(0);
      CheckClock();
      TakeCaptures();
      StepGraphSampling();
      CountDataQuality();
      {
        // on_tick shares the lock with on_window: both reach the (single-threaded) window sender.
        std::lock_guard<std::mutex> lock(aggregator_mu_);
        aggregator_->AdvanceTo(CuptiNow());
        if (on_tick_) on_tick_(/*after_flush=*/true);
      }
      // A --graph-nodes request taken by either tick switches to node-level tracing at once, not
      // at the next cycle's sampling step: a cycle (a flush period plus its decoding) can take
      // seconds on a loaded host or a sanitizer build, which put the switch inside the span (its
      // first graph launches came as single slices without their nodes).
      if (sample_state_ == SampleState::kIdle && CaptureWantsGraphNodes()) StepGraphSampling();
      // Flush-time decoding ran on this thread and was counted by Complete; count the rest once.
      cpu_ns_.fetch_add(ThreadCpuNs() - cpu_start - drain_thread_decode_ns_.exchange(0),
                        std::memory_order_relaxed);
    }
  } catch (const std::exception& e) {
    // An exception must never leave a thread of ours (std::terminate in the inference server).
    StopAfterFailure(e.what());
  } catch (...) {
    StopAfterFailure("unexpected error on the drain thread");
  }
}

void Session::Shutdown() {
  if (shut_down_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stop_ = true;
  }
  wake_.notify_one();
  if (drain_.joinable()) drain_.join();
  if (!active_.load()) return;
  api_.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  CountDataQuality();
  {
    std::lock_guard<std::mutex> lock(aggregator_mu_);
    aggregator_->Finish();
  }
  active_.store(false);
  DisableActivity();
}

void Session::DisableAfterFork() {
  // The child has no drain thread and its CUPTI state is the parent's copy. CUDA refuses a
  // context inherited across fork, so the child produces no records; CUPTI is not called here.
  active_.store(false);
  shut_down_.store(true);
}

}  // namespace inferscope::inject
