// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The agent's embedded store: one SQLite database, <state dir>/inferscope.db, holding the
// processes that connected (one row per hello identity) and their profile windows (one row per
// window, the wire encoding compressed with zstd). Never per-kernel rows. Schema and payload
// format: docs/agent.md.

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "src/model/profile.h"
#include "src/wire/framing.h"

struct sqlite3;
struct sqlite3_stmt;

namespace inferscope::store {

// A process as the store knows it (from its hello).
struct StoredProcess {
  int64_t id = 0;
  wire::Hello hello;
  int64_t first_seen_ns = 0;  // Unix ns, agent clock
  int64_t last_seen_ns = 0;
  int64_t ended_ns = 0;  // when its goodbye arrived; 0 = never (still running, or lost)
};

// A window ready to be written: the wire encoding (window_codec) plus the fields the store indexes.
struct PendingWindow {
  int64_t process_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t received_ns = 0;  // Unix ns, agent clock (retention by age uses it)
  std::string encoded;      // wire::EncodeWindow output
};

// Which windows to read: those overlapping [from_ns, to_ns), optionally of one pid / rank.
struct WindowQuery {
  int64_t from_ns = INT64_MIN;
  int64_t to_ns = INT64_MAX;
  std::optional<uint32_t> pid;
  std::optional<int32_t> rank;
  // Windows STARTING in [skip_from_ns, skip_to_ns) are left out (ScanWindows only): the range
  // query reads them from rollup rows instead. Empty by default.
  int64_t skip_from_ns = 0, skip_to_ns = 0;
};

// Receives one decoded window (or rollup row) of a scan: its process row, how many stored windows
// it stands for (1 for a window) and the window itself (the callee may take it).
using WindowVisitor =
    std::function<void(int64_t process_id, uint64_t windows, model::ProfileWindow& window)>;

// What a scan saw besides the windows it handed out.
struct ScanStats {
  std::map<int64_t, StoredProcess> processes;  // every process that had a row
  uint64_t rows = 0;
  uint64_t corrupt_rows = 0;  // rows that did not decode (skipped)
};

// Which part of time the rollup tiers answer exactly: buckets starting at or after from_ns
// (windows before it were stored by a build without rollups) and ending at or before sealed_ns
// (every window of those buckets is in their rows; later ones are still being folded).
struct RollupCoverage {
  int64_t from_ns = 0;
  int64_t sealed_ns = 0;
  // The longest window stored: windows overlapping [from, to) start after from - this, which
  // bounds the index range a query walks (an open-ended range does not scan the whole table).
  int64_t max_window_ns = 0;
};

struct StoredWindow {
  int64_t process_id = 0;
  model::ProfileWindow window;
};

struct QueryResult {
  std::map<int64_t, StoredProcess> processes;  // every process that has a window below
  std::vector<StoredWindow> windows;           // by start time
  uint64_t corrupt_windows = 0;                // rows that did not decode (skipped)
};

// A stored window's index fields, without its payload (listing windows costs no decoding).
struct WindowInfo {
  int64_t id = 0;
  int64_t process_id = 0;
  int64_t start_ns = 0, end_ns = 0, received_ns = 0;
  uint64_t stored_bytes = 0;  // compressed payload
};

// A process with the number and time span of its stored windows.
struct ProcessInfo {
  StoredProcess process;
  uint64_t windows = 0;
  int64_t first_window_start_ns = 0, last_window_end_ns = 0;  // 0 when it has none
};

struct StoreSummary {
  uint64_t windows = 0;
  uint64_t processes = 0;
  uint64_t payload_bytes = 0;
  int64_t first_start_ns = 0;  // oldest / newest window start; 0 when empty
  int64_t last_end_ns = 0;
};

// One collector's summary of one window: `kind` is its telemetry kind's record_kind() ("gpu",
// "engine", "spans", ...; src/telemetry/registry/telemetry_kinds.cc lists them), `json` what its
// TelemetryData::WriteJson wrote. The store keeps it compressed and never looks inside, so a new
// kind needs no store change.
struct TelemetryRecord {
  std::string kind;
  int64_t start_ns = 0, end_ns = 0;  // Unix ns
  int64_t received_ns = 0;           // when stored (retention by age)
  std::string json;
};

// How long each rollup tier (finest first, kRollupTierNs) is kept; 0 = as long as raw windows.
// A tier is never kept shorter than raw windows: the query planner reads the middle of a range
// from tiers, so a tier row must outlive the windows it stands for.
struct RollupRetention {
  std::array<int64_t, 2> max_age_ns = {30LL * 86400 * 1'000'000'000, 365LL * 86400 * 1'000'000'000};
};

// Parses `--rollup-retention`: comma-separated TIER=AGE with TIER one of 10m, 1h and AGE a
// duration up to days (`10m=90d,1h=730d`; 0 = as long as raw windows); tiers not named keep their
// defaults. A clear one-line error otherwise.
base::StatusOr<RollupRetention> ParseRollupRetention(std::string_view text);

struct RetentionResult {
  uint64_t deleted_rollups = 0;
  uint64_t deleted_windows = 0;
  uint64_t deleted_telemetry = 0;
  uint64_t deleted_processes = 0;
};

// Owns one SQLite connection. Not thread-safe: the agent gives it to a single writer thread;
// readers (`inferscope report`) open their own read-only instance, which WAL lets run while the
// agent writes. Every failure is a Status whose message starts with the database path.
class SqliteStore {
 public:
  enum class Mode { kReadWrite, kReadOnly };
  static constexpr const char* kFileName = "inferscope.db";
  // The schema version this build creates and reads (the number of migrations).
  static int LatestSchemaVersion();

