// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Test-only: hand-built OTLP protobuf messages (field numbers from opentelemetry-proto), so
// decoder tests do not depend on the decoder's own view of the format.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::telemetry::otlp::testing {

inline void Varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

inline std::string Tag(uint32_t field, int wire_type) {
  std::string s;
  Varint(&s, (uint64_t{field} << 3) | static_cast<uint64_t>(wire_type));
  return s;
}

inline std::string LenField(uint32_t field, std::string_view bytes) {
  std::string s = Tag(field, 2);
  Varint(&s, bytes.size());
  s.append(bytes);
  return s;
}

inline std::string VarintField(uint32_t field, uint64_t v) {
  std::string s = Tag(field, 0);
  Varint(&s, v);
  return s;
}

inline std::string Fixed64Field(uint32_t field, uint64_t v) {
  std::string s = Tag(field, 1);
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

inline std::string DoubleField(uint32_t field, double d) {
  uint64_t v;
  std::memcpy(&v, &d, 8);
  return Fixed64Field(field, v);
}

// KeyValue{1: key, 2: AnyValue{1: string | 3: int | 4: double}}
inline std::string KvString(std::string_view key, std::string_view value) {
  return LenField(1, key) + LenField(2, LenField(1, value));
}
inline std::string KvInt(std::string_view key, int64_t value) {
  return LenField(1, key) + LenField(2, VarintField(3, static_cast<uint64_t>(value)));
}
inline std::string KvDouble(std::string_view key, double value) {
  return LenField(1, key) + LenField(2, DoubleField(4, value));
}

struct TestSpan {
  std::string trace_id = std::string(16, '\x11');
  std::string name = "llm_request";
  uint64_t start_ns = 1'700'000'000'000'000'000ull;
  uint64_t end_ns = 1'700'000'001'000'000'000ull;
  std::vector<std::string> attributes;  // serialized KeyValues
  std::vector<std::string> events;      // serialized Span.Event messages
};

// Span{1 trace_id, 2 span_id, 5 name, 6 kind, 7 start, 8 end, 9 attributes, 11 events}
inline std::string SpanBytes(const TestSpan& s) {
  std::string out = LenField(1, s.trace_id) + LenField(2, std::string(8, '\x22')) +
                    LenField(5, s.name) + VarintField(6, 2) + Fixed64Field(7, s.start_ns) +
                    Fixed64Field(8, s.end_ns);
  for (const auto& a : s.attributes) out += LenField(9, a);
  for (const auto& e : s.events) out += LenField(11, e);
  return out;
}

// Event{1 time, 2 name, 3 attributes}
inline std::string EventBytes(std::string_view name, const std::vector<std::string>& attrs) {
  std::string out = Fixed64Field(1, 1'700'000'000'500'000'000ull) + LenField(2, name);
  for (const auto& a : attrs) out += LenField(3, a);
  return out;
}

// ExportTraceServiceRequest{1: ResourceSpans{1: Resource{1: attrs}, 2: ScopeSpans{2: spans}}}
inline std::string RequestBytes(const std::vector<TestSpan>& spans,
                                const std::vector<std::string>& resource_attrs = {}) {
  std::string resource;
  for (const auto& a : resource_attrs) resource += LenField(1, a);
  std::string scope = LenField(1, LenField(1, "test-scope"));
  for (const auto& s : spans) scope += LenField(2, SpanBytes(s));
  std::string rs = LenField(1, resource) + LenField(2, scope);
  return LenField(1, rs);
}

}  // namespace inferscope::telemetry::otlp::testing
