// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cupti.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/inject/buffer_pool.h"
#include "src/inject/config.h"
#include "src/inject/cupti_decoder.h"
#include "src/model/event_buffer.h"
#include "src/model/name_table.h"
#include "src/model/taxonomy.h"

namespace inferscope::inject {

// Profiling of one process: CUPTI activity buffers in, profile windows out.
//
// Threads: CUPTI calls BufferRequested on whichever thread needs a buffer (a pool pop, nothing
// else) and BufferCompleted on its own worker thread or inside cuptiActivityFlushAll; completion
// decodes the records (names interned at once) into a batch for the drain thread. The drain thread
// owns the Aggregator: it feeds it the batches, flushes CUPTI periodically, advances time so
// windows close even when the GPU is idle, and hands each window to `on_window`. No application
// thread ever takes a lock or allocates because of us, except when CUPTI itself asks for a buffer.
class Session {
 public:
  using WindowCallback = std::function<void(model::ProfileWindow&&)>;
  using TickCallback = std::function<void()>;

  // Starts profiling, or returns nullptr after logging why not. At most one Session per process.
  // `on_window` and `on_tick` run on the drain thread (on_tick after every drain cycle).
  static Session* Start(const Config& config, WindowCallback on_window, TickCallback on_tick);
  static Session* Instance() { return instance_.load(std::memory_order_acquire); }

  // Flushes CUPTI, emits the final windows and stops the drain thread. Idempotent.
  void Shutdown();
  // In a forked child: the drain thread did not survive the fork; stop using CUPTI buffers.
  void DisableAfterFork();

  uint64_t records_decoded() const { return records_decoded_.load(std::memory_order_relaxed); }
  uint64_t buffers_completed() const { return buffers_completed_.load(std::memory_order_relaxed); }
  const BufferPool& pool() const { return pool_; }

 private:
  Session(const Config& config, WindowCallback on_window, TickCallback on_tick);
  bool Subscribe(std::string* why);

  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                       size_t size, size_t valid_size);
  static void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                  CUpti_CallbackId cbid, const void* data);
  void Complete(uint8_t* buffer, size_t valid_size);
  void DrainLoop();
  void DrainBatches();
  void CountDroppedRecords();

  static std::atomic<Session*> instance_;

  const Config config_;
  const uint32_t pid_;
  WindowCallback on_window_;
  TickCallback on_tick_;
  BufferPool pool_;
  model::NameTable names_;  // interned under decode_mu_, read by the drain thread
  model::KernelClassifier classifier_;

  std::mutex decode_mu_;
  CuptiDecoder decoder_;        // guarded by decode_mu_
  model::EventBuffer decoded_;  // guarded by decode_mu_

  std::mutex queue_mu_;
  std::condition_variable wake_;
  std::vector<std::vector<model::AnyEvent>> batches_;  // guarded by queue_mu_
  bool stop_ = false;                                  // guarded by queue_mu_

  std::unique_ptr<aggregate::Aggregator> aggregator_;  // drain thread (or Shutdown after join)
  std::thread drain_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::atomic<bool> active_{false};
  std::atomic<bool> shut_down_{false};
  std::atomic<uint64_t> records_decoded_{0};
  std::atomic<uint64_t> buffers_completed_{0};
  std::atomic<int64_t> cpu_ns_{0};                  // our CPU time: decoding + the drain thread
  std::atomic<int64_t> drain_thread_decode_ns_{0};  // decode CPU counted twice on the drain thread
  int64_t cpu_reported_ns_ = 0;                     // drain thread: cpu_ns_ already charged
  std::atomic<std::thread::id> drain_tid_{};        // set by the drain thread as it starts
  std::atomic<uint64_t> dropped_pending_{0};        // per-context drops seen at buffer completion
};

}  // namespace inferscope::inject
