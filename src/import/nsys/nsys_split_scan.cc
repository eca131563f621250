// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/nsys/nsys_split_scan.h"

#include <utility>

#include "src/import/nsys/nsys_schema.h"

namespace inferscope::import::nsys {

namespace {
constexpr size_t kBatchRows = 4096;
constexpr size_t kMaxQueuedBatches = 4;  // ~2 MB in flight at most
}  // namespace

SplitScan::SplitScan(std::string path, std::string sql, int columns)
    : path_(std::move(path)),
      sql_(std::move(sql)),
      columns_(columns < kMaxColumns ? columns : kMaxColumns) {
  helper_ = std::thread([this] { Run(); });
}

SplitScan::~SplitScan() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  not_full_.notify_all();
  if (helper_.joinable()) helper_.join();
}

void SplitScan::Run() {
  base::Status status;
  auto finish = [&] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_ = status;
      done_ = true;
    }
    not_empty_.notify_all();
  };
  auto db = Database::OpenFile(path_);
  if (!db.ok()) {
    status = db.status();
    return finish();
  }
  auto stmt = Statement::Prepare(*db, sql_);
  if (!stmt.ok()) {
    status = stmt.status();
    return finish();
  }
  Batch batch;
  batch.reserve(kBatchRows);
  auto push = [&]() -> bool {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [this] { return queue_.size() < kMaxQueuedBatches || stop_; });
    if (stop_) return false;
    queue_.push_back(std::move(batch));
    lock.unlock();
    not_empty_.notify_one();
    batch = Batch();
    batch.reserve(kBatchRows);
    return true;
  };
  int rc;
  while ((rc = stmt->Step()) == SQLITE_ROW) {
    Row& row = batch.emplace_back();
    for (int c = 0; c < columns_; ++c) row.values[static_cast<size_t>(c)] = stmt->Int(c);
    if (batch.size() == kBatchRows && !push()) return finish();
  }
  if (rc != SQLITE_DONE) status = db->Error(rc, "split scan");
  if (!batch.empty()) push();
  finish();
}

bool SplitScan::Pop(Batch* batch, bool wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (wait) not_empty_.wait(lock, [this] { return !queue_.empty() || done_; });
  if (queue_.empty()) return false;
  *batch = std::move(queue_.front());
  queue_.pop_front();
  lock.unlock();
  not_full_.notify_one();
  return true;
}

}  // namespace inferscope::import::nsys
