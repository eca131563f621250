// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// What names a ClickHouse server for the sink and the fleet reads: `clickhouse://HOST:PORT/DB`,
// the credentials file, and `--label k=v`. Pure parsing (fuzzed: clickhouse_parse_fuzzer).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/base/status.h"
#include "src/net/http_client.h"

namespace inferscope::fleet {

// A server's HTTP interface and the database the tables live in.
struct ClickHouseTarget {
  net::HttpTarget http;  // host, port (default 8123; 8443 with TLS); path unused
  // clickhouses://: HTTPS, the certificate checked against ca_file (empty: the system's CAs)
  // unless skip_verify (net::FetchOptions).
  bool tls = false;
  std::string ca_file;
  bool tls_skip_verify = false;
  std::string database = "inferscope";
  std::string user, password;  // from the credentials file; empty user: ClickHouse's `default`

  // "clickhouse://127.0.0.1:8123/inferscope", "clickhouses://..." (never credentials, nor the
  // TLS parameters)
  std::string ToUrl() const;
};

// Parses `clickhouse://HOST[:PORT][/DB]` (HTTP, port 8123 by default) and
// `clickhouses://HOST[:PORT][/DB][?ca_file=PATH][&skip_verify=1]` (HTTPS, port 8443 by default:
// the server's certificate is verified against ca_file, else the system's CAs, unless
// skip_verify). The database is [A-Za-z0-9_]+ (it is spliced into SQL); user info in the URL is
// refused (credentials come from a file: command lines are visible to every user of the host in
// /proc).
base::StatusOr<ClickHouseTarget> ParseClickHouseUrl(std::string_view url);

struct Credentials {
  std::string user, password;
};

// The credentials file: `user = NAME` and `password = SECRET` lines, `#` comments and blank lines
// ignored, surrounding spaces trimmed. Anything else is an error naming the line (never its
// content: it may hold the password).
base::StatusOr<Credentials> ParseCredentials(std::string_view text);
// Reads and parses `path`; refuses a file other users can read (mode & 077), like ssh does.
base::StatusOr<Credentials> ReadCredentialsFile(const std::string& path);

// `--label k=v`: k is [A-Za-z0-9_.-]+, v any text without control characters (<= 256 bytes).
using Labels = std::vector<std::pair<std::string, std::string>>;
base::Status ParseLabel(std::string_view text, Labels* labels);

// The first line of a ClickHouse error body ("Code: 60, e.displayText() = DB::Exception: Table
// x doesn't exist"), at most 300 bytes, control characters replaced.
std::string ClickHouseErrorLine(std::string_view body);

}  // namespace inferscope::fleet
