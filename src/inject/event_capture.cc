// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/event_capture.h"

#include "src/wire/framing.h"

namespace inferscope::inject {

namespace {
std::string EndFrame(const wire::CaptureEnd& end) {
  std::string payload, frame;
  wire::EncodeCaptureEnd(end, &payload);
  (void)wire::FrameWriter::Append(wire::FrameType::kCaptureEnd, payload, &frame);
  return frame;
}
}  // namespace

void EventCapture::Request(const wire::CaptureRequest& request) {
  if (active_) {
    wire::CaptureEnd refused;
    refused.capture_id = request.capture_id;
    refused.refused = "capture " + std::to_string(request_.capture_id) + " is still running";
    refusals_.push_back(EndFrame(refused));
    return;
  }
  request_ = request;
  end_ = wire::CaptureEnd{};
  end_.capture_id = request.capture_id;
  start_ns_ = request.start_unix_ns;
  end_ns_ = request.start_unix_ns + request.duration_ns;
  named_.clear();
  sealed_.clear();
  lost_base_set_ = false;
  chunk_.Begin(request.capture_id, 0);
  active_ = true;
  recording_ = request.max_bytes > 0 && request.max_events > 0;
  if (!recording_)
    end_.cap_hit = request.max_bytes == 0 ? wire::CaptureCap::kBytes : wire::CaptureCap::kEvents;
}

bool EventCapture::Admit() {
  if (!recording_) {
    ++end_.events_dropped;  // a cap stopped the recording (or the request allowed nothing)
    return false;
  }
  // The chunk's bytes count as they grow; an event may overshoot the byte cap by its own size.
  if (end_.bytes + chunk_.size() >= request_.max_bytes) {
    end_.cap_hit = wire::CaptureCap::kBytes;
    recording_ = false;
    ++end_.events_dropped;
    return false;
  }
  if (end_.events >= request_.max_events) {
    end_.cap_hit = wire::CaptureCap::kEvents;
    recording_ = false;
    ++end_.events_dropped;
    return false;
  }
  ++end_.events;
  return true;
}

void EventCapture::NameOnce(model::NameId id) {
  if (id == model::kNoName || !named_.insert(id).second) return;
  chunk_.Name(id, names_->Get(id));
}

void EventCapture::Seal(std::vector<std::string>* frames) {
  if (chunk_.empty()) return;
  std::string payload = chunk_.Take();
  end_.bytes += payload.size();
  std::string frame;
  if (wire::FrameWriter::Append(wire::FrameType::kCaptureChunk, payload, &frame).ok()) {
    frames->push_back(std::move(frame));
    ++end_.chunks;
  }
  chunk_.Begin(request_.capture_id, end_.chunks);
}

void EventCapture::Add(const model::KernelEvent& e) {
  if (!Admit()) return;
  NameOnce(e.name);
  chunk_.Kernel(e);
  if (chunk_.size() >= wire::kCaptureChunkTargetBytes) Seal(&sealed_);
}
void EventCapture::Add(const model::MemcpyEvent& e) {
  if (!Admit()) return;
  chunk_.Memcpy(e);
  if (chunk_.size() >= wire::kCaptureChunkTargetBytes) Seal(&sealed_);
}
void EventCapture::Add(const model::MemsetEvent& e) {
  if (!Admit()) return;
  chunk_.Memset(e);
  if (chunk_.size() >= wire::kCaptureChunkTargetBytes) Seal(&sealed_);
}
void EventCapture::Add(const model::SyncEvent& e) {
  if (!Admit()) return;
  chunk_.Sync(e);
  if (chunk_.size() >= wire::kCaptureChunkTargetBytes) Seal(&sealed_);
}
void EventCapture::Add(const model::ApiCallEvent& e) {
  if (!Admit()) return;
  NameOnce(e.name);
  chunk_.ApiCall(e);
  if (chunk_.size() >= wire::kCaptureChunkTargetBytes) Seal(&sealed_);
}

void EventCapture::Poll(int64_t now_unix_ns, int64_t settle_ns, std::vector<std::string>* frames) {
  Poll(now_unix_ns, settle_ns, [frames](std::string&& f, bool) {
    frames->push_back(std::move(f));
    return true;
  });
}

void EventCapture::Poll(int64_t now_unix_ns, int64_t settle_ns, const FrameSink& send) {
  for (auto& f : refusals_) send(std::move(f), /*chunk=*/false);
  refusals_.clear();
  if (!active_) return;
  auto send_chunks = [&](std::vector<std::string>* chunks) {
    for (auto& f : *chunks) {
      const size_t bytes = f.size();
      if (!send(std::move(f), /*chunk=*/true)) {
        ++end_.chunks_dropped;
        end_.chunk_bytes_dropped += bytes;
      }
    }
    chunks->clear();
  };
  send_chunks(&sealed_);
  if (!lost_base_set_) {
    lost_base_ = lost_records_;
    refused_base_ = buffers_refused_;
    lost_base_set_ = true;
  }
  // Records of the span's last moments arrive a flush (and the lateness CUPTI allows) after it.
  if (now_unix_ns < end_ns_ + settle_ns) return;
  recording_ = false;
  std::vector<std::string> last;
  Seal(&last);
  send_chunks(&last);
  end_.records_lost = lost_records_ - lost_base_;
  end_.buffers_refused = buffers_refused_ - refused_base_;
  send(EndFrame(end_), /*chunk=*/false);
  active_ = false;
  chunk_.Take();
  named_.clear();
}

}  // namespace inferscope::inject
