// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agentd/capture.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <unordered_map>

#include "src/agentd/capture_gpu.h"
#include "src/base/human_format.h"
#include "src/base/json_writer.h"
#include "src/base/state_dir.h"
#include "src/model/taxonomy.h"
#include "src/perfetto/trace_export.h"

namespace inferscope::agentd {
namespace {
// Finished captures whose status (and file) stay available.
constexpr size_t kKeptCaptures = 4;

const char* CapName(wire::CaptureCap cap) {
  switch (cap) {
    case wire::CaptureCap::kNone:
      return "";
    case wire::CaptureCap::kBytes:
      return "bytes";
    case wire::CaptureCap::kEvents:
      return "events";
  }
  return "";
}
}  // namespace

std::vector<std::string> CaptureManager::DropReasons(const wire::CaptureEnd& end,
                                                     uint64_t chunks_refused) {
  std::vector<std::string> why;
  if (end.cap_hit != wire::CaptureCap::kNone)
    why.push_back(base::FormatCount(end.events_dropped) + " events dropped: the " +
                  CapName(end.cap_hit) + " cap was reached");
  // records_lost counts each refused buffer request as one loss (its records were never
  // written, their number unknown); the rest CUPTI dropped.
  const uint64_t refused = std::min(end.buffers_refused, end.records_lost);
  if (refused > 0)
    why.push_back(base::FormatCount(refused) +
                  " CUPTI buffer requests refused (their records lost): the buffer pool was "
                  "exhausted");
  if (end.records_lost > refused)
    why.push_back(base::FormatCount(end.records_lost - refused) +
                  " CUPTI records lost: dropped by CUPTI (a process older than these counts "
                  "includes its refused buffer requests)");
  if (end.chunks_dropped > 0)
    why.push_back(base::FormatCount(end.chunks_dropped) + " chunks (" +
                  base::FormatBytes(end.chunk_bytes_dropped) +
                  ") not sent by the process: its connection to the agent was backed up");
  if (chunks_refused > 0)
    why.push_back(base::FormatCount(chunks_refused) +
                  " chunks refused by the agent: beyond the process's share of the byte cap");
  return why;
}

CaptureManager::CaptureManager(std::string dir) : dir_(std::move(dir)) {}

CaptureManager::~CaptureManager() {
  if (writer_.joinable()) writer_.join();
}

const char* CaptureManager::StateName(Capture::State s) {
  switch (s) {
    case Capture::State::kPending:
      return "pending";
    case Capture::State::kRecording:
      return "recording";
    case Capture::State::kWriting:
      return "writing";
    case Capture::State::kDone:
      return "done";
    case Capture::State::kFailed:
      return "failed";
  }
  return "?";
}

base::StatusOr<uint64_t> CaptureManager::Start(const CaptureSpec& spec) {
  if (spec.duration_ns <= 0 || spec.duration_ns > CaptureSpec::kMaxDurationNs)
    return base::InvalidArgumentError("duration: want more than 0 and at most 60s");
  if (spec.format != "pftrace" && spec.format != "pftrace.gz" && spec.format != "json" &&
      spec.format != "json.gz")
    return base::InvalidArgumentError("format: want pftrace, pftrace.gz, json or json.gz");
  if (spec.max_bytes < (1u << 20))
    return base::InvalidArgumentError("max_bytes: want at least 1 MiB");
  std::lock_guard<std::mutex> lock(mu_);
  if (active_ != nullptr)
    return base::AlreadyExistsError("capture " + std::to_string(active_->id) +
                                    " is still running (" + StateName(active_->state) +
                                    "); one capture at a time");
  if (writer_.joinable()) writer_.join();  // the previous capture's writer has finished
  auto c = std::make_unique<Capture>();
  c->id = next_id_++;
  c->spec = spec;
  active_ = c.get();
  captures_[c->id] = std::move(c);
  while (captures_.size() > kKeptCaptures) {
    std::error_code ec;
    if (!captures_.begin()->second->path.empty())
      std::filesystem::remove(captures_.begin()->second->path, ec);
    captures_.erase(captures_.begin());
  }
  return active_->id;
}

bool CaptureManager::HasPending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_ != nullptr && active_->state == Capture::State::kPending;
}

bool CaptureManager::Recording() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_ != nullptr && active_->state == Capture::State::kRecording;
}

