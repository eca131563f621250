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
    for (const Item& item : batch) Deliver(item);
    batch.clear();
    std::lock_guard<std::mutex> lock(mu_);
    spare_.push_back(std::move(batch));
  }
}

void PipelinedSink::Deliver(const Item& item) {
  struct Visitor {
    model::EventSink* sink;
    void operator()(const model::KernelEvent& e) const { sink->OnKernel(e); }
    void operator()(const model::ApiCallEvent& e) const { sink->OnApiCall(e); }
    void operator()(const model::MemcpyEvent& e) const { sink->OnMemcpy(e); }
    void operator()(const model::MemsetEvent& e) const { sink->OnMemset(e); }
    void operator()(const model::SyncEvent& e) const { sink->OnSync(e); }
    void operator()(const model::NvtxEvent& e) const { sink->OnNvtx(e); }
    void operator()(const model::ProcessInfo& e) const { sink->OnProcess(e); }
    void operator()(const model::DeviceInfo& e) const { sink->OnDevice(e); }
    void operator()(const Quality& q) const { sink->OnDataQuality(q.pid, q.counter, q.count); }
  };
  std::visit(Visitor{downstream_}, item);
}

}  // namespace inferscope::import
