// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/otlp/otlp_decode.h"

#include <simdjson.h>
#include <zlib.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "src/wire/wire_buffer.h"

namespace inferscope::telemetry::otlp {
namespace {

// An attribute value as found on the wire. Strings are views into the input; they are only
// looked at for the few slots that need a string (model, request id).
struct AttrValue {
  enum class Kind { kNone, kString, kInt, kDouble, kBool } kind = Kind::kNone;
  std::string_view str;
  int64_t i = 0;
  double d = 0;
};

std::optional<double> AsNumber(const AttrValue& v) {
  if (v.kind == AttrValue::Kind::kInt) return static_cast<double>(v.i);
  if (v.kind == AttrValue::Kind::kDouble) return v.d;
  return std::nullopt;
}

// Collects what one span contributes while its fields stream by, then applies the stage mapping.
// Shared by both encodings so they cannot disagree on the allowlist.
class SpanBuilder {
 public:
  SpanBuilder(const RequestIdHasher& hasher, const DecodeLimits& limits, DecodeCounters* counters)
      : hasher_(hasher), limits_(limits), counters_(counters) {}

  void SetName(std::string_view name) { name_ = ClassifySpanName(name); }
  void SetStart(uint64_t ns) { rec_.start_unix_ns = ns; }
  void SetEnd(uint64_t ns) { rec_.end_unix_ns = ns; }
  void SetTraceId(std::string_view raw) { trace_id_ = raw; }

  // Returns false once the attribute budget is spent (the caller may stop looking).
  bool OnAttribute(std::string_view key, const AttrValue& value);

  // Completes the record. False (and counted) when the span has unusable timestamps.
  bool Finish(std::string_view service, SpanRecord* out);

 private:
  void SetLatency(Stage stage, const AttrValue& value);

