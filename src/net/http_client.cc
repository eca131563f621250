// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/net/http_client.h"

#include <httplib.h>

#include <cctype>
#include <charconv>
#include <exception>

namespace inferscope::net {
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

void SetTimeouts(const FetchOptions& options, httplib::Client* client) {
  client->set_connection_timeout(options.connect_timeout_ms / 1000,
                                 (options.connect_timeout_ms % 1000) * 1000);
  client->set_read_timeout(options.read_timeout_ms / 1000, (options.read_timeout_ms % 1000) * 1000);
  client->set_write_timeout(options.read_timeout_ms / 1000,
                            (options.read_timeout_ms % 1000) * 1000);
  client->set_follow_location(false);
  client->set_keep_alive(false);
}

// The error for a request that got no response.
base::Status NoResponse(const std::string& url, httplib::Error error) {
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
    case httplib::Error::SSLConnection:
      why += "TLS handshake failed (is it an https port?)";
      break;
    case httplib::Error::SSLLoadingCerts:
      why += "cannot load the CA certificates (ca_file)";
      break;
    case httplib::Error::SSLServerVerification:
      why += "the server's TLS certificate did not verify (ca_file names the CA that signed it)";
      break;
    default:
      why += httplib::to_string(error);
  }
  // Nobody listening (or nothing answering the connect) vs. a peer that is there but did not
  // answer HTTP: scrape discovery tries another address only in the first case.
  // TLS failures happen before the request is sent too.
  if (error == httplib::Error::Connection || error == httplib::Error::ConnectionTimeout ||
      error == httplib::Error::SSLConnection || error == httplib::Error::SSLLoadingCerts ||
      error == httplib::Error::SSLServerVerification)
    return base::UnavailableError(why);
  return base::DataLossError(why);
}

// Runs `send(client, headers, result)` (which returns an httplib::Result) with the options; turns
// exceptions and transport failures into errors.
template <typename Send>
base::StatusOr<FetchResult> Request(const HttpTarget& target, const FetchOptions& options,
                                    Send send) {
  const std::string url = options.tls ? "https://" + HostForUrl(target.host) + ":" +
                                            std::to_string(target.port) + target.path
                                      : target.ToUrl();
  try {
    // The scheme form makes cpp-httplib's SSLClient (the library is built with OpenSSL).
    httplib::Client client = options.tls ? httplib::Client("https://" + HostForUrl(target.host) +
                                                           ":" + std::to_string(target.port))
                                         : httplib::Client(target.host, target.port);
    if (options.tls) {
      if (!options.ca_file.empty()) client.set_ca_cert_path(options.ca_file);
      client.enable_server_certificate_verification(!options.tls_skip_verify);
    }
    SetTimeouts(options, &client);
    if (!options.basic_auth_user.empty())
      client.set_basic_auth(options.basic_auth_user, options.basic_auth_password);
    httplib::Headers headers;
    if (!options.accept.empty()) headers.emplace("Accept", options.accept);
    if (!options.bearer_token.empty())
      headers.emplace("Authorization", "Bearer " + options.bearer_token);
    FetchResult result;
    httplib::Result response = send(client, headers, result);
    if (!response) {
      if (result.truncated) return result;
      return NoResponse(url, response.error());
    }
    result.status = response->status;
    if (result.content_type.empty())
      result.content_type = response->get_header_value("Content-Type");
    return result;
  } catch (const std::exception& e) {
    return base::UnavailableError(url + ": " + e.what());
  } catch (...) {
    return base::UnavailableError(url + ": unknown error");
  }
}

}  // namespace

std::string HttpTarget::ToUrl() const {
  return "http://" + HostForUrl(host) + ":" + std::to_string(port) + path;
}

base::StatusOr<HttpTarget> ParseHttpUrl(std::string_view url, std::string_view what,
                                        std::string_view default_path) {
  const std::string shown = std::string(what) + " " + std::string(url.substr(0, 200));
  if (StartsWithNoCase(url, "https://"))
    return base::InvalidArgumentError(shown + ": https is not supported");
  if (!StartsWithNoCase(url, "http://"))
    return base::InvalidArgumentError(shown + ": expected http://host[:port][/path]");
  std::string_view rest = url.substr(7);
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  HttpTarget t;
  t.path =
      slash == std::string_view::npos ? std::string(default_path) : std::string(rest.substr(slash));
  if (authority.find('@') != std::string_view::npos)
    return base::InvalidArgumentError(shown + ": user info is not supported");
  std::string_view port_text;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos)
      return base::InvalidArgumentError(shown + ": unterminated IPv6 literal");
    t.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return base::InvalidArgumentError(shown + ": bad text after ']'");
      port_text = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    t.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (t.host.empty()) return base::InvalidArgumentError(shown + ": no host");
  for (char c : t.host) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' ||
          c == '_'))
      return base::InvalidArgumentError(shown + ": bad host");
  }
  if (!port_text.empty() || (!authority.empty() && authority.back() == ':')) {
    unsigned port = 0;
    const auto [ptr, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port == 0 ||
        port > 65535)
      return base::InvalidArgumentError(shown + ": bad port");
    t.port = static_cast<uint16_t>(port);
  }
  return t;
}

base::StatusOr<FetchResult> HttpGet(const HttpTarget& target, const FetchOptions& options) {
  return Request(
      target, options,
      [&](httplib::Client& client, const httplib::Headers& headers, FetchResult& result) {
        return client.Get(
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
                return false;  // stop reading: callers handle a cut body
              }
              result.body.append(data, length);
              return true;
            });
      });
}

base::StatusOr<FetchResult> HttpPost(const HttpTarget& target, const FetchOptions& options) {
  return Request(
      target, options,
      [&](httplib::Client& client, const httplib::Headers& headers, FetchResult& result) {
        httplib::Result r = client.Post(target.path, headers);
        if (r) {
          result.body = r->body.substr(0, options.max_body_bytes);
          result.truncated = r->body.size() > options.max_body_bytes;
        }
        return r;
      });
}

base::StatusOr<FetchResult> HttpPostBody(const HttpTarget& target, const FetchOptions& options,
                                         std::string_view body, std::string_view content_type) {
  return Request(
      target, options,
      [&](httplib::Client& client, const httplib::Headers& headers, FetchResult& result) {
        httplib::Result r =
            client.Post(target.path, headers, body.data(), body.size(), std::string(content_type));
        if (r) {
          result.body = r->body.substr(0, options.max_body_bytes);
          result.truncated = r->body.size() > options.max_body_bytes;
        }
        return r;
      });
}

}  // namespace inferscope::net
