// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The export's second format: Chrome's JSON trace format ({"traceEvents": [...]}), which Perfetto,
// chrome://tracing and most trace viewers read. Bigger and slower to load than .pftrace, for small
// captures and tools that want JSON.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/perfetto/track_event_writer.h"

namespace inferscope::perfetto {

// Writes one JSON object event per line. Tracks become (pid, tid) pairs: a host process and its
// threads keep their ids; a GPU becomes a process of its own (ids from kSyntheticPidBase, named
// by metadata events) with a thread per stream. Slices are complete ("X") events with
// microsecond timestamps to the nanosecond; flows are "s"/"f" pairs bound to the slices' starts;
// counters are "C" events on the GPU's process. Streams out through `sink` like TrackEventWriter.
class ChromeJsonWriter : public TraceWriter {
 public:
  explicit ChromeJsonWriter(Sink sink);
  ~ChromeJsonWriter() override;

  void ProcessTrack(uint64_t uuid, uint32_t pid, std::string_view name,
                    const std::vector<std::string>& labels) override;
  void ThreadTrack(uint64_t uuid, uint64_t parent_uuid, uint32_t pid, uint32_t tid,
                   std::string_view name) override;
  void PlainTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name) override;
  void CounterTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name,
                    std::string_view unit) override;
  uint32_t BeginSequence(uint64_t track_uuid) override;
  void WriteSlice(const Slice& slice) override;
  void WriteCounter(int64_t ts_ns, double value) override;
  uint64_t Finish() override;
  // A member of the top-level object after "traceEvents" (Kineto's "distributedInfo",
  // "deviceProperties"); `json` is written as is. Before Finish().
  void AddTopLevel(std::string_view key, std::string_view json);
  uint64_t bytes_written() const override { return bytes_flushed_ + buffer_.size(); }

  // Synthetic ids (GPUs, tracks without a host thread) start here, above any Linux pid.
  static constexpr uint32_t kSyntheticPidBase = 1u << 30;

 private:
  struct Track {
    uint32_t pid = 0;
    uint32_t tid = 0;
    std::string counter_name;  // for counter tracks
  };
  void Metadata(const char* what, uint32_t pid, uint32_t tid, std::string_view name);
  void BeginEvent();
  void MaybeFlush();

  Sink sink_;
  std::string buffer_;
  std::string trailer_;  // top-level members after the events (AddTopLevel)
  uint64_t bytes_flushed_ = 0;
  bool first_event_ = true;
  uint32_t next_synthetic_ = kSyntheticPidBase;
  uint32_t sequence_ = 0;
  std::unordered_map<uint64_t, Track> tracks_;
  Track current_;
};

}  // namespace inferscope::perfetto
