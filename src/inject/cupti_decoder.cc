// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/cupti_decoder.h"

#include <cstring>
#include <string>

#include "src/import/cuda_api.h"

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

}  // namespace

CuptiDecoder::CuptiDecoder(model::NameTable* names, uint32_t pid) : names_(names), pid_(pid) {}

size_t CuptiDecoder::Decode(uint8_t* buffer, size_t valid_bytes, aggregate::Aggregator* sink) {
  size_t n = 0;
  if (++buffer_serial_ == 0) buffer_serial_ = 1;  // 0 means "never verified"
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    DecodeRecord(record, sink);
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
    if (cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name != nullptr)
      label = name;
    else
      label = (domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver api " : "runtime api ") +
              std::to_string(cbid);
    // One classifier for every source: the same call is a launch (or a sync...) whether it came
    // from CUPTI, a Kineto trace or an Nsight export.
    const import::CudaApiClass c = import::ClassifyCudaApi(label);
    it->second.name = names_->Intern(import::StripApiSuffixes(label));
    it->second.kind = c.kind;
    it->second.sync_type = c.sync;
  }
  return it->second;
}

uint32_t CuptiDecoder::DeviceOfContext(uint32_t context_id) const {
  auto it = context_device_.find(context_id);
  return it == context_device_.end() ? model::kUnknownDevice : it->second;
}

void CuptiDecoder::DecodeRecord(const CUpti_Activity* record, aggregate::Aggregator* sink) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* r = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      if (r->contextId != last_context_ && context_device_.size() < 1024) {
        context_device_.try_emplace(r->contextId, r->deviceId);
        last_context_ = r->contextId;
      }
      auto e = GpuOp<CUpti_ActivityKernel10, model::KernelEvent>(r, pid_);
      e.name = KernelName(r->name);
      e.graph_id = r->graphId;
      e.grid[0] = r->gridX;
      e.grid[1] = r->gridY;
      e.grid[2] = r->gridZ;
      e.block[0] = r->blockX;
      e.block[1] = r->blockY;
      e.block[2] = r->blockZ;
      sink->OnKernel(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* r = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      auto e = GpuOp<CUpti_ActivityMemcpy6, model::MemcpyEvent>(r, pid_);
      e.bytes = r->bytes;
      e.kind = MemcpyKindOf(r->copyKind);
      e.pageable = r->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
                   r->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
      sink->OnMemcpy(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* r = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      auto e = GpuOp<CUpti_ActivityMemcpyPtoP4, model::MemcpyEvent>(r, pid_);
      e.bytes = r->bytes;
      e.kind = model::MemcpyKind::kPtoP;
      sink->OnMemcpy(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* r = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      auto e = GpuOp<CUpti_ActivityMemset4, model::MemsetEvent>(r, pid_);
      e.bytes = r->bytes;
      sink->OnMemset(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* r = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      model::SyncEvent e;
      e.start_ns = Signed(r->start);
      e.end_ns = Signed(r->end);
      e.pid = pid_;
      e.device = DeviceOfContext(r->contextId);
      e.stream =
          r->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? model::kUnknownStream : r->streamId;
      e.correlation_id = r->correlationId;
      e.type = SyncTypeOf(r->type);
      sink->OnSync(e);
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
      return;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
      // One record per graph launch (per-node tracing off): shown as one "kernel" per graph.
      const auto* r = reinterpret_cast<const CUpti_ActivityGraphTrace2*>(record);
      auto [it, inserted] = graph_names_.try_emplace(r->graphId, model::kNoName);
      if (inserted) it->second = names_->Intern("[cuda graph " + std::to_string(r->graphId) + "]");
      auto e = GpuOp<CUpti_ActivityGraphTrace2, model::KernelEvent>(r, pid_);
      e.name = it->second;
      e.graph_id = r->graphId;
      sink->OnKernel(e);
      return;
    }
    default:
      ++unknown_records_;
      return;
  }
}

}  // namespace inferscope::inject
