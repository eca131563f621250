// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The CUPTI C entry points of the fake, with the real signatures from the CUDA 13 headers, and the
// control API of fake_cupti_control.h.

#include <time.h>

#include <cstring>
#include <vector>

#include "tests/fakes/fake_cupti/callback_names.h"
#include "tests/fakes/fake_cupti/fake_cupti_control.h"
#include "tests/fakes/fake_cupti/fake_cupti_state.h"

#define FAKE_EXPORT __attribute__((visibility("default")))
#define ENTER(fn)                                                               \
  do {                                                                          \
    if (CUptiResult r_ = State().Enter(Fn::fn); r_ != CUPTI_SUCCESS) return r_; \
  } while (0)

using inferscope::fakes::FakeCupti;
using inferscope::fakes::Fn;
using inferscope::fakes::FnFromName;

namespace {

FakeCupti& State() { return FakeCupti::Get(); }

// External correlation ids are a per-thread stack per kind, as in CUPTI.
thread_local std::vector<uint64_t> t_external_ids[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];

// Fake contexts are small integers: context id = pointer >> 4, device = context id - 1 (the replay
// engine makes them with FakeContext(device)).
uint32_t ContextIdOf(CUcontext ctx) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(ctx) >> 4);
}

}  // namespace

extern "C" {

FAKE_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber,
                                                CUpti_CallbackFunc callback, void* userdata) {
  ENTER(kSubscribe);
  return State().Subscribe(subscriber, callback, userdata);
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber,
                                                   CUpti_CallbackFunc callback, void* userdata,
                                                   CUpti_SubscriberParams* params) {
  ENTER(kSubscribeV2);
  if (!State().is_13()) return CUPTI_ERROR_NOT_SUPPORTED;  // 13.0 and newer only
  const CUptiResult r = State().Subscribe(subscriber, callback, userdata);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && params != nullptr &&
      params->oldSubscriberName != nullptr && params->oldSubscriberSize > 0) {
    std::strncpy(params->oldSubscriberName, "fake-other-tool", params->oldSubscriberSize - 1);
    params->oldSubscriberName[params->oldSubscriberSize - 1] = '\0';
  }
  return r;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  ENTER(kUnsubscribe);
  return State().Unsubscribe(subscriber);
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable,
                                                     CUpti_SubscriberHandle subscriber,
                                                     CUpti_CallbackDomain domain,
                                                     CUpti_CallbackId cbid) {
  ENTER(kEnableCallback);
  return State().EnableCallback(enable != 0, subscriber, domain, cbid);
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable,
                                                   CUpti_SubscriberHandle subscriber,
                                                   CUpti_CallbackDomain domain) {
  ENTER(kEnableDomain);
  return State().EnableDomain(enable != 0, subscriber, domain);
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable,
                                                       CUpti_SubscriberHandle subscriber) {
  ENTER(kEnableAllDomains);
  for (uint32_t d = 1; d < CUPTI_CB_DOMAIN_SIZE; ++d)
    if (CUptiResult r = State().EnableDomain(enable != 0, subscriber, d); r != CUPTI_SUCCESS)
      return r;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t* enable,
                                                       CUpti_SubscriberHandle subscriber,
                                                       CUpti_CallbackDomain domain,
                                                       CUpti_CallbackId cbid) {
  ENTER(kGetCallbackState);
  return State().GetCallbackState(enable, subscriber, domain, cbid);
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                                      const char** name) {
  ENTER(kGetCallbackName);
  if (name == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  // Like the real library: the versioned name of a known runtime/driver callback id.
  const bool driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
  if (!driver && domain != CUPTI_CB_DOMAIN_RUNTIME_API) return CUPTI_ERROR_INVALID_PARAMETER;
  for (const inferscope::fakes::CbidName& c : inferscope::fakes::kCbids) {
    if (c.driver == driver && c.cbid == cbid) {
      *name = c.full;
      return CUPTI_SUCCESS;
    }
  }
  *name = nullptr;
  return CUPTI_ERROR_INVALID_PARAMETER;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  ENTER(kActivityEnable);
  return State().ActivityEnable(kind, true);
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableAndDump(CUpti_ActivityKind kind) {
  ENTER(kActivityEnableAndDump);
  return State().ActivityEnable(kind, true);
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  ENTER(kActivityDisable);
  return State().ActivityEnable(kind, false);
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid,
                                                               uint8_t enable) {
  ENTER(kEnableRuntimeApi);
  if (!State().is_13()) return CUPTI_ERROR_NOT_SUPPORTED;  // 13.0 and newer only
  return State().EnableApiCbid(CUPTI_ACTIVITY_KIND_RUNTIME, cbid, enable != 0);
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid,
                                                              uint8_t enable) {
  ENTER(kEnableDriverApi);
  if (!State().is_13()) return CUPTI_ERROR_NOT_SUPPORTED;  // 13.0 and newer only
  return State().EnableApiCbid(CUPTI_ACTIVITY_KIND_DRIVER, cbid, enable != 0);
}

FAKE_EXPORT CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                               CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
  ENTER(kRegisterCallbacks);
  return State().RegisterCallbacks(funcBufferRequested, funcBufferCompleted);
}

// Blocking, on the calling thread, like CUPTI: returns once every buffer holding records (full or
// not) has been through BufferCompleted. All fake records are complete, so flag 0 and
// CUPTI_ACTIVITY_FLAG_FLUSH_FORCED behave alike.
FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) {
  ENTER(kFlushAll);
  State().CountFlushAll();
  State().FlushAll(/*include_empty=*/false);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityFlush(CUcontext, uint32_t, uint32_t) {
  ENTER(kFlush);
  State().FlushAll(/*include_empty=*/false);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t time) {
  ENTER(kFlushPeriod);
  State().SetFlushPeriod(time);
  return CUPTI_SUCCESS;
}

// Walks a completed buffer. Records are laid out back to back, each taking the size of its kind's
// struct (all multiples of ACTIVITY_RECORD_ALIGNMENT = 8), so the stride is read from the kind.
FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer,
                                                            size_t validBufferSizeBytes,
                                                            CUpti_Activity** record) {
  ENTER(kGetNextRecord);
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  size_t offset = 0;
  if (*record != nullptr) {
    const size_t stride = inferscope::fakes::RecordSize((*record)->kind, State().layout());
    if (stride == 0) return CUPTI_ERROR_INVALID_KIND;
    offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) + stride;
  }
  if (offset >= validBufferSizeBytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  if (validBufferSizeBytes - offset < sizeof(CUpti_ActivityKind)) return CUPTI_ERROR_INVALID_KIND;
  CUpti_ActivityKind kind;
  std::memcpy(&kind, buffer + offset, sizeof(kind));
  const size_t size = inferscope::fakes::RecordSize(kind, State().layout());
  if (size == 0 || validBufferSizeBytes - offset < size) return CUPTI_ERROR_INVALID_KIND;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  return CUPTI_SUCCESS;
}

