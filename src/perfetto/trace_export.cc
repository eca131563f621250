// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/perfetto/trace_export.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "src/base/json_writer.h"
#include "src/import/trace_importer.h"
#include "src/model/events.h"
#include "src/model/kernel_names.h"
#include "src/model/name_table.h"
#include "src/perfetto/chrome_json_writer.h"
#include "src/perfetto/track_event_writer.h"

namespace inferscope::perfetto {
namespace {

using model::NameId;

using Collector = RawEvents;
using ImportedFile = EventSet;

// Where the bytes go: a plain file, or gzip when the name ends in .gz. Remembers the first failure.
class Output {
 public:
  ~Output() { (void)Close(); }  // on an error path: the first error is already reported
  base::Status Open(const std::string& path) {
    path_ = path;
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
      gz_ = gzopen(path.c_str(), "wb");
      if (!gz_) return base::InternalError("cannot write " + path);
      gzbuffer(gz_, 1 << 20);
    } else {
      file_ = std::fopen(path.c_str(), "wb");
      if (!file_) return base::InternalError("cannot write " + path);
    }
    return base::OkStatus();
  }
  void Write(std::string_view bytes) {
    if (failed_ || bytes.empty()) return;
    if (gz_) {
      failed_ = gzwrite(gz_, bytes.data(), static_cast<unsigned>(bytes.size())) !=
                static_cast<int>(bytes.size());
    } else if (file_) {
      failed_ = std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size();
    }
  }
  base::Status Close() {
    if (gz_) failed_ |= gzclose(gz_) != Z_OK;
    if (file_) failed_ |= std::fclose(file_) != 0;
    gz_ = nullptr;
    file_ = nullptr;
    if (failed_) return base::InternalError("cannot write " + path_);
    return base::OkStatus();
  }

 private:
  std::string path_;
  gzFile gz_ = nullptr;
  FILE* file_ = nullptr;
  bool failed_ = false;
};

// One GPU operation on a stream, by kind and index into the file's event vectors.
struct GpuOp {
  int64_t start_ns;
  int64_t end_ns;
  uint8_t kind;  // 0 kernel, 1 memcpy, 2 memset
  uint32_t index;
};

// Track uuids are handed out densely (1, 2, ...) so that references to them encode in a byte or
// two; keys name what the track is.
class Uuids {
 public:
  uint64_t Get(uint32_t file, uint32_t kind, uint64_t a, uint64_t b = 0, uint64_t c = 0,
               bool* fresh = nullptr) {
    auto [it, inserted] = map_.try_emplace(std::make_tuple(file, kind, a, b, c), map_.size() + 1);
    if (fresh) *fresh = inserted;
    return it->second;
  }
  // Flow ids are dense over the whole output too: written as varints, they cost a byte or three
  // (a (file, pid, correlation) key would take eight).
  uint64_t NextFlowId() { return ++flows_; }

