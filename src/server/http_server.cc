// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "src/base/json_writer.h"

namespace inferscope::server {
namespace {

// What an error cpp-httplib answers by itself means, for its JSON body.
std::string ErrorText(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 413:
      return "request body too large";
    case 414:
      return "request URI too long";
    case 416:
      return "range not satisfiable";
    default:
      return "HTTP error " + std::to_string(status);
  }
}

}  // namespace

const std::string* HttpRequest::Param(const std::string& name) const {
  auto it = params.find(name);
  return it == params.end() ? nullptr : &it->second;
}

const std::string* HttpRequest::Header(const std::string& lower_case_name) const {
  auto it = headers.find(lower_case_name);
  return it == headers.end() ? nullptr : &it->second;
}

HttpResponse JsonError(int status, const std::string& message) {
  base::JsonWriter w;
  w.BeginObject();
  w.Key("error").String(message);
  w.EndObject();
  HttpResponse r;
  r.status = status;
  r.body = w.str() + "\n";
  return r;
}

int HttpStatusFor(const base::Status& status) {
  switch (status.code()) {
    case base::StatusCode::kInvalidArgument:
    case base::StatusCode::kUnsupported:
      return 400;
    case base::StatusCode::kNotFound:
      return 404;
    case base::StatusCode::kAlreadyExists:
      return 409;
    case base::StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

HttpResponse JsonError(const base::Status& status) {
  return JsonError(HttpStatusFor(status), status.message());
}

HttpServer::HttpServer(size_t worker_threads, size_t max_body_bytes)
    : server_(std::make_unique<httplib::Server>()) {
  server_->new_task_queue = [worker_threads] { return new httplib::ThreadPool(worker_threads); };
  server_->set_payload_max_length(max_body_bytes);
  server_->set_read_timeout(5, 0);
  server_->set_write_timeout(5, 0);
  server_->set_keep_alive_max_count(100);
  // cpp-httplib's default also sets SO_REUSEPORT, which would let a second agent bind the same
  // port and silently share its connections: keep SO_REUSEADDR (fast restarts) only.
  server_->set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Get(const std::string& path, HttpHandler handler) {
  Route("GET", path, std::move(handler));
}
void HttpServer::Post(const std::string& path, HttpHandler handler) {
  Route("POST", path, std::move(handler));
}

std::vector<std::pair<std::string, std::string>> HttpServer::Routes() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [path, methods] : routes_)
    for (const std::string& method : methods) out.emplace_back(method, path);
  return out;
}

std::string HttpServer::AllowedMethods(const std::string& path) const {
  auto it = routes_.find(path);
  std::string out;
  if (it == routes_.end()) return out;
  for (const std::string& method : it->second) out += (out.empty() ? "" : ", ") + method;
  return out;
}

void HttpServer::Route(const std::string& method, const std::string& path, HttpHandler handler) {
  routes_[path].push_back(method);
  auto serve = [handler = std::move(handler), method](const httplib::Request& req,
                                                      httplib::Response& res) {
    HttpRequest request;
    request.method = method;
    request.path = req.path;
    for (const auto& [k, v] : req.params) request.params.emplace(k, v);
    request.content_type = req.get_header_value("Content-Type");
    request.content_encoding = req.get_header_value("Content-Encoding");
    request.body = req.body;
    for (const auto& [k, v] : req.headers) {
      std::string name = k;
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      request.headers.emplace(std::move(name), v);
    }
    HttpResponse response;
    try {
      response = handler(request);
    } catch (const std::exception& e) {
      response = JsonError(500, std::string("internal error: ") + e.what());
    } catch (...) {
      response = JsonError(500, "internal error");
    }
    res.status = response.status;
    // A browser (it sends Sec-Fetch-Mode; the dashboard, /ui/) keeps up to six idle keep-alive
    // connections per host, and each idle one holds one of the few worker threads until the
    // keep-alive timeout (5 s): the page's next requests would queue behind them for seconds.
    // Closing after each answer costs a loopback handshake.
    if (response.close_connection || req.has_header("Sec-Fetch-Mode"))
      res.set_header("Connection", "close");
    if (!response.body_file.empty()) {
      // Streamed: the open stream keeps the file readable even if it is replaced meanwhile.
      auto file = std::make_shared<std::ifstream>(response.body_file, std::ios::binary);
      std::error_code ec;
      const auto size = std::filesystem::file_size(response.body_file, ec);
      if (!*file || ec) {
        const HttpResponse error = JsonError(500, response.body_file + ": cannot read");
        res.status = error.status;
        res.set_content(error.body, error.content_type.c_str());
        return;
      }
      res.set_content_provider(static_cast<size_t>(size), response.content_type,
                               [file](size_t offset, size_t length, httplib::DataSink& sink) {
                                 std::vector<char> piece(std::min<size_t>(length, size_t{1} << 20));
                                 file->seekg(static_cast<std::streamoff>(offset));
                                 file->read(piece.data(),
                                            static_cast<std::streamsize>(piece.size()));
                                 const auto n = static_cast<size_t>(file->gcount());
                                 return n > 0 && sink.write(piece.data(), n);
                               });
      return;
    }
    res.set_content(std::move(response.body), response.content_type.c_str());
  };
  // Exact paths only: escape what std::regex would read as syntax (routes are plain paths).
  std::string pattern;
  for (char c : path) {
    if (std::string_view(".+*?^$()[]{}|\\").find(c) != std::string_view::npos) pattern += '\\';
    pattern += c;
  }
  if (method == "GET")
    server_->Get(pattern, serve);
  else
    server_->Post(pattern, serve);
}

base::StatusOr<int> HttpServer::Start(const std::string& host, int port,
                                      bool fall_back_to_any_port) {
  if (thread_.joinable()) return base::InternalError("HTTP server already started");
  // Errors cpp-httplib answers itself (no route, body too large, a malformed request) come with
  // an empty body: give them the JSON every other error has. A path that exists under another
  // method is 405, not 404 (routes are fixed by now: reading them needs no lock).
  server_->set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    HttpResponse r;
    const std::string allowed = res.status == 404 ? AllowedMethods(req.path) : "";
    if (!allowed.empty()) {
      res.status = 405;
      res.set_header("Allow", allowed);
      r = JsonError(405, req.method + " is not allowed on " + req.path + "; use " + allowed);
    } else if (res.status == 404) {
      r = JsonError(404, "no such endpoint: " + req.path + " (see /api/v1)");
    } else {
      r = JsonError(res.status, ErrorText(res.status));
    }
    res.set_content(r.body, r.content_type.c_str());
  });
  int bound = -1;
  if (port == 0) {
    bound = server_->bind_to_any_port(host);
  } else if (server_->bind_to_port(host, port)) {
    bound = port;
  } else if (fall_back_to_any_port) {
    bound = server_->bind_to_any_port(host);
  }
  if (bound <= 0)
    return base::UnavailableError("cannot listen on " + host + ":" + std::to_string(port) +
                                  " (address in use or not permitted)");
  port_ = bound;
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // Stop() is a no-op until the loop runs (cpp-httplib): wait for it so a quick Stop() works.
  for (int i = 0; i < 2000 && !server_->is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return bound;
}

void HttpServer::Stop() {
  if (!thread_.joinable()) return;
  server_->stop();
  thread_.join();
}

}  // namespace inferscope::server
