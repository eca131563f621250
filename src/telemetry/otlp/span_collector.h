// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The OTLP/HTTP trace receiver's logic, independent of any HTTP server: HandleTraces() turns one
// POST /v1/traces into an HTTP status and body, and the decoded spans wait in a bounded buffer
// until the agent takes the window they ended in.

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "src/telemetry/otlp/otlp_decode.h"
#include "src/telemetry/otlp/span_window.h"

namespace inferscope::telemetry::otlp {

// What to answer an OTLP/HTTP export with (OTLP/HTTP spec: 200 with an
// ExportTraceServiceResponse in the request's encoding, 400/413/415 with a google.rpc.Status).
struct OtlpHttpResult {
  int status = 200;
  std::string content_type;  // "application/x-protobuf" or "application/json"
  std::string body;
};

struct SpanCollectorOptions {
  DecodeLimits limits;
  size_t max_pending_spans = 200000;  // decoded spans waiting for their window (~40 MB worst case)
  size_t max_exemplars = SpanWindow::kDefaultExemplars;
  // Spans ending this far after the window being taken are discarded as clock garbage.
  uint64_t max_future_ns = 3600ull * 1000 * 1000 * 1000;
};

// Whether the receiver works, and if not, what the user should do about it.
struct CollectorHealth {
  bool ok = false;
  std::string message;  // one line
};

// The Content-Encoding still to undo after an HTTP server that may have inflated a gzip body
// already: Debian's cpp-httplib (built with zlib) does, keeping the header. "gzip" only while the
// body still starts with the gzip magic, else "" (identity); other encodings pass through.
std::string_view EncodingLeftToDecode(std::string_view content_encoding, std::string_view body);

// Thread-safe: HandleTraces may run on any number of HTTP threads while the agent's thread calls
// TakeWindow. Decoding happens outside the lock. Never throws; bad input only moves counters.
class SpanCollector {
 public:
  explicit SpanCollector(SpanCollectorOptions options = {});
  SpanCollector(SpanCollectorOptions options, RequestIdHasher hasher);  // fixed hash key (tests)

  // One OTLP/HTTP export. `content_type` and `content_encoding` are the request's header values
  // (parameters such as "; charset=utf-8" are ignored; encoding "" or "identity" or "gzip").
  OtlpHttpResult HandleTraces(std::string_view content_type, std::string_view content_encoding,
                              std::string_view body);

  // Summarizes the buffered spans that ended in [start_ns, end_ns) and forgets them. Spans that
  // ended before start_ns can no longer be placed (their window was taken) and are counted as
  // late. Receive-side counters accumulated since the previous call are attached to this window.
  SpanWindow TakeWindow(uint64_t start_ns, uint64_t end_ns);

  // Refuses every later export with 503 (OTLP: retryable, so the SDK keeps the batch and tries
  // again) instead of accepting spans no window will take: the agent calls it before it takes its
  // last windows at shutdown. An export decoding while Close runs is refused too.
  void Close();

  const SpanCollectorOptions& options() const { return options_; }
  CollectorHealth health() const;
  // Counters since construction (for the agent's /metrics).
  SpanCounters totals() const;
  size_t pending_spans() const;

 private:
  bool Accept(DecodeResult result);  // false: closed, nothing kept
  void Reject(std::string reason);

  const SpanCollectorOptions options_;
  const RequestIdHasher hasher_;

  mutable std::mutex mu_;
  std::vector<SpanRecord> pending_;  // guarded by mu_
  SpanCounters since_take_;          // guarded by mu_
  SpanCounters totals_;              // guarded by mu_
  std::string last_rejection_;       // guarded by mu_; "" after a later accepted export
  bool closed_ = false;              // guarded by mu_
};

}  // namespace inferscope::telemetry::otlp
