// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Statements and inserts over ClickHouse's HTTP interface (the one HTTP client, src/net):
// the sink's inserts and schema migration, and the fleet reads.

#include <cstdint>
#include <string>
#include <string_view>

#include "src/base/status.h"
#include "src/fleet/sink/clickhouse_config.h"

namespace inferscope::fleet {

// Stateless apart from its target: every call is one HTTP request (no session), so any thread may
// use its own copy. Errors: kUnavailable when the server is not reachable or answered 5xx (retry
// later), kInvalidArgument when it refused the statement (4xx/500 with a DB::Exception: the
// message is ClickHouse's first line).
class ClickHouseClient {
 public:
  explicit ClickHouseClient(ClickHouseTarget target, int64_t timeout_ms = 10'000);

  // Runs `sql` (the query travels in the body, so its length is not bounded by URL limits);
  // returns the response body.
  base::StatusOr<std::string> Execute(std::string_view sql,
                                      size_t max_body_bytes = 64u << 20) const;
  // INSERT INTO db.table FORMAT JSONEachRow with `rows` as the data. A non-empty `query_id`
  // names the query on the server: while an insert of that id still runs there, another one is
  // refused (Code 216, kUnavailable), so a retry cannot overtake a slow first attempt.
  base::Status InsertJsonEachRow(std::string_view table, std::string_view rows,
                                 const std::string& query_id = "") const;
  // The rows of `batch_id` in db.table's partition `date` ("YYYY-MM-DD"); with the schema's
  // sorting key this reads one column of one day.
  base::StatusOr<uint64_t> CountBatchRows(std::string_view table, const std::string& date,
                                          uint64_t batch_id) const;
  // Whether a query named `query_id` is running on the server (system.processes).
  base::StatusOr<bool> QueryRunning(const std::string& query_id) const;
  // Creates or migrates the schema (schema.h) to LatestSchemaVersion(); returns the version found.
  base::StatusOr<int> EnsureSchema() const;

  // Retention without TTL (18.16): drops the daily partitions (`date`) before `keep_from_date`
  // ("YYYY-MM-DD") of every fleet table; returns how many it dropped.
  base::StatusOr<int> DropPartitionsBefore(const std::string& keep_from_date) const;

  const ClickHouseTarget& target() const { return target_; }

 private:
  // Execute, retried a few times: for the version table, which concurrent agents can trip.
  base::StatusOr<std::string> ExecuteOnSchemaTable(const std::string& sql) const;
  base::StatusOr<std::string> Post(const std::string& path_and_query, std::string_view body,
                                   size_t max_body_bytes) const;

  ClickHouseTarget target_;
  int64_t timeout_ms_;
};

}  // namespace inferscope::fleet
