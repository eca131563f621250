// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The agent's one HTTP listener on loopback: the JSON API (/api/v1/...), Prometheus /metrics and
// the OTLP/HTTP span receiver (/v1/traces) are routes of it. cpp-httplib does the protocol; this
// wrapper keeps it out of every other header, gives it a small fixed thread pool and a stop path.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "src/base/status.h"

namespace httplib {
class Server;
}

namespace inferscope::server {

struct HttpRequest {
  std::string method;  // "GET", "POST"
  std::string path;
  std::multimap<std::string, std::string> params;  // query string, decoded
  std::string content_type;
  std::string content_encoding;
  std::string body;
  // Request headers, names lower-cased (HTTP header names are case-insensitive).
  std::multimap<std::string, std::string> headers;

  // The first value of query parameter `name`, or nullptr.
  const std::string* Param(const std::string& name) const;
  // The first value of header `lower_case_name`, or nullptr.
  const std::string* Header(const std::string& lower_case_name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Non-empty: the body is this file's bytes, read and sent a piece at a time (a capture's trace,
  // hundreds of MB the server must not hold in memory); `body` is then ignored. An unreadable file
  // is a 500.
  std::string body_file;
  // Answer with "Connection: close": the client opens a new connection for its next request
  // instead of reusing one the server may close as it arrives (below).
  bool close_connection = false;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// Routes are exact paths, registered before Start. Handlers run on the server's worker threads
// (2 by default) and must be thread-safe; an exception escaping one becomes a 500 with a JSON
// error, never a crash. Request bodies above `max_body_bytes` get 413. Every error answer has a
// JSON body (`{"error": ...}`); a known path asked with another method gets 405 and `Allow`.
class HttpServer {
 public:
  explicit HttpServer(size_t worker_threads = 2, size_t max_body_bytes = 16u << 20);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void Get(const std::string& path, HttpHandler handler);
  void Post(const std::string& path, HttpHandler handler);

  // Binds host:port (port 0 = any free port) and starts serving. When `port` is taken and
  // `fall_back_to_any_port`, binds a free port instead. Returns the bound port.
  base::StatusOr<int> Start(const std::string& host, int port, bool fall_back_to_any_port);
  // Stops accepting, finishes the requests in flight, joins the threads. Idempotent.
  void Stop();

  int port() const { return port_; }
  // Every registered (method, path), by path then method: what the /api/v1 index lists.
  std::vector<std::pair<std::string, std::string>> Routes() const;

 private:
  void Route(const std::string& method, const std::string& path, HttpHandler handler);
  // The methods registered for `path`, "GET, POST"; empty when the path is unknown.
  std::string AllowedMethods(const std::string& path) const;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = -1;
  std::map<std::string, std::vector<std::string>> routes_;  // path -> methods; fixed at Start
};

// `{"error": "<message>"}` with `status`.
HttpResponse JsonError(int status, const std::string& message);

// The HTTP status of an error of the error model (src/base/status.h): 400 bad input, 404 not
// found, 409 already owned by someone else, 503 unavailable right now, 500 otherwise.
int HttpStatusFor(const base::Status& status);
// JsonError(HttpStatusFor(status), status.message()).
HttpResponse JsonError(const base::Status& status);

}  // namespace inferscope::server
