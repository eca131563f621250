// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Offline trace import: turns a trace file into model events. Every importer streams: it reads the
// file in bounded chunks and hands events to the sink as it goes, so a trace of several GB never
// has to fit in memory.

#include <cstdint>
#include <string>

#include "src/base/status.h"
#include "src/import/import_stats.h"
#include "src/model/events.h"
#include "src/model/name_table.h"

namespace inferscope::import {

// Identifies a trace file by content (not by name): gzip or '{' -> Kineto JSON, the SQLite header
// -> Nsight Systems export. kNotFound for a missing file, kUnsupported for anything else.
base::StatusOr<TraceFormat> DetectTraceFormat(const std::string& path);

// The format's name in reports: "kineto_json", "nsys_sqlite" ("unknown" for kUnknown).
const char* TraceFormatName(TraceFormat format);

// What an import delivers beyond the events every analysis uses.
struct ImportOptions {
  // model::ViewRangeEvents, for the offline views: Kineto cpu_op and `nn.Module: ...`
  // python_function events (`--views ops`), gpu_user_annotation events (`--views ranges`). Off,
  // they are counted and skipped without being parsed (operators are most of a Kineto trace's
  // bytes: the ranges view does not pay for them).
  bool host_ops = false;
  bool gpu_annotations = false;
  // model::KernelResourcesEvents (registers per thread, shared memory) for the kernel statistics'
  // launch configurations (`--views kernels`); off, those fields are not read.
  bool kernel_resources = false;
};

// Imports one trace file of any supported format. Errors are one line naming the file and the
// problem; kDataLoss for truncated/corrupt input, kUnsupported for a file that is not a trace.
base::StatusOr<ImportStats> ImportTrace(const std::string& path, model::NameTable* names,
                                        model::EventSink* sink, const ImportOptions& options = {});

}  // namespace inferscope::import
