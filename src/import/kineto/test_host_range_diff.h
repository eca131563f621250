// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Test and fuzzer helpers: run the Kineto importer's host-range reader and its simdjson reference
// on the same bytes and describe everything each delivered as text, so that any difference shows.

#include <string>
#include <string_view>

#include "src/import/import_stats.h"
#include "src/import/kineto/json_scanner.h"
#include "src/import/kineto/kineto_event_mapper.h"
#include "src/model/event_recorder.h"
#include "src/model/name_table.h"

namespace inferscope::import::kineto::testing {

// Every event, data-quality count and process a recorder holds, names resolved, in order.
inline std::string Describe(const model::EventRecorder& r, const model::NameTable& names,
                            const ImportStats& stats) {
  std::string out = "read " + std::to_string(stats.events_read) + " skipped " +
                    std::to_string(stats.events_skipped) + " kernels " +
                    std::to_string(stats.kernels) + "\n";
  auto name = [&](model::NameId id) { return std::string(names.Get(id)); };
  for (const auto& p : r.processes) out += "process " + std::to_string(p.pid) + "\n";
  for (const auto& v : r.view_ranges) {
    out += "range " + std::to_string(static_cast<int>(v.kind)) + " " + std::to_string(v.pid) + "/" +
           std::to_string(v.tid) + "/" + std::to_string(v.device) + " " +
           std::to_string(v.start_ns) + "-" + std::to_string(v.end_ns) + " [" + name(v.name) +
           "]\n";
  }
  for (const auto& k : r.kernels) {
    out += "kernel " + std::to_string(k.pid) + "/" + std::to_string(k.device) + "/" +
           std::to_string(k.stream) + " " + std::to_string(k.start_ns) + "-" +
           std::to_string(k.end_ns) + " c" + std::to_string(k.correlation_id) + " [" +
           name(k.name) + "]\n";
  }
  for (const auto& a : r.api_calls) {
    out += "api " + std::to_string(a.pid) + "/" + std::to_string(a.tid) + " " +
           std::to_string(a.start_ns) + "-" + std::to_string(a.end_ns) + " c" +
           std::to_string(a.correlation_id) + " [" + name(a.name) + "]\n";
  }
  for (const auto& [counter, count] : r.quality) {
    out += "quality " + std::to_string(static_cast<int>(counter)) + " x" + std::to_string(count) +
           "\n";
  }
  return out;
}

// What a KinetoEventMapper (operators and annotations on) delivers for one event span whose
// scanner-found category is `cat`, with the hand-written reader on or off. The span is followed
// by kScanPadding bytes of `pad` (simdjson looks at the byte after a document). `scanned` (may be
// null) receives how many events the hand-written reader took.
inline std::string MapOneEvent(std::string_view event, std::string_view cat, bool scanner,
                               char pad = ' ', uint64_t* scanned = nullptr) {
  std::string buffer(event);
  buffer.append(kScanPadding, pad);
  model::NameTable names;
  model::EventRecorder sink;
  ImportStats stats;
  KinetoEventMapper mapper(&names, &sink, &stats, /*host_ops=*/true, /*gpu_annotations=*/true);
  mapper.set_buffer_end(buffer.data() + buffer.size());
  mapper.set_host_range_scanner(scanner);
  // The scanner's string offsets, as the importer records them when the reader is on: only for a
  // span the scanner would hand out (an object whose brackets close at its last byte).
  EventStrings strings;
  const char* cat_key_end = nullptr;
  const bool whole_object =
      scanner && !event.empty() && event[0] == '{' &&
      FindCompositeEnd(buffer.data(), buffer.data() + event.size(), &cat_key_end, &strings) ==
          buffer.data() + event.size();
  mapper.OnEvent(buffer.data(), event.size(), cat, /*cat_known=*/true,
                 whole_object ? &strings : nullptr);
  mapper.Finish();
  if (scanned) *scanned = stats.host_ranges_scanned;
  return Describe(sink, names, stats);
}

}  // namespace inferscope::import::kineto::testing
