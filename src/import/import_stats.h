// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

namespace inferscope::import {

enum class TraceFormat { kUnknown, kKinetoJson, kNsysSqlite };

struct ImportStats {
  TraceFormat format = TraceFormat::kUnknown;
  uint64_t file_bytes = 0;      // bytes of the file on disk
  uint64_t input_bytes = 0;     // bytes parsed (uncompressed JSON; the SQLite file size for nsys)
  uint64_t events_read = 0;     // trace events / rows looked at
  uint64_t kernels = 0;         // kernel events delivered
  uint64_t events_skipped = 0;  // well-formed events of kinds we do not use (cpu ops, python, ...)
  // Kineto operator and module events read by the hand-written reader instead of simdjson
  // (src/import/kineto/host_range_scanner.h); only with the ops view's ranges asked for.
  uint64_t host_ranges_scanned = 0;
  // Added to the trace's timestamps, gives the wall clock (ns since the epoch): Kineto's
  // baseTimeNanoseconds, an Nsight export's capture start (TARGET_INFO_SESSION_START_TIME). 0 when
  // the trace does not say.
  int64_t wall_clock_offset_ns = 0;
};

}  // namespace inferscope::import
