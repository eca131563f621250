// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: both OTLP encodings (the first byte picks one) and gzip; whatever survives
// decoding goes through a SpanWindow and its JSON round trip, which must be exact.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "src/telemetry/otlp/otlp_decode.h"
#include "src/telemetry/otlp/span_window.h"

using namespace inferscope::telemetry::otlp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const RequestIdHasher hasher(1, 2);
  DecodeLimits limits;
  limits.max_body_bytes = 1 << 20;
  limits.max_spans_per_request = 256;
  limits.max_attributes_per_span = 64;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto result = (data[0] & 1) ? DecodeTracesJson(body, limits, hasher)
                              : DecodeTracesProto(body, limits, hasher);
  if (!result.ok()) return 0;
  if (result->spans.size() > limits.max_spans_per_request) std::abort();
  SpanWindow w;
  for (const SpanRecord& s : result->spans) w.Add(s);
  auto back = SpanWindow::FromJson(w.ToJson());
  if (!back.ok() || !(*back == w)) std::abort();
  if (data[0] & 2) (void)Gunzip(body, 1 << 20);
  return 0;
}