 private:
  std::map<std::tuple<uint32_t, uint32_t, uint64_t, uint64_t, uint64_t>, uint64_t> map_;
  uint64_t flows_ = 0;
};
enum TrackKind : uint32_t { kGpu, kStream, kProcess, kThread, kSyncTrack, kCounter, kGpuCounter };

// What a kernel name shows as, computed once per name.
struct KernelName {
  std::string short_name;
  std::string full_name;
  std::string_view category;
};

int64_t EarliestStart(const EventSet& set) {
  const Collector& e = set.events;
  int64_t t = INT64_MAX;
  for (const auto& series : set.gpu_counters)
    if (!series.points.empty()) t = std::min(t, series.points.front().first);
  for (const auto& k : e.kernels) t = std::min(t, k.start_ns);
  for (const auto& k : e.memcpys) t = std::min(t, k.start_ns);
  for (const auto& k : e.memsets) t = std::min(t, k.start_ns);
  for (const auto& k : e.api_calls) t = std::min(t, k.start_ns);
  for (const auto& k : e.syncs) t = std::min(t, k.start_ns);
  return t;
}

uint64_t PidCorrelation(uint32_t pid, uint32_t correlation) {
  return (static_cast<uint64_t>(pid) << 32) | correlation;
}

// A kernel's `launch` argument: what is constant per (kernel, launch configuration, graph) in one
// interned string, in CUDA's launch syntax, "void f<...>(P) <<<(4,32,1), (128,1,1)>>>", then
// " graph 3" for a graph's kernel. One string argument costs a slice one interned id (7-8 bytes);
// full name, grid, block and graph id as four arguments cost about 30 (Perfetto has no way to
// intern a set of arguments). The number of distinct strings is that of launch configurations.
void LaunchString(std::string_view full_name, const int32_t grid[3], const int32_t block[3],
                  uint32_t graph_id, std::string* out) {
  char dims[96];
  int n = std::snprintf(dims, sizeof(dims), " <<<(%d,%d,%d), (%d,%d,%d)>>>", grid[0], grid[1],
                        grid[2], block[0], block[1], block[2]);
  out->assign(full_name);
  out->append(dims, n > 0 ? static_cast<size_t>(n) : 0);
  if (graph_id) {
    n = std::snprintf(dims, sizeof(dims), " graph %u", graph_id);
    out->append(dims, n > 0 ? static_cast<size_t>(n) : 0);
  }
}

// What a Chrome JSON output needs beyond the viewer's fields to be read back as a Kineto trace
// (`analyze` and `diff` of an export or a capture): the processes and GPUs of every file.
struct KinetoTrailer {
  std::map<uint32_t, std::pair<int32_t, int32_t>> processes;  // pid -> rank, world size
  std::map<uint32_t, std::string> devices;                    // device -> name
};

// Kineto's spelling of a sync record's kind ("cuda_sync_kind"), as the importer reads it.
const char* KinetoSyncKind(model::SyncType type) {
  switch (type) {
    case model::SyncType::kStream:
      return "Stream Sync";
    case model::SyncType::kEvent:
      return "Event Sync";
    case model::SyncType::kDevice:
      return "Context Sync";
    case model::SyncType::kStreamWaitEvent:
      return "Stream Wait Event";
    default:
      return "Unknown";
  }
}

class FileExporter {
 public:
  // `kineto`: the output is Chrome JSON, whose GPU and host slices also carry Kineto's category
  // and arguments (collected in it) so that inferscope's importer reads the file back.
  FileExporter(uint32_t file, const ImportedFile& in, const model::KernelClassifier& classifier,
               int64_t offset_ns, const ExportOptions& options, Uuids* uuids, TraceWriter* writer,
               ExportStats* stats, KinetoTrailer* kineto)
      : file_(file),
        in_(in),
        events_(in.events),
        classifier_(classifier),
        offset_ns_(offset_ns),
        options_(options),
        uuids_(uuids),
        writer_(writer),
        stats_(stats),
        kineto_(kineto) {}

  void Run() {
    for (const auto& p : events_.processes) {
      ranks_[p.pid] = p.rank;
      if (kineto_) kineto_->processes[p.pid] = {p.rank, p.world_size};
    }
    for (const auto& d : events_.devices) {
      device_names_[(static_cast<uint64_t>(d.pid) << 32) | d.device] = in_.names->Get(d.name);
      if (kineto_ && d.name != model::kNoName) kineto_->devices[d.device] = in_.names->Get(d.name);
    }
    CollectLaunchTargets();
    WriteHost();
    WriteGpu();
    WriteGpuCounters();
  }

 private:
  int64_t Ts(int64_t ns) const { return ns - offset_ns_; }

  std::string ProcessLabel(uint32_t pid) const {
    auto it = ranks_.find(pid);
    if (it != ranks_.end() && it->second >= 0)
      return "rank " + std::to_string(it->second) + " (pid " + std::to_string(pid) + ")";
    return "pid " + std::to_string(pid);
  }

  uint64_t ProcessTrack(uint32_t pid) {
    bool fresh = false;
    const uint64_t uuid = uuids_->Get(file_, kProcess, pid, 0, 0, &fresh);
    if (fresh) writer_->ProcessTrack(uuid, pid, ProcessLabel(pid), in_.process_labels);
    return uuid;
  }

