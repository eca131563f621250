// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/fleet/sink/clickhouse_sink.h"

#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "src/base/time_point.h"

namespace inferscope::fleet {
namespace {

// batch_id, date and attempted came with schema version 2 (a spool of an older agent gets them
// by ALTER; its rows keep batch_id 0: sent as they are, the ReplacingMergeTree collapses a
// duplicate). attempted: an insert of this batch may have reached the server.
constexpr const char* kSpoolSchema =
    "CREATE TABLE IF NOT EXISTS clickhouse_spool (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "tbl TEXT NOT NULL, rows INTEGER NOT NULL, bytes INTEGER NOT NULL, body BLOB NOT NULL, "
    "batch_id INTEGER NOT NULL DEFAULT 0, date TEXT NOT NULL DEFAULT '', "
    "attempted INTEGER NOT NULL DEFAULT 0)";
constexpr const char* kSpoolColumns[] = {
    "ALTER TABLE clickhouse_spool ADD COLUMN batch_id INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE clickhouse_spool ADD COLUMN date TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE clickhouse_spool ADD COLUMN attempted INTEGER NOT NULL DEFAULT 0",
};

// The query id of every attempt of one insert: the server refuses a second query of the same id
// while the first still runs (clickhouse_client.h).
std::string InsertQueryId(uint64_t batch_id) {
  return "inferscope-insert-" + std::to_string(batch_id);
}

// A prepared statement finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  sqlite3_stmt* get() const { return s_; }
  explicit operator bool() const { return s_ != nullptr; }

 private:
  sqlite3_stmt* s_ = nullptr;
};

}  // namespace

ClickHouseSink::ClickHouseSink(ClickHouseSinkOptions options)
    : options_(std::move(options)), client_(options_.target, options_.timeout_ms) {
  if (!options_.log) {
    options_.log = [](std::string_view line) {
      std::fprintf(stderr, "inferscope agent: %.*s\n", static_cast<int>(line.size()), line.data());
    };
  }
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) hostname_ = host;
  stats_.url = options_.target.ToUrl();
}

ClickHouseSink::~ClickHouseSink() {
  Stop();
  if (spool_) sqlite3_close(spool_);
}

base::StatusOr<std::unique_ptr<ClickHouseSink>> ClickHouseSink::Start(
    ClickHouseSinkOptions options) {
  std::unique_ptr<ClickHouseSink> sink(new ClickHouseSink(std::move(options)));
  if (!sink->options_.state_dir.empty()) RETURN_IF_ERROR(sink->OpenSpool());
  ClickHouseSink* self = sink.get();
  sink->thread_ = std::thread([self] { self->Loop(); });
  return sink;
}

base::Status ClickHouseSink::OpenSpool() {
  const std::string path = options_.state_dir + "/inferscope.db";
  if (sqlite3_open_v2(path.c_str(), &spool_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK)
    return base::UnavailableError(path + ": cannot open the ClickHouse spool: " +
                                  (spool_ ? sqlite3_errmsg(spool_) : "out of memory"));
  // The agent's writer holds the write lock for one batch at a time (milliseconds).
  sqlite3_busy_timeout(spool_, 10'000);
  if (sqlite3_exec(spool_, kSpoolSchema, nullptr, nullptr, nullptr) != SQLITE_OK)
    return base::UnavailableError(
        path + ": cannot create the ClickHouse spool: " + sqlite3_errmsg(spool_));
  for (const char* alter : kSpoolColumns) {
    // A spool created by this version has them: "duplicate column name".
    if (sqlite3_exec(spool_, alter, nullptr, nullptr, nullptr) != SQLITE_OK &&
        std::string(sqlite3_errmsg(spool_)).find("duplicate column") == std::string::npos)
      return base::UnavailableError(
          path + ": cannot migrate the ClickHouse spool: " + sqlite3_errmsg(spool_));
  }
  Stmt s(spool_, "SELECT coalesce(sum(rows), 0), coalesce(sum(bytes), 0) FROM clickhouse_spool");
  if (s && sqlite3_step(s.get()) == SQLITE_ROW) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.spooled_rows = static_cast<uint64_t>(sqlite3_column_int64(s.get(), 0));
    spool_bytes_ = static_cast<uint64_t>(sqlite3_column_int64(s.get(), 1));
  }
  if (stats_.spooled_rows > 0)
    Log("ClickHouse spool holds " + std::to_string(stats_.spooled_rows) +
        " rows from before; sending them first");
  return base::OkStatus();
}

void ClickHouseSink::Log(const std::string& line) { options_.log(line); }

void ClickHouseSink::OnWindow(const wire::Hello& process, const model::ProfileWindow& window) {
  std::lock_guard<std::mutex> lock(mu_);
  if (pending_.total_bytes() >= options_.max_queued_bytes) {
    RowBatch dropped;
    EncodeWindow(options_.identity, process, window, &dropped);
    stats_.dropped_rows += dropped.total_rows();
    return;
  }
  const uint64_t before = pending_.total_rows();
  EncodeWindow(options_.identity, process, window, &pending_);
  stats_.queued_rows += pending_.total_rows() - before;
}

void ClickHouseSink::OnTelemetry(const store::TelemetryRecord& record) {
  std::lock_guard<std::mutex> lock(mu_);
  if (pending_.total_bytes() >= options_.max_queued_bytes) {
    ++stats_.dropped_rows;
    return;
  }
  if (record.kind == "engine") options_.identity.LearnFromEngineRecord(record.json);
  EncodeTelemetry(options_.identity, hostname_, record, &pending_);
  ++stats_.queued_rows;
}

store::SinkStats ClickHouseSink::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void ClickHouseSink::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

base::Status ClickHouseSink::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!thread_.joinable() || stop_) return base::InternalError("ClickHouse sink stopped");
  const uint64_t ticket = ++flush_requested_;
  cv_.notify_all();
  flushed_cv_.wait(lock, [&] { return flush_done_ >= ticket; });
  return flush_status_;
}

