// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/fleet/sink/clickhouse_config.h"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace inferscope::fleet {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool IsIdentifier(std::string_view s, std::string_view extra) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' &&
        extra.find(c) == std::string_view::npos)
      return false;
  return true;
}

}  // namespace

std::string ClickHouseTarget::ToUrl() const {
  const std::string host =
      http.host.find(':') != std::string::npos ? "[" + http.host + "]" : http.host;
  return std::string(tls ? "clickhouses://" : "clickhouse://") + host + ":" +
         std::to_string(http.port) + "/" + database;
}

base::StatusOr<ClickHouseTarget> ParseClickHouseUrl(std::string_view url) {
  constexpr std::string_view kScheme = "clickhouse://", kTlsScheme = "clickhouses://";
  const std::string shown = "ClickHouse URL " + std::string(url.substr(0, 200));
  const bool tls = url.substr(0, kTlsScheme.size()) == kTlsScheme;
  if (!tls && url.substr(0, kScheme.size()) != kScheme)
    return base::InvalidArgumentError(
        shown + ": expected clickhouse://HOST[:PORT][/DB] or clickhouses://HOST[:PORT][/DB]");
  std::string_view rest = url.substr(tls ? kTlsScheme.size() : kScheme.size());
  // TLS options as query parameters (like clickhouse-go's DSN), so that the sink and every
  // `--source` read take the same URL: ca_file=PATH (PEM), skip_verify=1.
  std::string ca_file;
  bool skip_verify = false;
  if (const size_t q = rest.find('?'); q != std::string_view::npos) {
    std::string_view params = rest.substr(q + 1);
    rest = rest.substr(0, q);
    while (!params.empty()) {
      const size_t amp = params.find('&');
      const std::string_view param = params.substr(0, amp);
      params = amp == std::string_view::npos ? std::string_view() : params.substr(amp + 1);
      const size_t eq = param.find('=');
      const std::string_view key = param.substr(0, eq);
      const std::string_view value =
          eq == std::string_view::npos ? std::string_view() : param.substr(eq + 1);
      if (!tls)
        return base::InvalidArgumentError(shown + ": " + std::string(key.substr(0, 40)) +
                                          " needs clickhouses:// (TLS)");
      if (key == "ca_file" && !value.empty() && value.size() <= 4096 &&
          value.find('\0') == std::string_view::npos) {
        ca_file = std::string(value);
      } else if (key == "skip_verify" && (value == "1" || value == "true")) {
        skip_verify = true;
      } else if (key == "skip_verify" && (value == "0" || value == "false")) {
        skip_verify = false;
      } else {
        return base::InvalidArgumentError(
            shown + ": unknown or empty parameter '" + std::string(key.substr(0, 40)) +
            "' (clickhouses:// takes ca_file=PATH and skip_verify=1)");
      }
    }
  }
  if (rest.find('@') != std::string_view::npos)
    return base::InvalidArgumentError(std::string("ClickHouse URL") +
                                      ": credentials do not belong on the command line; use a " +
                                      "credentials file (--sink-credentials FILE)");
  const size_t slash = rest.find('/');
  std::string database = "inferscope";
  if (slash != std::string_view::npos) {
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty() && db.back() == '/') db.remove_suffix(1);
    if (!db.empty()) {
      if (!IsIdentifier(db, ""))
        return base::InvalidArgumentError(shown + ": database name must be [A-Za-z0-9_]+");
      database = std::string(db);
    }
    rest = rest.substr(0, slash);
  }
  // The host and port are parsed like any HTTP URL's (IPv6 literals, port range).
  ASSIGN_OR_RETURN(net::HttpTarget http,
                   net::ParseHttpUrl("http://" + std::string(rest), "ClickHouse URL"));
  if (rest.find(':') == std::string_view::npos ||
      (rest.front() == '[' && rest.find("]:") == std::string_view::npos))
    http.port = tls ? 8443 : 8123;  // ClickHouse's https_port and http_port by convention
  ClickHouseTarget t;
  t.http = std::move(http);
  t.http.path = "/";
  t.tls = tls;
  t.ca_file = std::move(ca_file);
  t.tls_skip_verify = skip_verify;
  t.database = std::move(database);
  return t;
}

base::StatusOr<Credentials> ParseCredentials(std::string_view text) {
  Credentials c;
  size_t line_no = 0;
  bool saw_user = false;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = Trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty() || line.front() == '#') continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos)
      return base::InvalidArgumentError("credentials line " + std::to_string(line_no) +
                                        ": expected `user = NAME` or `password = SECRET`");
    const std::string_view key = Trim(line.substr(0, eq));
    const std::string_view value = Trim(line.substr(eq + 1));
    for (char ch : value)
      if (static_cast<unsigned char>(ch) < 0x20)
        return base::InvalidArgumentError("credentials line " + std::to_string(line_no) +
                                          ": control character in the value");
    if (key == "user") {
      if (value.empty())
        return base::InvalidArgumentError("credentials line " + std::to_string(line_no) +
                                          ": empty user");
      c.user = std::string(value);
      saw_user = true;
    } else if (key == "password") {
      c.password = std::string(value);
    } else {
      return base::InvalidArgumentError("credentials line " + std::to_string(line_no) +
                                        ": unknown key (expected user or password)");
    }
  }
  if (!saw_user) return base::InvalidArgumentError("credentials: no `user = NAME` line");
  return c;
}

base::StatusOr<Credentials> ReadCredentialsFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return base::NotFoundError(path + ": " + std::strerror(errno));
  if ((st.st_mode & 077) != 0)
    return base::InvalidArgumentError(path + ": readable by other users (chmod 600 it)");
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  if (!f && !f.eof()) return base::UnavailableError(path + ": cannot read");
  if (ss.str().size() > 64 * 1024) return base::InvalidArgumentError(path + ": too large");
  auto c = ParseCredentials(ss.str());
  if (!c.ok()) return base::InvalidArgumentError(path + ": " + c.status().message());
  return c;
}

base::Status ParseLabel(std::string_view text, Labels* labels) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    return base::InvalidArgumentError("label '" + std::string(text.substr(0, 100)) +
                                      "': expected KEY=VALUE");
  const std::string_view key = text.substr(0, eq), value = text.substr(eq + 1);
  if (!IsIdentifier(key, ".-"))
    return base::InvalidArgumentError("label key '" + std::string(key.substr(0, 100)) +
                                      "': use [A-Za-z0-9_.-]+");
  if (value.size() > 256)
    return base::InvalidArgumentError("label " + std::string(key) + ": value over 256 bytes");
  for (char c : value)
    if (static_cast<unsigned char>(c) < 0x20)
      return base::InvalidArgumentError("label " + std::string(key) + ": control character");
  for (auto& [k, v] : *labels)
    if (k == key) {
      v = std::string(value);  // the last one wins
      return base::OkStatus();
    }
  labels->emplace_back(std::string(key), std::string(value));
  return base::OkStatus();
}

std::string ClickHouseErrorLine(std::string_view body) {
  std::string out(body.substr(0, body.find('\n')).substr(0, 300));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return out.empty() ? "(empty response)" : out;
}

}  // namespace inferscope::fleet