void CaptureManager::Dispatch(const std::vector<CaptureTarget>& connected, int64_t now_unix_ns,
                              std::vector<std::pair<uint64_t, std::string>>* frames) {
  std::lock_guard<std::mutex> lock(mu_);
  if (active_ == nullptr || active_->state != Capture::State::kPending) return;
  Capture& c = *active_;
  for (const CaptureTarget& t : connected) {
    if (!t.profiling) continue;
    if (c.spec.pid && t.pid != *c.spec.pid) continue;
    if (c.spec.rank && t.rank != *c.spec.rank) continue;
    c.parts[t.session_id].target = t;
  }
  if (c.parts.empty()) {
    c.state = Capture::State::kFailed;
    c.error = c.spec.pid    ? "no profiled process with pid " + std::to_string(*c.spec.pid)
              : c.spec.rank ? "no profiled process of rank " + std::to_string(*c.spec.rank)
                            : "no profiled process is connected";
    active_ = nullptr;
    return;
  }
  c.requested_unix_ns = now_unix_ns;
  c.start_unix_ns = now_unix_ns + (c.spec.graph_nodes ? kGraphNodesLeadNs : kLeadNs);
  wire::CaptureRequest req;
  req.capture_id = c.id;
  req.start_unix_ns = c.start_unix_ns;
  req.duration_ns = c.spec.duration_ns;
  req.max_bytes = c.spec.max_bytes / c.parts.size();
  req.max_events = c.spec.max_events_per_process;
  req.graph_nodes = c.spec.graph_nodes;
  std::string payload, frame;
  wire::EncodeCaptureRequest(req, &payload);
  (void)wire::FrameWriter::Append(wire::FrameType::kCaptureRequest, payload, &frame);
  for (const auto& [session, part] : c.parts) frames->emplace_back(session, frame);
  c.state = Capture::State::kRecording;
}

