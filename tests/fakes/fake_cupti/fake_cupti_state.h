// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Internal state of the fake CUPTI: one process-wide object shared by the CUPTI entry points
// (fake_cupti_api.cc) and the control API (fake_cupti_control.cc). Not installed, not for tools.

#include <cupti.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tests/fakes/fake_cupti/fake_cupti_control.h"

namespace inferscope::fakes {

// Every exported CUPTI function, for call counting and failure injection.
enum class Fn : int {
  kSubscribe,
  kSubscribeV2,
  kUnsubscribe,
  kEnableCallback,
  kEnableDomain,
  kEnableAllDomains,
  kGetCallbackState,
  kGetCallbackName,
  kActivityEnable,
  kActivityDisable,
  kActivityEnableAndDump,
  kRegisterCallbacks,
  kFlushAll,
  kFlush,
  kFlushPeriod,
  kGetNextRecord,
  kGetNumDropped,
  kGetTimestamp,
  kGetVersion,
  kFinalize,
  kLatencyTimestamps,
  kPushExternalCorrelation,
  kPopExternalCorrelation,
  kGetContextId,
  kGetDeviceId,
  kGetStreamId,
  kGetLastError,
  kSetAttribute,
  kGetAttribute,
  kEnableRuntimeApi,
  kEnableDriverApi,
  kRegisterTimestampCallback,
  kEnableAllSyncRecords,
  kSetThreadIdType,
  kGetGraphId,
  kGetGraphExecId,
  kCount
};
const char* FnName(Fn fn);
int FnFromName(const char* name);  // -1 unknown, -2 for "*"

// The record layout a CUPTI version delivers (the same split as the real libraries: see
// docs/testing-live.md, "CUPTI versions").
enum class FakeLayout { kCuda12_0, kCuda12_8, kCuda13_0 };
FakeLayout LayoutOfVersion(uint32_t api_version);

// Record size (stride) of each activity kind this fake supports in `layout`; 0 for others.
size_t RecordSize(uint32_t kind, FakeLayout layout);

// Rewrites a record given in the 13.0 structs (what drivers pass to fake_cupti_emit) into
// `layout`'s struct for its kind, field by field; returns the new size.
size_t ConvertRecord(const uint8_t* record13, uint32_t kind, FakeLayout layout, uint8_t* out);

// The fake's state. Lock order: completion_mu_ -> buf_mu_ -> mu_ (never the reverse). The tool's
// BufferRequested runs under buf_mu_, BufferCompleted under completion_mu_ only.
class FakeCupti {
 public:
  static FakeCupti& Get();

  // Counts the call and applies failure injection; CUPTI_SUCCESS means "go on".
  CUptiResult Enter(Fn fn);

  // Subscriber and callbacks.
  CUptiResult Subscribe(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc cb, void* userdata);
  CUptiResult Unsubscribe(CUpti_SubscriberHandle handle);
  CUptiResult EnableCallback(bool enable, CUpti_SubscriberHandle handle, uint32_t domain,
                             uint32_t cbid);
  CUptiResult EnableDomain(bool enable, CUpti_SubscriberHandle handle, uint32_t domain);
  CUptiResult GetCallbackState(uint32_t* enable, CUpti_SubscriberHandle handle, uint32_t domain,
                               uint32_t cbid);
  int FireCallback(uint32_t domain, uint32_t cbid, const void* cbdata);
  bool CallbackEnabled(uint32_t domain, uint32_t cbid);
  bool IsSubscribed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return subscribed_;
  }
  void CountFlushAll() { counters_.flush_all_calls.fetch_add(1); }

