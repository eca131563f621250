// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The one plain-HTTP client of the tool (cpp-httplib underneath): the engine metrics scraper,
// `inferscope status` asking the agent's API and `inferscope run` asking an agent to stay all
// parse their URLs and send their requests here. Bounded time and body size; no redirects. TLS
// (OpenSSL, through cpp-httplib's SSLClient) for targets that ask for it (the ClickHouse sink's
// `clickhouses://`); ParseHttpUrl itself takes http:// only.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace inferscope::net {

// Where to send a request: host (a name, IPv4 or IPv6 literal without brackets), port, path (with
// any query).
struct HttpTarget {
  std::string host;
  uint16_t port = 80;
  std::string path = "/";

  std::string ToUrl() const;  // "http://127.0.0.1:8000/metrics", "http://[::1]:8000/metrics"
  bool operator==(const HttpTarget&) const = default;
};

// Parses `http://host[:port][/path]`; a URL without a path gets `default_path`. Errors start with
// `what` and the URL ("metrics URL http://...: bad port"); https, user info and other schemes are
// refused.
base::StatusOr<HttpTarget> ParseHttpUrl(std::string_view url, std::string_view what,
                                        std::string_view default_path = "/");

struct FetchOptions {
  int64_t connect_timeout_ms = 2000;
  int64_t read_timeout_ms = 2000;  // also bounds writing the request
  size_t max_body_bytes = 16u << 20;
  std::string accept;  // the Accept header; empty: cpp-httplib's default
  // HTTP basic authentication (the ClickHouse sink's credentials file); empty user: none.
  std::string basic_auth_user, basic_auth_password;
  // Non-empty: `Authorization: Bearer <it>` (the agent's access token, base::ReadAccessToken).
  std::string bearer_token;
  // HTTPS to the target: the server's certificate is verified against `ca_file` (PEM; empty: the
  // system's CA store) and its name or IP against the target's host, unless `tls_skip_verify`
  // (encryption without authentication: test servers with a self-signed certificate).
  bool tls = false;
  std::string ca_file;
  bool tls_skip_verify = false;
};

struct FetchResult {
  int status = 0;          // HTTP status
  std::string body;        // at most max_body_bytes
  bool truncated = false;  // the body was longer
  std::string content_type;
};

// GET (or POST with an empty body) target. An HTTP error status is a result (status != 200), not
// an error. Failing to connect is an Unavailable error, a peer that connected but did not answer
// HTTP a DataLoss error; both messages name the URL and the cause.
base::StatusOr<FetchResult> HttpGet(const HttpTarget& target, const FetchOptions& options);
base::StatusOr<FetchResult> HttpPost(const HttpTarget& target, const FetchOptions& options);
// POST with a body (the ClickHouse sink's inserts and queries); same results and errors.
base::StatusOr<FetchResult> HttpPostBody(const HttpTarget& target, const FetchOptions& options,
                                         std::string_view body, std::string_view content_type);

}  // namespace inferscope::net
