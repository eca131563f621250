// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Where the agent's writer hands every window and telemetry record it has committed to the SQLite
// store, for shipping elsewhere (the ClickHouse sink, src/fleet; docs/fleet.md). Beside
// the store because that is what it follows: a sink only ever sees what the store holds.

#include <cstdint>
#include <string>

#include "src/model/profile.h"
#include "src/store/sqlite_store.h"
#include "src/wire/framing.h"

namespace inferscope::store {

// What a sink reports in `inferscope status` and /api/v1/status ("sink" object).
struct SinkStats {
  std::string url;             // where it ships (never with credentials)
  bool connected = false;      // the last attempt succeeded
  uint64_t rows_sent = 0;      // rows acknowledged by the server (retries counted once each)
  uint64_t batches_sent = 0;   // inserts acknowledged
  uint64_t failures = 0;       // inserts that failed (then spooled, retried later)
  uint64_t queued_rows = 0;    // in memory, waiting for the next flush
  uint64_t spooled_rows = 0;   // in the store's spool now (server down or slow)
  uint64_t spooled_total = 0;  // rows ever written to the spool
  uint64_t spool_drained = 0;  // spooled rows later acknowledged
  uint64_t dropped_rows = 0;   // lost: memory queue or spool over its bound (oldest first)
  std::string last_error;      // empty when the last attempt succeeded
};

// A destination for stored windows and telemetry. Guarantees asked of an implementation: both
// calls return at once (copy or queue, never network I/O: the agent's writer calls them between
// SQLite batches, and ingest must not wait on a remote server), are called from one thread (the
// writer), and stats() is thread-safe. Stop() flushes what it can within a bounded time.
class WindowSink {
 public:
  virtual ~WindowSink() = default;
  // `process` is the hello of the window's process; `window` one process's window as stored.
  virtual void OnWindow(const wire::Hello& process, const model::ProfileWindow& window) = 0;
  virtual void OnTelemetry(const TelemetryRecord& record) = 0;
  virtual SinkStats stats() const = 0;
  virtual void Stop() = 0;
};

}  // namespace inferscope::store
