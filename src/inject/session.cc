// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/session.h"

#include <time.h>
#include <unistd.h>

#include <chrono>

#include "src/inject/log.h"

namespace inferscope::inject {

std::atomic<Session*> Session::instance_{nullptr};

namespace {

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string CuptiError(const char* call, CUptiResult r) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  return std::string(call) + " failed: " + (text ? text : "unknown CUPTI error") + " (" +
         std::to_string(static_cast<int>(r)) + ")";
}

int64_t CuptiNow() {
  uint64_t t = 0;
  return cuptiGetTimestamp(&t) == CUPTI_SUCCESS ? static_cast<int64_t>(t) : 0;
}

}  // namespace

Session::Session(const Config& config, WindowCallback on_window, TickCallback on_tick)
    : config_(config),
      pid_(static_cast<uint32_t>(::getpid())),
      on_window_(std::move(on_window)),
      on_tick_(std::move(on_tick)),
      pool_(config.buffer_bytes, config.buffer_count),
      decoder_(&names_, pid_) {
  aggregate::AggregatorOptions options;
  options.window_ns = config.window_ns;
  options.lateness_ns = config.lateness_ns;
  options.bin_ns = config.bin_ns;
  options.top_k = config.top_k;
  aggregator_ = std::make_unique<aggregate::Aggregator>(
      options, &names_, &classifier_, [this](model::ProfileWindow&& w) {
        // The profiler's own CPU since the previous window is charged to this one.
        const int64_t total = cpu_ns_.load(std::memory_order_relaxed);
        for (model::ProcessProfile& p : w.processes)
          if (p.pid == pid_) p.profiler_cpu_ns = total - cpu_reported_ns_;
        cpu_reported_ns_ = total;
        on_window_(std::move(w));
      });
  model::ProcessInfo process;
  process.pid = pid_;
  process.rank = config.rank;
  process.world_size = config.world_size;
  aggregator_->OnProcess(process);
}

Session* Session::Start(const Config& config, WindowCallback on_window, TickCallback on_tick) {
  if (Instance() != nullptr) return Instance();
  // Never freed once started: CUPTI may call back until the process ends, after static destructors.
  auto* session = new Session(config, std::move(on_window), std::move(on_tick));
  std::string why;
  if (!session->Subscribe(&why)) {
    Log(config.log_level, LogLevel::kError, "profiling disabled: " + why);
    // Safe to free: Subscribe undid what it did, and the static buffer callbacks find no
    // Instance() (it is published only below).
    delete session;
    return nullptr;
  }
  instance_.store(session, std::memory_order_release);
  session->active_.store(true, std::memory_order_release);
  session->drain_ = std::thread([session] { session->DrainLoop(); });
  Log(config.log_level, LogLevel::kInfo,
      "profiling (window " + std::to_string(config.window_ns / 1'000'000) + " ms, agent " +
          config.socket_path + ")");
  return session;
}

bool Session::Subscribe(std::string* why) {
  CUptiResult r = cuptiSubscribe(&subscriber_, &Session::OnCallback, this);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    *why = "another CUPTI tool is attached (Nsight Systems, torch.profiler, ...)";
    return false;
  }
  if (r != CUPTI_SUCCESS) {
    *why = CuptiError("cuptiSubscribe", r);
    return false;
  }
  r = cuptiActivityRegisterCallbacks(&Session::BufferRequested, &Session::BufferCompleted);
  if (r != CUPTI_SUCCESS) {
    *why = CuptiError("cuptiActivityRegisterCallbacks", r);
    cuptiUnsubscribe(subscriber_);
    return false;
  }
  // Graph launches: one record per launch unless per-node tracing was asked for.
  std::vector<CUpti_ActivityKind> kinds = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                           CUPTI_ACTIVITY_KIND_MEMCPY,
                                           CUPTI_ACTIVITY_KIND_MEMCPY2,
                                           CUPTI_ACTIVITY_KIND_MEMSET,
                                           CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                           CUPTI_ACTIVITY_KIND_RUNTIME,
                                           CUPTI_ACTIVITY_KIND_DRIVER};
  if (!config_.graph_nodes) kinds.push_back(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  for (CUpti_ActivityKind kind : kinds) {
    r = cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS) {
      *why = CuptiError("cuptiActivityEnable", r) + " for activity kind " +
             std::to_string(static_cast<int>(kind));
      for (CUpti_ActivityKind k : kinds) cuptiActivityDisable(k);
      cuptiUnsubscribe(subscriber_);
      return false;
    }
  }
  return true;
}

