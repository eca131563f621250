// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Control API of the fake CUPTI (tests/fakes/fake_cupti). The fake is a shared library exporting
// the real CUPTI C symbols (cuptiSubscribe, cuptiActivityEnable, ...) so that a tool written
// against <cupti.h> runs unchanged without a GPU; a test program (the "driver") uses the functions
// below to produce activity records and callbacks, inject failures and read counters.
// See docs/testing-live.md for the behaviour and how a test puts the fake in place of libcupti.
//
// Threading: every function may be called from any thread, concurrently with the tool's CUPTI
// calls.

#include <cupti.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Outcome of an emit call.
typedef enum {
  FAKE_CUPTI_WRITTEN = 0,   // the record is in a tool buffer and will be completed later
  FAKE_CUPTI_FILTERED = 1,  // the tool did not enable the record's kind: not produced
  FAKE_CUPTI_DROPPED = 2,   // no buffer (BufferRequested gave none, too small or misaligned)
  FAKE_CUPTI_INVALID = 3,   // unknown kind or null record
} FakeCuptiEmitResult;

// Emits one activity record: `record` points to a real CUPTI record struct whose first field is
// its kind (CUpti_ActivityKernel10 for KERNEL/CONCURRENT_KERNEL, CUpti_ActivityMemcpy6 for MEMCPY,
// CUpti_ActivityMemcpyPtoP4 for MEMCPY2, CUpti_ActivityMemset4, CUpti_ActivityAPI for
// RUNTIME/DRIVER/INTERNAL_LAUNCH_API, CUpti_ActivitySynchronization2, CUpti_ActivityMemory4 for
// MEMORY2, CUpti_ActivityGraphTrace2, CUpti_ActivityOverhead3, CUpti_ActivityExternalCorrelation,
// CUpti_ActivityMarker2). The bytes are copied as they are, except string pointers (kernel
// `name`, memory `name`, marker `name`/`domain`), which are replaced by the fake's own copy that
// stays valid until the buffer completes (see fake_cupti_set_free_names_after_completion).
// Kernel records are produced when KERNEL or CONCURRENT_KERNEL is enabled (kind rewritten to the
// enabled one); API records also when enabled per callback id (cuptiActivityEnableRuntimeApi).
FakeCuptiEmitResult fake_cupti_emit(const CUpti_Activity* record);

// Small plain description of a kernel for drivers that do not want to fill CUpti_ActivityKernel10.
typedef struct {
  uint64_t start_ns, end_ns;
  uint32_t device_id, context_id, stream_id, correlation_id;
  uint32_t graph_id;  // 0 = not graph-launched
  int32_t grid[3], block[3];
  const char* name;  // copied
} FakeCuptiKernel;
FakeCuptiEmitResult fake_cupti_emit_kernel(const FakeCuptiKernel* kernel);

// Delivers a callback to the subscriber when it is subscribed and has enabled the domain or this
// cbid (cuptiEnableDomain / cuptiEnableCallback). `cbdata` is passed through (CUpti_CallbackData,
// CUpti_ResourceData, CUpti_SynchronizeData, ... as the domain requires). Returns 1 if delivered.
int fake_cupti_fire_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const void* cbdata);

// Fires the API_ENTER and API_EXIT callbacks of one RUNTIME_API or DRIVER_API call (a
// CUpti_CallbackData with functionName, correlationId and context; functionParams is null).
// Returns the number of callbacks delivered (0..2).
int fake_cupti_fire_api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const char* function_name, uint32_t correlation_id, CUcontext context);

// --- CUDA graphs ---
// Handles a driver passes in CUpti_GraphData: cuptiGetGraphId / cuptiGetGraphExecId of the fake
// give back `id` for them (the graph id the driver's graph-launch records carry).
CUgraph fake_cupti_graph_handle(uint32_t id);
CUgraphExec fake_cupti_graph_exec_handle(uint32_t id);