  void CollectLaunchTargets() {
    for (const auto& k : events_.kernels)
      if (k.correlation_id) targets_.insert(PidCorrelation(k.pid, k.correlation_id));
    for (const auto& k : events_.memcpys)
      if (k.correlation_id) targets_.insert(PidCorrelation(k.pid, k.correlation_id));
    for (const auto& k : events_.memsets)
      if (k.correlation_id) targets_.insert(PidCorrelation(k.pid, k.correlation_id));
  }

  void WriteHost() {
    std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> calls, waits;
    for (uint32_t i = 0; i < events_.api_calls.size(); ++i)
      calls[{events_.api_calls[i].pid, events_.api_calls[i].tid}].push_back(i);
    for (uint32_t i = 0; i < events_.syncs.size(); ++i)
      waits[{events_.syncs[i].pid, events_.syncs[i].tid}].push_back(i);
    for (auto& [key, list] : calls) {
      const auto [pid, tid] = key;
      const uint64_t thread =
          uuids_->Get(file_, kThread, pid, tid);  // descriptors precede the sequence
      writer_->ThreadTrack(thread, ProcessTrack(pid), pid, tid, "thread " + std::to_string(tid));
      // Longer calls first among equal starts, so an enclosing runtime call opens before the
      // driver call inside it.
      std::sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
        const auto& x = events_.api_calls[a];
        const auto& y = events_.api_calls[b];
        return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.end_ns > y.end_ns;
      });
      writer_->BeginSequence(thread);
      for (uint32_t i : list) {
        const auto& e = events_.api_calls[i];
        Slice s;
        s.start_ns = Ts(e.start_ns);
        s.end_ns = Ts(e.end_ns);
        s.name = in_.names->Get(e.name);
        if (s.name.empty()) s.name = "cuda api call";
        s.category = "cuda_api";
        s.correlation_id = e.correlation_id;
        Arg args[2];
        if (kineto_) {
          s.category = "cuda_runtime";
          s.args = args;
          args[s.arg_count++] = Arg::Uint("correlation", e.correlation_id);
          if (e.bytes) args[s.arg_count++] = Arg::Uint("bytes", e.bytes);
        }
        if (e.correlation_id && targets_.count(PidCorrelation(e.pid, e.correlation_id))) {
          auto [it, fresh] = launched_.try_emplace(PidCorrelation(e.pid, e.correlation_id), 0);
          if (fresh) {
            it->second = uuids_->NextFlowId();
            s.flow_out = it->second;
            ++stats_->flows;
          }
        }
        writer_->WriteSlice(s);
        ++stats_->api_calls;
      }
    }
    for (auto& [key, list] : waits) {
      const auto [pid, tid] = key;
      const uint64_t track = uuids_->Get(file_, kSyncTrack, pid, tid);
      // Kineto's cuda_sync records name no host thread (tid 0): then the waits are the process's.
      writer_->PlainTrack(track, ProcessTrack(pid),
                          tid ? "thread " + std::to_string(tid) + " sync waits" : "sync waits");
      std::sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
        return events_.syncs[a].start_ns < events_.syncs[b].start_ns;
      });
      writer_->BeginSequence(track);
      int64_t last_end = INT64_MIN;
      for (uint32_t i : list) {
        const auto& e = events_.syncs[i];
        const std::string name =
            std::string("sync wait: ") + model::kSyncTypeNames[static_cast<int>(e.type)];
        Slice s;
        // Waits on one thread do not overlap; when a trace's rounding says they do, the later one
        // starts where the earlier ended so the track still nests.
        s.start_ns = Ts(std::max(e.start_ns, last_end));
        s.end_ns = Ts(std::max(e.end_ns, std::max(e.start_ns, last_end)));
        last_end = std::max(e.end_ns, last_end);
        s.name = name;
        s.category = "sync";
        Arg args[3];
        if (kineto_) {
          s.category = "cuda_sync";
          s.args = args;
          args[s.arg_count++] = Arg::String("cuda_sync_kind", KinetoSyncKind(e.type));
          if (e.device != model::kUnknownDevice)
            args[s.arg_count++] = Arg::Uint("device", e.device);
          if (e.stream != model::kUnknownStream)
            args[s.arg_count++] = Arg::Uint("stream", e.stream);
        }
        writer_->WriteSlice(s);
      }
    }
  }

  const KernelName& NameOf(NameId id) {
    auto it = kernel_names_.find(id);
    if (it != kernel_names_.end()) return it->second;
    const std::string_view raw = in_.names->Get(id);
    KernelName k;
    k.full_name = model::DemangleKernelName(raw);
    k.short_name = model::ShortenKernelName(k.full_name);
    if (k.short_name.empty()) k.short_name = raw.empty() ? "kernel" : std::string(raw);
    k.category = model::CategoryName(classifier_.Classify(raw).category);
    return kernel_names_.emplace(id, std::move(k)).first->second;
  }

  void WriteGpu() {
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::vector<GpuOp>> streams;
    for (uint32_t i = 0; i < events_.kernels.size(); ++i) {
      const auto& e = events_.kernels[i];
      streams[{e.pid, e.device, e.stream}].push_back({e.start_ns, e.end_ns, 0, i});
    }
    for (uint32_t i = 0; i < events_.memcpys.size(); ++i) {
      const auto& e = events_.memcpys[i];
      streams[{e.pid, e.device, e.stream}].push_back({e.start_ns, e.end_ns, 1, i});
    }
    for (uint32_t i = 0; i < events_.memsets.size(); ++i) {
      const auto& e = events_.memsets[i];
      streams[{e.pid, e.device, e.stream}].push_back({e.start_ns, e.end_ns, 2, i});
    }
    // Per GPU, the busy time of each category, for the counter tracks.
    std::map<std::pair<uint32_t, uint32_t>, std::map<std::string_view, std::vector<GpuOp>>> busy;
    for (auto& [key, ops] : streams) {
      const auto [pid, device, stream] = key;
      const uint64_t gpu = GpuTrack(pid, device);
      const uint64_t track = uuids_->Get(file_, kStream, pid, device, stream);
      writer_->PlainTrack(track, gpu,
                          stream == model::kUnknownStream ? std::string("stream ?")
                                                          : "stream " + std::to_string(stream));
      std::sort(ops.begin(), ops.end(),
                [](const GpuOp& a, const GpuOp& b) { return a.start_ns < b.start_ns; });
      writer_->BeginSequence(track);
      int64_t last_end = INT64_MIN;
      auto& gpu_busy = busy[{pid, device}];
      for (GpuOp op : ops) {
        // One stream runs one operation at a time; an overlap is the trace's rounding, and a
        // slice starting inside its predecessor would not nest: it starts where that one ended.
        if (op.start_ns < last_end) {
          op.start_ns = last_end;
          op.end_ns = std::max(op.end_ns, op.start_ns);
          ++stats_->clipped;
        }
        last_end = op.end_ns;
        const uint64_t before = writer_->bytes_written();
        const std::string_view category = WriteGpuOp(op);
        if (op.kind == 0) stats_->kernel_bytes += writer_->bytes_written() - before;
        gpu_busy[category].push_back(op);
      }
    }
    for (const auto& [key, categories] : busy) WriteBusyShare(key.first, key.second, categories);
  }

  uint64_t GpuTrack(uint32_t pid, uint32_t device) {
    bool fresh = false;
    const uint64_t uuid = uuids_->Get(file_, kGpu, pid, device, 0, &fresh);
    if (fresh) {
      std::string name = "GPU " + std::to_string(device);
      auto it = device_names_.find((static_cast<uint64_t>(pid) << 32) | device);
      if (it != device_names_.end() && !it->second.empty()) name += " " + std::string(it->second);
      name += ", " + ProcessLabel(pid);
      writer_->PlainTrack(uuid, 0, name);
    }
    return uuid;
  }

  // Writes one GPU operation's slice; returns its category.
  std::string_view WriteGpuOp(const GpuOp& op) {
    Arg args[8];
    size_t n = 0;
    Slice s;
    s.start_ns = Ts(op.start_ns);
    s.end_ns = Ts(op.end_ns);
    s.args = args;
    uint32_t pid = 0, correlation = 0;
    if (op.kind == 0) {
      // The category is the slice's own (TrackEvent category, Chrome's "cat"), not repeated as an
      // argument; the correlation id is TrackEvent's field. docs/cli.md: what the UI shows where.
      const auto& e = events_.kernels[op.index];
      const KernelName& name = NameOf(e.name);
      s.name = name.short_name;
      s.category = name.category;
      LaunchString(name.full_name, e.grid, e.block, e.graph_id, &launch_);
      args[n++] = Arg::String("launch", launch_);
      if (kineto_) {
        // Kineto's kernel: the full name (what the classifier reads), category "kernel", and
        // the device, stream, grid and block as arguments; inferscope's category is an argument.
        s.name = name.full_name.empty() ? std::string_view(name.short_name) : name.full_name;
        s.category = "kernel";
        args[n++] = Arg::String("category", name.category);
        Dim3(e.grid, &grid_);
        Dim3(e.block, &block_);
        args[n++] = Arg::Json("grid", grid_);
        args[n++] = Arg::Json("block", block_);
        if (e.graph_id) args[n++] = Arg::Uint("graph id", e.graph_id);
      }
      pid = e.pid;
      correlation = e.correlation_id;
      ++stats_->kernels;
    } else if (op.kind == 1) {
      const auto& e = events_.memcpys[op.index];
      s.name = memcpy_names_[static_cast<int>(e.kind)];
      s.category = "memory";
      args[n++] = Arg::Uint("bytes", e.bytes);
      if (kineto_) {
        if (e.pageable) {
          pageable_name_ = std::string(s.name) + " (Pageable)";
          s.name = pageable_name_;
        }
        s.category = "gpu_memcpy";
      }
      pid = e.pid;
      correlation = e.correlation_id;
      ++stats_->copies;
    } else {
      const auto& e = events_.memsets[op.index];
      s.name = "Memset";
      s.category = kineto_ ? "gpu_memset" : "memory";
      args[n++] = Arg::Uint("bytes", e.bytes);
      pid = e.pid;
      correlation = e.correlation_id;
      ++stats_->copies;
    }
    const std::string_view category =
        op.kind == 0 ? NameOf(events_.kernels[op.index].name).category : std::string_view("memory");
    if (kineto_) {
      const uint32_t device = op.kind == 0   ? events_.kernels[op.index].device
                              : op.kind == 1 ? events_.memcpys[op.index].device
                                             : events_.memsets[op.index].device;
      const uint32_t stream = op.kind == 0   ? events_.kernels[op.index].stream
                              : op.kind == 1 ? events_.memcpys[op.index].stream
                                             : events_.memsets[op.index].stream;
      args[n++] = Arg::Uint("device", device);
      if (stream != model::kUnknownStream) args[n++] = Arg::Uint("stream", stream);
      args[n++] = Arg::Uint("correlation", correlation);
    }
    s.arg_count = n;
    // The flow's first GPU operation ends it (a graph launch's later kernels share its id).
    if (correlation) {
      auto it = launched_.find(PidCorrelation(pid, correlation));
      if (it != launched_.end() && landed_.insert(it->first).second) s.flow_in = it->second;
    }
    // A GPU operation at the end of a launch flow leaves its correlation id to the launching call
    // at the flow's other end (one click away in the UI, the same number): repeating it would cost
    // 4-5 of the 40 bytes a kernel slice may take. Operations without a flow (a graph's later
    // kernels, a launch outside the trace) carry it themselves.
    if (!s.flow_in) s.correlation_id = correlation;
    writer_->WriteSlice(s);
    return category;
  }

  static void Dim3(const int32_t d[3], std::string* out) {
    *out =
        "[" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + "]";
  }

  // The set's own counters (a capture's NVML samples), each under its GPU's track.
  void WriteGpuCounters() {
    for (const GpuCounterSeries& series : in_.gpu_counters) {
      if (series.points.empty()) continue;
      const uint64_t track = uuids_->Get(file_, kGpuCounter, series.pid, series.device,
                                         std::hash<std::string>{}(series.name));
      writer_->CounterTrack(track, GpuTrack(series.pid, series.device), series.name, series.unit);
      writer_->BeginSequence(track);
      for (const auto& [ts, value] : series.points) writer_->WriteCounter(Ts(ts), value);
    }
  }

  // One counter track per category seen on the GPU: the share of each bin that category's
  // operations kept the GPU busy (operations on several streams add up, capped at 1). A value is
  // written only when it changes.
  void WriteBusyShare(uint32_t pid, uint32_t device,
                      const std::map<std::string_view, std::vector<GpuOp>>& categories) {
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (const auto& [category, ops] : categories)
      for (const GpuOp& op : ops) {
        first = std::min(first, op.start_ns);
        last = std::max(last, op.end_ns);
      }
    if (first >= last) return;
    int64_t bin = options_.counter_bin_ns;
    if (bin <= 0) bin = std::max<int64_t>(10'000, (last - first + 499) / 500);
    const size_t bins = static_cast<size_t>((last - first + bin - 1) / bin);
    const uint64_t gpu = GpuTrack(pid, device);
    std::vector<double> share(bins);
    for (const auto& [category, ops] : categories) {
      std::fill(share.begin(), share.end(), 0.0);
      for (const GpuOp& op : ops) {
        for (int64_t t = op.start_ns; t < op.end_ns;) {
          const size_t b = static_cast<size_t>((t - first) / bin);
          const int64_t bin_end = first + static_cast<int64_t>(b + 1) * bin;
          const int64_t until = std::min(op.end_ns, bin_end);
          share[b] += static_cast<double>(until - t) / static_cast<double>(bin);
          t = until;
        }
      }
      const uint64_t track =
          uuids_->Get(file_, kCounter, pid, device, std::hash<std::string_view>{}(category));
      writer_->CounterTrack(track, gpu, "busy share: " + std::string(category), "fraction");
      writer_->BeginSequence(track);
      double previous = -1;
      for (size_t b = 0; b < bins; ++b) {
        const double v = std::min(1.0, share[b]);
        if (v == previous) continue;
        writer_->WriteCounter(Ts(first + static_cast<int64_t>(b) * bin), v);
        previous = v;
      }
      writer_->WriteCounter(Ts(first + static_cast<int64_t>(bins) * bin), 0.0);
    }
  }

  const uint32_t file_;
  const ImportedFile& in_;
  const Collector& events_;
  const model::KernelClassifier& classifier_;
  const int64_t offset_ns_;
  const ExportOptions& options_;
  Uuids* uuids_;
  TraceWriter* writer_;
  ExportStats* stats_;
  KinetoTrailer* kineto_;  // null: the viewer's fields only

  std::unordered_map<uint32_t, int32_t> ranks_;
  std::unordered_map<uint64_t, std::string_view> device_names_;
  std::unordered_map<NameId, KernelName> kernel_names_;
  std::unordered_set<uint64_t> targets_;             // (pid, correlation) of GPU operations
  std::unordered_map<uint64_t, uint64_t> launched_;  // flows started by an API call: their ids
  std::unordered_set<uint64_t> landed_;              // flows ended on a GPU operation
  std::string launch_;                               // reused `launch` argument
  std::string grid_, block_, pageable_name_;         // reused Kineto arguments
  const std::string memcpy_names_[6] = {"Memcpy",      "Memcpy HtoD", "Memcpy DtoH",
                                        "Memcpy DtoD", "Memcpy HtoH", "Memcpy PtoP"};
};

