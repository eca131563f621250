// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/pipelined_sink.h"

namespace inferscope::import {

PipelinedSink::PipelinedSink(model::EventSink* downstream, size_t batch_events, size_t max_batches)
    : downstream_(downstream),
      batch_events_(batch_events > 0 ? batch_events : 1),
      max_batches_(max_batches > 0 ? max_batches : 1) {
  batch_.events.reserve(batch_events_);
  consumer_ = std::thread([this] { Run(); });
}

void PipelinedSink::OnViewRanges(const model::ViewRangeEvent* events, size_t count) {
  if (count == 0) return;
  batch_.runs.push_back({batch_.events.size(), count});
  batch_.ranges.insert(batch_.ranges.end(), events, events + count);
  if (batch_.size() >= batch_events_) Flush();
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
  batch_.events.reserve(batch_events_);
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
    const model::ViewRangeEvent* ranges = batch.ranges.data();
    auto run = batch.runs.begin();
    for (size_t i = 0; i < batch.events.size(); ++i) {
      for (; run != batch.runs.end() && run->before == i; ++run) {
        downstream_->OnViewRanges(ranges, run->count);
        ranges += run->count;
      }
      model::Deliver(batch.events[i], downstream_);
    }
    for (; run != batch.runs.end(); ++run) {
      downstream_->OnViewRanges(ranges, run->count);
      ranges += run->count;
    }
    batch.clear();
    std::lock_guard<std::mutex> lock(mu_);
    spare_.push_back(std::move(batch));
  }
}

}  // namespace inferscope::import
