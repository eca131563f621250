// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/fleet/sink/clickhouse_client.h"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "src/base/time_point.h"
#include "src/fleet/sink/schema.h"

namespace inferscope::fleet {
namespace {

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

ClickHouseClient::ClickHouseClient(ClickHouseTarget target, int64_t timeout_ms)
    : target_(std::move(target)), timeout_ms_(timeout_ms) {}

base::StatusOr<std::string> ClickHouseClient::Post(const std::string& path_and_query,
                                                   std::string_view body,
                                                   size_t max_body_bytes) const {
  net::HttpTarget t = target_.http;
  t.path = path_and_query;
  net::FetchOptions options;
  options.connect_timeout_ms = 2000;
  options.read_timeout_ms = timeout_ms_;
  options.max_body_bytes = max_body_bytes;
  options.basic_auth_user = target_.user;
  options.basic_auth_password = target_.password;
  options.tls = target_.tls;
  options.ca_file = target_.ca_file;
  options.tls_skip_verify = target_.tls_skip_verify;
  ASSIGN_OR_RETURN(net::FetchResult r,
                   net::HttpPostBody(t, options, body, "text/plain; charset=utf-8"));
  if (r.status == 200) {
    if (r.truncated)
      return base::DataLossError(target_.ToUrl() + ": answer over " +
                                 std::to_string(max_body_bytes) + " bytes");
    return std::move(r.body);
  }
  const std::string why =
      target_.ToUrl() + ": HTTP " + std::to_string(r.status) + ": " + ClickHouseErrorLine(r.body);
  // 5xx other than a statement error is the server's trouble (starting, overloaded): retry.
  // ClickHouse answers a refused statement with 500 and "DB::Exception" in the body, or with 4xx.
  if (r.status >= 500 && r.body.find("DB::Exception") == std::string::npos)
    return base::UnavailableError(why);
  // A server still loading its tables or out of memory answers with an exception too; those
  // codes (TOO_MANY_SIMULTANEOUS_QUERIES 202, MEMORY_LIMIT_EXCEEDED 241, TIMEOUT_EXCEEDED 159,
  // TABLE_IS_READ_ONLY 242) are worth a retry.
  // QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING (216): an earlier attempt of this insert still runs.
  for (const char* code : {"Code: 202,", "Code: 241,", "Code: 159,", "Code: 242,", "Code: 216,"})
    if (r.body.rfind(code, 0) == 0) return base::UnavailableError(why);
  return base::InvalidArgumentError(why);
}

base::StatusOr<std::string> ClickHouseClient::Execute(std::string_view sql,
                                                      size_t max_body_bytes) const {
  return Post("/?database=default", sql, max_body_bytes);
}

base::Status ClickHouseClient::InsertJsonEachRow(std::string_view table, std::string_view rows,
                                                 const std::string& query_id) const {
  const std::string query =
      "INSERT INTO " + target_.database + "." + std::string(table) + " FORMAT JSONEachRow";
  // input_format_skip_unknown_fields: a newer agent's extra columns do not fail an older schema.
  std::string path = "/?input_format_skip_unknown_fields=1&query=" + UrlEncode(query);
  if (!query_id.empty()) path += "&query_id=" + UrlEncode(query_id);
  auto r = Post(path, rows, 1 << 16);
  return r.ok() ? base::OkStatus() : r.status();
}

base::StatusOr<uint64_t> ClickHouseClient::CountBatchRows(std::string_view table,
                                                          const std::string& date,
                                                          uint64_t batch_id) const {
  // Dates only: the value is spliced into the statement.
  if (date.size() != 10 || date.find_first_not_of("0123456789-") != std::string::npos)
    return base::InvalidArgumentError("bad partition date '" + date.substr(0, 20) + "'");
  ASSIGN_OR_RETURN(std::string n, Execute("SELECT count() FROM " + target_.database + "." +
                                          std::string(table) + " WHERE date = '" + date +
                                          "' AND batch_id = " + std::to_string(batch_id) +
                                          " FORMAT TabSeparated"));
  char* end = nullptr;
  const uint64_t count = std::strtoull(n.c_str(), &end, 10);
  if (n.empty() || end == n.c_str() || (*end != '\n' && *end != '\0'))
    return base::DataLossError(target_.ToUrl() + ": unexpected count '" + ClickHouseErrorLine(n) +
                               "'");
  return count;
}

base::StatusOr<bool> ClickHouseClient::QueryRunning(const std::string& query_id) const {
  for (char c : query_id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
      return base::InvalidArgumentError("bad query id");
  ASSIGN_OR_RETURN(std::string n,
                   Execute("SELECT count() FROM system.processes WHERE query_id = '" + query_id +
                           "' FORMAT TabSeparated"));
  if (n.empty() || !std::isdigit(static_cast<unsigned char>(n[0])))
    return base::DataLossError(target_.ToUrl() + ": unexpected answer from system.processes");
  return n[0] != '0';
}

base::StatusOr<int> ClickHouseClient::DropPartitionsBefore(
    const std::string& keep_from_date) const {
  const std::string& db = target_.database;
  std::string tables;
  for (const char* t : {kWindowsTable, kCategoriesTable, kKernelsTable, kSyncsTable,
                        kTelemetryTable, kPhasesTable, kRangesTable})
    tables += std::string(tables.empty() ? "" : ", ") + "'" + t + "'";
  // A partition's value is its date; ClickHouse lists each once per part.
  ASSIGN_OR_RETURN(std::string rows,
                   Execute("SELECT DISTINCT table, partition FROM system.parts WHERE database = '" +
                           db + "' AND active AND table IN (" + tables + ") AND partition < '" +
                           keep_from_date + "' ORDER BY table, partition FORMAT TabSeparated"));
  int dropped = 0;
  size_t pos = 0;
  while (pos < rows.size()) {
    const size_t nl = rows.find('\n', pos);
    const std::string line = rows.substr(pos, nl == std::string::npos ? nl : nl - pos);
    pos = nl == std::string::npos ? rows.size() : nl + 1;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    const std::string table = line.substr(0, tab), partition = line.substr(tab + 1);
    // Dates only ("2026-01-02"): the value is spliced into the statement.
    if (partition.size() != 10 || partition.find_first_not_of("0123456789-") != std::string::npos)
      continue;
    RETURN_IF_ERROR(
        Execute("ALTER TABLE " + db + "." + table + " DROP PARTITION '" + partition + "'")
            .status());
    ++dropped;
  }
  return dropped;
}

base::StatusOr<std::string> ClickHouseClient::ExecuteOnSchemaTable(const std::string& sql) const {
  // The version table is a TinyLog (schema 1, kept for the agents that created it), which 18.16
  // does not guard against concurrent access: two agents migrating at once can fail a read or an
  // append ("File not found: .../sizes.json"). Both statements are idempotent (the version is a
  // max), so a failure is retried a few times before it is an error.
  base::StatusOr<std::string> r = Execute(sql);
  for (int attempt = 1; !r.ok() && attempt <= 4; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50 << attempt));
    r = Execute(sql);
  }
  return r;
}

base::StatusOr<int> ClickHouseClient::EnsureSchema() const {
  const std::string& db = target_.database;
  RETURN_IF_ERROR(Execute("CREATE DATABASE IF NOT EXISTS " + db).status());
  RETURN_IF_ERROR(Execute(WithDatabase(Migrations().front().statements[1], db)).status());
  ASSIGN_OR_RETURN(std::string found,
                   ExecuteOnSchemaTable("SELECT max(version) FROM " + db + "." + kSchemaTable));
  const int version = std::atoi(found.c_str());
  if (version > LatestSchemaVersion())
    return base::UnsupportedError(target_.ToUrl() + ": schema version " + std::to_string(version) +
                                  " is newer than this build's " +
                                  std::to_string(LatestSchemaVersion()));
  for (const Migration& m : Migrations()) {
    if (m.version <= version) continue;
    for (const std::string& statement : m.statements) {
      const base::Status s = Execute(WithDatabase(statement, db)).status();
      // 18.16 has no ADD COLUMN IF NOT EXISTS: a column another agent (or a retry whose answer
      // was lost) added is "already exists" (Code 44), which is the migration done. Nor is its
      // CREATE TABLE IF NOT EXISTS atomic: two agents migrating at once can both pass the check,
      // and the second create fails with "already exists" (Code 57), the table made all the same.
      const bool already = (statement.find(" ADD COLUMN ") != std::string::npos &&
                            s.message().find("Code: 44,") != std::string::npos) ||
                           (statement.find("CREATE TABLE IF NOT EXISTS") != std::string::npos &&
                            s.message().find("Code: 57,") != std::string::npos);
      if (!s.ok() && !already) return s;
    }
    RETURN_IF_ERROR(ExecuteOnSchemaTable("INSERT INTO " + db + "." + kSchemaTable + " VALUES (" +
                                         std::to_string(m.version) + ", " +
                                         std::to_string(base::UnixNowNs()) + ")")
                        .status());
  }
  return version;
}

}  // namespace inferscope::fleet
