// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The agent's one HTTP listener on loopback: the JSON API (/api/v1/...), Prometheus /metrics, the
// OTLP/HTTP span receiver (/v1/traces), MCP and the dashboard are routes of it. Boost.Beast parses
// HTTP; this wrapper keeps it out of every other header and owns what decides whether the
// listener survives its clients (docs/agent.md, "HTTP listener"): reads and writes are
// asynchronous on one I/O thread, so a slow or idle client holds a connection slot and never a
// worker; every request has a deadline; headers, bodies and connections are capped, and at the
// connection cap the oldest connection still waiting for its request is closed first.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/base/status.h"

namespace inferscope::server {

struct HttpRequest {
  std::string method;                              // "GET", "POST"
  std::string path;                                // percent-decoded
  std::multimap<std::string, std::string> params;  // query string, decoded
  std::string content_type;
  std::string content_encoding;
  std::string body;
  // Request headers, names lower-cased (HTTP header names are case-insensitive).
  std::multimap<std::string, std::string> headers;
  int local_port = 0;  // the listener's port

  // The first value of query parameter `name`, or nullptr.
  const std::string* Param(const std::string& name) const;
  // The first value of header `lower_case_name`, or nullptr.
  const std::string* Header(const std::string& lower_case_name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Non-empty: the body is this file's bytes, sent a piece at a time (a capture's trace, hundreds
  // of MB the server must not hold in memory); `body` is then ignored. An unreadable file is a 500.
  std::string body_file;
  // Answer with "Connection: close": the client opens a new connection for its next request
  // instead of reusing one the server may close as it arrives (OTLP exporters).
  bool close_connection = false;
  // More headers to send (Location, Set-Cookie).
  std::vector<std::pair<std::string, std::string>> headers;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;
// Runs before every request's route (known path or not), once its headers are in and before its
// body is read: nullopt lets it through, an answer refuses it (AccessControl::Check). It runs on
// the I/O thread and must be quick.
using HttpGate = std::function<std::optional<HttpResponse>(const HttpRequest&)>;

// What bounds the listener. The defaults hold against a local user who opens connections and
// sends nothing, or a byte at a time (tests/live/http_slow_clients.py).
struct HttpServerOptions {
  size_t worker_threads = 4;            // run the handlers; the I/O thread never waits for one
  size_t max_body_bytes = 16u << 20;    // 413 beyond
  size_t max_header_bytes = 16u << 10;  // request line and headers together; 431 beyond
  size_t max_header_count = 100;        // 431 beyond
  size_t max_connections = 128;         // open at once; the oldest waiting one goes first
  // A connection has this long, from its accept or the end of its previous answer, to send a
  // whole request (headers and body); then it is closed. Idle keep-alive connections end so too.
  std::chrono::milliseconds request_deadline{10'000};
  // To write an answer: this plus a second per MiB of body.
  std::chrono::milliseconds write_deadline{30'000};
};

// Routes are exact paths, registered before Start. Handlers run on the server's worker threads
// and must be thread-safe; an exception escaping one becomes a 500 with a JSON error, never a
// crash. Every error answer has a JSON body (`{"error": ...}`); a known path asked with another
// method gets 405 and `Allow`.
class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options = {});
  HttpServer(size_t worker_threads, size_t max_body_bytes);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Set before Start: every request passes it first.
  void SetGate(HttpGate gate) { gate_ = std::move(gate); }

  void Get(const std::string& path, HttpHandler handler);
  void Post(const std::string& path, HttpHandler handler);

  // Binds host:port (port 0 = any free port) and starts serving. When `port` is taken and
  // `fall_back_to_any_port`, binds a free port instead. Returns the bound port.
  base::StatusOr<int> Start(const std::string& host, int port, bool fall_back_to_any_port);
  // Stops accepting, closes the connections waiting for a request, lets the requests in flight
  // finish (within the write deadline), joins the threads. Idempotent.
  void Stop();

  int port() const { return port_; }
  // Every registered (method, path), by path then method: what the /api/v1 index lists.
  std::vector<std::pair<std::string, std::string>> Routes() const;

  // What the listener did to protect itself since Start (tests, and a line at Stop).
  struct Counters {
    uint64_t connections = 0;        // accepted
    uint64_t evicted = 0;            // closed at the cap, waiting for their request
    uint64_t refused = 0;            // closed at the cap, nothing to evict
    uint64_t deadline_exceeded = 0;  // closed: the request did not arrive in time
    uint64_t too_large = 0;          // 413 / 431
  };
  Counters counters() const;

 private:
  class Impl;
  // The methods registered for `path`, "GET, POST"; empty when the path is unknown.
  std::string AllowedMethods(const std::string& path) const;

  HttpServerOptions options_;
  std::unique_ptr<Impl> impl_;
  int port_ = -1;
  // path -> method -> handler; fixed at Start, so the I/O thread reads it without a lock.
  std::map<std::string, std::map<std::string, HttpHandler>> routes_;
  HttpGate gate_;
};

// `{"error": "<message>"}` with `status`.
HttpResponse JsonError(int status, const std::string& message);

// The HTTP status of an error of the error model (src/base/status.h): 400 bad input, 404 not
// found, 409 already owned by someone else, 503 unavailable right now, 500 otherwise.
int HttpStatusFor(const base::Status& status);
// JsonError(HttpStatusFor(status), status.message()).
HttpResponse JsonError(const base::Status& status);

namespace http_internal {
// Splits a request target ("/p%20q?a=1&b=x+y") into its percent-decoded path and query
// parameters ('+' is a space in the query); false when it is not an origin-form target (does not
// start with '/'). Malformed escapes are kept as they are.
bool ParseTarget(std::string_view target, std::string* path,
                 std::multimap<std::string, std::string>* params);
// One request's bytes through the server's parser and limits (the fuzzer's entry): 200 and `out`
// filled when they hold a whole request, 0 when more bytes are needed, else the status the server
// refuses them with (400, 413, 431).
int ParseRequest(std::string_view bytes, const HttpServerOptions& options, HttpRequest* out);
}  // namespace http_internal

}  // namespace inferscope::server
