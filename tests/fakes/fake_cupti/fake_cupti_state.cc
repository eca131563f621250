// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The fake CUPTI's engine: subscriber bookkeeping, activity buffers, the worker thread.

#include "tests/fakes/fake_cupti/fake_cupti_state.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace inferscope::fakes {
namespace {

constexpr const char* kFnNames[] = {"cuptiSubscribe",
                                    "cuptiSubscribe_v2",
                                    "cuptiUnsubscribe",
                                    "cuptiEnableCallback",
                                    "cuptiEnableDomain",
                                    "cuptiEnableAllDomains",
                                    "cuptiGetCallbackState",
                                    "cuptiGetCallbackName",
                                    "cuptiActivityEnable",
                                    "cuptiActivityDisable",
                                    "cuptiActivityEnableAndDump",
                                    "cuptiActivityRegisterCallbacks",
                                    "cuptiActivityFlushAll",
                                    "cuptiActivityFlush",
                                    "cuptiActivityFlushPeriod",
                                    "cuptiActivityGetNextRecord",
                                    "cuptiActivityGetNumDroppedRecords",
                                    "cuptiGetTimestamp",
                                    "cuptiGetVersion",
                                    "cuptiFinalize",
                                    "cuptiActivityEnableLatencyTimestamps",
                                    "cuptiActivityPushExternalCorrelationId",
                                    "cuptiActivityPopExternalCorrelationId",
                                    "cuptiGetContextId",
                                    "cuptiGetDeviceId",
                                    "cuptiGetStreamId",
                                    "cuptiGetLastError",
                                    "cuptiActivitySetAttribute",
                                    "cuptiActivityGetAttribute",
                                    "cuptiActivityEnableRuntimeApi",
                                    "cuptiActivityEnableDriverApi",
                                    "cuptiActivityRegisterTimestampCallback",
                                    "cuptiActivityEnableAllSyncRecords",
                                    "cuptiSetThreadIdType",
                                    "cuptiGetGraphId",
                                    "cuptiGetGraphExecId"};
static_assert(sizeof(kFnNames) / sizeof(kFnNames[0]) == static_cast<size_t>(Fn::kCount));

// The subscriber handle CUPTI hands out is opaque; ours is the address of this byte.
char g_subscriber_token;
CUpti_SubscriberHandle Handle() {
  return reinterpret_cast<CUpti_SubscriberHandle>(&g_subscriber_token);
}

bool IsKernelKind(uint32_t kind) {
  return kind == CUPTI_ACTIVITY_KIND_KERNEL || kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
}

}  // namespace

const char* FnName(Fn fn) { return kFnNames[static_cast<int>(fn)]; }

int FnFromName(const char* name) {
  if (name == nullptr) return -1;
  if (std::strcmp(name, "*") == 0) return -2;
  for (int i = 0; i < static_cast<int>(Fn::kCount); ++i)
    if (std::strcmp(name, kFnNames[i]) == 0) return i;
  return -1;
}

FakeLayout LayoutOfVersion(uint32_t api_version) {
  if (api_version >= 130000) return FakeLayout::kCuda13_0;
  if (api_version >= 26) return FakeLayout::kCuda12_8;
  return FakeLayout::kCuda12_0;
}

size_t RecordSize(uint32_t kind, FakeLayout layout) {
  const bool v12 = layout != FakeLayout::kCuda13_0;
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return v12 ? sizeof(CUpti_ActivityKernel9) : sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return layout == FakeLayout::kCuda12_0 ? sizeof(CUpti_ActivityMemcpy5)
                                             : sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
      return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return layout == FakeLayout::kCuda12_0 ? sizeof(CUpti_ActivitySynchronization)
                                             : sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      return v12 ? sizeof(CUpti_ActivityContext2) : sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
      return sizeof(CUpti_ActivityGraphTrace2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_MARKER:
      return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_DEVICE:  // one struct in every CUPTI 12.x and 13.x
      return sizeof(CUpti_ActivityDevice5);
    default:
      return 0;
  }
}