  // Activity API.
  CUptiResult ActivityEnable(uint32_t kind, bool enable);
  CUptiResult EnableApiCbid(uint32_t kind, uint32_t cbid, bool enable);
  CUptiResult RegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                CUpti_BuffersCallbackCompleteFunc comp);
  void FlushAll(bool include_empty);
  void SetFlushPeriod(uint32_t ms);
  size_t TakeDroppedUnread();
  FakeCuptiEmitResult Emit(const CUpti_Activity* record);
  void Finalize();
  void Reset();
  void WaitWorkerIdle();

  void GetToolCallbacks(CUpti_BuffersCallbackRequestFunc* request,
                        CUpti_BuffersCallbackCompleteFunc* complete, CUpti_CallbackFunc* subscriber,
                        void** subscriber_userdata) const;
  bool KindEnabled(uint32_t kind) const;
  uint32_t flush_period_ms() const { return flush_period_ms_.load(); }

  // The CUPTI API version the fake reports and whose record layouts it delivers
  // (FAKE_CUPTI_VERSION, or fake_cupti_set_version; default: the headers' CUPTI_API_VERSION).
  std::atomic<uint32_t> version{CUPTI_API_VERSION};
  FakeLayout layout() const { return LayoutOfVersion(version.load()); }
  bool is_13() const { return version.load() >= 130000; }

  // Plain settings (atomics: read from any thread).
  std::atomic<uint8_t> latency_timestamps{0};
  std::atomic<bool> other_subscriber{false};
  std::atomic<bool> free_names_after_completion{false};
  std::atomic<CUpti_TimestampCallbackFunc> timestamp_callback{nullptr};
  std::atomic<CUptiResult> last_error{CUPTI_SUCCESS};

  void FailAfter(int fn, int64_t successful_calls, CUptiResult result);
  void FailActivityEnable(uint32_t kind, CUptiResult result);
  uint64_t CallCount(int fn) const { return calls_[fn].load(); }
  void GetCounters(FakeCuptiCounters* out) const;

  // Activity attributes, stored as given (uint64 or uint8 values).
  CUptiResult SetAttribute(uint32_t attr, size_t* size, void* value);
  CUptiResult GetAttribute(uint32_t attr, size_t* size, void* value);

  // Called in a forked child: the worker thread does not exist there.
  void AfterForkInChild();

 private:
  struct Buffer {
    uint8_t* data = nullptr;
    size_t size = 0;
    size_t valid = 0;
    size_t max_records = 0;  // 0 = as many as fit
    size_t records = 0;
    std::vector<std::unique_ptr<char[]>> names;  // owned copies (free-after-completion mode)
  };

  FakeCupti() = default;
  const char* CopyName(const char* name, Buffer* buffer);
  void FixNames(uint8_t* record, uint32_t kind, Buffer* buffer);
  void QueueFullLocked();                                            // buf_mu_ held
  void ZeroOrCheckLocked(uint8_t* data, size_t size);                // buf_mu_ held (takes mu_)
  uint64_t AttributeLocked(uint32_t attr, uint64_t fallback) const;  // mu_ held
  void Complete(std::vector<Buffer>* buffers);                       // completion_mu_ held
  void WorkerLoop();
  void StartWorkerIfNeeded();
  void StopWorker();

  std::atomic<uint64_t> calls_[static_cast<int>(Fn::kCount)] = {};

  // Configuration (mu_).
  mutable std::mutex mu_;
  bool subscribed_ = false;
  bool callbacks_registered_or_enabled_ = false;  // PER_THREAD_ACTIVITY_BUFFER is fixed after
  CUpti_CallbackFunc callback_ = nullptr;
  void* userdata_ = nullptr;
  std::set<std::pair<uint32_t, uint32_t>> enabled_cbids_;
  std::array<bool, CUPTI_CB_DOMAIN_SIZE> domain_enabled_{};
  std::set<uint32_t> runtime_cbids_, driver_cbids_;  // per-cbid API records
  CUpti_BuffersCallbackRequestFunc request_ = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete_ = nullptr;
  int fail_fn_ = -1;  // -2 = any
  int64_t fail_remaining_ = 0;
  CUptiResult fail_result_ = CUPTI_SUCCESS;
  uint32_t fail_enable_kind_ = 0;
  CUptiResult fail_enable_result_ = CUPTI_SUCCESS;
  std::vector<std::pair<uint32_t, uint64_t>> attributes_;
  std::atomic<bool> failure_armed_{false};
  std::array<std::atomic<bool>, CUPTI_ACTIVITY_KIND_COUNT> kinds_{};

  // Buffers (buf_mu_).
  std::mutex buf_mu_;
  std::condition_variable worker_cv_;  // full buffer queued, period changed, stop
  std::condition_variable idle_cv_;    // worker finished a delivery
  Buffer current_;
  std::deque<Buffer> full_;
  size_t dropped_unread_ = 0;
  bool worker_stop_ = false;
  bool worker_busy_ = false;
  std::unique_ptr<std::thread> worker_;
  std::atomic<uint32_t> flush_period_ms_{0};

  std::mutex completion_mu_;
  std::mutex names_mu_;
  std::unordered_set<std::string> interned_names_;  // node-based: c_str() never moves

  struct Counters {
    std::atomic<uint64_t> buffers_requested{0}, buffers_refused{0}, buffers_completed{0},
        records_emitted{0}, records_completed{0}, records_dropped{0}, records_filtered{0},
        callbacks_delivered{0}, flush_all_calls{0}, periodic_flushes{0}, finalize_calls{0},
        buffers_zeroed_by_cupti{0}, dirty_buffers{0};
  } counters_;
};

}  // namespace inferscope::fakes
