// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include "src/base/status.h"
#include "src/import/import_stats.h"
#include "src/model/events.h"
#include "src/model/name_table.h"

namespace inferscope::import {

// Imports an Nsight Systems SQLite export (`nsys export --type sqlite`), schemas of Nsight 2022 to
// 2026. Rows are streamed table by table; one process per globalPid.
// The file is opened read-only and immutable. Errors name the file: kNotFound, kUnsupported (not
// SQLite, or SQLite without CUPTI_ACTIVITY_KIND_KERNEL/StringIds), kDataLoss (corrupt/truncated).
// Events are delivered in file order (not time order); a process is announced before its events
// and a (process, device) pair before the first event on it. Zero or reversed timestamps are
// reported through OnDataQuality and the row is dropped. With `kernel_resources`, kernels'
// registersPerThread, staticSharedMemory and dynamicSharedMemory also go out as
// model::KernelResourcesEvents (one per change of a kernel name's resources).
base::StatusOr<ImportStats> ImportNsysSqlite(const std::string& path, model::NameTable* names,
                                             model::EventSink* sink, bool kernel_resources = false);

// The same for a database image in memory (read in place, never copied; `bytes` must stay valid
// during the call). The work SQLite may do is bounded by the image size, so hostile input (the
// fuzzer's) fails with kDataLoss instead of running away.
base::StatusOr<ImportStats> ImportNsysSqliteImage(std::string_view bytes, model::NameTable* names,
                                                  model::EventSink* sink,
                                                  bool kernel_resources = false);

}  // namespace inferscope::import
