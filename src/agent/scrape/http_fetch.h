// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Plain-HTTP GET of a metrics endpoint with cpp-httplib: bounded time and body size, the
// Prometheus text Accept header. No redirects, no TLS.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace inferscope::agent::scrape {

// Where to fetch: host (a name, IPv4 or IPv6 literal without brackets), port, path.
struct HttpTarget {
  std::string host;
  uint16_t port = 80;
  std::string path = "/metrics";

  std::string ToUrl() const;  // "http://127.0.0.1:8000/metrics", "http://[::1]:8000/metrics"
  bool operator==(const HttpTarget&) const = default;
};

// Parses `http://host[:port][/path]` (the --metrics-url flag). The path defaults to /metrics.
// https, user info and other schemes are refused with a message saying what to do instead.
base::StatusOr<HttpTarget> ParseMetricsUrl(std::string_view url);

struct FetchOptions {
  int64_t connect_timeout_ms = 2000;
  int64_t read_timeout_ms = 2000;
  size_t max_body_bytes = 16u << 20;
};

struct FetchResult {
  int status = 0;          // HTTP status
  std::string body;        // at most max_body_bytes
  bool truncated = false;  // the body was longer
  std::string content_type;
};

// GET target. An HTTP error status is a result (status != 200), not an error. Failing to
// connect is an Unavailable error, a peer that connected but did not answer HTTP a DataLoss
// error; both messages name the URL and the cause.
base::StatusOr<FetchResult> HttpGet(const HttpTarget& target, const FetchOptions& options);

}  // namespace inferscope::agent::scrape