// --- CUPTI version ---
// The API version cuptiGetVersion reports, and with it the record layouts delivered: 19-24 (CUDA
// 12.0-12.6) Kernel9/Memcpy5/Synchronization, 26-28 (12.8-12.9) Kernel9/Memcpy6/Synchronization2,
// 130000+ Kernel10/Memcpy6/Synchronization2. Records are always emitted in the 13.0 structs and
// converted. Below 13.0, the 13-only functions (cuptiActivityEnableRuntimeApi/DriverApi,
// cuptiActivityEnableAllSyncRecords, cuptiSubscribe_v2) return CUPTI_ERROR_NOT_SUPPORTED: the real
// 12.x libraries do not have them. The initial version comes from FAKE_CUPTI_VERSION when set.
// Not reset by fake_cupti_reset.
void fake_cupti_set_version(uint32_t api_version);

// --- failure injection (cleared by fake_cupti_reset) ---
// cuptiSubscribe / cuptiSubscribe_v2 return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, as when
// Nsight or torch.profiler already holds CUPTI.
void fake_cupti_set_other_subscriber(int present);
// After `successful_calls` further successful calls, the CUPTI function named `function` (e.g.
// "cuptiActivityEnable"; "*" = every CUPTI function except cuptiGetResultString) returns `result`
// from then on. `successful_calls` < 0 disarms.
void fake_cupti_fail_after(const char* function, int64_t successful_calls, CUptiResult result);
// cuptiActivityEnable(kind) returns `result` (CUPTI_SUCCESS clears). kind
// CUPTI_ACTIVITY_KIND_INVALID applies to every kind.
void fake_cupti_fail_activity_enable(CUpti_ActivityKind kind, CUptiResult result);
// When set, kernel/memory/marker name copies of a buffer are freed right after the tool's
// BufferCompleted returns (like a JIT unloading a module): a tool that keeps a name pointer reads
// freed memory, which ASan reports. Default: names live until process exit.
void fake_cupti_set_free_names_after_completion(int enable);

// --- state and counters ---
typedef struct {
  uint64_t buffers_requested;  // BufferRequested calls
  uint64_t buffers_refused;    // ... that returned no (usable) buffer
  uint64_t buffers_completed;  // BufferCompleted calls
  uint64_t records_emitted;    // records written into tool buffers
  uint64_t records_completed;  // records handed back through BufferCompleted
  uint64_t records_dropped;    // records lost for lack of a buffer (never reset by a read)
  uint64_t records_filtered;   // records of kinds the tool did not enable
  uint64_t callbacks_delivered;
  uint64_t flush_all_calls;
  uint64_t periodic_flushes;  // worker wake-ups that delivered at least one buffer
  uint64_t finalize_calls;
  uint64_t buffers_zeroed_by_cupti;  // buffers zeroed on the requesting thread (ZEROED_OUT=0)
  uint64_t dirty_buffers;            // handed over as zeroed (ZEROED_OUT=1) but not all zero
} FakeCuptiCounters;
void fake_cupti_get_counters(FakeCuptiCounters* out);

int fake_cupti_is_subscribed(void);
// The tool's registered activity-buffer callbacks (null until cuptiActivityRegisterCallbacks), and
// its subscriber callback (null until cuptiSubscribe), for tests that play CUPTI's threads
// themselves, e.g. calling BufferRequested on a thread whose system calls are being counted.
void fake_cupti_get_tool_callbacks(CUpti_BuffersCallbackRequestFunc* request,
                                   CUpti_BuffersCallbackCompleteFunc* complete,
                                   CUpti_CallbackFunc* subscriber, void** subscriber_userdata);
int fake_cupti_kind_enabled(CUpti_ActivityKind kind);
int fake_cupti_callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
uint32_t fake_cupti_flush_period_ms(void);
int fake_cupti_latency_timestamps_enabled(void);
// Blocks until the worker thread has completed every full buffer queued so far.
void fake_cupti_wait_worker_idle(void);
// Number of CUPTI API calls made to `function` (e.g. "cuptiActivityFlushAll") since reset.
uint64_t fake_cupti_call_count(const char* function);

// Completes every outstanding buffer to the tool (if callbacks are registered), stops the worker,
// and returns the fake to its initial state: no subscriber, no kinds, no callbacks, no failures,
// counters zero. For test fixtures; the tool must not be running concurrently.
void fake_cupti_reset(void);

#ifdef __cplusplus
}  // extern "C"
#endif
