// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/kineto/kineto_importer.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "src/import/kineto/byte_source.h"
#include "src/import/kineto/json_scanner.h"
#include "src/import/kineto/kineto_event_mapper.h"

namespace inferscope::import {
namespace {

using kineto::ByteSource;

base::Status Prefixed(const std::string& label, const base::Status& status) {
  return base::Status(status.code(), label + ": " + status.message());
}

// The streaming loop: one bounded buffer; the scanner consumes whole elements and the unconsumed
// tail (an event cut by the chunk end) moves to the front before the next read.
base::StatusOr<ImportStats> ImportFromSource(ByteSource* source, const std::string& label,
                                             model::NameTable* names, model::EventSink* sink,
                                             const KinetoImportOptions& options) {
  ImportStats stats;
  stats.format = TraceFormat::kKinetoJson;
  stats.file_bytes = source->file_bytes();
  size_t capacity = std::max<size_t>(options.chunk_bytes, 16);
  std::vector<char> buffer(capacity + kineto::kScanPadding);
  size_t size = 0;
  uint64_t stream_offset = 0;  // offset of buffer[0] in the JSON stream
  bool at_end = false;
  kineto::TraceJsonScanner scanner;
  // The operator reader's fast path reads from the offsets the scan records.
  scanner.set_record_strings(options.host_ops && options.host_range_scanner);
  kineto::KinetoEventMapper mapper(names, sink, &stats, options.host_ops, options.gpu_annotations);
  mapper.set_host_range_scanner(options.host_range_scanner);
  mapper.set_kernel_resources(options.kernel_resources);
  // An import that fails part way has delivered what it read (as before operators were held back
  // for runs): the last run too.
  struct FlushOnReturn {
    kineto::KinetoEventMapper* mapper;
    ~FlushOnReturn() { mapper->FlushViewRanges(); }
  } flush_on_return{&mapper};
  while (true) {
    if (!at_end && size < capacity) {
      base::StatusOr<size_t> read = source->Read(buffer.data() + size, capacity - size);
      if (!read.ok()) return read.status();
      if (*read == 0) at_end = true;
      size += *read;
      stats.input_bytes += *read;
    }
    mapper.set_buffer_end(buffer.data() + size + kineto::kScanPadding);
    base::StatusOr<size_t> consumed =
        scanner.Scan(buffer.data(), size, stream_offset, at_end, &mapper);
    if (!consumed.ok()) return Prefixed(label, consumed.status());
    if (scanner.done() || at_end) break;
    const size_t rest = size - *consumed;
    if (*consumed > 0 && rest > 0) std::memmove(buffer.data(), buffer.data() + *consumed, rest);
    size = rest;
    stream_offset += *consumed;
    if (size == capacity) {  // one element fills the whole buffer: grow, within limits
      if (capacity >= options.max_element_bytes) {
        return base::UnsupportedError(label + ": the trace element at byte " +
                                      std::to_string(stream_offset) + " is larger than " +
                                      std::to_string(options.max_element_bytes >> 20) + " MB");
      }
      capacity = std::min(capacity * 2, std::max(options.max_element_bytes, capacity + 1));
      buffer.resize(capacity + kineto::kScanPadding);
    }
  }
  if (!scanner.saw_trace_events()) {
    return base::UnsupportedError(label +
                                  ": no \"traceEvents\" array: not a Kineto/torch.profiler trace");
  }
  mapper.Finish();
  return stats;
}

}  // namespace

base::StatusOr<ImportStats> ImportKinetoTrace(const std::string& path, model::NameTable* names,
                                              model::EventSink* sink,
                                              const KinetoImportOptions& options) {
  base::StatusOr<std::unique_ptr<ByteSource>> source = kineto::OpenTraceFile(path);
  if (!source.ok()) return source.status();
  return ImportFromSource(source->get(), path, names, sink, options);
}

base::StatusOr<ImportStats> ImportKinetoTrace(const std::string& path, model::NameTable* names,
                                              model::EventSink* sink) {
  return ImportKinetoTrace(path, names, sink, KinetoImportOptions());
}

base::StatusOr<ImportStats> ImportKinetoJson(std::string_view json, model::NameTable* names,
                                             model::EventSink* sink,
                                             const KinetoImportOptions& options) {
  std::unique_ptr<ByteSource> source = kineto::MakeMemorySource(json);
  KinetoImportOptions bounded = options;  // no point in a buffer larger than the document
  bounded.chunk_bytes = std::min(options.chunk_bytes, std::max<size_t>(json.size(), 16));
  return ImportFromSource(source.get(), "in-memory JSON", names, sink, bounded);
}

base::StatusOr<ImportStats> ImportKinetoJson(std::string_view json, model::NameTable* names,
                                             model::EventSink* sink) {
  return ImportKinetoJson(json, names, sink, KinetoImportOptions());
}

}  // namespace inferscope::import
