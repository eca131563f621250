// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope export`: Kineto / Nsight traces -> a Perfetto trace seen through inferscope's
// taxonomy. One track group per GPU with a child track per stream (kernels named by their short
// name and categorized, with one interned `launch` argument holding full name, grid, block and
// graph id, and the correlation id; copies and memsets), host process tracks with a track per
// thread (CUDA runtime/driver calls) and its sync waits, flows from each launch to its GPU work by
// correlation id, and counter tracks of each category's share of GPU busy time. Timestamps stay on
// the traces' clock, shifted by one offset (the earliest event) so that they encode short.

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/model/event_recorder.h"
#include "src/model/events.h"
#include "src/model/name_table.h"
#include "src/model/taxonomy.h"

namespace inferscope::perfetto {

struct ExportOptions {
  int64_t counter_bin_ns = 0;  // busy-share counter bin; 0: the span / 500, at least 10 us
};

struct ExportStats {
  uint64_t kernels = 0;
  uint64_t copies = 0;  // memcpy and memset slices
  uint64_t api_calls = 0;
  uint64_t flows = 0;
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;  // on disk (after gzip)
  uint64_t kernel_bytes = 0;  // bytes of the kernel slices' packets alone, before gzip
  uint64_t clipped = 0;       // GPU slices overlapping their predecessor on a stream, clipped
};

// The raw events of one source (a trace file, or one process of a live capture), kept as delivered.
using RawEvents = model::EventRecorder;

// Values of one counter of one of a set's GPUs over time (a live capture's NVML samples): a counter
// track under that GPU's track, each value holding until the next.
struct GpuCounterSeries {
  uint32_t pid = 0;
  uint32_t device = 0;  // the process's CUDA ordinal, as in its events
  std::string name;     // the track's name
  std::string unit;
  std::vector<std::pair<int64_t, double>> points;  // (ns on the set's clock, value), in time order
};

// One source's events and the names they refer to.
struct EventSet {
  std::unique_ptr<model::NameTable> names = std::make_unique<model::NameTable>();
  RawEvents events;
  std::vector<GpuCounterSeries> gpu_counters;
  // Written as the labels of every process of the set (a live capture's process: what it
  // dropped and why); empty for a trace file.
  std::vector<std::string> process_labels;
};

// Writes `sets` (one per trace file or captured process; emptied as they are written) to
// `output_path` as ExportTraces does. All sets must share one clock (a live capture's sets are
// all on the host's wall clock); timestamps are shifted by the earliest event.
base::StatusOr<ExportStats> ExportEventSets(std::vector<EventSet>* sets,
                                            const std::string& output_path,
                                            const model::KernelClassifier& classifier,
                                            const ExportOptions& options);

// The same for `count` sets made one at a time by `load(i)` (in order; each is written and freed
// before the next is made), shifted by `offset_ns` (their earliest event, which the caller knows):
// a caller holding the events in a compact form (a live capture's chunks) never has more than one
// set decoded.
base::StatusOr<ExportStats> ExportEventStream(size_t count, int64_t offset_ns,
                                              const std::function<EventSet(size_t)>& load,
                                              const std::string& output_path,
                                              const model::KernelClassifier& classifier,
                                              const ExportOptions& options);

// Whether `path` asks for Chrome JSON (.json, .json.gz) rather than Perfetto protobuf.
bool IsChromeJsonPath(const std::string& path);

// Exports `trace_paths` (already expanded files) to `output_path`: Chrome JSON when it ends in
// .json or .json.gz, else Perfetto protobuf; gzipped when it ends in .gz. Errors are one line; a
// bad input names its file in `*failed_path`.
base::StatusOr<ExportStats> ExportTraces(const std::vector<std::string>& trace_paths,
                                         const std::string& output_path,
                                         const model::KernelClassifier& classifier,
                                         const ExportOptions& options, std::string* failed_path);

}  // namespace inferscope::perfetto
