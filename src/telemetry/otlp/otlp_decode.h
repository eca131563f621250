// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Decoding of an OTLP ExportTraceServiceRequest body (protobuf or OTLP/JSON, optionally gzip)
// into allowlisted SpanRecords. Privacy by construction: only allowlisted attribute values are
// ever read; everything else (prompts, completions, events, links, other resource attributes) is
// stepped over in the input buffer without being copied.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "src/telemetry/otlp/span_record.h"

namespace inferscope::telemetry::otlp {

// Every bound the decoder enforces. A request over a hard bound (body size, nesting) is refused;
// spans or attributes over a soft bound are dropped and counted.
struct DecodeLimits {
  size_t max_body_bytes = 8u << 20;      // compressed body, and again after gunzip
  size_t max_spans_per_request = 20000;  // further spans dropped (counted)
  size_t max_attributes_per_span = 256;  // further attributes ignored (counted)
  size_t max_resource_spans = 4096;      // per request
  size_t max_request_id_bytes = 1024;    // longer ids are hashed on their first 1024 bytes
};

// Counters of one decode.
struct DecodeCounters {
  uint64_t spans_received = 0;         // spans present in the request
  uint64_t spans_over_limit = 0;       // dropped by max_spans_per_request
  uint64_t spans_bad_timestamps = 0;   // zero start/end or end before start: dropped
  uint64_t attributes_over_limit = 0;  // ignored by max_attributes_per_span
  uint64_t bad_attribute_values = 0;   // allowlisted key with an unusable value (ignored)
};

struct DecodeResult {
  std::vector<SpanRecord> spans;  // every decoded span, including role kOther
  DecodeCounters counters;
};

// Protobuf (application/x-protobuf). DataLoss on malformed input.
base::StatusOr<DecodeResult> DecodeTracesProto(std::string_view body, const DecodeLimits& limits,
                                               const RequestIdHasher& hasher);

// OTLP/JSON (application/json): lowerCamelCase keys (snake_case accepted too), hex trace ids,
// 64-bit integers as strings or numbers, enums as integers. DataLoss on malformed input.
base::StatusOr<DecodeResult> DecodeTracesJson(std::string_view body, const DecodeLimits& limits,
                                              const RequestIdHasher& hasher);

// Inflates a gzip (or zlib) body. Output larger than `max_bytes` is refused with
// InvalidArgument (the caller answers 413); a corrupt or truncated stream is DataLoss (400).
base::StatusOr<std::string> Gunzip(std::string_view body, size_t max_bytes);

}  // namespace inferscope::telemetry::otlp
