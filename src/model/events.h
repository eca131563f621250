// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The event model: what every source (CUPTI live, Kineto JSON, Nsight SQLite) is turned into before
// the Aggregator sees it. Events are small, fixed-size and name-interned so that the hot path
// copies a few cache lines per record and never touches a string.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace inferscope::model {

// Interned string id (kernel names, API names, NVTX names); see NameTable.
using NameId = uint32_t;
inline constexpr NameId kNoName = 0xffffffffu;

// All timestamps are nanoseconds on one clock per trace (CUPTI's, or the trace's own). Durations
// are end - start and never negative in an accepted event: sources validate and count bad records.
using TimestampNs = int64_t;

inline constexpr uint32_t kUnknownStream = 0xffffffffu;
inline constexpr uint32_t kUnknownDevice = 0xffffffffu;

// A GPU kernel execution.
struct KernelEvent {
  TimestampNs start_ns = 0;
  TimestampNs end_ns = 0;
  uint32_t pid = 0;  // process that launched it (one process = one rank)
  uint32_t device = 0;
  uint32_t stream = 0;
  NameId name = kNoName;        // as recorded: mangled or demangled
  uint32_t correlation_id = 0;  // joins the launching API call; 0 = unknown
  uint32_t graph_id = 0;        // CUDA graph id, 0 when not graph-launched
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
};
// Every kernel record goes through the hot path (CUPTI buffers, the importers, the Aggregator):
// it stays one cache line. What else a launch used travels apart (KernelResourcesEvent).
static_assert(sizeof(KernelEvent) == 64, "KernelEvent must stay one cache line");

// The per-thread and per-block resources a kernel launch used besides its grid and block, as
// CUPTI records them (CUpti_ActivityKernel*: registersPerThread, staticSharedMemory,
// dynamicSharedMemory). -1 = not recorded. Kineto writes only the sum of the two shared-memory
// sizes ("shared memory"), so a source may know `shared_bytes` without the split.
struct KernelResources {
  int32_t registers_per_thread = -1;
  int32_t static_shared_bytes = -1;
  int32_t dynamic_shared_bytes = -1;
  int32_t shared_bytes = -1;  // static + dynamic

  bool operator==(const KernelResources&) const = default;
};
inline constexpr int64_t kMaxRegistersPerThread = 65535;  // CUPTI's field is 16 bits
inline constexpr int64_t kMaxSharedBytes = 0x7fffffff;

// A recorded resource value as KernelResources holds it: -1 (not recorded) when negative or above
// `max`, which only a corrupt record has.
inline int32_t KernelResourceValue(int64_t value, int64_t max = kMaxSharedBytes) {
  return value < 0 || value > max ? -1 : static_cast<int32_t>(value);
}

// The resources of the kernels named `name`, from this event on (in delivery order) until the next
// such event for the name: sources send one only when a kernel's resources differ from those last
// sent for its name (KernelResourcesInterner), a few per kernel name instead of one per launch.
// Only the offline kernel statistics read them (sources send them on request,
// import::ImportOptions); every other sink ignores them, so KernelEvent stays 64 bytes and the
// windows do not change.
struct KernelResourcesEvent {
  uint32_t pid = 0;
  NameId name = kNoName;
  KernelResources resources;
};

// What a source keeps to send KernelResourcesEvents only on a change: the resources last sent per
// kernel name. Not thread-safe (one per source, used where it delivers).
class KernelResourcesInterner {
 public:
  // True when `resources` differ from those last sent for `name` (or none was sent): the caller
  // sends a KernelResourcesEvent before the kernel. Then they are the ones last sent.
  bool Changed(NameId name, const KernelResources& resources) {
    if (name == kNoName) return false;
    if (name >= last_.size()) last_.resize(static_cast<size_t>(name) + 1);
    Slot& slot = last_[name];
    if (slot.sent && slot.resources == resources) return false;
    slot.sent = true;
    slot.resources = resources;
    return true;
  }

 private:
  struct Slot {
    bool sent = false;  // the first kernel of a name always sends: the sink knows nothing yet
    KernelResources resources;
  };
  std::vector<Slot> last_;
};