void ClickHouseSink::Loop() {
  while (true) {
    RowBatch batch;
    bool stopping = false;
    uint64_t flush_ticket = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::nanoseconds(options_.flush_interval_ns),
                   [&] { return stop_ || flush_requested_ > flush_done_; });
      std::swap(batch, pending_);
      stats_.queued_rows = 0;
      stopping = stop_;
      flush_ticket = flush_requested_;
    }
    Ship(batch);
    if (!stopping) MaybeApplyRetention();
    {
      std::lock_guard<std::mutex> lock(mu_);
      flush_status_ =
          stats_.spooled_rows == 0 && stats_.last_error.empty()
              ? base::OkStatus()
              : base::UnavailableError(stats_.last_error.empty() ? "rows left in the spool"
                                                                 : stats_.last_error);
      flush_done_ = flush_ticket;
    }
    flushed_cv_.notify_all();
    if (stopping) break;
  }
}

void ClickHouseSink::MaybeApplyRetention() {
  if (options_.retention_days <= 0 || !schema_ok_) return;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  if (now < next_retention_ns_) return;
  next_retention_ns_ = now + 3600'000'000'000;
  const std::string keep_from =
      UtcDate(base::UnixNowNs() - int64_t{options_.retention_days} * 86400'000'000'000);
  auto dropped = client_.DropPartitionsBefore(keep_from);
  if (!dropped.ok())
    Log("ClickHouse retention: " + dropped.status().message());
  else if (*dropped > 0)
    Log("ClickHouse retention: dropped " + std::to_string(*dropped) + " partitions before " +
        keep_from);
}

void ClickHouseSink::Fail(const base::Status& status) {
  bool was_connected;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_connected = stats_.connected || stats_.last_error.empty();
    stats_.connected = false;
    ++stats_.failures;
    stats_.last_error = status.message();
  }
  schema_ok_ = false;  // the server may have come back empty: check the schema again
  if (was_connected) Log("ClickHouse sink: " + status.message() + "; spooling until it answers");
}