namespace {

// Field-by-field copies into the older structs (never a byte copy: the point of the layouts is
// that the structs differ).
void ToKernel9(const CUpti_ActivityKernel10& a, CUpti_ActivityKernel9* b) {
  b->kind = a.kind;
  b->registersPerThread = a.registersPerThread;
  b->start = a.start;
  b->end = a.end;
  b->completed = a.completed;
  b->deviceId = a.deviceId;
  b->contextId = a.contextId;
  b->streamId = a.streamId;
  b->gridX = a.gridX, b->gridY = a.gridY, b->gridZ = a.gridZ;
  b->blockX = a.blockX, b->blockY = a.blockY, b->blockZ = a.blockZ;
  b->staticSharedMemory = a.staticSharedMemory;
  b->dynamicSharedMemory = a.dynamicSharedMemory;
  b->localMemoryPerThread = a.localMemoryPerThread;
  b->localMemoryTotal = a.localMemoryTotal;
  b->correlationId = a.correlationId;
  b->gridId = a.gridId;
  b->name = a.name;
  b->queued = a.queued;
  b->submitted = a.submitted;
  b->launchType = a.launchType;
  b->isSharedMemoryCarveoutRequested = a.isSharedMemoryCarveoutRequested;
  b->sharedMemoryCarveoutRequested = a.sharedMemoryCarveoutRequested;
  b->sharedMemoryExecuted = a.sharedMemoryExecuted;
  b->graphNodeId = a.graphNodeId;
  b->graphId = a.graphId;
  b->channelID = a.channelID;
  b->channelType = a.channelType;
  b->clusterX = a.clusterX, b->clusterY = a.clusterY, b->clusterZ = a.clusterZ;
  b->clusterSchedulingPolicy = a.clusterSchedulingPolicy;
  b->localMemoryTotal_v2 = a.localMemoryTotal_v2;
}

template <typename Memcpy>
void ToMemcpy(const CUpti_ActivityMemcpy6& a, Memcpy* b) {
  b->kind = a.kind;
  b->copyKind = a.copyKind;
  b->srcKind = a.srcKind;
  b->dstKind = a.dstKind;
  b->flags = a.flags;
  b->bytes = a.bytes;
  b->start = a.start;
  b->end = a.end;
  b->deviceId = a.deviceId;
  b->contextId = a.contextId;
  b->streamId = a.streamId;
  b->correlationId = a.correlationId;
  b->runtimeCorrelationId = a.runtimeCorrelationId;
  b->graphNodeId = a.graphNodeId;
  b->graphId = a.graphId;
  b->channelID = a.channelID;
  b->channelType = a.channelType;
}

void ToSync1(const CUpti_ActivitySynchronization2& a, CUpti_ActivitySynchronization* b) {
  b->kind = a.kind;
  b->type = a.type;
  b->start = a.start;
  b->end = a.end;
  b->correlationId = a.correlationId;
  b->contextId = a.contextId;
  b->streamId = a.streamId;
  b->cudaEventId = a.cudaEventId;
}

void ToContext2(const CUpti_ActivityContext3& a, CUpti_ActivityContext2* b) {
  b->kind = a.kind;
  b->contextId = a.contextId;
  b->deviceId = a.deviceId;
  b->computeApiKind = a.computeApiKind;
  b->nullStreamId = a.nullStreamId;
  b->parentContextId = a.parentContextId;
  b->isGreenContext = a.isGreenContext;
}

template <typename T>
T Read(const uint8_t* p) {
  T t;
  std::memcpy(&t, p, sizeof(T));
  return t;
}

template <typename T>
size_t Write(const T& t, uint8_t* out) {
  std::memcpy(out, &t, sizeof(T));
  return sizeof(T);
}

}  // namespace

size_t ConvertRecord(const uint8_t* in, uint32_t kind, FakeLayout layout, uint8_t* out) {
  const size_t same = RecordSize(kind, FakeLayout::kCuda13_0);
  if (layout == FakeLayout::kCuda13_0) {
    std::memcpy(out, in, same);
    return same;
  }
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      CUpti_ActivityKernel9 k{};
      ToKernel9(Read<CUpti_ActivityKernel10>(in), &k);
      return Write(k, out);
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      if (layout == FakeLayout::kCuda12_0) {
        CUpti_ActivityMemcpy5 m{};
        ToMemcpy(Read<CUpti_ActivityMemcpy6>(in), &m);
        return Write(m, out);
      }
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      if (layout == FakeLayout::kCuda12_0) {
        CUpti_ActivitySynchronization y{};
        ToSync1(Read<CUpti_ActivitySynchronization2>(in), &y);
        return Write(y, out);
      }
      break;
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      CUpti_ActivityContext2 c{};
      ToContext2(Read<CUpti_ActivityContext3>(in), &c);
      return Write(c, out);
    }
    default:
      break;
  }
  std::memcpy(out, in, same);
  return same;
}

