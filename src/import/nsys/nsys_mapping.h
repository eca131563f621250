// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// How Nsight's numeric codes and API names map onto the event model. Codes are read from the
// file's ENUM_* tables when it has them (3.x exports) and fall back to the numbering the 2.x
// exports use, which the 3.x tables confirm.

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "src/import/nsys/nsys_schema.h"
#include "src/model/events.h"

namespace inferscope::import::nsys {

// Code tables for one file. Lookups of codes outside the tables give kUnknown / false.
class CodeMaps {
 public:
  // Defaults (no ENUM tables): CUPTI memcpy kinds, Nsight memory kinds (0 = pageable), CUPTI sync
  // types, NVTX range event types 59/60.
  CodeMaps();
  // Overrides the defaults with whatever ENUM_* tables the file has.
  void LoadFrom(const Database& db, const Schema& schema);

  model::MemcpyKind Memcpy(int64_t code) const {
    return InRange(code) ? memcpy_[static_cast<size_t>(code)] : model::MemcpyKind::kUnknown;
  }
  bool Pageable(int64_t code) const {
    return InRange(code) && pageable_[static_cast<size_t>(code)];
  }
  model::SyncType Sync(int64_t code) const {
    return InRange(code) ? sync_[static_cast<size_t>(code)] : model::SyncType::kUnknown;
  }
  // eventType codes of NVTX push/pop and start/end ranges.
  const std::vector<int64_t>& NvtxRangeTypes() const { return nvtx_range_types_; }

 private:
  static constexpr size_t kMaxCode = 64;
  static bool InRange(int64_t code) { return code >= 0 && code < static_cast<int64_t>(kMaxCode); }

  std::array<model::MemcpyKind, kMaxCode> memcpy_{};
  std::array<bool, kMaxCode> pageable_{};
  std::array<model::SyncType, kMaxCode> sync_{};
  std::vector<int64_t> nvtx_range_types_;
};

// "CUDA_MEMCPY_KIND_HTOD" (and HTOA, UVM_DTOH, PTOP, ...) -> direction; kUnknown otherwise.
model::MemcpyKind MemcpyKindFromEnumName(std::string_view name);
// "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE" -> kStream, ...
model::SyncType SyncTypeFromEnumName(std::string_view name);

}  // namespace inferscope::import::nsys
