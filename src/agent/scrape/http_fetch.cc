// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agent/scrape/http_fetch.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <exception>

namespace inferscope::agent::scrape {
namespace {

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

std::string HostForUrl(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

}  // namespace

std::string HttpTarget::ToUrl() const {
  return "http://" + HostForUrl(host) + ":" + std::to_string(port) + path;
}

base::StatusOr<HttpTarget> ParseMetricsUrl(std::string_view url) {
  const std::string shown(url.substr(0, 200));
  if (StartsWithNoCase(url, "https://"))
    return base::InvalidArgumentError(
        "metrics URL " + shown +
        ": https is not supported; use the engine's plain-HTTP port (engines serve /metrics on "
        "it)");
  if (!StartsWithNoCase(url, "http://"))
    return base::InvalidArgumentError("metrics URL " + shown +
                                      ": expected http://host[:port][/path]");
  std::string_view rest = url.substr(7);
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  HttpTarget t;
  t.path = slash == std::string_view::npos ? "/metrics" : std::string(rest.substr(slash));
  if (authority.find('@') != std::string_view::npos)
    return base::InvalidArgumentError("metrics URL " + shown + ": user info is not supported");
  std::string_view port_text;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos)
      return base::InvalidArgumentError("metrics URL " + shown + ": unterminated IPv6 literal");
    t.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':')
        return base::InvalidArgumentError("metrics URL " + shown + ": bad text after ']'");
      port_text = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    t.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (t.host.empty()) return base::InvalidArgumentError("metrics URL " + shown + ": no host");
  for (char c : t.host) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' ||
          c == '_'))
      return base::InvalidArgumentError("metrics URL " + shown + ": bad host");
  }
  if (!port_text.empty() || (authority.size() && authority.back() == ':')) {
    unsigned port = 0;
    const auto [ptr, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port == 0 ||
        port > 65535)
      return base::InvalidArgumentError("metrics URL " + shown + ": bad port");
    t.port = uint16_t(port);
  }
  return t;
}

base::StatusOr<FetchResult> HttpGet(const HttpTarget& target, const FetchOptions& options) {
  const std::string url = target.ToUrl();
  try {
    httplib::Client client(target.host, target.port);
    client.set_connection_timeout(options.connect_timeout_ms / 1000,
                                  (options.connect_timeout_ms % 1000) * 1000);
    client.set_read_timeout(options.read_timeout_ms / 1000,
                            (options.read_timeout_ms % 1000) * 1000);
    client.set_write_timeout(options.read_timeout_ms / 1000,
                             (options.read_timeout_ms % 1000) * 1000);
    client.set_follow_location(false);
    client.set_keep_alive(false);
    const httplib::Headers headers = {{"Accept", "text/plain;version=0.0.4"}};
    FetchResult result;
    auto response = client.Get(
        target.path, headers,
        [&result](const httplib::Response& r) {
          result.status = r.status;
          result.content_type = r.get_header_value("Content-Type");
          return true;
        },
        [&result, &options](const char* data, size_t length) {
          const size_t room = options.max_body_bytes - result.body.size();
          if (length > room) {
            result.body.append(data, room);
            result.truncated = true;
            return false;  // stop reading: the parser handles a cut body
          }
          result.body.append(data, length);
          return true;
        });
    if (!response) {
      if (result.truncated) return result;
      const httplib::Error error = response.error();
      std::string why = url + ": ";
      switch (error) {
        case httplib::Error::Connection:
          why += "connection refused or unreachable";
          break;
        case httplib::Error::ConnectionTimeout:
          why += "connect timed out";
          break;
        case httplib::Error::Read:
          why += "no HTTP response (read failed or timed out)";
          break;
        default:
          why += httplib::to_string(error);
      }
      // Nobody listening (or nothing answering the connect) vs. a peer that is there but did not
      // answer HTTP: discovery tries another address only in the first case.
      if (error == httplib::Error::Connection || error == httplib::Error::ConnectionTimeout)
        return base::UnavailableError(why);
      return base::DataLossError(why);
    }
    result.status = response->status;
    return result;
  } catch (const std::exception& e) {
    return base::UnavailableError(url + ": " + e.what());
  } catch (...) {
    return base::UnavailableError(url + ": unknown error");
  }
}

}  // namespace inferscope::agent::scrape