FakeCupti& FakeCupti::Get() {
  // Never destroyed: the tool may call CUPTI from its own atexit handlers and static destructors.
  static FakeCupti* state = [] {
    auto* s = new FakeCupti();
    if (const char* v = std::getenv("FAKE_CUPTI_VERSION"); v != nullptr && *v != '\0')
      s->version.store(static_cast<uint32_t>(std::strtoul(v, nullptr, 10)));
    pthread_atfork(nullptr, nullptr, [] { FakeCupti::Get().AfterForkInChild(); });
    return s;
  }();
  return *state;
}

CUptiResult FakeCupti::Enter(Fn fn) {
  const int i = static_cast<int>(fn);
  calls_[i].fetch_add(1, std::memory_order_relaxed);
  if (!failure_armed_.load(std::memory_order_acquire)) return CUPTI_SUCCESS;
  std::lock_guard<std::mutex> lock(mu_);
  if (fail_fn_ != -2 && fail_fn_ != i) return CUPTI_SUCCESS;
  if (fail_remaining_ > 0) {
    --fail_remaining_;
    return CUPTI_SUCCESS;
  }
  last_error.store(fail_result_);
  return fail_result_;
}

void FakeCupti::FailAfter(int fn, int64_t successful_calls, CUptiResult result) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_fn_ = successful_calls < 0 ? -1 : fn;
  fail_remaining_ = successful_calls;
  fail_result_ = result;
  failure_armed_.store(fail_fn_ != -1, std::memory_order_release);
}

void FakeCupti::FailActivityEnable(uint32_t kind, CUptiResult result) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_enable_kind_ = kind;
  fail_enable_result_ = result;
}

CUptiResult FakeCupti::Subscribe(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc cb,
                                 void* userdata) {
  if (handle == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu_);
  if (subscribed_ || other_subscriber.load()) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  subscribed_ = true;
  callback_ = cb;
  userdata_ = userdata;
  *handle = Handle();
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::Unsubscribe(CUpti_SubscriberHandle handle) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!subscribed_ || handle != Handle()) return CUPTI_ERROR_INVALID_PARAMETER;
  subscribed_ = false;
  callback_ = nullptr;
  userdata_ = nullptr;
  enabled_cbids_.clear();
  domain_enabled_.fill(false);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::EnableCallback(bool enable, CUpti_SubscriberHandle handle, uint32_t domain,
                                      uint32_t cbid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!subscribed_ || handle != Handle() || domain == 0 || domain >= CUPTI_CB_DOMAIN_SIZE)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (enable) {
    enabled_cbids_.emplace(domain, cbid);
  } else {
    enabled_cbids_.erase({domain, cbid});
  }
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::EnableDomain(bool enable, CUpti_SubscriberHandle handle, uint32_t domain) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!subscribed_ || handle != Handle() || domain == 0 || domain >= CUPTI_CB_DOMAIN_SIZE)
    return CUPTI_ERROR_INVALID_PARAMETER;
  domain_enabled_[domain] = enable;
  if (!enable) std::erase_if(enabled_cbids_, [&](const auto& p) { return p.first == domain; });
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::GetCallbackState(uint32_t* enable, CUpti_SubscriberHandle handle,
                                        uint32_t domain, uint32_t cbid) {
  if (enable == nullptr || handle != Handle()) return CUPTI_ERROR_INVALID_PARAMETER;
  *enable = CallbackEnabled(domain, cbid) ? 1 : 0;
  return CUPTI_SUCCESS;
}

bool FakeCupti::CallbackEnabled(uint32_t domain, uint32_t cbid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!subscribed_ || domain == 0 || domain >= CUPTI_CB_DOMAIN_SIZE) return false;
  return domain_enabled_[domain] || enabled_cbids_.count({domain, cbid}) > 0;
}