// The top-level members Kineto's importer reads: the rank of a single-process output (an importer
// reads one process per file) and the GPUs' names.
void WriteKinetoTrailer(const KinetoTrailer& t, ChromeJsonWriter* writer) {
  if (t.processes.size() == 1 && t.processes.begin()->second.first >= 0) {
    const auto [rank, world_size] = t.processes.begin()->second;
    writer->AddTopLevel("distributedInfo",
                        "{\"rank\":" + std::to_string(rank) + ",\"world_size\":" +
                            std::to_string(std::max(world_size, rank + 1)) + "}");
  }
  if (t.devices.empty()) return;
  std::string devices = "[";
  for (const auto& [device, name] : t.devices) {
    if (devices.size() > 1) devices += ",";
    devices +=
        "{\"id\":" + std::to_string(device) + ",\"name\":" + base::JsonWriter::Quote(name) + "}";
  }
  writer->AddTopLevel("deviceProperties", devices + "]");
}

}  // namespace

bool IsChromeJsonPath(const std::string& path) {
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".json") || ends_with(".json.gz");
}

base::StatusOr<ExportStats> ExportEventSets(std::vector<EventSet>* sets,
                                            const std::string& output_path,
                                            const model::KernelClassifier& classifier,
                                            const ExportOptions& options) {
  std::vector<ImportedFile>& files = *sets;
  int64_t offset_ns = INT64_MAX;
  for (const auto& f : files) offset_ns = std::min(offset_ns, EarliestStart(f));
  if (offset_ns == INT64_MAX) offset_ns = 0;
  return ExportEventStream(
      files.size(), offset_ns,
      [&files](size_t i) {
        EventSet set = std::move(files[i]);
        files[i] = EventSet{};
        return set;
      },
      output_path, classifier, options);
}

