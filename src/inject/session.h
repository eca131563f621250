// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cupti.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/inject/buffer_pool.h"
#include "src/inject/config.h"
#include "src/inject/cupti_binding.h"
#include "src/inject/cupti_decoder.h"
#include "src/inject/event_capture.h"
#include "src/inject/graph_attribution.h"
#include "src/model/name_table.h"
#include "src/model/taxonomy.h"

namespace inferscope::inject {

// Profiling of one process: CUPTI activity buffers in, profile windows out. CUPTI is reached only
// through the bound CuptiApi (cupti_binding.h) and set up for a serving process (Subscribe).
//
// Threads: CUPTI calls BufferRequested on whichever thread needs a buffer (a lock-free pool pop,
// nothing else: no lock, allocation or syscall on an application thread) and BufferCompleted on
// its own worker thread or inside cuptiActivityFlushAll; completion decodes the records (names
// interned at once) straight into the Aggregator, under `aggregator_mu_`, each event built once
// and never copied into an intermediate buffer. The drain thread flushes CUPTI periodically and
// advances the Aggregator's clock so windows close even when the GPU is idle. Windows go to
// `on_window` from whichever of those threads closed them, always under `aggregator_mu_`.
class Session {
 public:
  using WindowCallback = std::function<void(model::ProfileWindow&&)>;
  // `after_flush`: false at the start of a drain cycle (take the agent's requests only), true
  // after its flush (send, and hand out what a capture recorded).
  using TickCallback = std::function<void(bool after_flush)>;

  // Starts profiling with a bound CUPTI (`binding.ok`), or returns nullptr with `why` set (nothing
  // of CUPTI is left enabled then). At most one Session per process. `on_window` and `on_tick` (the
  // drain thread, before and after every flush) both run under the aggregator lock, so they are
  // never concurrent with each other.
  static Session* Start(const Config& config, const CuptiBinding& binding, WindowCallback on_window,
                        TickCallback on_tick, std::string* why);
  static Session* Instance() { return instance_.load(std::memory_order_acquire); }

  // Flushes CUPTI, emits the final windows and stops the drain thread. Idempotent.
  void Shutdown();
  // In a forked child: the drain thread did not survive the fork; stop using CUPTI buffers.
  // CUPTI itself is not called here (a parent thread may have held its locks at the fork).
  void DisableAfterFork();

  // Node-level samples of CUDA graph launches taken so far, and those skipped because a stream
  // capture was in progress.
  uint64_t graph_samples() const { return graph_samples_.load(); }
  uint64_t graph_samples_skipped() const { return graph_samples_skipped_.load(); }

  // The settings Subscribe applied and those CUPTI refused (for the log and the tests).
  const std::string& settings_refused() const { return settings_refused_; }

  // The on-demand capture's recorder (fed by the decoder). Touch it only from `on_tick` or
  // `on_window`, which run under the lock that guards it.
  EventCapture* capture() { return &event_capture_; }

  uint64_t records_decoded() const { return records_decoded_.load(std::memory_order_relaxed); }
  uint64_t buffers_completed() const { return buffers_completed_.load(std::memory_order_relaxed); }
  const BufferPool& pool() const { return pool_; }