  // Opens <state_dir>/inferscope.db. kReadWrite creates the directory (0700) and the database and
  // applies pending migrations; kReadOnly needs an existing database (kNotFound otherwise).
  // A file that is not an SQLite database is kDataLoss; a schema newer than this build knows is
  // kUnsupported.
  static base::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& state_dir, Mode mode);
  ~SqliteStore();
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  const std::string& path() const { return path_; }
  // Off: windows are stored without folding them into rollups (store_query_benchmark measures
  // their cost this way). The tiers' sealed point then stays put, so queries keep reading raw
  // windows there: never wrong, only slower.
  void set_rollups_enabled(bool on) { rollups_enabled_ = on; }
  int schema_version() const { return schema_version_; }

  // Transactions around batches of the calls below (the agent's writer commits once per batch).
  base::Status Begin();
  base::Status Commit();
  base::Status Rollback();

  // Inserts the process of `hello` or, when (hostname, pid, start time) is known, updates it
  // (a reconnect). Returns its id.
  base::StatusOr<int64_t> UpsertProcess(const wire::Hello& hello, int64_t now_ns);
  base::Status MarkProcessEnded(int64_t process_id, int64_t now_ns);
  // Compresses and appends one window; updates the process's last_seen_ns. A read-write store also
  // folds it into the rollup tiers (decoding `encoded` unless `decoded` is given); the fold is
  // part of the caller's transaction, and Rollback() undoes its in-memory part too (by rebuilding
  // the open buckets from the store).
  base::Status AppendWindow(const PendingWindow& window,
                            const model::ProfileWindow* decoded = nullptr);

  base::Status AppendTelemetry(const TelemetryRecord& record);
  // Records of `kind` overlapping [from_ns, to_ns), by start time (rows that fail to decompress
  // are skipped).
  base::StatusOr<std::vector<TelemetryRecord>> QueryTelemetry(const std::string& kind,
                                                              int64_t from_ns, int64_t to_ns);

