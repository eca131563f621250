// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// On-demand capture of a live server (docs/agent.md, "Capture"): the agent asks its connected
// processes, over their existing connections, to record every raw event of a span that starts at
// the same wall-clock instant on every rank; the processes stream the events back (src/wire
// capture frames) while their windows keep flowing; the agent writes them as one Perfetto (or
// Chrome JSON) trace through src/perfetto.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "src/base/status.h"
#include "src/telemetry/nvml/gpu_sampler.h"
#include "src/wire/capture_codec.h"
#include "src/wire/framing.h"

namespace inferscope::agentd {

// What a capture asks for (POST /api/v1/capture, `inferscope capture`).
struct CaptureSpec {
  int64_t duration_ns = 2'000'000'000;
  std::optional<uint32_t> pid;  // only this process
  std::optional<int32_t> rank;  // only this rank
  // Memory of the whole capture (split evenly between the processes): their recorders' encoded
  // bytes and what the agent holds of them.
  uint64_t max_bytes = kDefaultMaxBytes;
  uint64_t max_events_per_process = 8'000'000;
  std::string format = "pftrace";  // pftrace, pftrace.gz, json, json.gz
  bool graph_nodes = false;        // trace CUDA graph nodes as kernels for the span
  static constexpr uint64_t kDefaultMaxBytes = 256ull << 20;
  static constexpr int64_t kMaxDurationNs = 60'000'000'000;
};

// A GPU of a connected process, as its windows name it.
struct CaptureDevice {
  uint32_t device = 0;  // the process's CUDA ordinal
  std::string name;
  std::string uuid;  // "GPU-...": NVML's identity of it
};

// A connected process the event loop can ask.
struct CaptureTarget {
  uint64_t session_id = 0;
  uint32_t pid = 0;
  int32_t rank = -1;
  int32_t world_size = -1;
  bool profiling = true;               // profiling on in that process (its hello says)
  std::vector<CaptureDevice> devices;  // known from its windows so far (none before the first)
};

// Runs at most one capture at a time. Thread-safe: the HTTP handlers start and query captures, the
// event loop dispatches requests and feeds frames, a worker thread writes the trace.
// Guarantees: a second capture while one runs is refused (kAlreadyExists, HTTP 409); the agent
// holds at most the capture's byte cap of received chunks; a process that goes away or never
// answers ends its part (reported), never the capture; the trace is written off the event loop.
class CaptureManager {
 public:
  // Traces go to `dir` (created on demand); the last finished capture's file is kept there.
  explicit CaptureManager(std::string dir);
  ~CaptureManager();  // waits for a trace being written

  // Registers a capture; the event loop sends it out. Returns its id.
  base::StatusOr<uint64_t> Start(const CaptureSpec& spec);
  // The capture's status as JSON (id 0: the latest); kNotFound for an unknown id.
  base::StatusOr<std::string> StatusJson(uint64_t id) const;
  // The written trace of a finished capture; kUnavailable while it runs, kNotFound when unknown.
  base::StatusOr<std::string> TracePath(uint64_t id) const;

  // Event loop: whether a capture waits to be sent out (then Dispatch it).
  bool HasPending() const;
  // Picks the targets matching the pending capture and returns the request frame each gets
  // (`frames` by session id); none matching fails the capture with a message saying so.
  void Dispatch(const std::vector<CaptureTarget>& connected, int64_t now_unix_ns,
                std::vector<std::pair<uint64_t, std::string>>* frames);
  // Frames from a connection; false when the connection should be dropped (a corrupt payload).
  bool OnFrame(uint64_t session_id, uint16_t type, const std::string& payload, std::string* error);
  // A connection closed: its process's part ends (exited mid-capture).
  void OnGone(uint64_t session_id);
  // Finishes a capture whose processes all answered, or whose deadline passed. `now` on the wall
  // clock.
  void Poll(int64_t now_unix_ns);
  // Whether a capture is being recorded (the event loop polls more often then).
  bool Recording() const;
  // A window from a connection named its GPUs: a process captured before its first window gets
  // them here (they name its GPU tracks and map them to NVML's).
  void OnDevices(uint64_t session_id, const std::vector<CaptureDevice>& devices);
  // Where the NVML samples of the captured seconds come from (Telemetry::GpuSamples); unset (or
  // empty) without NVML. Set before the first capture; called on the event loop (Poll).
  using GpuSamplesFn = std::function<std::vector<telemetry::GpuSampleSeries>(int64_t, int64_t)>;
  void SetGpuSamples(GpuSamplesFn fn) { gpu_samples_ = std::move(fn); }

  // Lead time between the request and the common start: every rank's drain thread (500 ms
  // flushes) sees the request before the span starts.
  static constexpr int64_t kLeadNs = 1'000'000'000;
  // A --graph-nodes capture's lead: each process must also switch to node-level tracing before
  // the span, at the end of a drain cycle, and a cycle (its flush's decoding) takes seconds on a
  // loaded host or under sanitizers.
  static constexpr int64_t kGraphNodesLeadNs = 3'000'000'000;
  // How long after the span's end the agent waits for the processes' ends (their settle time,
  // a flush and the lateness, plus sending the chunks).
  static constexpr int64_t kGraceNs = 10'000'000'000;

 private:
  struct Part {
    CaptureTarget target;
    std::vector<std::string> chunks;  // encoded, as received
    uint64_t bytes = 0;
    uint64_t chunks_refused = 0;  // beyond the part's cap, or of another capture
    bool ended = false;
    bool gone = false;
    wire::CaptureEnd end;
  };
  struct Capture {
    uint64_t id = 0;
    CaptureSpec spec;
    enum class State { kPending, kRecording, kWriting, kDone, kFailed } state = State::kPending;
    int64_t requested_unix_ns = 0;
    int64_t start_unix_ns = 0;
    std::map<uint64_t, Part> parts;  // by session id
    std::string path;
    std::string error;
    uint64_t output_bytes = 0, kernels = 0, api_calls = 0, flows = 0, copies = 0;
  };
  static const char* StateName(Capture::State s);
  // One line per kind of loss of a process's part: what was dropped and why (empty: nothing).
  static std::vector<std::string> DropReasons(const wire::CaptureEnd& end, uint64_t chunks_refused);
  std::string StatusJsonLocked(const Capture& c) const;
  // Worker thread; `gpu_samples` are NVML's of the span (for the GPUs' counter tracks).
  void Write(Capture* c, const std::vector<telemetry::GpuSampleSeries>& gpu_samples);

  const std::string dir_;
  mutable std::mutex mu_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<Capture>> captures_;  // the last few, by id
  Capture* active_ = nullptr;                              // pending, recording or writing
  std::thread writer_;
  GpuSamplesFn gpu_samples_;
};

}  // namespace inferscope::agentd
