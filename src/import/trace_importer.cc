// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/trace_importer.h"

#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "src/import/kineto/kineto_importer.h"
#include "src/import/nsys/nsys_importer.h"

namespace inferscope::import {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The first bytes of a trace look like a Perfetto protobuf Trace rather than JSON: field 1
// (`packet`, length-delimited: 0x0a) then a length, where JSON would have '{' after whitespace.
bool LooksLikePerfettoProtobuf(const unsigned char* head, size_t n) {
  if (n < 2 || head[0] != 0x0a) return false;
  size_t i = 0;
  while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  return i == n || (head[i] != '{' && head[i] != '[');
}

// The first bytes inside a gzip file (0 when it cannot be read).
size_t GunzipHead(const std::string& path, unsigned char* out, size_t size) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) return 0;
  const int n = gzread(gz, out, static_cast<unsigned>(size));
  gzclose(gz);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

base::Status PerfettoProtobufError(const std::string& path) {
  return base::UnsupportedError(
      path +
      ": a Perfetto protobuf trace (.pftrace), which inferscope writes but does not read; "
      "analyze and diff read Kineto/torch.profiler JSON and Nsight Systems SQLite: write the "
      "capture or export as Chrome JSON instead (-o NAME.json.gz)");
}

}  // namespace

base::StatusOr<TraceFormat> DetectTraceFormat(const std::string& path) {
  // stat(2) before open: a FIFO or a device would block open() or read forever, and a symlink
  // loop is not "no such file".
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return base::NotFoundError(path + ": no such file");
    if (err == ELOOP)
      return base::InvalidArgumentError(path + ": too many levels of symbolic links (a loop)");
    return base::NotFoundError(path + ": cannot open: " + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode))
    return base::UnsupportedError(path + ": is a directory, not a trace file");
  if (!S_ISREG(st.st_mode))
    return base::UnsupportedError(
        path + (S_ISFIFO(st.st_mode) ? ": is a FIFO" : ": is a device or socket") +
        ", not a trace file (to read a pipe, give `-` and send the trace on stdin)");
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return base::NotFoundError(path + ": cannot open: " + std::strerror(errno));
  unsigned char head[64] = {};
  const size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  if (EndsWith(path, ".pftrace") || EndsWith(path, ".pftrace.gz") ||
      EndsWith(path, ".perfetto-trace"))
    return PerfettoProtobufError(path);
  if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
    unsigned char inner[64] = {};
    if (LooksLikePerfettoProtobuf(inner, GunzipHead(path, inner, sizeof(inner))))
      return PerfettoProtobufError(path);
    return TraceFormat::kKinetoJson;
  }
  if (LooksLikePerfettoProtobuf(head, n)) return PerfettoProtobufError(path);
  if (n >= 16 && std::memcmp(head, "SQLite format 3\0", 16) == 0) return TraceFormat::kNsysSqlite;
  // JSON may start with a UTF-8 byte-order mark and whitespace.
  size_t i = (n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf) ? 3 : 0;
  while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  if (i < n && head[i] == '{') return TraceFormat::kKinetoJson;
  if (n == 0) return base::UnsupportedError(path + ": empty file, not a trace");
  return base::UnsupportedError(
      path +
      ": not a trace (expected Kineto/torch.profiler JSON, .json.gz, or an Nsight Systems "
      "SQLite export)");
}

const char* TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kKinetoJson:
      return "kineto_json";
    case TraceFormat::kNsysSqlite:
      return "nsys_sqlite";
    case TraceFormat::kUnknown:
      break;
  }
  return "unknown";
}

base::StatusOr<ImportStats> ImportTrace(const std::string& path, model::NameTable* names,
                                        model::EventSink* sink, const ImportOptions& options) {
  ASSIGN_OR_RETURN(TraceFormat format, DetectTraceFormat(path));
  switch (format) {
    case TraceFormat::kKinetoJson: {
      KinetoImportOptions kineto;
      kineto.host_ops = options.host_ops;
      kineto.gpu_annotations = options.gpu_annotations;
      kineto.kernel_resources = options.kernel_resources;
      return ImportKinetoTrace(path, names, sink, kineto);
    }
    case TraceFormat::kNsysSqlite:
      return ImportNsysSqlite(path, names, sink, options.kernel_resources);
    case TraceFormat::kUnknown:
      break;
  }
  return base::UnsupportedError(path + ": unknown trace format");
}

}  // namespace inferscope::import
