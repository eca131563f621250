// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "src/base/status.h"
#include "src/import/import_stats.h"
#include "src/model/events.h"
#include "src/model/name_table.h"

namespace inferscope::import {

// Imports a Kineto / torch.profiler Chrome-trace JSON file (.json or .json.gz, detected by
// content), streaming: bounded chunks are read (and inflated) and parsed, events go to `sink` in
// file order.
base::StatusOr<ImportStats> ImportKinetoTrace(const std::string& path, model::NameTable* names,
                                              model::EventSink* sink);

// The same over an in-memory uncompressed JSON document (tests, fuzzer).
base::StatusOr<ImportStats> ImportKinetoJson(std::string_view json, model::NameTable* names,
                                             model::EventSink* sink);

// Knobs of the streaming reader; the defaults suit any trace. Tests shrink the chunk so that events
// straddle chunk boundaries.
struct KinetoImportOptions {
  size_t chunk_bytes = 1 << 20;          // bytes of JSON held at once (grows only for a huge event)
  size_t max_element_bytes = 256 << 20;  // a single event or top-level value larger than this fails
  bool host_ops = false;                 // also deliver model::ViewRangeEvents (ImportOptions)
  bool gpu_annotations = false;
  // false: every operator/module event parsed by simdjson, none by the hand-written reader
  // (host_range_scanner.h): the reference the tests and the differential fuzzer compare against.
  bool host_range_scanner = true;
  bool kernel_resources = false;  // also deliver model::KernelResourcesEvents (ImportOptions)
};

base::StatusOr<ImportStats> ImportKinetoTrace(const std::string& path, model::NameTable* names,
                                              model::EventSink* sink,
                                              const KinetoImportOptions& options);
base::StatusOr<ImportStats> ImportKinetoJson(std::string_view json, model::NameTable* names,
                                             model::EventSink* sink,
                                             const KinetoImportOptions& options);

}  // namespace inferscope::import
