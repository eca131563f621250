// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/cupti_decoder.h"

#include <climits>
#include <cstring>
#include <string>

#include "src/model/cuda_api.h"

namespace inferscope::inject {

namespace {

model::MemcpyKind MemcpyKindOf(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return model::MemcpyKind::kHtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return model::MemcpyKind::kDtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return model::MemcpyKind::kDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return model::MemcpyKind::kHtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return model::MemcpyKind::kPtoP;
    default:
      return model::MemcpyKind::kUnknown;
  }
}

model::SyncType SyncTypeOf(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return model::SyncType::kEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return model::SyncType::kStreamWaitEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return model::SyncType::kStream;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return model::SyncType::kDevice;
    default:
      return model::SyncType::kUnknown;
  }
}

int64_t Signed(uint64_t t) { return static_cast<int64_t>(t); }

// A device UUID spelt as NVML spells it ("GPU-" and 8-4-4-4-12 lowercase hex of the 16 bytes in
// order), so the agent can match a process's CUDA ordinal to the host's NVML index.
std::string GpuUuid(const CUuuid& uuid) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    const auto byte = static_cast<uint8_t>(uuid.bytes[i]);
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
  return out;
}

// The fields every GPU-operation record shares (kernels, copies, memsets, graph launches).
template <typename Record, typename Event>
Event GpuOp(const Record* r, uint32_t pid) {
  Event e;
  e.start_ns = Signed(r->start);
  e.end_ns = Signed(r->end);
  e.pid = pid;
  e.device = r->deviceId;
  e.stream = r->streamId;
  e.correlation_id = r->correlationId;
  return e;
}

// The record structs of each layout (CuptiLayout). Kinds whose struct is the same in every
// supported version (MEMCPY2, MEMSET, RUNTIME/DRIVER, GRAPH_TRACE, CONTEXT) are decoded in
// DecodeCommon. A build against headers that lack a layout's structs leaves that layout out
// (LayoutForVersion refuses it at run time).
struct Records12_0 {
  using Kernel = CUpti_ActivityKernel9;
  using Memcpy = CUpti_ActivityMemcpy5;
  using Sync = CUpti_ActivitySynchronization;
};
#if CUPTI_API_VERSION >= 26
struct Records12_8 {
  using Kernel = CUpti_ActivityKernel9;
  using Memcpy = CUpti_ActivityMemcpy6;
  using Sync = CUpti_ActivitySynchronization2;
};
#endif
#if CUPTI_API_VERSION >= 130000
struct Records13_0 {
  using Kernel = CUpti_ActivityKernel10;
  using Memcpy = CUpti_ActivityMemcpy6;
  using Sync = CUpti_ActivitySynchronization2;
};
// The fields read are where the 12.x structs have them too (checked against the 12.4 headers):
// the layouts differ in what follows them, which is why each version is read with its own struct.
static_assert(offsetof(CUpti_ActivityKernel9, name) == offsetof(CUpti_ActivityKernel10, name));
static_assert(offsetof(CUpti_ActivityKernel9, graphId) ==
              offsetof(CUpti_ActivityKernel10, graphId));
static_assert(offsetof(CUpti_ActivityMemcpy5, correlationId) ==
              offsetof(CUpti_ActivityMemcpy6, correlationId));
static_assert(offsetof(CUpti_ActivitySynchronization, streamId) ==
              offsetof(CUpti_ActivitySynchronization2, streamId));
#endif
// CONTEXT records: contextId and deviceId lead every version of the struct.
static_assert(offsetof(CUpti_ActivityContext, contextId) == 4 &&
              offsetof(CUpti_ActivityContext, deviceId) == 8);
// DEVICE records: CUpti_ActivityDevice5 in every CUPTI this library reads (12.0 to 13.x).
static_assert(sizeof(CUuuid) == 16);

}  // namespace