void CUPTIAPI Session::OnCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {
  // No callback domain is enabled by default (per-launch callbacks cost on every API call).
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
  // Records this context's queue lost for want of a buffer (the count resets on every call).
  size_t dropped = 0;
  if (context != nullptr &&
      cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS)
    s->dropped_pending_.fetch_add(dropped, std::memory_order_relaxed);
  try {
    if (s->active_.load(std::memory_order_acquire)) s->Complete(buffer, valid_size);
  } catch (...) {
    s->active_.store(false);  // fail safe: stop profiling, keep the application running
  }
  s->pool_.Release(buffer);
}

void Session::Complete(uint8_t* buffer, size_t valid_size) {
  const int64_t cpu_start = ThreadCpuNs();
  {
    std::lock_guard<std::mutex> lock(aggregator_mu_);
    records_decoded_.fetch_add(decoder_.Decode(buffer, valid_size, aggregator_.get()),
                               std::memory_order_relaxed);
  }
  buffers_completed_.fetch_add(1, std::memory_order_relaxed);
  const int64_t decode_ns = ThreadCpuNs() - cpu_start;
  cpu_ns_.fetch_add(decode_ns, std::memory_order_relaxed);
  if (std::this_thread::get_id() == drain_tid_.load())  // inside our own flush: see DrainLoop
    drain_thread_decode_ns_.fetch_add(decode_ns, std::memory_order_relaxed);
}

void Session::CountDroppedRecords() {
  // CUPTI resets a queue's count when it is read: each read is what was lost since the last one.
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) != CUPTI_SUCCESS) dropped = 0;
  dropped += dropped_pending_.exchange(0, std::memory_order_relaxed);
  if (dropped == 0) return;
  std::lock_guard<std::mutex> lock(aggregator_mu_);
  aggregator_->OnDataQuality(pid_, model::DataQuality::kRecordsDropped, dropped);
}

void Session::DrainLoop() {
  drain_tid_.store(std::this_thread::get_id());
  const auto period = std::chrono::nanoseconds(config_.flush_period_ns);
  while (true) {
    {
      std::unique_lock<std::mutex> lock(stop_mu_);
      wake_.wait_for(lock, period, [this] { return stop_; });
      if (stop_) return;
    }
    const int64_t cpu_start = ThreadCpuNs();
    // Never while holding a lock of ours: the flush calls BufferCompleted on this thread.
    cuptiActivityFlushAll(0);
    CountDroppedRecords();
    {
      // on_tick shares the lock with on_window: both reach the (single-threaded) window sender.
      std::lock_guard<std::mutex> lock(aggregator_mu_);
      aggregator_->AdvanceTo(CuptiNow());
      if (on_tick_) on_tick_();
    }
    // Flush-time decoding ran on this thread and was counted by Complete; count the rest once.
    cpu_ns_.fetch_add(ThreadCpuNs() - cpu_start - drain_thread_decode_ns_.exchange(0),
                      std::memory_order_relaxed);
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
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  CountDroppedRecords();
  {
    std::lock_guard<std::mutex> lock(aggregator_mu_);
    aggregator_->Finish();
  }
  active_.store(false);
}

void Session::DisableAfterFork() {
  // The child has no drain thread and its CUPTI state is the parent's copy: do nothing more.
  active_.store(false);
  shut_down_.store(true);
}

}  // namespace inferscope::inject
