// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/pipelined_sink.h"

namespace inferscope::import {

PipelinedSink::PipelinedSink(model::EventSink* downstream, size_t batch_events, size_t max_batches)
    : downstream_(downstream),
      batch_events_(batch_events > 0 ? batch_events : 1),
      max_batches_(max_batches > 0 ? max_batches : 1) {
  batch_.reserve(batch_events_);
  consumer_ = std::thread([this] { Run(); });
}

PipelinedSink::~PipelinedSink() { Close(); }

void PipelinedSink::Flush() {
  if (batch_.empty()) return;
  Batch next;
  {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [this] { return queue_.size() < max_batches_; });
    queue_.push_back(std::move(batch_));
    if (!spare_.empty()) {
      next = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  not_empty_.notify_one();
  batch_ = std::move(next);
  batch_.clear();
  batch_.reserve(batch_events_);
}

void PipelinedSink::Close() {
  if (closed_) return;
  closed_ = true;
  Flush();
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  not_empty_.notify_one();
  if (consumer_.joinable()) consumer_.join();
}

void PipelinedSink::Run() {
  while (true) {
    Batch batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      not_empty_.wait(lock, [this] { return !queue_.empty() || closing_; });
      if (queue_.empty()) return;  // closing and drained
      batch = std::move(queue_.front());
      queue_.pop_front();
    }
    not_full_.notify_one();
    for (const model::AnyEvent& item : batch) model::Deliver(item, downstream_);
    batch.clear();
    std::lock_guard<std::mutex> lock(mu_);
    spare_.push_back(std::move(batch));
  }
}

}  // namespace inferscope::import
