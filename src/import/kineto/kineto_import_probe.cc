// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// kineto_import_probe FILE...: imports each Kineto trace with a counting sink and prints what was
// delivered and the throughput (JSON bytes/s). Used for large-file runs and peak-RSS checks.

#include <chrono>
#include <cstdio>
#include <string>

#include "src/import/kineto/kineto_importer.h"

namespace {

// Counts events per kind; does nothing else.
class CountingSink final : public inferscope::model::EventSink {
 public:
  void OnProcess(const inferscope::model::ProcessInfo& p) override {
    ++processes;
    rank = p.rank;
    world_size = p.world_size;
    pid = p.pid;
  }
  void OnDevice(const inferscope::model::DeviceInfo&) override { ++devices; }
  void OnKernel(const inferscope::model::KernelEvent&) override { ++kernels; }
  void OnMemcpy(const inferscope::model::MemcpyEvent&) override { ++memcpys; }
  void OnMemset(const inferscope::model::MemsetEvent&) override { ++memsets; }
  void OnSync(const inferscope::model::SyncEvent&) override { ++syncs; }
  void OnApiCall(const inferscope::model::ApiCallEvent&) override { ++api_calls; }
  void OnNvtx(const inferscope::model::NvtxEvent&) override { ++nvtx; }
  void OnDataQuality(uint32_t, inferscope::model::DataQuality, uint64_t count) override {
    quality += count;
  }
  uint64_t processes = 0, devices = 0, kernels = 0, memcpys = 0, memsets = 0, syncs = 0,
           api_calls = 0, nvtx = 0, quality = 0;
  uint32_t pid = 0;
  int32_t rank = -1, world_size = -1;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TRACE.json[.gz]...\n", argv[0]);
    return 2;
  }
  int rc = 0;
  for (int i = 1; i < argc; ++i) {
    inferscope::model::NameTable names;
    CountingSink sink;
    const auto t0 = std::chrono::steady_clock::now();
    auto stats = inferscope::import::ImportKinetoTrace(argv[i], &names, &sink);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!stats.ok()) {
      std::fprintf(stderr, "error: %s\n", stats.status().message().c_str());
      rc = 1;
      continue;
    }
    std::printf(
        "%s: pid=%u rank=%d world=%d devices=%llu kernels=%llu memcpy=%llu memset=%llu sync=%llu "
        "api=%llu nvtx=%llu quality=%llu events=%llu skipped=%llu json=%.1fMB %.3fs "
        "%.0f MB/s\n",
        argv[i], sink.pid, sink.rank, sink.world_size, (unsigned long long)sink.devices,
        (unsigned long long)sink.kernels, (unsigned long long)sink.memcpys,
        (unsigned long long)sink.memsets, (unsigned long long)sink.syncs,
        (unsigned long long)sink.api_calls, (unsigned long long)sink.nvtx,
        (unsigned long long)sink.quality, (unsigned long long)stats->events_read,
        (unsigned long long)stats->events_skipped, stats->input_bytes / 1e6, s,
        stats->input_bytes / 1e6 / s);
  }
  return rc;
}
