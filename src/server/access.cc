// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/server/access.h"

#include <openssl/evp.h>

#include <cctype>
#include <string_view>
#include <vector>

#include "src/base/json_writer.h"

namespace inferscope::server {
namespace {

// At most this many sign-in links wait to be used; a new one beyond pushes out the oldest.
constexpr size_t kMaxLoginCodes = 16;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool IsOwnName(const std::string& name, const std::string& bind_host) {
  const std::string lower = Lower(name);
  return lower == "127.0.0.1" || lower == "localhost" || lower == "[::1]" ||
         (!bind_host.empty() && lower == Lower(bind_host));
}

// Splits "name[:port]" ("[::1]:9470" included); false when the port is not a number.
bool SplitHostPort(const std::string& value, std::string* name, int* port) {
  *port = 80;
  size_t colon = std::string::npos;
  if (!value.empty() && value[0] == '[') {
    const size_t close = value.find(']');
    if (close == std::string::npos) return false;
    *name = value.substr(0, close + 1);
    if (close + 1 < value.size()) {
      if (value[close + 1] != ':') return false;
      colon = close + 1;
    }
  } else {
    colon = value.find(':');
    *name = value.substr(0, colon);
  }
  if (colon == std::string::npos) return !name->empty();
  const std::string digits = value.substr(colon + 1);
  if (digits.empty() || digits.size() > 5) return false;
  int p = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    p = p * 10 + (c - '0');
  }
  *port = p;
  return !name->empty();
}

// The value of cookie `name` in a Cookie header ("a=1; b=2"), or "".
std::string CookieValue(const std::string& header, const std::string& name) {
  size_t pos = 0;
  while (pos < header.size()) {
    size_t end = header.find(';', pos);
    if (end == std::string::npos) end = header.size();
    std::string_view part(header.data() + pos, end - pos);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    const size_t eq = part.find('=');
    if (eq != std::string_view::npos && part.substr(0, eq) == name)
      return std::string(part.substr(eq + 1));
    pos = end + 1;
  }
  return "";
}

std::string CookieName(int port) {
  return std::string(AccessControl::kCookieName) + "_" + std::to_string(port);
}

bool IsMcp(const std::string& path) { return path == "/mcp"; }
bool IsDashboard(const std::string& path) { return path == "/ui" || path.rfind("/ui/", 0) == 0; }

// An answer in the shape the path's clients read: JSON-RPC for /mcp, a page for the dashboard,
// `{"error": ...}` for the rest.
HttpResponse Refuse(const HttpRequest& request, int status, const std::string& message) {
  if (IsMcp(request.path)) {
    HttpResponse r;
    r.status = status;
    r.body = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":" +
             base::JsonWriter::Quote(message) + "}}";
    return r;
  }
  if (IsDashboard(request.path) && request.method == "GET") {
    HttpResponse r;
    r.status = status;
    r.content_type = "text/html; charset=utf-8";
    std::string text;
    for (char c : message) {
      if (c == '<')
        text += "&lt;";
      else if (c == '>')
        text += "&gt;";
      else if (c == '&')
        text += "&amp;";
      else
        text += c;
    }
    r.body =
        "<!doctype html><meta charset=utf-8><title>inferscope: sign in</title>"
        "<body style=\"font-family:sans-serif;max-width:40em;margin:3em auto\">"
        "<h1>inferscope dashboard</h1><p>" +
        text +
        "</p><p>Run <code>inferscope ui</code> on this host (as the user whose agent this is) "
        "and open the link it prints.</p></body>\n";
    return r;
  }
  HttpResponse r = JsonError(status, message);
  if (status == 401) r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"inferscope\"");
  return r;
}

}  // namespace

bool IsOwnHost(const std::string& host, const std::string& bind_host, int port) {
  std::string name;
  int p = 0;
  return SplitHostPort(host, &name, &p) && p == port && IsOwnName(name, bind_host);
}

bool IsOwnOrigin(const std::string& origin, const std::string& bind_host, int port) {
  constexpr std::string_view kScheme = "http://";
  if (origin.compare(0, kScheme.size(), kScheme) != 0) return false;
  const std::string rest = origin.substr(kScheme.size());
  if (rest.find('/') != std::string::npos) return false;  // an origin has no path
  return IsOwnHost(rest, bind_host, port);
}