enum class MemcpyKind : uint8_t { kUnknown = 0, kHtoD, kDtoH, kDtoD, kHtoH, kPtoP, kCount };
inline constexpr const char* kMemcpyKindNames[] = {"unknown", "htod", "dtoh",
                                                   "dtod",    "htoh", "ptop"};

// A memory copy executed by the GPU (copy engine or kernel-less copy).
struct MemcpyEvent {
  TimestampNs start_ns = 0;
  TimestampNs end_ns = 0;
  uint32_t pid = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  uint32_t correlation_id = 0;
  uint64_t bytes = 0;
  MemcpyKind kind = MemcpyKind::kUnknown;
  bool pageable = false;  // host side was pageable memory: the copy is staged and synchronous
};

// A memset executed by the GPU.
struct MemsetEvent {
  TimestampNs start_ns = 0;
  TimestampNs end_ns = 0;
  uint32_t pid = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  uint32_t correlation_id = 0;
  uint64_t bytes = 0;
};

enum class SyncType : uint8_t { kUnknown = 0, kDevice, kStream, kEvent, kStreamWaitEvent, kCount };
inline constexpr const char* kSyncTypeNames[] = {"unknown", "device", "stream", "event",
                                                 "stream_wait_event"};

// A synchronization as CUPTI records it (Kineto `cuda_sync`, Nsight
// `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`): for device/stream/event types, the host blocked waiting
// for the GPU. stream_wait_event is a GPU-side wait (one stream waits for another) and is reported
// apart. Sources without such records deliver the blocking API calls instead (ApiCallEvent kind
// kSync); the Aggregator uses those only for a process that has no SyncEvents, so a wait is never
// counted twice.
struct SyncEvent {
  TimestampNs start_ns = 0;
  TimestampNs end_ns = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t device = kUnknownDevice;  // kUnknownDevice: the process's devices
  uint32_t stream = kUnknownStream;  // kUnknownStream: any stream of the device
  uint32_t correlation_id = 0;       // joins the API call that waited, when the source has it
  SyncType type = SyncType::kUnknown;
};

enum class ApiKind : uint8_t {
  kOther = 0,
  kKernelLaunch,  // cudaLaunchKernel(ExC), cuLaunchKernel(Ex), ...
  kGraphLaunch,   // cudaGraphLaunch, cuGraphLaunch
  kMemcpy,        // cudaMemcpy*(Async)
  kMemset,
  kMalloc,  // cudaMalloc*, cuMemAlloc*, cuMemCreate, cudaMallocAsync ...
  kFree,
  kSync,   // a blocking wait (cudaStreamSynchronize, ...); CUPTI may also record it as a SyncEvent
  kQuery,  // cudaEventQuery / cudaStreamQuery: never blocks, though CUPTI records a sync for it
  kCount,
};
inline constexpr const char* kApiKindNames[] = {"other",  "kernel_launch", "graph_launch",
                                                "memcpy", "memset",        "malloc",
                                                "free",   "sync",          "query"};

// A CUDA runtime or driver API call on a host thread.
struct ApiCallEvent {
  TimestampNs start_ns = 0;
  TimestampNs end_ns = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t correlation_id = 0;
  NameId name = kNoName;
  ApiKind kind = ApiKind::kOther;
  SyncType sync_type = SyncType::kUnknown;  // for kSync: which wait the call performs
  uint32_t device = kUnknownDevice;         // when the source knows it
  uint64_t bytes = 0;                       // allocation size for kMalloc, when known
};

// An NVTX (or user annotation) range on a host thread.
struct NvtxEvent {
  TimestampNs start_ns = 0;
  TimestampNs end_ns = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  NameId name = kNoName;
};

// What a ViewRangeEvent is.
enum class ViewRangeKind : uint8_t {
  kCpuOp = 0,      // a framework operator on a host thread (Kineto `cpu_op`: "aten::mm", ...)
  kModule,         // a module on a host thread (Kineto `python_function` "nn.Module: Linear_0")
  kGpuAnnotation,  // a user annotation projected onto a GPU stream (Kineto `gpu_user_annotation`)
};