void ClickHouseSink::Ship(RowBatch& batch) {
  std::vector<Insert> inserts = SplitIntoInserts(batch, [this] { return NextBatchId(); });
  batch.Clear();
  if (!schema_ok_) {
    auto v = client_.EnsureSchema();
    if (!v.ok()) {
      Fail(v.status());
      SpoolInserts(inserts, 0, false);
      return;
    }
    schema_ok_ = true;
    bool back;
    {
      std::lock_guard<std::mutex> lock(mu_);
      back = !stats_.last_error.empty();
      stats_.connected = true;
      stats_.last_error.clear();
    }
    if (back) Log("ClickHouse sink: " + options_.target.ToUrl() + " answers again");
  }
  if (!DrainSpool().ok()) {
    SpoolInserts(inserts, 0, false);
    return;
  }
  for (size_t i = 0; i < inserts.size(); ++i) {
    const Insert& in = inserts[i];
    const base::Status s = client_.InsertJsonEachRow(RowBatch::TableName(in.table), in.body,
                                                     InsertQueryId(in.batch_id));
    if (s.code() == base::StatusCode::kInvalidArgument) {
      // The server refused these rows (not a transport problem): retrying would refuse them
      // again and hold up everything behind them.
      std::lock_guard<std::mutex> lock(mu_);
      stats_.dropped_rows += in.rows;
      stats_.last_error = s.message();
      ++stats_.failures;
      Log("ClickHouse sink: " + std::to_string(in.rows) + " rows refused: " + s.message());
      continue;
    }
    if (!s.ok()) {
      // Whether the server stored this insert is unknown (a lost answer, a timeout): it goes to
      // the spool marked attempted, and is counted on the server before it is sent again.
      Fail(s);
      SpoolInserts(inserts, i, true);
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    stats_.rows_sent += in.rows;
    ++stats_.batches_sent;
    stats_.connected = true;
  }
}

uint64_t ClickHouseSink::NextBatchId() {
  // Random, not a counter: ids must not repeat across agents and restarts sharing a server. Below
  // 2^63 so that SQLite's INTEGER holds it; never 0 (rows of before schema version 2).
  uint64_t id;
  do {
    id = batch_ids_() >> 1;
  } while (id == 0);
  return id;
}

base::StatusOr<bool> ClickHouseSink::AlreadyStored(const std::string& table,
                                                   const std::string& date, uint64_t batch_id,
                                                   int64_t rows) {
  // An earlier attempt still running could commit after the count below: wait for it. (The
  // retry carries the same query id, so the server would also refuse it while that one runs.)
  ASSIGN_OR_RETURN(bool running, client_.QueryRunning(InsertQueryId(batch_id)));
  if (running)
    return base::UnavailableError("an earlier insert of batch " + std::to_string(batch_id) +
                                  " is still running on the server");
  ASSIGN_OR_RETURN(uint64_t found, client_.CountBatchRows(table, date, batch_id));
  if (found == 0) return false;
  // One insert is one part, committed whole: any row means all of them. Fewer can only be a
  // merge that collapsed a same-key row written by another batch (the ReplacingMergeTree).
  if (found != static_cast<uint64_t>(rows))
    Log("ClickHouse sink: batch " + std::to_string(batch_id) + " of " + table + " has " +
        std::to_string(found) + " of " + std::to_string(rows) +
        " rows on the server (merged with same-key rows); not resent");
  return true;
}

base::Status ClickHouseSink::DrainSpool() {
  if (!spool_) return base::OkStatus();
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stats_.spooled_rows == 0) return base::OkStatus();
    }
    int64_t id = 0, rows = 0, bytes = 0, batch_id = 0;
    bool attempted = false;
    std::string table, body, date;
    {
      Stmt s(spool_,
             "SELECT id, tbl, rows, bytes, body, batch_id, date, attempted FROM clickhouse_spool "
             "ORDER BY id LIMIT 1");
      const int rc = s ? sqlite3_step(s.get()) : SQLITE_ERROR;
      if (rc == SQLITE_DONE) {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.spooled_rows = 0;
        spool_bytes_ = 0;
        return base::OkStatus();
      }
      if (rc != SQLITE_ROW)
        return base::UnavailableError("spool: " + std::string(sqlite3_errmsg(spool_)));
      id = sqlite3_column_int64(s.get(), 0);
      table = reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 1));
      rows = sqlite3_column_int64(s.get(), 2);
      bytes = sqlite3_column_int64(s.get(), 3);
      body.assign(static_cast<const char*>(sqlite3_column_blob(s.get(), 4)),
                  static_cast<size_t>(sqlite3_column_bytes(s.get(), 4)));
      batch_id = sqlite3_column_int64(s.get(), 5);
      date = reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 6));
      attempted = sqlite3_column_int64(s.get(), 7) != 0;
    }
    base::Status sent;
    bool stored_before = false, unreadable = false;
    // Every encoded row has a date; an entry without one could not be counted (sent as is: the
    // ReplacingMergeTree is the net for it).
    if (batch_id > 0 && attempted && date.size() == 10) {
      auto stored = AlreadyStored(table, date, static_cast<uint64_t>(batch_id), rows);
      if (!stored.ok()) {
        Fail(stored.status());
        return stored.status();
      }
      stored_before = *stored;
    }
    if (!stored_before) {
      if (batch_id > 0 && !attempted) {
        // Marked before sending: an agent that dies with the answer in flight leaves the next
        // one a batch to count first, not to send blindly.
        Stmt mark(spool_, "UPDATE clickhouse_spool SET attempted = 1 WHERE id = ?");
        sqlite3_bind_int64(mark.get(), 1, id);
        if (sqlite3_step(mark.get()) != SQLITE_DONE)
          return base::UnavailableError("spool: " + std::string(sqlite3_errmsg(spool_)));
      }
      auto plain = store::SqliteStore::DecompressPayload(body);
      if (!plain.ok()) {
        unreadable = true;
        sent = plain.status();
      } else {
        sent = client_.InsertJsonEachRow(
            table, *plain, batch_id > 0 ? InsertQueryId(static_cast<uint64_t>(batch_id)) : "");
      }
    }
    // Refused: a corrupt spool entry or rows the server rejects. A lost answer (kDataLoss from
    // the transport) is not: the entry stays, marked attempted, and is counted next time.
    const bool refused =
        !sent.ok() && (unreadable || sent.code() == base::StatusCode::kInvalidArgument);
    if (!sent.ok() && !refused) {
      Fail(sent);
      return sent;
    }
    Stmt del(spool_, "DELETE FROM clickhouse_spool WHERE id = ?");
    sqlite3_bind_int64(del.get(), 1, id);
    if (sqlite3_step(del.get()) != SQLITE_DONE)
      return base::UnavailableError("spool: " + std::string(sqlite3_errmsg(spool_)));
    std::lock_guard<std::mutex> lock(mu_);
    stats_.spooled_rows -= std::min<uint64_t>(stats_.spooled_rows, static_cast<uint64_t>(rows));
    spool_bytes_ -= std::min<uint64_t>(spool_bytes_, static_cast<uint64_t>(bytes));
    if (refused) {
      stats_.dropped_rows += static_cast<uint64_t>(rows);
      Log("ClickHouse sink: " + std::to_string(rows) + " spooled rows refused: " + sent.message());
    } else {
      stats_.rows_sent += static_cast<uint64_t>(rows);
      stats_.spool_drained += static_cast<uint64_t>(rows);
      if (!stored_before) ++stats_.batches_sent;
    }
  }
}

