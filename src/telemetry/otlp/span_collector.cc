// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/otlp/span_collector.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "src/base/json_writer.h"

namespace inferscope::telemetry::otlp {
namespace {

constexpr std::string_view kProtoType = "application/x-protobuf";
constexpr std::string_view kJsonType = "application/json";

// The media type without parameters, lowercased and trimmed.
std::string MediaType(std::string_view header) {
  header = header.substr(0, header.find(';'));
  std::string out;
  for (char c : header) {
    if (c != ' ' && c != '\t')
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutBytesField(std::string* out, uint32_t field, std::string_view bytes) {
  PutVarint(out, (uint64_t{field} << 3) | 2);
  PutVarint(out, bytes.size());
  out->append(bytes);
}

// google.rpc.Status {1: code, 2: message}: the OTLP/HTTP error body.
OtlpHttpResult ErrorResult(int http_status, int rpc_code, bool json, std::string_view message) {
  OtlpHttpResult r;
  r.status = http_status;
  if (json) {
    base::JsonWriter w;
    w.BeginObject();
    w.Key("code").Int(rpc_code);
    w.Key("message").String(message);
    w.EndObject();
    r.content_type = std::string(kJsonType);
    r.body = w.str();
  } else {
    PutVarint(&r.body, (1 << 3) | 0);
    PutVarint(&r.body, static_cast<uint64_t>(rpc_code));
    PutBytesField(&r.body, 2, message);
    r.content_type = std::string(kProtoType);
  }
  return r;
}

// ExportTraceServiceResponse, with partial_success {1: rejected_spans, 2: error_message} when
// the decoder had to drop spans.
OtlpHttpResult SuccessResult(bool json, uint64_t rejected, std::string_view why) {
  OtlpHttpResult r;
  r.status = 200;
  r.content_type = std::string(json ? kJsonType : kProtoType);
  if (json) {
    base::JsonWriter w;
    w.BeginObject();
    if (rejected > 0) {
      w.Key("partialSuccess").BeginObject();
      w.Key("rejectedSpans").String(std::to_string(rejected));  // int64 is a string in OTLP/JSON
      w.Key("errorMessage").String(why);
      w.EndObject();
    }
    w.EndObject();
    r.body = w.str();
  } else if (rejected > 0) {
    std::string partial;
    PutVarint(&partial, (1 << 3) | 0);
    PutVarint(&partial, rejected);
    PutBytesField(&partial, 2, why);
    PutBytesField(&r.body, 1, partial);
  }
  return r;
}

constexpr int kRpcInvalidArgument = 3;
constexpr int kRpcResourceExhausted = 8;
constexpr int kRpcUnavailable = 14;

}  // namespace

SpanCollector::SpanCollector(SpanCollectorOptions options)
    : options_(std::move(options)), hasher_() {}

SpanCollector::SpanCollector(SpanCollectorOptions options, RequestIdHasher hasher)
    : options_(std::move(options)), hasher_(hasher) {}

void SpanCollector::Reject(std::string reason) {
  std::lock_guard<std::mutex> lock(mu_);
  ++since_take_.requests_rejected;
  ++totals_.requests_rejected;
  last_rejection_ = std::move(reason);
}

void SpanCollector::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
}

bool SpanCollector::Accept(DecodeResult result) {
  SpanCounters c;
  c.requests_accepted = 1;
  c.spans_received = result.counters.spans_received;
  c.dropped_over_limit = result.counters.spans_over_limit;
  c.dropped_bad_timestamps = result.counters.spans_bad_timestamps;
  c.attributes_over_limit = result.counters.attributes_over_limit;
  c.bad_attribute_values = result.counters.bad_attribute_values;
  c.spans_decoded = result.spans.size();
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return false;
  for (SpanRecord& span : result.spans) {
    switch (span.role) {
      case SpanRole::kRequest:
        ++c.request_spans;
        break;
      case SpanRole::kStage:
        ++c.stage_spans;
        break;
      case SpanRole::kOther:
        ++c.other_spans;
        continue;  // nothing to summarize: not buffered
    }
    if (pending_.size() >= options_.max_pending_spans) {
      ++c.dropped_buffer_full;
      continue;
    }
    pending_.push_back(std::move(span));
  }
  since_take_.Merge(c);
  totals_.Merge(c);
  last_rejection_.clear();
  return true;
}

std::string_view EncodingLeftToDecode(std::string_view content_encoding, std::string_view body) {
  const bool gzip_magic = body.size() >= 2 && static_cast<unsigned char>(body[0]) == 0x1f &&
                          static_cast<unsigned char>(body[1]) == 0x8b;
  if (content_encoding == "gzip" && !gzip_magic) return {};
  return content_encoding;
}

OtlpHttpResult SpanCollector::HandleTraces(std::string_view content_type,
                                           std::string_view content_encoding,
                                           std::string_view body) {
  std::string type = MediaType(content_type);
  bool json = type == kJsonType;
  auto unavailable = [&] {
    return ErrorResult(503, kRpcUnavailable, json, "the agent is shutting down: retry later");
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return unavailable();
  }
  if (!json && type != kProtoType && type != "application/protobuf") {
    Reject("unsupported Content-Type '" + type.substr(0, 64) + "'");
    return ErrorResult(415, kRpcInvalidArgument, false,
                       "unsupported content type: use application/x-protobuf or application/json");
  }
  std::string encoding = MediaType(content_encoding);
  if (!encoding.empty() && encoding != "identity" && encoding != "gzip") {
    Reject("unsupported Content-Encoding '" + encoding.substr(0, 32) + "'");
    return ErrorResult(415, kRpcInvalidArgument, json, "unsupported content encoding: use gzip");
  }
  if (body.size() > options_.limits.max_body_bytes) {
    Reject("export larger than " + std::to_string(options_.limits.max_body_bytes) + " bytes");
    return ErrorResult(413, kRpcResourceExhausted, json, "request body too large");
  }
  std::string inflated;
  if (encoding == "gzip") {
    auto out = Gunzip(body, options_.limits.max_body_bytes);
    if (!out.ok()) {
      bool too_large = out.status().code() == base::StatusCode::kInvalidArgument;
      Reject(out.status().message());
      return ErrorResult(too_large ? 413 : 400,
                         too_large ? kRpcResourceExhausted : kRpcInvalidArgument, json,
                         out.status().message());
    }
    inflated = std::move(out).value();
    body = inflated;
  }
  auto decoded = json ? DecodeTracesJson(body, options_.limits, hasher_)
                      : DecodeTracesProto(body, options_.limits, hasher_);
  if (!decoded.ok()) {
    bool too_large = decoded.status().code() == base::StatusCode::kInvalidArgument;
    Reject(decoded.status().message());
    return ErrorResult(too_large ? 413 : 400,
                       too_large ? kRpcResourceExhausted : kRpcInvalidArgument, json,
                       decoded.status().message());
  }
  uint64_t rejected = decoded->counters.spans_over_limit + decoded->counters.spans_bad_timestamps;
  std::string why;
  if (decoded->counters.spans_over_limit > 0)
    why = "more than " + std::to_string(options_.limits.max_spans_per_request) +
          " spans in one export";
  else if (rejected > 0)
    why = "spans with missing or reversed timestamps";
  if (!Accept(std::move(decoded).value())) return unavailable();
  return SuccessResult(json, rejected, why);
}

SpanWindow SpanCollector::TakeWindow(uint64_t start_ns, uint64_t end_ns) {
  SpanWindow window;
  window.start_unix_ns = start_ns;
  window.end_unix_ns = end_ns;
  window.max_exemplars = options_.max_exemplars;
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t future_limit =
      end_ns > UINT64_MAX - options_.max_future_ns ? UINT64_MAX : end_ns + options_.max_future_ns;
  uint64_t late = 0, future = 0;
  auto keep = std::remove_if(pending_.begin(), pending_.end(), [&](const SpanRecord& s) {
    if (s.end_unix_ns >= start_ns && s.end_unix_ns < end_ns) {
      window.Add(s);
      return true;
    }
    if (s.end_unix_ns < start_ns) {
      ++late;
      return true;
    }
    if (s.end_unix_ns >= future_limit) {
      ++future;
      return true;
    }
    return false;
  });
  pending_.erase(keep, pending_.end());
  since_take_.dropped_late += late;
  since_take_.dropped_future += future;
  totals_.dropped_late += late;
  totals_.dropped_future += future;
  window.counters = since_take_;
  since_take_ = {};
  return window;
}

CollectorHealth SpanCollector::health() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!last_rejection_.empty()) return {false, "last OTLP export rejected: " + last_rejection_};
  if (totals_.requests_accepted == 0)
    return {false,
            "no OTLP export received yet: start the engine with tracing pointed at this agent "
            "(inferscope run --enable-otel, docs/request-spans.md)"};
  if (totals_.request_spans == 0 && totals_.stage_spans == 0)
    return {false,
            "receiving spans, but none is an engine request span (unknown span names "
            "and no gen_ai.latency.* attributes; docs/request-spans.md)"};
  if (totals_.dropped_buffer_full > 0 && since_take_.dropped_buffer_full > 0)
    return {false, "span buffer full: windows are not being taken (agent stalled?)"};
  std::string message = "ok: " + std::to_string(totals_.request_spans) + " request spans received";
  // Receiving works, but the figures undercount: say so where people look first.
  if (const uint64_t dropped = DroppedSpans(totals_); dropped > 0)
    message += ", " + std::to_string(dropped) + " dropped (reasons: inferscope report, agent log)";
  return {true, message};
}

SpanCounters SpanCollector::totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return totals_;
}

size_t SpanCollector::pending_spans() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

}  // namespace inferscope::telemetry::otlp
