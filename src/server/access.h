// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Who may use the agent's HTTP listener (docs/agent.md, "Access"): every request must name this
// listener in its Host header (no DNS rebinding) and carry no foreign Origin (no other web page),
// and, except on the public paths (/metrics by default, the dashboard's sign-in link), present the
// agent's access token: `Authorization: Bearer <token>` from the CLI, MCP clients and OTLP
// exporters, or the dashboard's session cookie, which only reads (GET): a state-changing request
// always carries the Authorization header, so it is never a CORS "simple" request a page could
// send.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "src/base/access_token.h"
#include "src/server/http_server.h"

namespace inferscope::server {

struct AccessOptions {
  std::string state_dir;                // holds agent.token (base::kAccessTokenFile)
  std::string bind_host = "127.0.0.1";  // a Host naming it is accepted beside the loopback names
  // Non-empty: /metrics needs `Authorization: Bearer <the content of this file>` (or the agent's
  // token); empty: /metrics is open to every local user, as Prometheus scrapers expect.
  std::string metrics_token_file;
  std::chrono::seconds login_code_ttl{120};
};

// The gate every request passes before its route (HttpServer::SetGate), and the dashboard's
// sign-in. Thread-safe.
class AccessControl {
 public:
  static constexpr const char* kCookieName = "inferscope_session";
  static constexpr const char* kLoginPath = "/ui/login";

  explicit AccessControl(AccessOptions options);

  // nullopt: allowed; else the answer (400 bad Host, 403 foreign Origin or a cookie on a
  // state-changing request, 401 no or wrong token, 503 the token file is unreadable). `port` is
  // the listener's: Host and Origin must name it.
  std::optional<HttpResponse> Check(const HttpRequest& request, int port);

  // POST /api/v1/ui/login (behind the gate, so the caller holds the token): a one-time link that
  // signs a browser in; GET /ui/login?code=... (public): uses the code once, sets the cookie and
  // sends the browser to /ui/. Registers both on `server`.
  void AddLoginRoutes(HttpServer* server);

  // The cookie's value for `token`: a digest of it, so the browser never holds the token itself.
  static std::string SessionValue(const std::string& token);

 private:
  HttpResponse NewLoginLink(int port);
  HttpResponse Login(const HttpRequest& request);

  AccessOptions options_;
  base::AccessTokenFile token_;
  std::unique_ptr<base::AccessTokenFile> metrics_token_;
  std::mutex mu_;
  std::map<std::string, std::chrono::steady_clock::time_point> login_codes_;  // code -> expiry
};

// Whether `host` (a Host header value) names this listener: 127.0.0.1, localhost, [::1] or
// `bind_host`, with `port` (or without a port when it is 80).
bool IsOwnHost(const std::string& host, const std::string& bind_host, int port);
// Whether `origin` is exactly this listener's origin (http://<one of those names>:<port>): a page
// on another loopback port is another site's page.
bool IsOwnOrigin(const std::string& origin, const std::string& bind_host, int port);

}  // namespace inferscope::server