void ClickHouseSink::SpoolInserts(const std::vector<Insert>& inserts, size_t first,
                                  bool first_attempted) {
  uint64_t lost = 0;
  for (size_t i = first; i < inserts.size(); ++i) {
    const Insert& in = inserts[i];
    if (in.rows == 0) continue;
    if (!spool_) {
      lost += in.rows;
      continue;
    }
    auto packed = store::SqliteStore::CompressPayload(in.body);
    Stmt s(spool_,
           "INSERT INTO clickhouse_spool (tbl, rows, bytes, body, batch_id, date, attempted) "
           "VALUES (?, ?, ?, ?, ?, ?, ?)");
    if (!packed.ok() || !s) {
      lost += in.rows;
      continue;
    }
    sqlite3_bind_text(s.get(), 1, RowBatch::TableName(in.table), -1, SQLITE_STATIC);
    sqlite3_bind_int64(s.get(), 2, static_cast<int64_t>(in.rows));
    sqlite3_bind_int64(s.get(), 3, static_cast<int64_t>(packed->size()));
    sqlite3_bind_blob(s.get(), 4, packed->data(), static_cast<int>(packed->size()), SQLITE_STATIC);
    sqlite3_bind_int64(s.get(), 5, static_cast<int64_t>(in.batch_id));
    sqlite3_bind_text(s.get(), 6, in.date.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_int(s.get(), 7, i == first && first_attempted ? 1 : 0);
    if (sqlite3_step(s.get()) != SQLITE_DONE) {
      lost += in.rows;
      Log("ClickHouse spool: " + std::string(sqlite3_errmsg(spool_)));
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    stats_.spooled_rows += in.rows;
    stats_.spooled_total += in.rows;
    spool_bytes_ += packed->size();
  }
  // Over its bound, the spool gives up its oldest batches (the newest say more about now).
  uint64_t spool_bytes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    spool_bytes = spool_bytes_;
  }
  while (spool_ && spool_bytes > options_.max_spool_bytes) {
    Stmt s(spool_, "SELECT id, rows, bytes FROM clickhouse_spool ORDER BY id LIMIT 1");
    if (!s || sqlite3_step(s.get()) != SQLITE_ROW) break;
    const int64_t id = sqlite3_column_int64(s.get(), 0);
    const auto rows = static_cast<uint64_t>(sqlite3_column_int64(s.get(), 1));
    const auto bytes = static_cast<uint64_t>(sqlite3_column_int64(s.get(), 2));
    Stmt del(spool_, "DELETE FROM clickhouse_spool WHERE id = ?");
    sqlite3_bind_int64(del.get(), 1, id);
    if (sqlite3_step(del.get()) != SQLITE_DONE) break;
    std::lock_guard<std::mutex> lock(mu_);
    stats_.spooled_rows -= std::min(stats_.spooled_rows, rows);
    spool_bytes_ -= std::min(spool_bytes_, bytes);
    spool_bytes = spool_bytes_;
    lost += rows;
  }
  if (lost > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.dropped_rows += lost;
  }
}

}  // namespace inferscope::fleet