std::string AccessControl::SessionValue(const std::string& token) {
  const std::string input = "inferscope dashboard session v1\n" + token;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(input.data(), input.size(), digest, &size, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

AccessControl::AccessControl(AccessOptions options)
    : options_(std::move(options)), token_(options_.state_dir + "/" + base::kAccessTokenFile) {
  if (!options_.metrics_token_file.empty())
    metrics_token_ = std::make_unique<base::AccessTokenFile>(options_.metrics_token_file);
}

std::optional<HttpResponse> AccessControl::Check(const HttpRequest& request, int port) {
  // DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1 still sends
  // `Host: evil.example`. Clients without a Host (HTTP/1.0) are no browser.
  if (const std::string* host = request.Header("host");
      host != nullptr && !IsOwnHost(*host, options_.bind_host, port))
    return Refuse(request, 400,
                  "Host " + *host + " is not this agent's address (use http://127.0.0.1:" +
                      std::to_string(port) + ")");
  if (const std::string* origin = request.Header("origin");
      origin != nullptr && !IsOwnOrigin(*origin, options_.bind_host, port))
    return Refuse(request, 403, "Forbidden: Origin " + *origin + " is not this agent's page");

  const bool is_metrics = request.path == "/metrics";
  if (request.path == kLoginPath || (is_metrics && !metrics_token_)) return std::nullopt;

  auto token = token_.Current();
  if (!token.ok())
    return Refuse(request, 503,
                  "the agent's access token is unreadable: " + token.status().message() +
                      " (restart the agent)");
  const std::string* auth = request.Header("authorization");
  if (auth != nullptr) {
    constexpr std::string_view kBearer = "Bearer ";
    const std::string given =
        auth->compare(0, kBearer.size(), kBearer) == 0 ? auth->substr(kBearer.size()) : "";
    if (base::SameSecret(given, *token)) return std::nullopt;
    if (is_metrics) {
      auto metrics = metrics_token_->Current();
      if (metrics.ok() && base::SameSecret(given, *metrics)) return std::nullopt;
    }
    return Refuse(request, 401,
                  "Unauthorized: wrong token (send Authorization: Bearer <the content of " +
                      options_.state_dir + "/" + base::kAccessTokenFile + ">)");
  }
  if (const std::string* cookies = request.Header("cookie"); cookies != nullptr && !is_metrics) {
    const std::string value = CookieValue(*cookies, CookieName(port));
    if (!value.empty() && base::SameSecret(value, SessionValue(*token))) {
      // The dashboard only reads. A browser sends the cookie with any request a page makes to
      // this host, a form's text/plain POST included: a change needs the header no page can set.
      if (request.method == "GET") return std::nullopt;
      return Refuse(request, 403,
                    "Forbidden: the dashboard's session only reads; " + request.method + " " +
                        request.path + " needs Authorization: Bearer <token>");
    }
  }
  if (is_metrics)
    return Refuse(request, 401,
                  "Unauthorized: /metrics needs Authorization: Bearer <the content of " +
                      options_.metrics_token_file + "> (--metrics-token)");
  HttpResponse r = Refuse(request, 401,
                          IsDashboard(request.path)
                              ? "Not signed in (or the session ended: the agent's token changed)."
                              : "Unauthorized: send Authorization: Bearer <the content of " +
                                    options_.state_dir + "/" + base::kAccessTokenFile +
                                    "> (the inferscope CLI does)");
  return r;
}

HttpResponse AccessControl::NewLoginLink(int port) {
  auto code = base::RandomHexToken(16);
  if (!code.ok()) return JsonError(code.status());
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = login_codes_.begin(); it != login_codes_.end();)
      it = it->second <= now ? login_codes_.erase(it) : std::next(it);
    while (login_codes_.size() >= kMaxLoginCodes) {
      auto oldest = login_codes_.begin();
      for (auto it = login_codes_.begin(); it != login_codes_.end(); ++it)
        if (it->second < oldest->second) oldest = it;
      login_codes_.erase(oldest);
    }
    login_codes_[*code] = now + options_.login_code_ttl;
  }
  base::JsonWriter w;
  w.BeginObject();
  w.Key("url").String("http://" + options_.bind_host + ":" + std::to_string(port) + kLoginPath +
                      "?code=" + *code);
  w.Key("expires_in_s").Int(options_.login_code_ttl.count());
  w.EndObject();
  HttpResponse r;
  r.body = w.str() + "\n";
  return r;
}

HttpResponse AccessControl::Login(const HttpRequest& request) {
  const std::string* code = request.Param("code");
  bool valid = false;
  if (code != nullptr && !code->empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = login_codes_.find(*code);
    if (it != login_codes_.end()) {
      valid = it->second > std::chrono::steady_clock::now();
      login_codes_.erase(it);  // once, valid or not
    }
  }
  if (!valid) return Refuse(request, 401, "This sign-in link was used already or has expired.");
  auto token = token_.Current();
  if (!token.ok()) return Refuse(request, 503, token.status().message());
  HttpResponse r;
  r.status = 303;
  r.content_type = "text/plain";
  r.body = "signed in; go to /ui/\n";
  r.headers.emplace_back("Location", "/ui/");
  // HttpOnly: the page's scripts never see it. SameSite=Strict: a page of another site never
  // makes the browser send it. Cookies ignore ports, so its name carries the listener's.
  r.headers.emplace_back("Set-Cookie", CookieName(request.local_port) + "=" + SessionValue(*token) +
                                           "; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000");
  return r;
}

void AccessControl::AddLoginRoutes(HttpServer* server) {
  server->Post("/api/v1/ui/login",
               [this](const HttpRequest& request) { return NewLoginLink(request.local_port); });
  server->Get(kLoginPath, [this](const HttpRequest& request) { return Login(request); });
}

}  // namespace inferscope::server
