// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/server/http_server.h"

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/file_posix.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <exception>
#include <future>
#include <list>
#include <mutex>
#include <thread>

#include "src/base/json_writer.h"

namespace inferscope::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

// Pipelined bytes beyond one request's headers that a connection's read buffer may hold.
constexpr size_t kReadBufferSlack = 64u << 10;
// accept() failing for want of file descriptors: try again after this, rather than spin.
constexpr std::chrono::milliseconds kAcceptRetry{100};
// How long a closing connection may go on sending what we no longer read.
constexpr std::chrono::milliseconds kLinger{1000};
// An answer not written after this is stuck on a client that does not read: evictable at the cap.
constexpr std::chrono::milliseconds kStuckWrite{1000};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%' && i + 2 < s.size()) {
      const int hi = HexValue(s[i + 1]), lo = HexValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += plus_is_space && c == '+' ? ' ' : c;
  }
  return out;
}

// The request's method, target, headers (names lower-cased) and content headers, once its header
// is parsed. 0, or the status to refuse it with: 431 too many headers, 400 a bad target.
int FillRequest(const http::request<http::string_body>& req, size_t max_header_count,
                HttpRequest* out);

}  // namespace

namespace http_internal {

bool ParseTarget(std::string_view target, std::string* path,
                 std::multimap<std::string, std::string>* params) {
  if (target.empty() || target[0] != '/') return false;
  const size_t question = target.find('?');
  *path = Decode(target.substr(0, question), /*plus_is_space=*/false);
  if (question == std::string_view::npos) return true;
  std::string_view query = target.substr(question + 1);
  const size_t hash = query.find('#');
  if (hash != std::string_view::npos) query = query.substr(0, hash);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (!pair.empty()) {
      const size_t eq = pair.find('=');
      params->emplace(Decode(pair.substr(0, eq), true),
                      eq == std::string_view::npos ? "" : Decode(pair.substr(eq + 1), true));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return true;
}

int ParseRequest(std::string_view bytes, const HttpServerOptions& options, HttpRequest* out) {
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<uint32_t>(options.max_header_bytes));
  parser.body_limit(options.max_body_bytes);
  parser.eager(true);
  error_code ec;
  size_t used = 0;
  bool filled = false;
  while (used < bytes.size() && !parser.is_done()) {
    used += parser.put(asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    if (ec == http::error::need_more) return 0;
    if (ec == http::error::body_limit) return 413;
    if (ec == http::error::header_limit) return 431;
    if (ec) return 400;
    if (parser.is_header_done() && !filled) {
      filled = true;
      if (const int refused = FillRequest(parser.get(), options.max_header_count, out))
        return refused;
    }
  }
  if (!parser.is_done()) return 0;
  out->body = parser.get().body();
  return 200;
}

}  // namespace http_internal

namespace {

int FillRequest(const http::request<http::string_body>& req, size_t max_header_count,
                HttpRequest* out) {
  size_t fields = 0;
  for (auto it = req.begin(); it != req.end(); ++it) ++fields;
  if (fields > max_header_count) return 431;
  out->method = std::string(req.method_string());
  const std::string_view target(req.target().data(), req.target().size());
  if (!http_internal::ParseTarget(target, &out->path, &out->params)) return 400;
  for (const auto& field : req) {
    std::string name(field.name_string().data(), field.name_string().size());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out->headers.emplace(std::move(name), std::string(field.value().data(), field.value().size()));
  }
  if (const std::string* v = out->Header("content-type")) out->content_type = *v;
  if (const std::string* v = out->Header("content-encoding")) out->content_encoding = *v;
  return 0;
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

// The I/O side: the acceptor and every connection live on one thread (`io_`); handlers run on
// `pool_` and post their answers back. Nothing here blocks the I/O thread.
class HttpServer::Impl {
 public:
  struct Connection;

  explicit Impl(HttpServer* server)
      : server_(server), pool_(std::max<size_t>(1, server->options_.worker_threads)) {}

  void Accept();
  void OnAccept(const error_code& ec, tcp::socket socket);
  void CloseIfDrained();

  HttpServer* server_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  asio::thread_pool pool_;
  tcp::acceptor acceptor_{io_};
  asio::steady_timer accept_retry_{io_};
  std::thread thread_;
  std::list<std::shared_ptr<Connection>> connections_;  // the I/O thread's
  bool stopping_ = false;                               // the I/O thread's
  std::promise<void> drained_;
  bool drained_set_ = false;

  std::atomic<uint64_t> accepted_{0}, evicted_{0}, refused_{0}, deadline_exceeded_{0},
      too_large_{0};
};

struct HttpServer::Impl::Connection : std::enable_shared_from_this<Connection> {
  // kWaiting: for (the rest of) a request; kRunning: its handler runs; kWriting: its answer goes
  // out.
  enum class State { kWaiting, kRunning, kWriting, kClosed };

  Connection(Impl* owner, tcp::socket s)
      : impl(owner),
        options(owner->server_->options_),
        socket(std::move(s)),
        timer(owner->io_),
        buffer(options.max_header_bytes + kReadBufferSlack) {}

  const HttpServer& server() const { return *impl->server_; }

  // The deadline of what the connection does now; Disarm() (or a later Arm) voids it.
  void Arm(std::chrono::milliseconds after, bool is_read) {
    const uint64_t generation = ++timer_generation;
    timer.expires_after(after);
    timer.async_wait([self = shared_from_this(), generation, is_read](const error_code& ec) {
      if (ec || generation != self->timer_generation || self->state == State::kClosed) return;
      if (is_read) ++self->impl->deadline_exceeded_;
      self->Close();
    });
  }
  void Disarm() {
    ++timer_generation;
    timer.cancel();
  }

  void ReadRequest() {
    if (impl->stopping_) return Close();  // an answer finished after Stop began
    state = State::kWaiting;
    waiting_since = Clock::now();
    request = HttpRequest();
    parser.emplace();
    parser->header_limit(static_cast<uint32_t>(options.max_header_bytes));
    parser->body_limit(options.max_body_bytes);
    Arm(options.request_deadline, /*is_read=*/true);
    http::async_read_header(
        socket, buffer, *parser,
        [self = shared_from_this()](const error_code& ec, size_t) { self->OnHeader(ec); });
  }

  void OnReadError(const error_code& ec) {
    if (ec == http::error::body_limit) {
      ++impl->too_large_;
      return Answer(JsonError(413, "request body too large"), false);
    }
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      ++impl->too_large_;
      return Answer(JsonError(431, "request headers too large"), false);
    }
    const bool closed = ec == http::error::end_of_stream || ec == asio::error::eof ||
                        ec == asio::error::connection_reset ||
                        ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor;
    // Anything else is a malformed request (bad method, target, version or header): say so
    // once, then close (its framing cannot be trusted for a next request).
    if (!closed && ec.category() == http::make_error_code(http::error::bad_method).category())
      return Answer(JsonError(400, "bad request"), false);
    Close();
  }

  void OnHeader(const error_code& ec) {
    if (state == State::kClosed) return;
    if (ec) return OnReadError(ec);
    const auto& req = parser->get();
    if (const int refused = FillRequest(req, options.max_header_count, &request)) {
      if (refused == 431) {
        ++impl->too_large_;
        return Answer(JsonError(431, "too many request headers (at most " +
                                         std::to_string(options.max_header_count) + ")"),
                      false);
      }
      return Answer(JsonError(400, "bad request target"), false);
    }
    request.local_port = server().port_;
    const bool complete = parser->is_done();  // no body
    // Refused before its body is read: an unauthorized upload costs nothing but its headers. The
    // connection then closes (the unread body would be read as the next request).
    if (server().gate_) {
      if (std::optional<HttpResponse> refused = server().gate_(request))
        return Answer(std::move(*refused), complete && req.keep_alive());
    }
    auto path = server().routes_.find(request.path);
    if (path == server().routes_.end())
      return Answer(JsonError(404, "no such endpoint: " + request.path + " (see /api/v1)"),
                    complete && req.keep_alive());
    auto route = path->second.find(request.method);
    if (route == path->second.end()) {
      const std::string allowed = server().AllowedMethods(request.path);
      HttpResponse r = JsonError(
          405, request.method + " is not allowed on " + request.path + "; use " + allowed);
      r.headers.emplace_back("Allow", allowed);
      return Answer(std::move(r), complete && req.keep_alive());
    }
    handler = &route->second;
    if (complete) return Dispatch();
    auto expect = req.find(http::field::expect);
    if (expect != req.end() && beast::iequals(expect->value(), "100-continue")) {
      // curl waits a second for this before it sends a body of more than 1 MiB.
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      asio::async_write(socket, asio::buffer(kContinue.data(), kContinue.size()),
                        [self = shared_from_this()](const error_code& e, size_t) {
                          if (self->state == State::kClosed) return;
                          if (e) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(socket, buffer, *parser,
                     [self = shared_from_this()](const error_code& ec, size_t) {
                       if (self->state == State::kClosed) return;
                       if (ec) return self->OnReadError(ec);
                       self->request.body = std::move(self->parser->get().body());
                       self->Dispatch();
                     });
  }

  // The request is whole: its handler runs on a worker; the I/O thread goes on with the others.
  void Dispatch() {
    Disarm();
    state = State::kRunning;
    const bool keep_alive = parser->get().keep_alive();
    asio::post(impl->pool_, [self = shared_from_this(), keep_alive] {
      HttpResponse response;
      try {
        response = (*self->handler)(self->request);
      } catch (const std::exception& e) {
        response = JsonError(500, std::string("internal error: ") + e.what());
      } catch (...) {
        response = JsonError(500, "internal error");
      }
      asio::post(self->impl->io_, [self, keep_alive, response = std::move(response)]() mutable {
        self->Answer(std::move(response), keep_alive);
      });
    });
  }

  template <typename Body>
  void Prepare(http::response<Body>& res, const HttpResponse& response, bool keep_alive) {
    res.version(11);
    res.result(static_cast<unsigned>(response.status));
    res.set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) res.insert(name, value);
    res.keep_alive(keep_alive);
    res.prepare_payload();
  }

  template <typename Body>
  void Send(std::shared_ptr<http::response<Body>> res, size_t body_bytes, bool keep_alive) {
    state = State::kWriting;
    writing_since = Clock::now();
    Arm(options.write_deadline + std::chrono::seconds(body_bytes >> 20), /*is_read=*/false);
    http::async_write(socket, *res,
                      [self = shared_from_this(), res, keep_alive](const error_code& ec, size_t) {
                        self->Disarm();
                        if (self->state == State::kClosed) return;
                        if (ec) return self->Close();
                        if (!keep_alive) return self->Linger();
                        self->ReadRequest();
                      });
  }

  // After the last answer: end our side, then read and drop what the client still sends (the
  // rest of a body that was refused unread) until it closes, for a moment at most. Closing with
  // unread bytes would reset the connection, and the client could lose the answer.
  void Linger() {
    if (impl->stopping_) return Close();
    error_code ignored;
    socket.shutdown(tcp::socket::shutdown_send, ignored);
    state = State::kWaiting;  // evictable, like any connection that is only waiting
    waiting_since = Clock::now();
    Arm(kLinger, /*is_read=*/false);
    Drain();
  }
  void Drain() {
    socket.async_read_some(asio::buffer(scratch),
                           [self = shared_from_this()](const error_code& ec, size_t) {
                             if (self->state == State::kClosed) return;
                             if (ec) return self->Close();
                             self->Drain();
                           });
  }

  void Answer(HttpResponse response, bool keep_alive) {
    if (state == State::kClosed) return;
    Disarm();
    keep_alive = keep_alive && !response.close_connection && !impl->stopping_;
    try {
      if (!response.body_file.empty()) {
        // Streamed from the open file: it stays readable even if it is replaced meanwhile.
        http::response<http::file_body> res;
        error_code ec;
        res.body().open(response.body_file.c_str(), beast::file_mode::scan, ec);
        if (!ec) {
          const size_t size = static_cast<size_t>(res.body().size());
          Prepare(res, response, keep_alive);
          return Send(std::make_shared<http::response<http::file_body>>(std::move(res)), size,
                      keep_alive);
        }
        const std::string file = response.body_file;
        response = JsonError(500, file + ": cannot read");
      }
      http::response<http::string_body> res;
      const size_t size = response.body.size();
      res.body() = std::move(response.body);
      Prepare(res, response, keep_alive);
      Send(std::make_shared<http::response<http::string_body>>(std::move(res)), size, keep_alive);
    } catch (const std::exception&) {
      Close();  // a header value Beast refuses: nothing sane to answer
    }
  }

  void Close() {
    if (state == State::kClosed) return;
    state = State::kClosed;
    Disarm();
    error_code ec;
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
    impl->connections_.erase(self_it);  // may drop the last owner but the running handler's
    impl->CloseIfDrained();
  }

  Impl* impl;
  const HttpServerOptions& options;
  tcp::socket socket;
  asio::steady_timer timer;
  uint64_t timer_generation = 0;
  beast::flat_buffer buffer;
  std::optional<http::request_parser<http::string_body>> parser;
  HttpRequest request;
  const HttpHandler* handler = nullptr;
  State state = State::kWaiting;
  Clock::time_point waiting_since;
  Clock::time_point writing_since;
  std::list<std::shared_ptr<Connection>>::iterator self_it;
  std::array<char, 4096> scratch;  // what Drain() drops
};

void HttpServer::Impl::Accept() {
  acceptor_.async_accept(
      [this](const error_code& ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
}

void HttpServer::Impl::OnAccept(const error_code& ec, tcp::socket socket) {
  if (stopping_ || ec == asio::error::operation_aborted) return;
  if (ec) {
    // Out of descriptors (or memory): the pending connection stays in the backlog and the
    // acceptor stays readable. Waiting a moment keeps this thread from spinning on it.
    accept_retry_.expires_after(kAcceptRetry);
    accept_retry_.async_wait([this](const error_code& e) {
      if (!e && !stopping_) Accept();
    });
    return;
  }
  ++accepted_;
  if (connections_.size() >= server_->options_.max_connections) {
    // Full: the connection that has waited longest for its (next) request makes room. Slow or
    // idle clients are the ones waiting; a handler's work is never cut. With none waiting, an
    // answer stuck for a while on a client that does not read (pipelined requests it never
    // reads the answers of) goes, oldest first.
    std::shared_ptr<Connection> oldest;
    for (const auto& c : connections_)
      if (c->state == Connection::State::kWaiting &&
          (!oldest || c->waiting_since < oldest->waiting_since))
        oldest = c;
    if (!oldest) {
      const Clock::time_point stuck = Clock::now() - kStuckWrite;
      for (const auto& c : connections_)
        if (c->state == Connection::State::kWriting && c->writing_since < stuck &&
            (!oldest || c->writing_since < oldest->writing_since))
          oldest = c;
    }
    if (oldest) {
      ++evicted_;
      oldest->Close();
    } else {
      ++refused_;
      error_code ignored;
      socket.close(ignored);
      Accept();
      return;
    }
  }
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  auto c = std::make_shared<Connection>(this, std::move(socket));
  connections_.push_back(c);
  c->self_it = std::prev(connections_.end());
  c->ReadRequest();
  Accept();
}

void HttpServer::Impl::CloseIfDrained() {
  if (stopping_ && connections_.empty() && !drained_set_) {
    drained_set_ = true;
    drained_.set_value();
  }
}

HttpServer::HttpServer(HttpServerOptions options)
    : options_(options), impl_(std::make_unique<Impl>(this)) {}

HttpServer::HttpServer(size_t worker_threads, size_t max_body_bytes)
    : HttpServer([&] {
        HttpServerOptions o;
        o.worker_threads = worker_threads;
        o.max_body_bytes = max_body_bytes;
        return o;
      }()) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Get(const std::string& path, HttpHandler handler) {
  routes_[path]["GET"] = std::move(handler);
}
void HttpServer::Post(const std::string& path, HttpHandler handler) {
  routes_[path]["POST"] = std::move(handler);
}

std::vector<std::pair<std::string, std::string>> HttpServer::Routes() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [path, methods] : routes_)
    for (const auto& [method, handler] : methods) out.emplace_back(method, path);
  return out;
}

std::string HttpServer::AllowedMethods(const std::string& path) const {
  auto it = routes_.find(path);
  std::string out;
  if (it == routes_.end()) return out;
  for (const auto& [method, handler] : it->second) out += (out.empty() ? "" : ", ") + method;
  return out;
}

HttpServer::Counters HttpServer::counters() const {
  Counters c;
  c.connections = impl_->accepted_;
  c.evicted = impl_->evicted_;
  c.refused = impl_->refused_;
  c.deadline_exceeded = impl_->deadline_exceeded_;
  c.too_large = impl_->too_large_;
  return c;
}

base::StatusOr<int> HttpServer::Start(const std::string& host, int port,
                                      bool fall_back_to_any_port) {
  if (impl_->thread_.joinable()) return base::InternalError("HTTP server already started");
  error_code ec;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec) return base::InvalidArgumentError("cannot listen on " + host + ": not an IP address");
  tcp::acceptor& acceptor = impl_->acceptor_;
  auto listen_on = [&](int p) {
    error_code e;
    acceptor.close(e);
    const tcp::endpoint endpoint(address, static_cast<uint16_t>(p));
    acceptor.open(endpoint.protocol(), e);
    // SO_REUSEADDR (fast restarts) but never SO_REUSEPORT, which would let a second agent bind
    // the same port and silently share its connections.
    if (!e) acceptor.set_option(tcp::acceptor::reuse_address(true), e);
    if (!e) acceptor.bind(endpoint, e);
    if (!e) acceptor.listen(128, e);
    return !e;
  };
  const bool bound =
      port == 0 ? listen_on(0) : (listen_on(port) || (fall_back_to_any_port && listen_on(0)));
  if (!bound)
    return base::UnavailableError("cannot listen on " + host + ":" + std::to_string(port) +
                                  " (address in use or not permitted)");
  port_ = acceptor.local_endpoint(ec).port();
  if (ec) return base::UnavailableError("cannot listen on " + host + ": " + ec.message());
  asio::post(impl_->io_, [impl = impl_.get()] { impl->Accept(); });
  impl_->thread_ = std::thread([impl = impl_.get()] {
    for (;;) {
      try {
        impl->io_.run();
        return;
      } catch (const std::exception&) {
        // A handler threw (they catch what they call): keep serving the others.
      }
    }
  });
  return port_;
}

void HttpServer::Stop() {
  Impl& impl = *impl_;
  if (!impl.thread_.joinable()) return;
  std::future<void> drained = impl.drained_.get_future();
  asio::post(impl.io_, [&impl] {
    impl.stopping_ = true;
    error_code ignored;
    impl.acceptor_.close(ignored);
    impl.accept_retry_.cancel();
    // Waiting connections close now; the ones being answered close once their answer is out
    // (stopping_ turns keep-alive off).
    std::vector<std::shared_ptr<Impl::Connection>> waiting;
    for (const auto& c : impl.connections_)
      if (c->state == Impl::Connection::State::kWaiting) waiting.push_back(c);
    for (const auto& c : waiting) c->Close();
    impl.CloseIfDrained();
  });
  drained.wait_for(options_.write_deadline + std::chrono::seconds(5));
  impl.work_.reset();
  impl.io_.stop();
  impl.thread_.join();
  impl.pool_.join();
}

}  // namespace inferscope::server