 private:
  Session(const Config& config, const CuptiBinding& binding, WindowCallback on_window,
          TickCallback on_tick);
  bool Subscribe(std::string* why);
  void ApplySettings();
  bool EnableActivity(std::string* why);
  // Disables every activity kind and API record this session enabled: once profiling stops for
  // any reason the application must not keep paying for records nobody reads.
  void DisableActivity();
  // Stops profiling after a failure on one of our threads (called by the drain thread only).
  void StopAfterFailure(const char* what);
  std::string CuptiError(const char* call, CUptiResult r) const;
  int64_t CuptiNow() const;
  void CheckClock();
  void CountDataQuality();
  // The graph sampling state machine, one step per drain cycle (docs/design/cuda-graphs.md).
  void StepGraphSampling();
  // Whether a --graph-nodes capture wants node-level tracing now (its span is near or running).
  bool CaptureWantsGraphNodes();
  // How long the drain thread may sleep: the flush period, or less to meet a sample boundary.
  int64_t NextWakeNs() const;
  bool Capturing() const {
    return runtime_captures_.load(std::memory_order_relaxed) > 0 ||
           driver_captures_.load(std::memory_order_relaxed) > 0;
  }

  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                       size_t size, size_t valid_size);
  static void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                  CUpti_CallbackId cbid, const void* data);
  void Complete(uint8_t* buffer, size_t valid_size);
  void DrainLoop();
  void CountDroppedRecords();

  static std::atomic<Session*> instance_;

  const Config config_;
  const CuptiBinding binding_;
  const CuptiApi& api_;  // binding_.api
  const uint32_t pid_;
  WindowCallback on_window_;
  TickCallback on_tick_;
  BufferPool pool_;
  model::NameTable names_;  // interned under aggregator_mu_
  model::KernelClassifier classifier_;

  // Guards the decoder, the Aggregator and cpu_reported_ns_. Never held across a CUPTI flush
  // (the flush calls BufferCompleted, which takes it).
  std::mutex aggregator_mu_;
  GraphAttribution graphs_;
  EventCapture event_capture_{&names_};
  uint64_t lost_records_ = 0;  // dropped + refused, running (the capture reports its share)
  CuptiDecoder decoder_;
  std::unique_ptr<aggregate::Aggregator> aggregator_;

  std::mutex stop_mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by stop_mu_

  std::thread drain_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::atomic<bool> active_{false};
  std::atomic<bool> shut_down_{false};
  std::atomic<uint64_t> records_decoded_{0};
  std::atomic<uint64_t> buffers_completed_{0};
  std::atomic<int64_t> cpu_ns_{0};                  // our CPU time: decoding + the drain thread
  std::atomic<int64_t> drain_thread_decode_ns_{0};  // decode CPU counted twice on the drain thread
  int64_t cpu_reported_ns_ = 0;                     // cpu_ns_ already charged to a window
  std::atomic<std::thread::id> drain_tid_{};        // set by the drain thread as it starts
  std::atomic<uint64_t> dropped_pending_{0};        // per-context drops seen at buffer completion
  std::atomic<bool> failed_{false};  // a completion failed: the drain thread stops profiling

  // CUDA graph sampling (drain thread), and stream captures in progress (API callbacks of
  // cudaStreamBegin/EndCapture, on application threads: two atomic increments per capture).
  enum class SampleState { kIdle, kSampling, kDraining } sample_state_ = SampleState::kIdle;
  std::atomic<int> runtime_captures_{0}, driver_captures_{0};
  std::atomic<uint64_t> graph_samples_{0}, graph_samples_skipped_{0};
  bool skipped_this_window_ = false;
  // Drain thread only: the last drain cycles' lengths (wall clock) and the longest of them.
  std::array<int64_t, 8> recent_cycles_ns_{};
  size_t next_cycle_ = 0;
  int64_t last_cycle_start_ns_ = 0;
  int64_t longest_cycle_ns_ = 0;

  // What CUDA graph captures record (resource callbacks, on application threads, only while graphs
  // are built): kernel node names per graph, handed to the drain thread when a graph exec is
  // instantiated (PyTorch destroys the source graph right after), and graph execs whose shares
  // no longer hold (destroyed, or nodes updated).
  struct CaptureRecorder {
    std::mutex mu;
    struct Graph {
      std::vector<std::string> nodes;
      bool conditional = false;  // has conditional nodes: launches vary
    };
    std::unordered_map<CUgraph, Graph> graph_nodes;
    struct Composition {
      uint32_t id = 0;
      Graph graph;
    };
    std::vector<Composition> compositions;
    std::vector<uint32_t> forgotten;
  } captures_;
  void OnResource(CUpti_CallbackId cbid, const CUpti_ResourceData* data);
  void SetLaunchCallbacks(bool enable);
  // Drain thread: moves what captures recorded into the GraphAttribution.
  void TakeCaptures();

  // What Subscribe enabled, so that DisableActivity undoes exactly that.
  std::vector<CUpti_ActivityKind> enabled_kinds_;
  std::vector<uint32_t> enabled_runtime_cbids_, enabled_driver_cbids_;
  std::string settings_refused_;
  // Data-quality counters already charged to windows (drain thread only).
  uint64_t pool_exhausted_reported_ = 0;
  uint64_t unknown_reported_ = 0;
  uint64_t deviceless_reported_ = 0;
  bool skew_logged_ = false;
  bool durations_full_logged_ = false;
};

}  // namespace inferscope::inject