bool CaptureManager::OnFrame(uint64_t session_id, uint16_t type, const std::string& payload,
                             std::string* error) {
  const auto t = static_cast<wire::FrameType>(type);
  if (t == wire::FrameType::kCaptureEnd) {
    auto end = wire::DecodeCaptureEnd(payload);
    if (!end.ok()) {
      *error = end.status().message();
      return false;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (active_ == nullptr || active_->state != Capture::State::kRecording ||
        end->capture_id != active_->id)
      return true;  // late, or for a capture this agent did not ask for
    auto it = active_->parts.find(session_id);
    if (it == active_->parts.end()) return true;
    it->second.ended = true;
    it->second.end = *end;
    return true;
  }
  // A chunk: only its header is read here (the events are decoded when the trace is written,
  // off the event loop); a chunk that does not decode then costs its own events only.
  if (payload.size() > wire::kMaxCaptureChunkBytes) {
    *error = "capture chunk over " + std::to_string(wire::kMaxCaptureChunkBytes) + " bytes";
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (active_ == nullptr || active_->state != Capture::State::kRecording) return true;
  auto it = active_->parts.find(session_id);
  if (it == active_->parts.end() || it->second.ended) return true;
  Part& part = it->second;
  const uint64_t cap = active_->spec.max_bytes / active_->parts.size();
  if (part.bytes + payload.size() > cap + wire::kCaptureChunkTargetBytes) {
    ++part.chunks_refused;  // a process beyond the cap it was given: the agent's memory holds
    return true;
  }
  part.bytes += payload.size();
  part.chunks.push_back(payload);
  return true;
}

void CaptureManager::OnDevices(uint64_t session_id, const std::vector<CaptureDevice>& devices) {
  std::lock_guard<std::mutex> lock(mu_);
  if (active_ == nullptr || active_->state != Capture::State::kRecording) return;
  auto it = active_->parts.find(session_id);
  if (it != active_->parts.end()) it->second.target.devices = devices;
}

void CaptureManager::OnGone(uint64_t session_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (active_ == nullptr || active_->state != Capture::State::kRecording) return;
  auto it = active_->parts.find(session_id);
  if (it != active_->parts.end() && !it->second.ended) it->second.gone = true;
}

void CaptureManager::Poll(int64_t now_unix_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (active_ == nullptr || active_->state != Capture::State::kRecording) return;
  Capture& c = *active_;
  const bool all_answered = std::all_of(c.parts.begin(), c.parts.end(), [](const auto& p) {
    return p.second.ended || p.second.gone;
  });
  const bool overdue = now_unix_ns > c.start_unix_ns + c.spec.duration_ns + kGraceNs;
  if (!all_answered && !overdue) return;
  c.state = Capture::State::kWriting;
  // The NVML samples of the span are read here, on the event loop: the telemetry they come from
  // outlives it, not necessarily the writer thread.
  std::vector<telemetry::GpuSampleSeries> gpu_samples;
  if (gpu_samples_)
    gpu_samples = gpu_samples_(c.start_unix_ns, c.start_unix_ns + c.spec.duration_ns);
  if (writer_.joinable()) writer_.join();
  writer_ =
      std::thread([this, &c, gpu_samples = std::move(gpu_samples)] { Write(&c, gpu_samples); });
}

void CaptureManager::Write(Capture* c, const std::vector<telemetry::GpuSampleSeries>& gpu_samples) {
  // The capture is kWriting: nothing else touches its parts, so they are read without the lock.
  // One part is decoded at a time, written, and freed with its chunks before the next is decoded
  // (perfetto::ExportEventStream): the agent holds the remaining parts' chunks plus one decoded
  // part, never every part decoded at once (a decoded event is 2-3 x its encoded bytes).
  std::vector<Part*> parts;
  for (auto& [session, part] : c->parts) parts.push_back(&part);
  std::string error;
  const int64_t end_unix_ns = c->start_unix_ns + c->spec.duration_ns;
  // The offset every timestamp is shifted by: the earliest event of any part, found by a pass
  // that decodes one chunk at a time and keeps nothing.
  int64_t offset_ns = INT64_MAX;
  for (Part* part : parts) {
    for (const std::string& payload : part->chunks) {
      auto chunk = wire::DecodeCaptureChunk(payload);
      if (!chunk.ok()) continue;  // reported when the part is written
      for (const auto& e : chunk->kernels) offset_ns = std::min(offset_ns, e.start_ns);
      for (const auto& e : chunk->memcpys) offset_ns = std::min(offset_ns, e.start_ns);
      for (const auto& e : chunk->memsets) offset_ns = std::min(offset_ns, e.start_ns);
      for (const auto& e : chunk->syncs) offset_ns = std::min(offset_ns, e.start_ns);
      for (const auto& e : chunk->api_calls) offset_ns = std::min(offset_ns, e.start_ns);
    }
  }
  // The NVML counters start at the span's start (the value in force then): never before the
  // offset, whose shifted timestamps must not go negative.
  if (!gpu_samples.empty()) offset_ns = std::min(offset_ns, c->start_unix_ns);
  if (offset_ns == INT64_MAX) offset_ns = 0;
  auto load = [&](size_t i) {
    Part& part = *parts[i];
    perfetto::EventSet set;
    model::ProcessInfo p;
    p.pid = part.target.pid;
    p.rank = part.target.rank;
    p.world_size = part.target.world_size;
    set.events.OnProcess(p);
    // The file says what this process dropped and why, as the status does.
    set.process_labels = DropReasons(part.end, part.chunks_refused);
    std::unordered_map<model::NameId, model::NameId> names;  // the process's ids -> this set's
    auto name = [&](model::NameId id) {
      auto it = names.find(id);
      return it == names.end() ? model::kNoName : it->second;
    };
    for (std::string& payload : part.chunks) {
      auto chunk = wire::DecodeCaptureChunk(payload);
      std::string().swap(payload);  // decoded: its bytes go back now, not with the part
      if (!chunk.ok()) {
        error = "pid " + std::to_string(part.target.pid) + ": " + chunk.status().message();
        continue;
      }
      for (const auto& [id, text] : chunk->names) names[id] = set.names->Intern(text);
      for (model::KernelEvent e : chunk->kernels) {
        e.pid = p.pid;
        e.name = name(e.name);
        set.events.kernels.push_back(e);
      }
      for (model::MemcpyEvent e : chunk->memcpys) {
        e.pid = p.pid;
        set.events.memcpys.push_back(e);
      }
      for (model::MemsetEvent e : chunk->memsets) {
        e.pid = p.pid;
        set.events.memsets.push_back(e);
      }
      for (model::SyncEvent e : chunk->syncs) {
        e.pid = p.pid;
        set.events.syncs.push_back(e);
      }
      for (model::ApiCallEvent e : chunk->api_calls) {
        e.pid = p.pid;
        e.name = name(e.name);
        set.events.api_calls.push_back(e);
      }
    }
    part.chunks.clear();
    part.chunks.shrink_to_fit();
    AddCaptureGpus(part.target, gpu_samples, c->start_unix_ns, end_unix_ns, &set);
    return set;
  };
  // Owner-only whatever the umask: a trace names every kernel and call of the user's processes.
  // The file is made 0600 before the exporter opens it (it truncates an existing file and keeps
  // its mode); a failure here shows as the exporter's "cannot write".
  (void)base::CreatePrivateDir(dir_);
  const std::string path = dir_ + "/capture-" + std::to_string(c->id) + "." + c->spec.format;
  if (const int fd =
          ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
      fd >= 0) {
    (void)::fchmod(fd, 0600);
    ::close(fd);
  }
  model::KernelClassifier classifier;
  auto stats = perfetto::ExportEventStream(parts.size(), offset_ns, load, path, classifier,
                                           perfetto::ExportOptions{});
  std::lock_guard<std::mutex> lock(mu_);
  if (!stats.ok()) {
    c->state = Capture::State::kFailed;
    c->error = stats.status().message();
  } else {
    c->state = Capture::State::kDone;
    c->path = path;
    c->output_bytes = stats->output_bytes;
    c->kernels = stats->kernels;
    c->api_calls = stats->api_calls;
    c->flows = stats->flows;
    c->copies = stats->copies;
    c->error = error;
  }
  active_ = nullptr;
}

base::StatusOr<std::string> CaptureManager::StatusJson(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (captures_.empty()) return base::NotFoundError("no capture yet");
  auto it = id == 0 ? std::prev(captures_.end()) : captures_.find(id);
  if (it == captures_.end()) return base::NotFoundError("no capture " + std::to_string(id));
  return StatusJsonLocked(*it->second);
}

std::string CaptureManager::StatusJsonLocked(const Capture& c) const {
  base::JsonWriter w;
  w.BeginObject();
  w.Key("id").UInt(c.id);
  w.Key("state").String(StateName(c.state));
  w.Key("duration_ns").Int(c.spec.duration_ns);
  w.Key("start_unix_ns").Int(c.start_unix_ns);
  w.Key("format").String(c.spec.format);
  w.Key("max_bytes").UInt(c.spec.max_bytes);
  w.Key("graph_nodes").Bool(c.spec.graph_nodes);
  if (!c.error.empty()) w.Key("error").String(c.error);
  w.Key("processes").BeginArray();
  for (const auto& [session, part] : c.parts) {
    w.BeginObject();
    w.Key("pid").UInt(part.target.pid);
    w.Key("rank").Int(part.target.rank);
    const char* state = part.ended  ? (part.end.refused.empty() ? "ended" : "refused")
                        : part.gone ? "exited"
                        : c.state == Capture::State::kRecording ? "recording"
                                                                : "no answer";
    w.Key("state").String(state);
    if (!part.end.refused.empty()) w.Key("refused").String(part.end.refused);
    w.Key("events").UInt(part.end.events);
    w.Key("bytes").UInt(part.bytes);
    w.Key("cap_hit").String(CapName(part.end.cap_hit));
    w.Key("records_lost").UInt(part.end.records_lost);
    w.Key("chunks_dropped").UInt(part.end.chunks_dropped + part.chunks_refused);
    // What the process (or the agent) dropped, and why (0 from a process older than the fields).
    w.Key("events_dropped").UInt(part.end.events_dropped);
    w.Key("buffers_refused").UInt(part.end.buffers_refused);
    w.Key("chunk_bytes_dropped").UInt(part.end.chunk_bytes_dropped);
    w.Key("dropped").BeginArray();
    for (const std::string& why : DropReasons(part.end, part.chunks_refused)) w.String(why);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  if (c.state == Capture::State::kDone) {
    w.Key("output_bytes").UInt(c.output_bytes);
    w.Key("kernels").UInt(c.kernels);
    w.Key("copies").UInt(c.copies);
    w.Key("api_calls").UInt(c.api_calls);
    w.Key("flows").UInt(c.flows);
  }
  w.EndObject();
  return w.str();
}

base::StatusOr<std::string> CaptureManager::TracePath(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (captures_.empty()) return base::NotFoundError("no capture yet");
  auto it = id == 0 ? std::prev(captures_.end()) : captures_.find(id);
  if (it == captures_.end()) return base::NotFoundError("no capture " + std::to_string(id));
  const Capture& c = *it->second;
  if (c.state == Capture::State::kFailed) return base::NotFoundError("capture failed: " + c.error);
  if (c.state != Capture::State::kDone)
    return base::UnavailableError(std::string("capture is ") + StateName(c.state));
  return c.path;
}

}  // namespace inferscope::agentd