  // Windows overlapping the query's range, decoded, with their processes. Holds every window in
  // memory: long ranges use ScanWindows / ScanRollups.
  base::StatusOr<QueryResult> QueryWindows(const WindowQuery& query);
  // Streams the windows of the query's range to `visit`, by start time, one decoded at a time.
  base::Status ScanWindows(const WindowQuery& query, const WindowVisitor& visit, ScanStats* stats);
  // Streams the rows of tier `tier_ns` whose buckets START in [query.from_ns, query.to_ns)
  // (pid/rank filters apply), by bucket start.
  base::Status ScanRollups(int64_t tier_ns, const WindowQuery& query, const WindowVisitor& visit,
                           ScanStats* stats);
  base::StatusOr<RollupCoverage> Coverage();
  // The first window start at or after from_ns and the last window end before to_ns (windows, else
  // the coarsest tier's rows); nullopt when the range holds neither. Index lookups only.
  base::StatusOr<std::optional<std::pair<int64_t, int64_t>>> DataSpan(int64_t from_ns,
                                                                      int64_t to_ns);
  // Payload bytes of the rollup rows (all tiers).
  base::StatusOr<uint64_t> RollupBytes();
  base::StatusOr<StoreSummary> Summary();
  // Processes with a window overlapping [query.from_ns, query.to_ns) (pid/rank filters apply), or
  // when `include_idle`, also those last seen in the range without windows; ordered by id.
  base::StatusOr<std::vector<ProcessInfo>> ListProcesses(const WindowQuery& query,
                                                         bool include_idle);
  // Index fields of the windows overlapping the range, by start time, at most `limit`.
  base::StatusOr<std::vector<WindowInfo>> ListWindows(const WindowQuery& query, size_t limit);

  // Deletes windows (and telemetry) received before now - max_age_ns, then the oldest windows
  // until the payload bytes are at most max_bytes, then processes left without windows that were
  // last seen before now - max_age_ns. 0 disables a limit.
  // Rollup rows are deleted by bucket end, each tier after its own age (`tiers`, never shorter
  // than max_age_ns). Freed pages are then given back to the file system (incremental vacuum).
  base::StatusOr<RetentionResult> ApplyRetention(int64_t max_age_ns, uint64_t max_bytes,
                                                 int64_t now_ns, const RollupRetention& tiers = {});

  // Payload codec (public for tests and size measurements): byte 0 = codec (2 = zstd, written; 1 =
  // zlib, what schema 1-7 wrote, read), bytes 1-4 = uncompressed size (u32 LE), then the stream.
  static base::StatusOr<std::string> CompressPayload(std::string_view encoded);
  static base::StatusOr<std::string> DecompressPayload(std::string_view stored);

 private:
  struct RollupState;  // the writer's open (not yet written) rollup buckets

  SqliteStore(sqlite3* db, std::string path);
  base::Status Migrate();
  // Rollup writing.
  base::Status LoadRollups();
  // Both take the window by value: it is re-binned in place, so callers move what they own.
  base::Status FoldIntoRollups(int64_t process_id, const model::ProfileWindow& window,
                               bool rebuilding);
  base::Status FoldIntoTier(size_t tier, int64_t process_id, const model::ProfileWindow& part,
                            int64_t start_ns, uint64_t windows, bool rebuilding);
  base::Status CloseBucket(size_t tier, int64_t process_id);
  base::Status WriteRollupRow(int64_t tier_ns, int64_t process_id, int64_t start_ns,
                              uint64_t windows, const model::ProfileWindow& merged);
  base::Status SealRollups();
  base::Status ScanPayloads(sqlite3_stmt* s, const WindowVisitor& visit, ScanStats* stats);
  base::Status Exec(const char* sql);
  base::Status Error(const std::string& what) const;
  // A cached prepared statement (reset before reuse).
  base::StatusOr<sqlite3_stmt*> Prepare(const char* sql);

  sqlite3* db_ = nullptr;
  std::string path_;
  int schema_version_ = 0;
  std::map<const char*, sqlite3_stmt*> statements_;  // keyed by the SQL literal's address
  std::unique_ptr<RollupState> rollups_;             // read-write stores only
  bool rollups_enabled_ = true;
  bool rollups_stale_ = false;  // a Rollback() whose rebuild of the open buckets failed
  int64_t max_window_ns_ = -1;  // store_meta max_window_ns as this writer knows it (-1: unread)
};

}  // namespace inferscope::store