base::StatusOr<ExportStats> ExportEventStream(size_t count, int64_t offset_ns,
                                              const std::function<EventSet(size_t)>& load,
                                              const std::string& output_path,
                                              const model::KernelClassifier& classifier,
                                              const ExportOptions& options) {
  ExportStats stats;
  Output output;
  RETURN_IF_ERROR(output.Open(output_path));
  auto sink = [&output](std::string_view bytes) { output.Write(bytes); };
  std::unique_ptr<TraceWriter> writer;
  ChromeJsonWriter* chrome = nullptr;
  KinetoTrailer trailer;
  if (IsChromeJsonPath(output_path)) {
    auto owned = std::make_unique<ChromeJsonWriter>(sink);
    chrome = owned.get();
    writer = std::move(owned);
    // Kineto's importer takes a zero timestamp for a missing one: the earliest event is at 1 us.
    if (offset_ns > INT64_MIN + 1000) offset_ns -= 1000;
  } else {
    writer = std::make_unique<TrackEventWriter>(sink);
  }
  Uuids uuids;
  for (size_t i = 0; i < count; ++i) {
    ImportedFile file = load(i);
    FileExporter(static_cast<uint32_t>(i), file, classifier, offset_ns, options, &uuids,
                 writer.get(), &stats, chrome ? &trailer : nullptr)
        .Run();
  }  // each set's events are freed once written
  if (chrome) WriteKinetoTrailer(trailer, chrome);
  stats.output_bytes = writer->Finish();
  RETURN_IF_ERROR(output.Close());
  // On disk: what gzip made of it, when it was asked for.
  std::error_code ec;
  const auto written = std::filesystem::file_size(output_path, ec);
  if (!ec) stats.output_bytes = written;
  return stats;
}

base::StatusOr<ExportStats> ExportTraces(const std::vector<std::string>& trace_paths,
                                         const std::string& output_path,
                                         const model::KernelClassifier& classifier,
                                         const ExportOptions& options, std::string* failed_path) {
  uint64_t input_bytes = 0;
  std::vector<ImportedFile> files(trace_paths.size());
  for (size_t i = 0; i < trace_paths.size(); ++i) {
    auto imported = import::ImportTrace(trace_paths[i], files[i].names.get(), &files[i].events);
    if (!imported.ok()) {
      if (failed_path) *failed_path = trace_paths[i];
      return imported.status();
    }
    std::error_code ec;
    const auto size = std::filesystem::file_size(trace_paths[i], ec);
    if (!ec) input_bytes += size;
  }
  auto stats = ExportEventSets(&files, output_path, classifier, options);
  if (stats.ok()) stats->input_bytes = input_bytes;
  return stats;
}

}  // namespace inferscope::perfetto
