// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/nsys/nsys_mapping.h"

namespace inferscope::import::nsys {
namespace {

using model::ApiKind;
using model::MemcpyKind;
using model::SyncType;

}  // namespace

MemcpyKind MemcpyKindFromEnumName(std::string_view name) {
  const size_t pos = name.rfind("KIND_");
  if (pos == std::string_view::npos) return MemcpyKind::kUnknown;
  std::string_view code = name.substr(pos + 5);
  if (code.starts_with("UVM_")) code.remove_prefix(4);
  // "<src>TO<dst>" with H(ost), D(evice), A(rray: device memory) or P(eer).
  if (code.size() != 4 || code.substr(1, 2) != "TO") return MemcpyKind::kUnknown;
  auto side = [](char c) -> char {
    switch (c) {
      case 'H':
        return 'H';
      case 'D':
      case 'A':
        return 'D';
      case 'P':
        return 'P';
      default:
        return '?';
    }
  };
  const char src = side(code[0]);
  const char dst = side(code[3]);
  if (src == '?' || dst == '?') return MemcpyKind::kUnknown;
  if (src == 'P' || dst == 'P') return MemcpyKind::kPtoP;
  if (src == 'H') return dst == 'H' ? MemcpyKind::kHtoH : MemcpyKind::kHtoD;
  return dst == 'H' ? MemcpyKind::kDtoH : MemcpyKind::kDtoD;
}

SyncType SyncTypeFromEnumName(std::string_view name) {
  if (name.ends_with("STREAM_WAIT_EVENT")) return SyncType::kStreamWaitEvent;
  if (name.ends_with("EVENT_SYNCHRONIZE")) return SyncType::kEvent;
  if (name.ends_with("STREAM_SYNCHRONIZE")) return SyncType::kStream;
  if (name.ends_with("CONTEXT_SYNCHRONIZE")) return SyncType::kDevice;
  return SyncType::kUnknown;
}

CodeMaps::CodeMaps() {
  // CUpti_ActivityMemcpyKind, which ENUM_CUDA_MEMCPY_OPER reproduces.
  static constexpr std::string_view kMemcpyNames[] = {
      "KIND_UNKNOWN", "KIND_HTOD", "KIND_DTOH", "KIND_HTOA", "KIND_ATOH", "KIND_ATOA",
      "KIND_ATOD",    "KIND_DTOA", "KIND_DTOD", "KIND_HTOH", "KIND_PTOP"};
  for (size_t i = 0; i < std::size(kMemcpyNames); ++i) {
    memcpy_[i] = MemcpyKindFromEnumName(kMemcpyNames[i]);
  }
  // Nsight's memory kinds start at 0 = pageable (1 pinned, 2 device), unlike CUPTI's enum (1 =
  // pageable); the 2022 exports without ENUM tables use the same numbering.
  pageable_[0] = true;
  sync_[1] = SyncType::kEvent;
  sync_[2] = SyncType::kStreamWaitEvent;
  sync_[3] = SyncType::kStream;
  sync_[4] = SyncType::kDevice;
  nvtx_range_types_ = {59, 60};  // NvtxPushPopRange, NvtxStartEndRange
}

void CodeMaps::LoadFrom(const Database& db, const Schema& schema) {
  if (auto rows = ReadEnum(db, schema.enum_memcpy_oper); !rows.empty()) {
    memcpy_.fill(MemcpyKind::kUnknown);
    for (const auto& [id, name] : rows) {
      if (InRange(id)) memcpy_[static_cast<size_t>(id)] = MemcpyKindFromEnumName(name);
    }
  }
  if (auto rows = ReadEnum(db, schema.enum_mem_kind); !rows.empty()) {
    pageable_.fill(false);
    for (const auto& [id, name] : rows) {
      if (InRange(id)) pageable_[static_cast<size_t>(id)] = name.ends_with("PAGEABLE");
    }
  }
  if (auto rows = ReadEnum(db, schema.enum_sync_type); !rows.empty()) {
    sync_.fill(SyncType::kUnknown);
    for (const auto& [id, name] : rows) {
      if (InRange(id)) sync_[static_cast<size_t>(id)] = SyncTypeFromEnumName(name);
    }
  }
  if (auto rows = ReadEnum(db, schema.enum_event_type); !rows.empty()) {
    std::vector<int64_t> types;
    for (const auto& [id, name] : rows) {
      if (name == "NvtxPushPopRange" || name == "NvtxStartEndRange") types.push_back(id);
    }
    if (!types.empty()) nvtx_range_types_ = std::move(types);
  }
}

}  // namespace inferscope::import::nsys
