// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/base/status.h"

namespace inferscope::import::nsys {

// Reads part of a large table on a second SQLite connection and thread while the importer scans the
// rest: SQLite's row decoding is the bottleneck of an Nsight import, and it parallelizes by rowid
// range. The helper only reads integer columns (the kernel table's ids and times); everything that
// touches shared state (the NameTable, the sink) stays on the importer's thread, which takes the
// rows from a bounded queue of batches.
class SplitScan {
 public:
  static constexpr int kMaxColumns = 18;  // the kernel table's, with its resources

  // One row: the integer columns of the SELECT, read with the same Int(col) as a Statement.
  struct Row {
    std::array<int64_t, kMaxColumns> values{};
    int64_t Int(int col) const { return values[static_cast<size_t>(col)]; }
  };

  // Starts reading `sql` (which selects `columns` integer columns) from the database at `path`.
  SplitScan(std::string path, std::string sql, int columns);
  ~SplitScan();  // stops the helper early if rows are left unread
  SplitScan(const SplitScan&) = delete;
  SplitScan& operator=(const SplitScan&) = delete;

  // Calls `on_row(const Row&)` for every batch ready now; with `wait`, until the helper is done.
  // Returns the helper's error, if it had one (then some rows were not delivered).
  template <typename F>
  base::Status Take(F&& on_row, bool wait);

  uint64_t rows_read() const { return rows_read_; }

 private:
  using Batch = std::vector<Row>;
  void Run();
  // Pops one batch; false when none is ready (or, with `wait`, when the helper is done).
  bool Pop(Batch* batch, bool wait);

  const std::string path_;
  const std::string sql_;
  const int columns_;
  uint64_t rows_read_ = 0;  // importer thread

  std::mutex mu_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<Batch> queue_;  // guarded by mu_
  bool done_ = false;        // guarded by mu_
  bool stop_ = false;        // guarded by mu_
  base::Status status_;      // guarded by mu_; set by the helper before done_
  std::thread helper_;
};

template <typename F>
base::Status SplitScan::Take(F&& on_row, bool wait) {
  Batch batch;
  while (Pop(&batch, wait)) {
    rows_read_ += batch.size();
    for (const Row& row : batch) on_row(row);
  }
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

}  // namespace inferscope::import::nsys