int FakeCupti::FireCallback(uint32_t domain, uint32_t cbid, const void* cbdata) {
  CUpti_CallbackFunc cb;
  void* userdata;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!subscribed_ || callback_ == nullptr || domain == 0 || domain >= CUPTI_CB_DOMAIN_SIZE)
      return 0;
    if (!domain_enabled_[domain] && enabled_cbids_.count({domain, cbid}) == 0) return 0;
    cb = callback_;
    userdata = userdata_;
  }
  cb(userdata, static_cast<CUpti_CallbackDomain>(domain), cbid, cbdata);
  counters_.callbacks_delivered.fetch_add(1);
  return 1;
}

CUptiResult FakeCupti::ActivityEnable(uint32_t kind, bool enable) {
  if (kind == CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT)
    return CUPTI_ERROR_INVALID_KIND;
  if (enable) {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_enable_result_ != CUPTI_SUCCESS &&
        (fail_enable_kind_ == CUPTI_ACTIVITY_KIND_INVALID || fail_enable_kind_ == kind))
      return fail_enable_result_;
  }
  kinds_[kind].store(enable);
  if (enable) {
    std::lock_guard<std::mutex> lock(mu_);
    callbacks_registered_or_enabled_ = true;
  }
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::EnableApiCbid(uint32_t kind, uint32_t cbid, bool enable) {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<uint32_t>& set = kind == CUPTI_ACTIVITY_KIND_RUNTIME ? runtime_cbids_ : driver_cbids_;
  if (enable) {
    set.insert(cbid);
  } else {
    set.erase(cbid);
  }
  return CUPTI_SUCCESS;
}

void FakeCupti::GetToolCallbacks(CUpti_BuffersCallbackRequestFunc* request,
                                 CUpti_BuffersCallbackCompleteFunc* complete,
                                 CUpti_CallbackFunc* subscriber, void** subscriber_userdata) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (request != nullptr) *request = request_;
  if (complete != nullptr) *complete = complete_;
  if (subscriber != nullptr) *subscriber = subscribed_ ? callback_ : nullptr;
  if (subscriber_userdata != nullptr) *subscriber_userdata = subscribed_ ? userdata_ : nullptr;
}

bool FakeCupti::KindEnabled(uint32_t kind) const {
  return kind < CUPTI_ACTIVITY_KIND_COUNT && kinds_[kind].load();
}