// A range only the offline views read (src/model/views.h: the ops view, the ranges view's GPU
// annotations). Sources deliver them only when asked (import::ImportOptions), and every other
// sink ignores them (EventSink's default), so the windows never see them.
struct ViewRangeEvent {
  TimestampNs start_ns = 0;
  TimestampNs end_ns = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;                  // the host thread; for kGpuAnnotation the stream
  uint32_t device = kUnknownDevice;  // kGpuAnnotation: the stream's device
  NameId name = kNoName;
  ViewRangeKind kind = ViewRangeKind::kCpuOp;
};

// Data-quality counters: every record a source or the Aggregator rejects or repairs is counted
// under one of these, and every report shows them, so a reader knows how far to trust the numbers.
enum class DataQuality : uint8_t {
  kRecordsDropped = 0,    // lost before decoding (CUPTI buffer pool empty, ...)
  kZeroTimestamp,         // start or end is 0 (CUPTI does this when it lacks device memory)
  kReversedTimestamp,     // end < start
  kLateRecord,            // arrived after its window closed; folded into the open window
  kMalformedEvent,        // a trace event missing required fields or with wrong types
  kUnmatchedCorrelation,  // a kernel whose launching API call was not found
  // The live path's own (src/inject):
  kBufferRequestsRefused,  // CUPTI asked for a buffer while the pool was empty (records dropped)
  kUnknownRecord,          // a CUPTI record of a kind the decoder does not know (skipped)
  kClockSkew,              // a flush whose CUPTI clock was over 1 ms away from CLOCK_REALTIME
  kCount,
};
inline constexpr const char* kDataQualityNames[] = {
    "records_dropped", "zero_timestamp",        "reversed_timestamp",      "late_record",
    "malformed_event", "unmatched_correlation", "buffer_requests_refused", "unknown_records",
    "clock_skew"};
static_assert(sizeof(kDataQualityNames) / sizeof(kDataQualityNames[0]) ==
              static_cast<size_t>(DataQuality::kCount));

// A process (rank) a source has found. Sources announce a process before its events.
struct ProcessInfo {
  uint32_t pid = 0;
  int32_t rank = -1;  // -1 = unknown; reports then number processes in order
  int32_t world_size = -1;
  NameId hostname = kNoName;
};

// A device a source has found (name and properties are optional).
struct DeviceInfo {
  uint32_t pid = 0;
  uint32_t device = 0;
  NameId name = kNoName;  // e.g. "NVIDIA H100 80GB HBM3"
  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", NVML's spelling: the identity that maps this
  // process's CUDA ordinal to the host's NVML index (they differ under CUDA_VISIBLE_DEVICES).
  NameId uuid = kNoName;
};

// Where sources deliver events. Importers call it in any order the file has; the Aggregator behind
// it restores time order within its lateness horizon.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnProcess(const ProcessInfo& process) = 0;
  virtual void OnDevice(const DeviceInfo& device) = 0;
  virtual void OnKernel(const KernelEvent& event) = 0;
  virtual void OnMemcpy(const MemcpyEvent& event) = 0;
  virtual void OnMemset(const MemsetEvent& event) = 0;
  virtual void OnSync(const SyncEvent& event) = 0;
  virtual void OnApiCall(const ApiCallEvent& event) = 0;
  virtual void OnNvtx(const NvtxEvent& event) = 0;
  // Only the offline views want these (sources send them on request): ignored unless overridden.
  virtual void OnViewRange(const ViewRangeEvent& /*event*/) {}
  // A run of view ranges, in order: the same as delivering them one by one (the default). The
  // Kineto importer delivers its operators so, tens of thousands per trace: one call each through
  // the pipeline and the views was a tenth of what `analyze --views ops` added.
  virtual void OnViewRanges(const ViewRangeEvent* events, size_t count) {
    for (size_t i = 0; i < count; ++i) OnViewRange(events[i]);
  }
  virtual void OnKernelResources(const KernelResourcesEvent& /*event*/) {}
  // A record the source could not use; counted in the profile's data quality.
  virtual void OnDataQuality(uint32_t pid, DataQuality counter, uint64_t count = 1) = 0;
};

}  // namespace inferscope::model
