// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The ClickHouse sink (`inferscope agent --sink clickhouse://HOST:8123/DB`, docs/fleet.md): the
// agent's stored windows and telemetry, as rows of the fleet schema, inserted in batches every
// few seconds from its own thread; a bounded spool in the agent's SQLite store holds them while
// the server is down or slow, and is drained first on reconnect.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "src/fleet/sink/clickhouse_client.h"
#include "src/fleet/sink/row_encoder.h"
#include "src/store/window_sink.h"

struct sqlite3;

namespace inferscope::fleet {

struct ClickHouseSinkOptions {
  ClickHouseTarget target;
  FleetIdentity identity;
  // The spool lives in <state_dir>/inferscope.db (table clickhouse_spool); empty: no spool (what
  // cannot be sent is dropped and counted).
  std::string state_dir;
  int64_t flush_interval_ns = 2'000'000'000;
  size_t max_queued_bytes = 32u << 20;    // encoded rows in memory; beyond: dropped, counted
  uint64_t max_spool_bytes = 256u << 20;  // compressed spool; beyond: oldest dropped, counted
  int64_t timeout_ms = 10'000;            // per insert
  // > 0: once an hour, drop the fleet tables' daily partitions older than this many days (every
  // agent may do it: dropping a dropped partition is a no-op). 0: keep everything.
  int retention_days = 0;
  std::function<void(std::string_view)> log;  // one line per state change (down, back, drops)
};

// Guarantees: OnWindow/OnTelemetry only encode into memory (no I/O, no waiting on the server);
// every row is sent at least once unless it is counted in `dropped_rows`, and stored at most once:
// an insert whose outcome is unknown (timeout, answer lost) is spooled with its batch id and, once
// no attempt of it runs on the server any more, resent only if none of its rows are there
// (docs/fleet.md, "Exactly once"; the ReplacingMergeTree over the row key stays as a second
// net); rows spooled before the agent died are counted or sent by the next agent on the same
// state dir. Inserts go out in spool order, then the newest batch.
class ClickHouseSink : public store::WindowSink {
 public:
  // Opens the spool and starts the thread. Does not need the server to be up.
  static base::StatusOr<std::unique_ptr<ClickHouseSink>> Start(ClickHouseSinkOptions options);
  ~ClickHouseSink() override;

  void OnWindow(const wire::Hello& process, const model::ProfileWindow& window) override;
  void OnTelemetry(const store::TelemetryRecord& record) override;
  store::SinkStats stats() const override;
  // Sends (or spools) what is queued, then stops the thread. Bounded by the insert timeouts.
  void Stop() override;
  // Sends the queue and the spool now, from the calling thread's point of view synchronously
  // (benchmarks and tests). OK when nothing is left unsent.
  base::Status Flush();

 private:
  explicit ClickHouseSink(ClickHouseSinkOptions options);
  base::Status OpenSpool();
  void Loop();
  // Sends `batch` (split into inserts of one table and day, each with a new batch id) after the
  // spool; what cannot be sent goes to the spool.
  void Ship(RowBatch& batch);
  base::Status DrainSpool();
  // Spools inserts[first..]; `first_attempted`: inserts[first] may have reached the server.
  void SpoolInserts(const std::vector<Insert>& inserts, size_t first, bool first_attempted);
  uint64_t NextBatchId();
  // Whether an insert whose outcome is unknown is on the server (kUnavailable while an earlier
  // attempt still runs there).
  base::StatusOr<bool> AlreadyStored(const std::string& table, const std::string& date,
                                     uint64_t batch_id, int64_t rows);
  void Fail(const base::Status& status);
  void MaybeApplyRetention();
  void Log(const std::string& line);

  ClickHouseSinkOptions options_;
  ClickHouseClient client_;
  std::string hostname_;  // for telemetry rows (this machine)
  sqlite3* spool_ = nullptr;
  bool schema_ok_ = false;  // the sink thread's view: EnsureSchema succeeded since the last failure
  std::thread thread_;

  mutable std::mutex mu_;  // guards pending_, stop_, flush_*, stats_
  std::condition_variable cv_;
  RowBatch pending_;
  bool stop_ = false;
  uint64_t flush_requested_ = 0, flush_done_ = 0;
  base::Status flush_status_;
  std::condition_variable flushed_cv_;
  store::SinkStats stats_;
  std::mt19937_64 batch_ids_{std::random_device{}()};  // sink thread only
  uint64_t spool_bytes_ = 0;                           // sink thread only
  int64_t next_retention_ns_ = 0;                      // sink thread only (monotonic)
};

}  // namespace inferscope::fleet