// The fake keeps one process-wide drop count whatever context/stream is asked; reading resets it.
FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t,
                                                                   size_t* dropped) {
  ENTER(kGetNumDropped);
  if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *dropped = State().TakeDroppedUnread();
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  ENTER(kGetTimestamp);
  if (timestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (CUpti_TimestampCallbackFunc cb = State().timestamp_callback.load()) {
    *timestamp = cb();
    return CUPTI_SUCCESS;
  }
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  *timestamp = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp) {
  ENTER(kRegisterTimestampCallback);
  State().timestamp_callback.store(funcTimestamp);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
#define CASE(x) \
  case x:       \
    *str = #x;  \
    break;
    CASE(CUPTI_SUCCESS)
    CASE(CUPTI_ERROR_INVALID_PARAMETER)
    CASE(CUPTI_ERROR_INVALID_CONTEXT)
    CASE(CUPTI_ERROR_INVALID_OPERATION)
    CASE(CUPTI_ERROR_OUT_OF_MEMORY)
    CASE(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT)
    CASE(CUPTI_ERROR_MAX_LIMIT_REACHED)
    CASE(CUPTI_ERROR_NOT_COMPATIBLE)
    CASE(CUPTI_ERROR_NOT_INITIALIZED)
    CASE(CUPTI_ERROR_INVALID_KIND)
    CASE(CUPTI_ERROR_NOT_SUPPORTED)
    CASE(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    CASE(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    CASE(CUPTI_ERROR_UNKNOWN)
#undef CASE
    default:
      *str = "CUPTI_ERROR_UNKNOWN";
      return CUPTI_ERROR_INVALID_PARAMETER;
  }
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  ENTER(kGetVersion);
  if (version == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *version = State().version.load();
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetLastError(void) {
  ENTER(kGetLastError);
  return State().last_error.exchange(CUPTI_SUCCESS);
}

// Detaches like CUPTI: completes every buffer (empty ones too, so a tool's pool is whole again) on
// the calling thread, stops the worker, and forgets subscriber, kinds and buffer callbacks.
FAKE_EXPORT CUptiResult CUPTIAPI cuptiFinalize(void) {
  ENTER(kFinalize);
  State().Finalize();
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableLatencyTimestamps(uint8_t enable) {
  ENTER(kLatencyTimestamps);
  State().latency_timestamps.store(enable);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableAllSyncRecords(uint8_t) {
  ENTER(kEnableAllSyncRecords);
  if (!State().is_13()) return CUPTI_ERROR_NOT_SUPPORTED;  // 13.0 and newer only
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType) {
  ENTER(kSetThreadIdType);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr,
                                                           size_t* valueSize, void* value) {
  ENTER(kSetAttribute);
  return State().SetAttribute(attr, valueSize, value);
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityGetAttribute(CUpti_ActivityAttribute attr,
                                                           size_t* valueSize, void* value) {
  ENTER(kGetAttribute);
  return State().GetAttribute(attr, valueSize, value);
}

FAKE_EXPORT CUptiResult CUPTIAPI
cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  ENTER(kPushExternalCorrelation);
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
      kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
    return CUPTI_ERROR_INVALID_KIND;
  t_external_ids[kind].push_back(id);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI
cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t* lastId) {
  ENTER(kPopExternalCorrelation);
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
      kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
    return CUPTI_ERROR_INVALID_KIND;
  if (t_external_ids[kind].empty()) return CUPTI_ERROR_QUEUE_EMPTY;
  if (lastId != nullptr) *lastId = t_external_ids[kind].back();
  t_external_ids[kind].pop_back();
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t* contextId) {
  ENTER(kGetContextId);
  if (context == nullptr) return CUPTI_ERROR_INVALID_CONTEXT;
  if (contextId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *contextId = ContextIdOf(context);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext context, uint32_t* deviceId) {
  ENTER(kGetDeviceId);
  if (context == nullptr) return CUPTI_ERROR_INVALID_CONTEXT;
  if (deviceId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *deviceId = ContextIdOf(context) - 1;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetStreamId(CUcontext context, CUstream stream,
                                                  uint32_t* streamId) {
  ENTER(kGetStreamId);
  if (context == nullptr) return CUPTI_ERROR_INVALID_CONTEXT;
  if (streamId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *streamId = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(stream));
  return CUPTI_SUCCESS;
}

// Fake graph handles encode their id: (id << 8) | 0x10 for a CUgraph, | 0x20 for a CUgraphExec
// (fake_cupti_graph_handle / fake_cupti_graph_exec_handle make them).
FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetGraphId(CUgraph graph, uint32_t* pId) {
  ENTER(kGetGraphId);
  const auto v = reinterpret_cast<uintptr_t>(graph);
  if (pId == nullptr || (v & 0xff) != 0x10) return CUPTI_ERROR_INVALID_PARAMETER;
  *pId = static_cast<uint32_t>(v >> 8);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetGraphExecId(CUgraphExec exec, uint32_t* pId) {
  ENTER(kGetGraphExecId);
  const auto v = reinterpret_cast<uintptr_t>(exec);
  if (pId == nullptr || (v & 0xff) != 0x20) return CUPTI_ERROR_INVALID_PARAMETER;
  *pId = static_cast<uint32_t>(v >> 8);
  return CUPTI_SUCCESS;
}

// ---- control API (fake_cupti_control.h) ----

FAKE_EXPORT CUgraph fake_cupti_graph_handle(uint32_t id) {
  return reinterpret_cast<CUgraph>((static_cast<uintptr_t>(id) << 8) | 0x10);
}

FAKE_EXPORT CUgraphExec fake_cupti_graph_exec_handle(uint32_t id) {
  return reinterpret_cast<CUgraphExec>((static_cast<uintptr_t>(id) << 8) | 0x20);
}

FAKE_EXPORT FakeCuptiEmitResult fake_cupti_emit(const CUpti_Activity* record) {
  return State().Emit(record);
}

FAKE_EXPORT FakeCuptiEmitResult fake_cupti_emit_kernel(const FakeCuptiKernel* k) {
  if (k == nullptr) return FAKE_CUPTI_INVALID;
  CUpti_ActivityKernel10 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  r.start = k->start_ns;
  r.end = k->end_ns;
  r.completed = k->end_ns;
  r.deviceId = k->device_id;
  r.contextId = k->context_id;
  r.streamId = k->stream_id;
  r.correlationId = k->correlation_id;
  r.graphId = k->graph_id;
  r.gridX = k->grid[0], r.gridY = k->grid[1], r.gridZ = k->grid[2];
  r.blockX = k->block[0], r.blockY = k->block[1], r.blockZ = k->block[2];
  r.name = k->name;
  const bool latency = State().latency_timestamps.load() != 0;
  r.queued = latency ? k->start_ns : CUPTI_TIMESTAMP_UNKNOWN;
  r.submitted = latency ? k->start_ns : CUPTI_TIMESTAMP_UNKNOWN;
  return State().Emit(reinterpret_cast<const CUpti_Activity*>(&r));
}

FAKE_EXPORT int fake_cupti_fire_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                         const void* cbdata) {
  return State().FireCallback(domain, cbid, cbdata);
}

FAKE_EXPORT int fake_cupti_fire_api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                         const char* function_name, uint32_t correlation_id,
                                         CUcontext context) {
  if (!State().CallbackEnabled(domain, cbid)) return 0;  // skip building the data
  uint64_t correlation_data = 0;
  CUptiResult return_value = CUPTI_SUCCESS;
  CUpti_CallbackData data;
  std::memset(&data, 0, sizeof(data));
  data.functionName = function_name;
  data.functionReturnValue = &return_value;
  data.context = context;
  data.contextUid = ContextIdOf(context);
  data.correlationData = &correlation_data;
  data.correlationId = correlation_id;
  data.callbackSite = CUPTI_API_ENTER;
  int delivered = State().FireCallback(domain, cbid, &data);
  data.callbackSite = CUPTI_API_EXIT;
  delivered += State().FireCallback(domain, cbid, &data);
  return delivered;
}

FAKE_EXPORT void fake_cupti_set_version(uint32_t api_version) {
  State().version.store(api_version);
}

FAKE_EXPORT void fake_cupti_set_other_subscriber(int present) {
  State().other_subscriber.store(present != 0);
}

FAKE_EXPORT void fake_cupti_fail_after(const char* function, int64_t successful_calls,
                                       CUptiResult result) {
  const int fn = FnFromName(function);
  State().FailAfter(fn, fn == -1 ? -1 : successful_calls, result);
}

FAKE_EXPORT void fake_cupti_fail_activity_enable(CUpti_ActivityKind kind, CUptiResult result) {
  State().FailActivityEnable(kind, result);
}

FAKE_EXPORT void fake_cupti_set_free_names_after_completion(int enable) {
  State().free_names_after_completion.store(enable != 0);
}

FAKE_EXPORT void fake_cupti_get_counters(FakeCuptiCounters* out) {
  if (out != nullptr) State().GetCounters(out);
}

FAKE_EXPORT int fake_cupti_is_subscribed(void) { return State().IsSubscribed() ? 1 : 0; }

FAKE_EXPORT void fake_cupti_get_tool_callbacks(CUpti_BuffersCallbackRequestFunc* request,
                                               CUpti_BuffersCallbackCompleteFunc* complete,
                                               CUpti_CallbackFunc* subscriber,
                                               void** subscriber_userdata) {
  State().GetToolCallbacks(request, complete, subscriber, subscriber_userdata);
}

FAKE_EXPORT int fake_cupti_kind_enabled(CUpti_ActivityKind kind) {
  return State().KindEnabled(kind) ? 1 : 0;
}

FAKE_EXPORT int fake_cupti_callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return State().CallbackEnabled(domain, cbid) ? 1 : 0;
}

FAKE_EXPORT uint32_t fake_cupti_flush_period_ms(void) { return State().flush_period_ms(); }

FAKE_EXPORT int fake_cupti_latency_timestamps_enabled(void) {
  return State().latency_timestamps.load() != 0;
}

FAKE_EXPORT void fake_cupti_wait_worker_idle(void) { State().WaitWorkerIdle(); }

FAKE_EXPORT uint64_t fake_cupti_call_count(const char* function) {
  const int fn = FnFromName(function);
  return fn >= 0 ? State().CallCount(fn) : 0;
}

FAKE_EXPORT void fake_cupti_reset(void) { State().Reset(); }

}  // extern "C"