CuptiDecoder::CuptiDecoder(model::NameTable* names, uint32_t pid, const CuptiApi* api,
                           CuptiLayout layout)
    : names_(names), pid_(pid), api_(api) {
  switch (layout) {
    case CuptiLayout::kCuda12_0:
      decode_ = &CuptiDecoder::DecodeAll<Records12_0>;
      break;
#if CUPTI_API_VERSION >= 26
    case CuptiLayout::kCuda12_8:
      decode_ = &CuptiDecoder::DecodeAll<Records12_8>;
      break;
#endif
#if CUPTI_API_VERSION >= 130000
    case CuptiLayout::kCuda13_0:
      decode_ = &CuptiDecoder::DecodeAll<Records13_0>;
      break;
#endif
    default:
      decode_ = nullptr;
  }
}

template <typename Records>
size_t CuptiDecoder::DecodeAll(uint8_t* buffer, size_t valid_bytes, aggregate::Aggregator* sink) {
  size_t n = 0;
  if (++buffer_serial_ == 0) buffer_serial_ = 1;  // 0 means "never verified"
  CUpti_Activity* record = nullptr;
  const auto next = api_->ActivityGetNextRecord;
  while (next(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    DecodeRecord<Records>(record, sink);
    ++n;
  }
  return n;
}

model::NameId CuptiDecoder::KernelName(const char* name) {
  if (name == nullptr) return names_->Intern("[unnamed kernel]");
  NameSlot& slot = name_cache_[(reinterpret_cast<uintptr_t>(name) >> 3) % name_cache_.size()];
  if (slot.pointer == name) {
    if (slot.verified_buffer == buffer_serial_) return slot.id;
    const std::string_view known = names_->Get(slot.id);
    if (std::strncmp(name, known.data(), known.size()) == 0 && name[known.size()] == '\0') {
      slot.verified_buffer = buffer_serial_;
      return slot.id;
    }
  }
  slot.pointer = name;
  slot.id = names_->Intern(name);
  slot.verified_buffer = buffer_serial_;
  return slot.id;
}

const model::ApiCallEvent& CuptiDecoder::ApiTemplate(CUpti_ActivityKind kind, uint32_t cbid) {
  const uint64_t key = (uint64_t{static_cast<uint32_t>(kind)} << 32) | cbid;
  auto [it, inserted] = api_templates_.try_emplace(key);
  if (inserted) {
    const CUpti_CallbackDomain domain = kind == CUPTI_ACTIVITY_KIND_DRIVER
                                            ? CUPTI_CB_DOMAIN_DRIVER_API
                                            : CUPTI_CB_DOMAIN_RUNTIME_API;
    const char* name = nullptr;
    std::string label;
    if (api_->GetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name != nullptr)
      label = name;
    else
      label = (domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver api " : "runtime api ") +
              std::to_string(cbid);
    // One classifier for every source: the same call is a launch (or a sync...) whether it came
    // from CUPTI, a Kineto trace or an Nsight export.
    const model::CudaApiClass c = model::ClassifyCudaApi(label);
    it->second.name = names_->Intern(model::StripApiSuffixes(label));
    it->second.kind = c.kind;
    it->second.sync_type = c.sync;
  }
  return it->second;
}

uint32_t CuptiDecoder::DeviceOfContext(uint32_t context_id) const {
  auto it = context_device_.find(context_id);
  return it == context_device_.end() ? model::kUnknownDevice : it->second;
}

void CuptiDecoder::LearnContext(uint32_t context_id, uint32_t device) {
  if (context_device_.size() < 1024) context_device_.try_emplace(context_id, device);
}

template <typename Records>
void CuptiDecoder::DecodeRecord(const CUpti_Activity* record, aggregate::Aggregator* sink) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      using Kernel = typename Records::Kernel;
      const auto* r = reinterpret_cast<const Kernel*>(record);
      if (r->contextId != last_context_) {
        LearnContext(r->contextId, r->deviceId);
        last_context_ = r->contextId;
      }
      auto e = GpuOp<Kernel, model::KernelEvent>(r, pid_);
      e.name = KernelName(r->name);
      e.graph_id = r->graphId;
      e.grid[0] = r->gridX;
      e.grid[1] = r->gridY;
      e.grid[2] = r->gridZ;
      e.block[0] = r->blockX;
      e.block[1] = r->blockY;
      e.block[2] = r->blockZ;
      model::KernelResourcesEvent resources;
      resources.pid = pid_;
      resources.name = e.name;
      resources.resources.registers_per_thread =
          model::KernelResourceValue(r->registersPerThread, model::kMaxRegistersPerThread);
      resources.resources.static_shared_bytes = model::KernelResourceValue(r->staticSharedMemory);
      resources.resources.dynamic_shared_bytes = model::KernelResourceValue(r->dynamicSharedMemory);
      if (resources.resources.static_shared_bytes >= 0 &&
          resources.resources.dynamic_shared_bytes >= 0)
        resources.resources.shared_bytes =
            model::KernelResourceValue(int64_t{resources.resources.static_shared_bytes} +
                                       resources.resources.dynamic_shared_bytes);
      // Before the kernel it describes (the Aggregator takes a kernel's resources as it arrives).
      if (resources_.Changed(e.name, resources.resources)) sink->OnKernelResources(resources);
      if (graphs_ != nullptr) {
        if (e.graph_id != 0)
          graphs_->OnNodeKernel(e);
        else
          graphs_->OnEagerKernel(e);  // what captured nodes of this kernel take
      }
      sink->OnKernel(e);
      Tee(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      using Memcpy = typename Records::Memcpy;
      const auto* r = reinterpret_cast<const Memcpy*>(record);
      auto e = GpuOp<Memcpy, model::MemcpyEvent>(r, pid_);
      e.bytes = r->bytes;
      e.kind = MemcpyKindOf(r->copyKind);
      e.pageable = r->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
                   r->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
      sink->OnMemcpy(e);
      Tee(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* r = reinterpret_cast<const typename Records::Sync*>(record);
      model::SyncEvent e;
      e.start_ns = Signed(r->start);
      e.end_ns = Signed(r->end);
      e.pid = pid_;
      e.device = DeviceOfContext(r->contextId);
      e.stream = r->streamId == static_cast<uint32_t>(CUPTI_SYNCHRONIZATION_INVALID_VALUE)
                     ? model::kUnknownStream
                     : r->streamId;
      e.correlation_id = r->correlationId;
      e.type = SyncTypeOf(r->type);
      sink->OnSync(e);
      Tee(e);
      return;
    }
    default:
      DecodeCommon(record, sink);
  }
}

void CuptiDecoder::DecodeCommon(const CUpti_Activity* record, aggregate::Aggregator* sink) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* r = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      auto e = GpuOp<CUpti_ActivityMemcpyPtoP4, model::MemcpyEvent>(r, pid_);
      e.bytes = r->bytes;
      e.kind = model::MemcpyKind::kPtoP;
      sink->OnMemcpy(e);
      Tee(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* r = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      auto e = GpuOp<CUpti_ActivityMemset4, model::MemsetEvent>(r, pid_);
      e.bytes = r->bytes;
      sink->OnMemset(e);
      Tee(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* r = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      model::ApiCallEvent e = ApiTemplate(record->kind, r->cbid);
      e.start_ns = Signed(r->start);
      e.end_ns = Signed(r->end);
      e.pid = pid_;
      e.tid = r->threadId;
      e.correlation_id = r->correlationId;
      sink->OnApiCall(e);
      Tee(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      // Emitted when a context is created (and for existing ones when the kind is enabled): maps
      // the contexts of sync records to devices before any kernel of that context is seen.
      const auto* r = reinterpret_cast<const CUpti_ActivityContext*>(record);
      LearnContext(r->contextId, r->deviceId);
      return;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      // One per device when the kind is enabled: its UUID ties this process's CUDA ordinal (which
      // CUDA_VISIBLE_DEVICES renumbers) to the host's NVML index.
      const auto* r = reinterpret_cast<const CUpti_ActivityDevice5*>(record);
      model::DeviceInfo info;
      info.pid = pid_;
      info.device = r->id;
      if (r->name != nullptr && r->name[0] != '\0') info.name = names_->Intern(r->name);
      bool any = false;
      for (char b : r->uuid.bytes) any = any || b != 0;
      if (any) info.uuid = names_->Intern(GpuUuid(r->uuid));
      sink->OnDevice(info);
      return;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
      // One record per graph launch (per-node tracing off): shown as one "kernel" per graph.
      const auto* r = reinterpret_cast<const CUpti_ActivityGraphTrace2*>(record);
      auto e = GpuOp<CUpti_ActivityGraphTrace2, model::KernelEvent>(r, pid_);
      // INT_MAX: the graph starts (or ends) with a host node, not on a device.
      if (r->deviceId == static_cast<uint32_t>(INT_MAX)) e.device = r->endDeviceId;
      if (e.device == static_cast<uint32_t>(INT_MAX)) {
        ++deviceless_graph_launches_;
        return;
      }
      e.graph_id = r->graphId;
      // Graph ids are process-local: the name carries the pid so that merged reports of several
      // processes never fold different graphs into one row.
      auto [it, inserted] = graph_names_.try_emplace(r->graphId, model::kNoName);
      if (inserted)
        it->second = names_->Intern("[cuda graph " + std::to_string(r->graphId) + " of pid " +
                                    std::to_string(pid_) + "]");
      if (graphs_ != nullptr) {
        // Split by the graph's sampled shares when there are some; a launch already seen node by
        // node (at a sampling switch) is dropped.
        if (!graphs_->OnGraphLaunch(e, &estimated_)) return;
        if (!estimated_.empty()) {
          // A capture wants the record as it is, one slice per launch: the estimated kernels are
          // the windows' attribution, not events that happened with those times.
          model::KernelEvent launch = e;
          launch.name = it->second;
          Tee(launch);
          for (const model::KernelEvent& k : estimated_) sink->OnKernel(k);
          return;
        }
      }
      e.name = it->second;
      sink->OnKernel(e);
      Tee(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
      // One layout, CUpti_ActivityMarker2, in CUPTI 12.x and 13.x (checked against both headers).
      DecodeMarker(*reinterpret_cast<const CUpti_ActivityMarker2*>(record), sink);
      return;
    default:
      ++unknown_records_;
      return;
  }
}

void CuptiDecoder::DecodeMarker(const CUpti_ActivityMarker2& r, aggregate::Aggregator* sink) {
  // Push/pop and start/end ranges both come as a START record (with the name) and an END record
  // (name NULL) sharing the id; instantaneous marks and sync markers are not ranges. The range's
  // thread is its start's (nvtxRangeEnd may run on another thread). The domain is not part of the
  // name, as in the offline importers' range tables.
  const uint32_t flags = static_cast<uint32_t>(r.flags);
  const uint64_t timestamp = r.timestamp;  // packed record: copy, no reference
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    if (open_markers_.size() >= kMaxOpenMarkers) {
      // Starts that never ended (a pop lost to an exception): drop them rather than grow.
      forgotten_markers_ += open_markers_.size();
      open_markers_.clear();
    }
    const model::NameId name =
        r.name != nullptr ? names_->Intern(std::string_view(r.name)) : model::kNoName;
    const uint32_t tid = r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
                                 r.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS
                             ? r.objectId.pt.threadId
                             : 0;
    open_markers_[r.id] = OpenMarker{Signed(timestamp), tid, name};
    return;
  }
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto it = open_markers_.find(r.id);
    if (it == open_markers_.end()) return;  // its start was forgotten (or came before us)
    model::NvtxEvent e;
    e.start_ns = it->second.start_ns;
    e.end_ns = Signed(timestamp);
    e.pid = pid_;
    e.tid = it->second.tid;
    e.name = it->second.name;
    open_markers_.erase(it);
    sink->OnNvtx(e);
  }
}

}  // namespace inferscope::inject
