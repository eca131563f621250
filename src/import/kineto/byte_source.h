// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Byte sources for the streaming Kineto importer: a trace is read through one of these in bounded
// pieces, so neither the file nor its decompressed JSON is ever held whole in memory.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace inferscope::import::kineto {

// A forward-only stream of bytes. Read() fills up to `capacity` bytes and returns how many it
// wrote; 0 means end of stream. Errors are one line that already names the input.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual base::StatusOr<size_t> Read(char* out, size_t capacity) = 0;
  // Bytes of the underlying file (compressed size for gzip); 0 for memory.
  virtual uint64_t file_bytes() const = 0;
};

// Reads an in-memory document (tests, fuzzer). Does not own the bytes.
std::unique_ptr<ByteSource> MakeMemorySource(std::string_view bytes);

// Opens `path`; detects gzip by its magic bytes (1f 8b) and then inflates on a second thread into a
// small bounded queue of blocks, so inflation overlaps parsing. kNotFound for a missing file.
base::StatusOr<std::unique_ptr<ByteSource>> OpenTraceFile(const std::string& path);

}  // namespace inferscope::import::kineto