CUptiResult FakeCupti::RegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                         CUpti_BuffersCallbackCompleteFunc comp) {
  if (req == nullptr || comp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  {
    std::lock_guard<std::mutex> lock(mu_);
    request_ = req;
    complete_ = comp;
    callbacks_registered_or_enabled_ = true;
  }
  StartWorkerIfNeeded();
  return CUPTI_SUCCESS;
}

const char* FakeCupti::CopyName(const char* name, Buffer* buffer) {
  if (name == nullptr) return nullptr;
  if (free_names_after_completion.load()) {
    const size_t n = std::strlen(name) + 1;
    buffer->names.emplace_back(new char[n]);
    std::memcpy(buffer->names.back().get(), name, n);
    return buffer->names.back().get();
  }
  std::lock_guard<std::mutex> lock(names_mu_);
  return interned_names_.emplace(name).first->c_str();
}

void FakeCupti::FixNames(uint8_t* record, uint32_t kind, Buffer* buffer) {
  auto fix = [&](size_t offset) {
    const char* p;
    std::memcpy(&p, record + offset, sizeof(p));
    p = CopyName(p, buffer);
    std::memcpy(record + offset, &p, sizeof(p));
  };
  // The kernel name sits at the same offset in Kernel9 and Kernel10.
  static_assert(offsetof(CUpti_ActivityKernel9, name) == offsetof(CUpti_ActivityKernel10, name));
  if (IsKernelKind(kind)) fix(offsetof(CUpti_ActivityKernel10, name));
  if (kind == CUPTI_ACTIVITY_KIND_MEMORY2) fix(offsetof(CUpti_ActivityMemory4, name));
  if (kind == CUPTI_ACTIVITY_KIND_MARKER) {
    fix(offsetof(CUpti_ActivityMarker2, name));
    fix(offsetof(CUpti_ActivityMarker2, domain));
  }
}

void FakeCupti::QueueFullLocked() {
  full_.push_back(std::move(current_));
  current_ = Buffer();
  if (flush_period_ms_.load() == 0) worker_cv_.notify_all();  // heuristic mode: deliver now
}

FakeCuptiEmitResult FakeCupti::Emit(const CUpti_Activity* record) {
  if (record == nullptr) return FAKE_CUPTI_INVALID;
  uint32_t kind = record->kind;
  const FakeLayout layout = this->layout();
  if (RecordSize(kind, FakeLayout::kCuda13_0) == 0) return FAKE_CUPTI_INVALID;
  bool produced;
  if (IsKernelKind(kind)) {
    produced = true;
    if (KindEnabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
      kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    } else if (KindEnabled(CUPTI_ACTIVITY_KIND_KERNEL)) {
      kind = CUPTI_ACTIVITY_KIND_KERNEL;
    } else {
      produced = false;
    }
  } else if (kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER) {
    produced = KindEnabled(kind);
    if (!produced) {
      const uint32_t cbid = reinterpret_cast<const CUpti_ActivityAPI*>(record)->cbid;
      std::lock_guard<std::mutex> lock(mu_);
      produced = (kind == CUPTI_ACTIVITY_KIND_RUNTIME ? runtime_cbids_ : driver_cbids_).count(cbid);
    }
  } else {
    produced = KindEnabled(kind);
  }
  if (!produced) {
    counters_.records_filtered.fetch_add(1);
    return FAKE_CUPTI_FILTERED;
  }
  alignas(8) uint8_t in[256], bytes[256];
  static_assert(sizeof(CUpti_ActivityKernel10) <= sizeof(in));
  std::memcpy(in, record, RecordSize(kind, FakeLayout::kCuda13_0));
  std::memcpy(in, &kind, sizeof(kind));
  // Delivered in the struct of this CUPTI version, as the real library would.
  const size_t size = ConvertRecord(in, kind, layout, bytes);

  std::lock_guard<std::mutex> lock(buf_mu_);
  if (current_.data != nullptr &&
      (current_.size - current_.valid < size ||
       (current_.max_records && current_.records >= current_.max_records)))
    QueueFullLocked();
  if (current_.data == nullptr) {
    CUpti_BuffersCallbackRequestFunc request;
    {
      std::lock_guard<std::mutex> config(mu_);
      request = request_;
    }
    uint8_t* data = nullptr;
    size_t buffer_size = 0, max_records = 0;
    if (request != nullptr) {
      request(&data, &buffer_size, &max_records);
      counters_.buffers_requested.fetch_add(1);
    }
    // Real CUPTI requires 8-byte aligned buffers (ACTIVITY_RECORD_ALIGNMENT); the fake refuses
    // others, and a buffer too small for one record, handing them back empty.
    if (data == nullptr || buffer_size < size || reinterpret_cast<uintptr_t>(data) % 8 != 0) {
      if (request != nullptr) counters_.buffers_refused.fetch_add(1);
      if (data != nullptr) {
        current_.data = data;
        current_.size = buffer_size;
        QueueFullLocked();
      }
      counters_.records_dropped.fetch_add(1);
      ++dropped_unread_;
      return FAKE_CUPTI_DROPPED;
    }
    current_.data = data;
    current_.size = buffer_size;
    current_.max_records = max_records;
    ZeroOrCheckLocked(data, buffer_size);
  }
  FixNames(bytes, kind, &current_);
  std::memcpy(current_.data + current_.valid, bytes, size);
  current_.valid += size;  // every record size is a multiple of 8, so the next stays aligned
  ++current_.records;
  counters_.records_emitted.fetch_add(1);
  return FAKE_CUPTI_WRITTEN;
}

void FakeCupti::Complete(std::vector<Buffer>* buffers) {
  CUpti_BuffersCallbackCompleteFunc complete;
  {
    std::lock_guard<std::mutex> lock(mu_);
    complete = complete_;
  }
  for (Buffer& b : *buffers) {
    if (complete != nullptr) complete(nullptr, 0, b.data, b.size, b.valid);
    counters_.buffers_completed.fetch_add(1);
    counters_.records_completed.fetch_add(b.records);
    b.names.clear();  // free-after-completion mode: the names die with the buffer
  }
  buffers->clear();
}

namespace {
thread_local bool t_in_completion = false;  // a BufferCompleted that flushes must not deadlock
}

void FakeCupti::FlushAll(bool include_empty) {
  if (t_in_completion) return;
  std::lock_guard<std::mutex> completion(completion_mu_);
  std::vector<Buffer> taken;
  {
    std::lock_guard<std::mutex> lock(buf_mu_);
    while (!full_.empty()) {
      taken.push_back(std::move(full_.front()));
      full_.pop_front();
    }
    if (current_.data != nullptr && (current_.records > 0 || include_empty)) {
      taken.push_back(std::move(current_));
      current_ = Buffer();
    }
  }
  t_in_completion = true;
  Complete(&taken);
  t_in_completion = false;
}

void FakeCupti::SetFlushPeriod(uint32_t ms) {
  std::lock_guard<std::mutex> lock(buf_mu_);
  flush_period_ms_.store(ms);
  worker_cv_.notify_all();
}

size_t FakeCupti::TakeDroppedUnread() {
  std::lock_guard<std::mutex> lock(buf_mu_);
  return std::exchange(dropped_unread_, 0);
}

void FakeCupti::StartWorkerIfNeeded() {
  std::lock_guard<std::mutex> lock(buf_mu_);
  if (worker_) return;
  worker_stop_ = false;
  worker_ = std::make_unique<std::thread>([this] { WorkerLoop(); });
}

void FakeCupti::StopWorker() {
  std::unique_ptr<std::thread> worker;
  {
    std::lock_guard<std::mutex> lock(buf_mu_);
    worker_stop_ = true;
    worker_cv_.notify_all();
    worker = std::move(worker_);
  }
  if (worker && worker->get_id() != std::this_thread::get_id()) worker->join();
  if (worker && worker->joinable()) worker->detach();
}

// The "CUPTI worker": delivers full buffers on its own thread, at once when no flush period is set
// (CUPTI's heuristic) or at each period tick (cuptiActivityFlushPeriod). Like real periodic flushes
// it never returns the partly filled current buffer; only cuptiActivityFlushAll does.
void FakeCupti::WorkerLoop() {
  std::unique_lock<std::mutex> lock(buf_mu_);
  while (!worker_stop_) {
    const uint32_t period = flush_period_ms_.load();
    if (period == 0) {
      // Also wake when a period is set: from then on full buffers no longer notify.
      worker_cv_.wait(
          lock, [&] { return worker_stop_ || !full_.empty() || flush_period_ms_.load() != 0; });
    } else {
      worker_cv_.wait_for(lock, std::chrono::milliseconds(period));
    }
    if (worker_stop_) break;
    if (full_.empty()) continue;
    worker_busy_ = true;
    lock.unlock();
    {
      std::lock_guard<std::mutex> completion(completion_mu_);
      std::vector<Buffer> taken;
      {
        std::lock_guard<std::mutex> relock(buf_mu_);
        while (!full_.empty()) {
          taken.push_back(std::move(full_.front()));
          full_.pop_front();
        }
      }
      // The mode at delivery, not at the wait: a worker that went to sleep before a period was set
      // and woke because of it is delivering periodically.
      if (!taken.empty() && flush_period_ms_.load() != 0) counters_.periodic_flushes.fetch_add(1);
      t_in_completion = true;
      Complete(&taken);
      t_in_completion = false;
    }
    lock.lock();
    worker_busy_ = false;
    idle_cv_.notify_all();
  }
  worker_busy_ = false;
  idle_cv_.notify_all();
}

void FakeCupti::WaitWorkerIdle() {
  std::unique_lock<std::mutex> lock(buf_mu_);
  if (!worker_) return;
  worker_cv_.notify_all();
  idle_cv_.wait(lock, [&] { return !worker_ || (full_.empty() && !worker_busy_); });
}

void FakeCupti::Finalize() {
  counters_.finalize_calls.fetch_add(1);
  StopWorker();
  FlushAll(/*include_empty=*/true);  // every buffer goes back to the tool
  std::lock_guard<std::mutex> lock(mu_);
  subscribed_ = false;
  callback_ = nullptr;
  userdata_ = nullptr;
  enabled_cbids_.clear();
  domain_enabled_.fill(false);
  runtime_cbids_.clear();
  driver_cbids_.clear();
  for (auto& k : kinds_) k.store(false);
  request_ = nullptr;
  complete_ = nullptr;
  callbacks_registered_or_enabled_ = false;
}

void FakeCupti::Reset() {
  Finalize();
  FailAfter(-1, -1, CUPTI_SUCCESS);
  FailActivityEnable(0, CUPTI_SUCCESS);
  {
    std::lock_guard<std::mutex> lock(mu_);
    attributes_.clear();
  }
  {
    std::lock_guard<std::mutex> lock(buf_mu_);
    dropped_unread_ = 0;
  }
  flush_period_ms_.store(0);
  latency_timestamps.store(0);
  other_subscriber.store(false);
  free_names_after_completion.store(false);
  timestamp_callback.store(nullptr);
  last_error.store(CUPTI_SUCCESS);
  for (auto& c : calls_) c.store(0);
  for (std::atomic<uint64_t>* c :
       {&counters_.buffers_requested, &counters_.buffers_refused, &counters_.buffers_completed,
        &counters_.records_emitted, &counters_.records_completed, &counters_.records_dropped,
        &counters_.records_filtered, &counters_.callbacks_delivered, &counters_.flush_all_calls,
        &counters_.periodic_flushes, &counters_.finalize_calls, &counters_.buffers_zeroed_by_cupti,
        &counters_.dirty_buffers})
    c->store(0);
}

void FakeCupti::AfterForkInChild() {
  // Only the forking thread survives: forget the parent's worker (never join or destroy it).
  (void)worker_.release();
  worker_stop_ = false;
  worker_busy_ = false;
}

void FakeCupti::GetCounters(FakeCuptiCounters* out) const {
  const Counters& c = counters_;
  *out = FakeCuptiCounters{
      c.buffers_requested.load(), c.buffers_refused.load(),     c.buffers_completed.load(),
      c.records_emitted.load(),   c.records_completed.load(),   c.records_dropped.load(),
      c.records_filtered.load(),  c.callbacks_delivered.load(), c.flush_all_calls.load(),
      c.periodic_flushes.load(),  c.finalize_calls.load(),      c.buffers_zeroed_by_cupti.load(),
      c.dirty_buffers.load()};
}

CUptiResult FakeCupti::SetAttribute(uint32_t attr, size_t* size, void* value) {
  if (size == nullptr || value == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  uint64_t v = 0;
  if (*size >= sizeof(uint64_t)) {
    std::memcpy(&v, value, sizeof(v));
  } else if (*size >= 1) {
    v = *static_cast<uint8_t*>(value);
  } else {
    return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
  }
  std::lock_guard<std::mutex> lock(mu_);
  // "should be set before registering the buffer callbacks ... and before any of the CUPTI
  // activity kinds are enabled. Changing this attribute in the middle of the profiling session
  // will result in undefined behavior": the fake refuses it then.
  if (attr == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER && callbacks_registered_or_enabled_)
    return CUPTI_ERROR_INVALID_OPERATION;
  std::erase_if(attributes_, [&](const auto& p) { return p.first == attr; });
  attributes_.emplace_back(attr, v);
  return CUPTI_SUCCESS;
}

uint64_t FakeCupti::AttributeLocked(uint32_t attr, uint64_t fallback) const {
  for (const auto& [a, v] : attributes_)
    if (a == attr) return v;
  return fallback;
}

void FakeCupti::ZeroOrCheckLocked(uint8_t* data, size_t size) {
  uint64_t zeroed_out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    zeroed_out = AttributeLocked(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, 0);
  }
  if (zeroed_out == 0) {
    // CUPTI's default: it zeroes the tool's buffer itself, here, on the requesting thread.
    std::memset(data, 0, size);
    counters_.buffers_zeroed_by_cupti.fetch_add(1);
    return;
  }
  // The tool promised zeroed buffers: check it kept the promise.
  static const uint8_t kZeros[4096] = {};
  for (size_t at = 0; at < size; at += sizeof(kZeros)) {
    const size_t n = std::min(sizeof(kZeros), size - at);
    if (std::memcmp(data + at, kZeros, n) != 0) {
      counters_.dirty_buffers.fetch_add(1);
      return;
    }
  }
}

CUptiResult FakeCupti::GetAttribute(uint32_t attr, size_t* size, void* value) {
  if (size == nullptr || value == nullptr || *size == 0) return CUPTI_ERROR_INVALID_PARAMETER;
  uint64_t v = attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE ? 3200000 : 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [a, stored] : attributes_)
      if (a == attr) v = stored;
  }
  if (*size >= sizeof(uint64_t)) {
    std::memcpy(value, &v, sizeof(v));
    *size = sizeof(v);
  } else {
    *static_cast<uint8_t*>(value) = static_cast<uint8_t>(v);
    *size = 1;
  }
  return CUPTI_SUCCESS;
}

}  // namespace inferscope::fakes
