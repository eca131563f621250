// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/perfetto/chrome_json_writer.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "src/base/json_writer.h"

namespace inferscope::perfetto {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

// Chrome JSON timestamps are microseconds; three decimals keep the nanoseconds.
void AppendMicros(std::string* out, int64_t ns) {
  char buf[32];
  const char* sign = ns < 0 ? "-" : "";
  const uint64_t abs_ns = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  const int n = std::snprintf(buf, sizeof(buf), "%s%llu.%03llu", sign,
                              static_cast<unsigned long long>(abs_ns / 1000),
                              static_cast<unsigned long long>(abs_ns % 1000));
  out->append(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

void AppendUint(std::string* out, uint64_t v) { out->append(std::to_string(v)); }

}  // namespace

ChromeJsonWriter::ChromeJsonWriter(Sink sink) : sink_(std::move(sink)) {
  buffer_.reserve(kFlushBytes + 4096);
  buffer_.append("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
}

ChromeJsonWriter::~ChromeJsonWriter() = default;

void ChromeJsonWriter::MaybeFlush() {
  if (buffer_.size() < kFlushBytes) return;
  sink_(buffer_);
  bytes_flushed_ += buffer_.size();
  buffer_.clear();
}

void ChromeJsonWriter::BeginEvent() {
  buffer_.append(first_event_ ? "\n" : ",\n");
  first_event_ = false;
}

void ChromeJsonWriter::Metadata(const char* what, uint32_t pid, uint32_t tid,
                                std::string_view name) {
  BeginEvent();
  buffer_.append("{\"ph\":\"M\",\"name\":\"");
  buffer_.append(what);
  buffer_.append("\",\"pid\":");
  AppendUint(&buffer_, pid);
  buffer_.append(",\"tid\":");
  AppendUint(&buffer_, tid);
  buffer_.append(",\"args\":{\"name\":");
  buffer_.append(base::JsonWriter::Quote(name));
  buffer_.append("}}");
  MaybeFlush();
}

void ChromeJsonWriter::ProcessTrack(uint64_t uuid, uint32_t pid, std::string_view name,
                                    const std::vector<std::string>& labels) {
  tracks_[uuid] = {pid, pid, {}};
  Metadata("process_name", pid, 0, name);
  if (labels.empty()) return;
  // The trace viewer shows a process's labels (one string, comma-separated) beside its name.
  std::string joined;
  for (const std::string& l : labels) joined += (joined.empty() ? "" : ", ") + l;
  BeginEvent();
  buffer_.append("{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":");
  AppendUint(&buffer_, pid);
  buffer_.append(",\"tid\":0,\"args\":{\"labels\":");
  buffer_.append(base::JsonWriter::Quote(joined));
  buffer_.append("}}");
  MaybeFlush();
}

void ChromeJsonWriter::ThreadTrack(uint64_t uuid, uint64_t /*parent_uuid*/, uint32_t pid,
                                   uint32_t tid, std::string_view name) {
  tracks_[uuid] = {pid, tid, {}};
  Metadata("thread_name", pid, tid, name);
}

void ChromeJsonWriter::PlainTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name) {
  auto parent = tracks_.find(parent_uuid);
  if (parent_uuid == 0 || parent == tracks_.end()) {
    // A root track (a GPU): a process of its own.
    const uint32_t pid = next_synthetic_++;
    tracks_[uuid] = {pid, 0, {}};
    Metadata("process_name", pid, 0, name);
    return;
  }
  const Track track{parent->second.pid, next_synthetic_++, {}};
  tracks_[uuid] = track;
  Metadata("thread_name", track.pid, track.tid, name);
}

void ChromeJsonWriter::CounterTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name,
                                    std::string_view /*unit*/) {
  auto parent = tracks_.find(parent_uuid);
  tracks_[uuid] = {parent == tracks_.end() ? 0 : parent->second.pid, 0, std::string(name)};
}

uint32_t ChromeJsonWriter::BeginSequence(uint64_t track_uuid) {
  auto it = tracks_.find(track_uuid);
  current_ = it == tracks_.end() ? Track{} : it->second;
  return ++sequence_;
}

void ChromeJsonWriter::WriteSlice(const Slice& slice) {
  const std::string ids = ",\"pid\":" + std::to_string(current_.pid) +
                          ",\"tid\":" + std::to_string(current_.tid) + ",\"ts\":";
  BeginEvent();
  buffer_.append("{\"ph\":\"X\",\"name\":");
  buffer_.append(base::JsonWriter::Quote(slice.name));
  buffer_.append(",\"cat\":");
  buffer_.append(base::JsonWriter::Quote(slice.category));
  buffer_.append(ids);
  AppendMicros(&buffer_, slice.start_ns);
  buffer_.append(",\"dur\":");
  AppendMicros(&buffer_, slice.end_ns - slice.start_ns);
  buffer_.append(",\"args\":{");
  for (size_t i = 0; i < slice.arg_count; ++i) {
    const Arg& a = slice.args[i];
    if (i) buffer_.push_back(',');
    buffer_.append(base::JsonWriter::Quote(a.name));
    buffer_.push_back(':');
    switch (a.kind) {
      case Arg::Kind::kUint:
        AppendUint(&buffer_, a.uint_value);
        break;
      case Arg::Kind::kInt:
        buffer_.append(std::to_string(a.int_value));
        break;
      case Arg::Kind::kString:
        buffer_.append(base::JsonWriter::Quote(a.string_value));
        break;
      case Arg::Kind::kJson:
        buffer_.append(a.string_value);
        break;
    }
  }
  // The protobuf's TrackEvent.correlation_id: an argument here, under the name the trace
  // processor gives it.
  if (slice.correlation_id) {
    if (slice.arg_count) buffer_.push_back(',');
    buffer_.append("\"correlation_id\":");
    AppendUint(&buffer_, slice.correlation_id);
  }
  buffer_.append("}}");
  // Flow ends bind to the enclosing slice at the same timestamp ("bp":"e").
  for (const auto& [id, phase] : {std::pair{slice.flow_out, "s"}, std::pair{slice.flow_in, "f"}}) {
    if (!id) continue;
    BeginEvent();
    buffer_.append("{\"ph\":\"");
    buffer_.append(phase);
    buffer_.append("\",\"bp\":\"e\",\"name\":\"launch\",\"cat\":\"flow\",\"id\":");
    AppendUint(&buffer_, id);
    buffer_.append(ids);
    AppendMicros(&buffer_, slice.start_ns);
    buffer_.append("}");
  }
  MaybeFlush();
}

void ChromeJsonWriter::WriteCounter(int64_t ts_ns, double value) {
  BeginEvent();
  buffer_.append("{\"ph\":\"C\",\"name\":");
  buffer_.append(base::JsonWriter::Quote(current_.counter_name));
  buffer_.append(",\"pid\":");
  AppendUint(&buffer_, current_.pid);
  buffer_.append(",\"ts\":");
  AppendMicros(&buffer_, ts_ns);
  char buf[32];
  const int n = std::snprintf(buf, sizeof(buf), "%.4f", std::isfinite(value) ? value : 0.0);
  buffer_.append(",\"args\":{\"value\":");
  buffer_.append(buf, n > 0 ? static_cast<size_t>(n) : 0);
  buffer_.append("}}");
  MaybeFlush();
}

void ChromeJsonWriter::AddTopLevel(std::string_view key, std::string_view json) {
  trailer_ += ",";
  trailer_ += base::JsonWriter::Quote(key);
  trailer_ += ":";
  trailer_ += json;
}

uint64_t ChromeJsonWriter::Finish() {
  buffer_.append("\n]");
  buffer_.append(trailer_);
  buffer_.append("}\n");
  sink_(buffer_);
  bytes_flushed_ += buffer_.size();
  buffer_.clear();
  return bytes_flushed_;
}

}  // namespace inferscope::perfetto