  const RequestIdHasher& hasher_;
  const DecodeLimits& limits_;
  DecodeCounters* counters_;
  SpanRecord rec_;
  SpanNameInfo name_;
  std::string_view trace_id_;
  std::string response_model_;
  std::string request_model_;
  bool has_request_id_ = false;
  bool has_request_attrs_ = false;
  size_t attributes_seen_ = 0;
};

bool SpanBuilder::OnAttribute(std::string_view key, const AttrValue& value) {
  if (++attributes_seen_ > limits_.max_attributes_per_span) {
    ++counters_->attributes_over_limit;
    return false;
  }
  AttrSlot slot = ClassifySpanAttribute(key);
  auto number = AsNumber(value);
  auto set_param = [&](std::optional<double>* dst) {
    std::optional<double> q = number ? QuantizeParam(*number) : std::nullopt;
    if (!q) {
      ++counters_->bad_attribute_values;
      return;
    }
    *dst = q;
  };
  auto set_tokens = [&](int64_t* dst) {
    if (!number || !(*number >= 0 && *number <= 1e12)) {  // NaN fails too
      ++counters_->bad_attribute_values;
      return;
    }
    *dst = static_cast<int64_t>(*number);
    has_request_attrs_ = true;
  };
  switch (slot) {
    case AttrSlot::kNone:
      break;  // not allowlisted: never read
    case AttrSlot::kModel:
    case AttrSlot::kRequestModel:
      if (value.kind != AttrValue::Kind::kString) {
        ++counters_->bad_attribute_values;
        break;
      }
      (slot == AttrSlot::kModel ? response_model_ : request_model_) = SanitizeName(value.str);
      break;
    case AttrSlot::kRequestId:
      if (value.kind == AttrValue::Kind::kString) {
        rec_.request_hash = hasher_.HashHex(value.str.substr(0, limits_.max_request_id_bytes));
      } else if (value.kind == AttrValue::Kind::kInt) {
        rec_.request_hash = hasher_.HashHex(std::to_string(value.i));
      } else {
        ++counters_->bad_attribute_values;
        break;
      }
      has_request_id_ = true;
      break;
    case AttrSlot::kPromptTokens:
      set_tokens(&rec_.prompt_tokens);
      break;
    case AttrSlot::kCompletionTokens:
      set_tokens(&rec_.completion_tokens);
      break;
    case AttrSlot::kTemperature:
      set_param(&rec_.sampling.temperature);
      break;
    case AttrSlot::kTopP:
      set_param(&rec_.sampling.top_p);
      break;
    case AttrSlot::kTopK:
      set_param(&rec_.sampling.top_k);
      break;
    case AttrSlot::kMaxTokens:
      set_param(&rec_.sampling.max_tokens);
      break;
    case AttrSlot::kN:
      set_param(&rec_.sampling.n);
      break;
    case AttrSlot::kBestOf:
      set_param(&rec_.sampling.best_of);
      break;
    case AttrSlot::kLatencyQueue:
      SetLatency(Stage::kQueue, value);
      break;
    case AttrSlot::kLatencyPrefill:
      SetLatency(Stage::kPrefill, value);
      break;
    case AttrSlot::kLatencyDecode:
      SetLatency(Stage::kDecode, value);
      break;
    case AttrSlot::kLatencyInference:
      SetLatency(Stage::kInference, value);
      break;
    case AttrSlot::kLatencyTtft:
      SetLatency(Stage::kTtft, value);
      break;
    case AttrSlot::kLatencyE2e:
      SetLatency(Stage::kE2e, value);
      break;
    case AttrSlot::kLatencyOther:
      has_request_attrs_ = true;
      break;
  }
  return true;
}

void SpanBuilder::SetLatency(Stage stage, const AttrValue& value) {
  has_request_attrs_ = true;
  auto number = AsNumber(value);
  std::optional<int64_t> ns = number ? SecondsToNs(*number) : std::nullopt;
  if (!ns) {
    ++counters_->bad_attribute_values;
    return;
  }
  rec_.stage_ns[static_cast<size_t>(stage)] = *ns;
}

bool SpanBuilder::Finish(std::string_view service, SpanRecord* out) {
  // A span longer than a day is clock garbage; the bound also keeps duration sums far from
  // overflow.
  constexpr uint64_t kMaxSpanNs = 86400ull * 1000 * 1000 * 1000;
  if (rec_.start_unix_ns == 0 || rec_.end_unix_ns == 0 || rec_.end_unix_ns < rec_.start_unix_ns ||
      rec_.end_unix_ns - rec_.start_unix_ns > kMaxSpanNs ||
      rec_.end_unix_ns > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    ++counters_->spans_bad_timestamps;
    return false;
  }
  rec_.name = std::string(name_.canonical);
  rec_.role = name_.role;
  // Engine request attributes make a request span whatever its name (a renamed vLLM span, a
  // TensorRT-LLM build that names it differently); SGLang stage slices stay stages.
  if (rec_.role == SpanRole::kOther && has_request_attrs_) rec_.role = SpanRole::kRequest;
  int64_t duration_ns = static_cast<int64_t>(rec_.end_unix_ns - rec_.start_unix_ns);
  auto& st = rec_.stage_ns;
  if (rec_.role == SpanRole::kStage) {
    st.fill(-1);  // a stage slice measures exactly one stage: its own duration
    if (name_.stage) st[static_cast<size_t>(*name_.stage)] = duration_ns;
  } else if (rec_.role == SpanRole::kRequest) {
    auto at = [&](Stage s) -> int64_t& { return st[static_cast<size_t>(s)]; };
    if (at(Stage::kE2e) < 0) at(Stage::kE2e) = duration_ns;
    // vLLM: inference = prefill + decode (docs/design/metrics.md); derive it when only the parts
    // are reported.
    if (at(Stage::kInference) < 0 && at(Stage::kPrefill) >= 0 && at(Stage::kDecode) >= 0)
      at(Stage::kInference) = at(Stage::kPrefill) + at(Stage::kDecode);
    if (!has_request_id_ && !trace_id_.empty()) rec_.request_hash = hasher_.HashHex(trace_id_);
    rec_.model = !response_model_.empty() ? response_model_ : request_model_;
  } else {
    st.fill(-1);
  }
  if (rec_.role != SpanRole::kRequest) {
    // Only request spans carry per-request details into windows.
    rec_.request_hash.clear();
    rec_.prompt_tokens = rec_.completion_tokens = -1;
    rec_.sampling = {};
  }
  rec_.service = SanitizeName(service);
  *out = std::move(rec_);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Protobuf, walked with the wire format's reader (src/wire/wire_buffer.h) rather than
// protoc-generated code: OTLP's .proto files are not packaged in Debian, generated parsers
// materialize every field (prompt text included) before we could filter it, and a receiver facing
// arbitrary input has to skip unknown fields and bound every loop anyway. Field numbers from
// opentelemetry-proto:
//   ExportTraceServiceRequest: 1 resource_spans
//   ResourceSpans: 1 resource, 2 scope_spans, 1000 instrumentation_library_spans (deprecated)
//   Resource: 1 attributes          ScopeSpans: 1 scope, 2 spans
//   Span: 1 trace_id, 5 name, 7 start_time_unix_nano (fixed64), 8 end_time_unix_nano (fixed64),
//         9 attributes (11 events, 13 links and the rest are never read)
//   KeyValue: 1 key, 2 value        AnyValue: 1 string, 2 bool, 3 int64, 4 double

base::Status Malformed(std::string_view what) {
  return base::DataLossError("malformed OTLP protobuf: " + std::string(what));
}

// Decodes an AnyValue's scalar; arrays, kvlists and bytes stay kNone (never allowlisted).
bool ReadAnyValue(std::string_view data, AttrValue* out) {
  wire::WireReader r(data);
  wire::WireField f;
  while (r.NextField(&f)) {
    if (f.number == 1 && f.type == wire::WireType::kBytes) {
      *out = {AttrValue::Kind::kString, f.bytes, 0, 0};
    } else if (f.number == 2 && f.type == wire::WireType::kVarint) {
      *out = {AttrValue::Kind::kBool, {}, f.value != 0, 0};
    } else if (f.number == 3 && f.type == wire::WireType::kVarint) {
      *out = {AttrValue::Kind::kInt, {}, wire::AsInt64(f.value), 0};
    } else if (f.number == 4 && f.type == wire::WireType::kFixed64) {
      *out = {AttrValue::Kind::kDouble, {}, 0, wire::AsDouble(f.value)};
    } else if (f.number >= 5 && f.number <= 7) {
      *out = {};
    }
  }
  return r.ok();
}

// Splits a KeyValue into its key and the raw AnyValue bytes.
bool ReadKeyValue(std::string_view data, std::string_view* key, std::string_view* value) {
  wire::WireReader r(data);
  wire::WireField f;
  *key = {};
  *value = {};
  while (r.NextField(&f)) {
    if (f.type != wire::WireType::kBytes) continue;
    if (f.number == 1) *key = f.bytes;
    if (f.number == 2) *value = f.bytes;
  }
  return r.ok();
}

base::Status ReadServiceName(std::string_view resource, std::string_view* service) {
  wire::WireReader r(resource);
  wire::WireField f;
  while (r.NextField(&f)) {
    if (f.number != 1 || f.type != wire::WireType::kBytes) continue;
    std::string_view key, value;
    if (!ReadKeyValue(f.bytes, &key, &value)) return Malformed("resource attribute");
    if (key != "service.name") continue;  // every other resource attribute is dropped unread
    AttrValue v;
    if (!ReadAnyValue(value, &v)) return Malformed("resource attribute value");
    if (v.kind == AttrValue::Kind::kString) *service = v.str;
  }
  return !r.ok() ? Malformed("resource") : base::OkStatus();
}

class ProtoDecoder {
 public:
  ProtoDecoder(const DecodeLimits& limits, const RequestIdHasher& hasher, DecodeResult* out)
      : limits_(limits), hasher_(hasher), out_(out) {}

  base::Status Request(std::string_view body) {
    wire::WireReader r(body);
    wire::WireField f;
    size_t resource_spans = 0;
    while (r.NextField(&f)) {
      if (f.number != 1 || f.type != wire::WireType::kBytes) continue;
      if (++resource_spans > limits_.max_resource_spans)
        return base::InvalidArgumentError("too many resource_spans in one request");
      RETURN_IF_ERROR(ResourceSpans(f.bytes));
    }
    return !r.ok() ? Malformed("ExportTraceServiceRequest") : base::OkStatus();
  }

 private:
  base::Status ResourceSpans(std::string_view data) {
    // The resource may follow its spans on the wire: find it first.
    std::string_view service;
    {
      wire::WireReader r(data);
      wire::WireField f;
      while (r.NextField(&f)) {
        if (f.number == 1 && f.type == wire::WireType::kBytes)
          RETURN_IF_ERROR(ReadServiceName(f.bytes, &service));
      }
      if (!r.ok()) return Malformed("ResourceSpans");
    }
    wire::WireReader r(data);
    wire::WireField f;
    while (r.NextField(&f)) {
      if ((f.number == 2 || f.number == 1000) && f.type == wire::WireType::kBytes) {
        RETURN_IF_ERROR(ScopeSpans(f.bytes, service));
      }
    }
    return base::OkStatus();
  }

  base::Status ScopeSpans(std::string_view data, std::string_view service) {
    wire::WireReader r(data);
    wire::WireField f;
    while (r.NextField(&f)) {
      if (f.number != 2 || f.type != wire::WireType::kBytes) continue;
      ++out_->counters.spans_received;
      if (out_->spans.size() >= limits_.max_spans_per_request) {
        ++out_->counters.spans_over_limit;
        continue;
      }
      RETURN_IF_ERROR(Span(f.bytes, service));
    }
    return !r.ok() ? Malformed("ScopeSpans") : base::OkStatus();
  }

  base::Status Span(std::string_view data, std::string_view service) {
    SpanBuilder b(hasher_, limits_, &out_->counters);
    wire::WireReader r(data);
    wire::WireField f;
    bool attributes_open = true;
    while (r.NextField(&f)) {
      switch (f.number) {
        case 1:
          if (f.type == wire::WireType::kBytes) b.SetTraceId(f.bytes);
          break;
        case 5:
          if (f.type == wire::WireType::kBytes) b.SetName(f.bytes);
          break;
        case 7:
          if (f.type == wire::WireType::kFixed64) b.SetStart(f.value);
          break;
        case 8:
          if (f.type == wire::WireType::kFixed64) b.SetEnd(f.value);
          break;
        case 9: {
          if (f.type != wire::WireType::kBytes) break;
          if (!attributes_open) {
            ++out_->counters.attributes_over_limit;
            break;
          }
          std::string_view key, value;
          if (!ReadKeyValue(f.bytes, &key, &value)) return Malformed("span attribute");
          AttrValue v;
          // Only allowlisted keys have their value decoded at all.
          if (ClassifySpanAttribute(key) != AttrSlot::kNone && !ReadAnyValue(value, &v))
            return Malformed("span attribute value");
          attributes_open = b.OnAttribute(key, v);
          break;
        }
        default:
          break;  // events, links, status, trace_state, ...: skipped unread
      }
    }
    if (!r.ok()) return Malformed("Span");
    SpanRecord rec;
    if (b.Finish(service, &rec)) out_->spans.push_back(std::move(rec));
    return base::OkStatus();
  }

  const DecodeLimits& limits_;
  const RequestIdHasher& hasher_;
  DecodeResult* out_;
};

// ---------------------------------------------------------------------------------------------
// OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding).

using simdjson::dom::element;

base::Status BadJson(std::string_view what) {
  return base::DataLossError("malformed OTLP JSON: " + std::string(what));
}

// Looks up a lowerCamelCase key, falling back to the proto's snake_case name.
bool Field(element obj, std::string_view camel, std::string_view snake, element* out) {
  if (obj[camel].get(*out) == simdjson::SUCCESS) return true;
  return !snake.empty() && obj[snake].get(*out) == simdjson::SUCCESS;
}

// A 64-bit integer written as a decimal string (the OTLP/JSON rule) or as a JSON number.
bool JsonUint64(element e, uint64_t* out) {
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && p == s.data() + s.size();
  }
  if (e.get_uint64().get(*out) == simdjson::SUCCESS) return true;
  double d;
  if (e.get_double().get(d) == simdjson::SUCCESS && d >= 0 && d < 1.8e19) {
    *out = static_cast<uint64_t>(d);
    return true;
  }
  return false;
}

bool JsonInt64(element e, int64_t* out) {
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && p == s.data() + s.size();
  }
  return e.get_int64().get(*out) == simdjson::SUCCESS;
}

// Decodes a JSON AnyValue ({"stringValue": ...} etc.) into a scalar.
AttrValue JsonAnyValue(element v) {
  AttrValue out;
  element e;
  if (Field(v, "stringValue", "string_value", &e)) {
    std::string_view s;
    if (e.get_string().get(s) == simdjson::SUCCESS) out = {AttrValue::Kind::kString, s, 0, 0};
  } else if (Field(v, "intValue", "int_value", &e)) {
    int64_t i;
    if (JsonInt64(e, &i)) out = {AttrValue::Kind::kInt, {}, i, 0};
  } else if (Field(v, "doubleValue", "double_value", &e)) {
    double d;
    std::string_view s;
    if (e.get_double().get(d) == simdjson::SUCCESS) {
      out = {AttrValue::Kind::kDouble, {}, 0, d};
    } else if (e.get_string().get(s) == simdjson::SUCCESS) {
      // Non-finite doubles are strings ("NaN", "Infinity"): unusable as latencies anyway.
      out = {AttrValue::Kind::kDouble, {}, 0, std::numeric_limits<double>::quiet_NaN()};
    }
  } else if (Field(v, "boolValue", "bool_value", &e)) {
    bool b;
    if (e.get_bool().get(b) == simdjson::SUCCESS) out = {AttrValue::Kind::kBool, {}, b, 0};
  }
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class JsonDecoder {
 public:
  JsonDecoder(const DecodeLimits& limits, const RequestIdHasher& hasher, DecodeResult* out)
      : limits_(limits), hasher_(hasher), out_(out) {}

  base::Status Request(element root) {
    if (!root.is_object()) return BadJson("top level is not an object");
    element rs;
    if (!Field(root, "resourceSpans", "resource_spans", &rs)) return base::OkStatus();
    simdjson::dom::array arr;
    if (rs.get_array().get(arr) != simdjson::SUCCESS) return BadJson("resourceSpans");
    if (arr.size() > limits_.max_resource_spans)
      return base::InvalidArgumentError("too many resource_spans in one request");
    for (element r : arr) RETURN_IF_ERROR(ResourceSpans(r));
    return base::OkStatus();
  }

 private:
  base::Status ResourceSpans(element r) {
    std::string_view service;
    element resource, attrs;
    if (Field(r, "resource", "", &resource) && Field(resource, "attributes", "", &attrs)) {
      simdjson::dom::array arr;
      if (attrs.get_array().get(arr) != simdjson::SUCCESS) return BadJson("resource.attributes");
      for (element kv : arr) {
        std::string_view key;
        element value;
        if (kv["key"].get_string().get(key) != simdjson::SUCCESS || key != "service.name") continue;
        if (!Field(kv, "value", "", &value)) continue;
        AttrValue v = JsonAnyValue(value);
        if (v.kind == AttrValue::Kind::kString) service = v.str;
      }
    }
    for (auto [camel, snake] :
         {std::pair<std::string_view, std::string_view>{"scopeSpans", "scope_spans"},
          {"instrumentationLibrarySpans", "instrumentation_library_spans"}}) {
      element ss;
      if (!Field(r, camel, snake, &ss)) continue;
      simdjson::dom::array arr;
      if (ss.get_array().get(arr) != simdjson::SUCCESS) return BadJson("scopeSpans");
      for (element s : arr) {
        element spans;
        if (!s.is_object()) return BadJson("scopeSpans entry");
        if (!Field(s, "spans", "", &spans)) continue;
        simdjson::dom::array span_arr;
        if (spans.get_array().get(span_arr) != simdjson::SUCCESS) return BadJson("spans");
        for (element span : span_arr) {
          ++out_->counters.spans_received;
          if (out_->spans.size() >= limits_.max_spans_per_request) {
            ++out_->counters.spans_over_limit;
            continue;
          }
          RETURN_IF_ERROR(Span(span, service));
        }
      }
    }
    return base::OkStatus();
  }

  base::Status Span(element span, std::string_view service) {
    if (!span.is_object()) return BadJson("span is not an object");
    SpanBuilder b(hasher_, limits_, &out_->counters);
    element e;
    std::string_view s;
    if (Field(span, "traceId", "trace_id", &e) && e.get_string().get(s) == simdjson::SUCCESS) {
      // Hex in JSON; hash the raw bytes so both encodings give the same request hash.
      if (s.size() == 32) {
        char raw[16];
        bool ok = true;
        for (size_t i = 0; i < 16 && ok; ++i) {
          int hi = HexDigit(s[2 * i]), lo = HexDigit(s[2 * i + 1]);
          ok = hi >= 0 && lo >= 0;
          raw[i] = static_cast<char>(hi * 16 + lo);
        }
        if (ok) {
          trace_id_.assign(raw, 16);
          b.SetTraceId(trace_id_);
        }
      }
    }
    if (Field(span, "name", "", &e) && e.get_string().get(s) == simdjson::SUCCESS) b.SetName(s);
    uint64_t t = 0;
    if (Field(span, "startTimeUnixNano", "start_time_unix_nano", &e) && JsonUint64(e, &t))
      b.SetStart(t);
    if (Field(span, "endTimeUnixNano", "end_time_unix_nano", &e) && JsonUint64(e, &t)) b.SetEnd(t);
    if (Field(span, "attributes", "", &e)) {
      simdjson::dom::array arr;
      if (e.get_array().get(arr) != simdjson::SUCCESS) return BadJson("span attributes");
      bool open = true;
      for (element kv : arr) {
        if (!open) {
          ++out_->counters.attributes_over_limit;
          continue;
        }
        std::string_view key;
        if (kv["key"].get_string().get(key) != simdjson::SUCCESS) continue;
        AttrValue v;
        element value;
        if (ClassifySpanAttribute(key) != AttrSlot::kNone && Field(kv, "value", "", &value))
          v = JsonAnyValue(value);
        open = b.OnAttribute(key, v);
      }
    }
    SpanRecord rec;
    if (b.Finish(service, &rec)) out_->spans.push_back(std::move(rec));
    return base::OkStatus();
  }

  const DecodeLimits& limits_;
  const RequestIdHasher& hasher_;
  DecodeResult* out_;
  std::string trace_id_;  // raw bytes of the current span's trace id
};

}  // namespace

base::StatusOr<DecodeResult> DecodeTracesProto(std::string_view body, const DecodeLimits& limits,
                                               const RequestIdHasher& hasher) {
  if (body.size() > limits.max_body_bytes)
    return base::InvalidArgumentError("OTLP body larger than " +
                                      std::to_string(limits.max_body_bytes) + " bytes");
  DecodeResult result;
  ProtoDecoder decoder(limits, hasher, &result);
  RETURN_IF_ERROR(decoder.Request(body));
  return result;
}

base::StatusOr<DecodeResult> DecodeTracesJson(std::string_view body, const DecodeLimits& limits,
                                              const RequestIdHasher& hasher) {
  if (body.size() > limits.max_body_bytes)
    return base::InvalidArgumentError("OTLP body larger than " +
                                      std::to_string(limits.max_body_bytes) + " bytes");
  // The parsed document lives only for this call; strings that are not allowlisted are never
  // looked up in it, let alone copied out.
  simdjson::dom::parser parser(limits.max_body_bytes);
  simdjson::padded_string padded(body);
  element root;
  if (auto err = parser.parse(padded).get(root); err != simdjson::SUCCESS)
    return base::DataLossError(std::string("malformed OTLP JSON: ") + simdjson::error_message(err));
  DecodeResult result;
  JsonDecoder decoder(limits, hasher, &result);
  RETURN_IF_ERROR(decoder.Request(root));
  return result;
}

base::StatusOr<std::string> Gunzip(std::string_view body, size_t max_bytes) {
  z_stream zs{};
  // 15 window bits + 32: accept both gzip and zlib headers.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return base::InternalError("inflateInit2 failed");
  std::string out;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  zs.avail_in = static_cast<uInt>(body.size());
  if (body.size() > std::numeric_limits<uInt>::max()) {
    inflateEnd(&zs);
    return base::InvalidArgumentError("compressed body too large");
  }
  char chunk[16384];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof(chunk);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return base::DataLossError("corrupt gzip body");
    }
    size_t produced = sizeof(chunk) - zs.avail_out;
    if (out.size() + produced > max_bytes) {
      inflateEnd(&zs);
      return base::InvalidArgumentError("decompressed OTLP body larger than " +
                                        std::to_string(max_bytes) + " bytes");
    }
    out.append(chunk, produced);
    if (rc == Z_OK && produced == 0 && zs.avail_in == 0) {
      inflateEnd(&zs);
      return base::DataLossError("truncated gzip body");
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace inferscope::telemetry::otlp
