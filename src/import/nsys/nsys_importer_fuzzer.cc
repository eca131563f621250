// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: arbitrary bytes as an Nsight Systems SQLite image. The importer must return a
// Status (never crash, hang or run away with memory) and every event it delivers must be valid.
// Seed corpus: any small export, e.g. a copy of pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite or a
// database built with the test's SQL, in a directory outside the repository.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "src/import/nsys/nsys_importer.h"

namespace {

using namespace inferscope;  // NOLINT(build/namespaces)

// Checks the guarantees the importer makes about what it delivers.
class CheckingSink : public model::EventSink {
 public:
  void OnProcess(const model::ProcessInfo&) override {}
  void OnDevice(const model::DeviceInfo&) override {}
  void OnKernel(const model::KernelEvent& e) override { Check(e.start_ns, e.end_ns); }
  void OnMemcpy(const model::MemcpyEvent& e) override {
    Check(e.start_ns, e.end_ns);
    if (e.kind >= model::MemcpyKind::kCount) abort();
  }
  void OnMemset(const model::MemsetEvent& e) override { Check(e.start_ns, e.end_ns); }
  void OnSync(const model::SyncEvent& e) override {
    Check(e.start_ns, e.end_ns);
    if (e.type >= model::SyncType::kCount) abort();
  }
  void OnApiCall(const model::ApiCallEvent& e) override {
    Check(e.start_ns, e.end_ns);
    if (e.kind >= model::ApiKind::kCount || e.sync_type >= model::SyncType::kCount) abort();
  }
  void OnNvtx(const model::NvtxEvent& e) override { Check(e.start_ns, e.end_ns); }
  void OnDataQuality(uint32_t, model::DataQuality, uint64_t) override {}

 private:
  static void Check(int64_t start, int64_t end) {
    if (start == 0 || end == 0 || end < start) abort();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  model::NameTable names;
  CheckingSink sink;
  auto stats = import::ImportNsysSqliteImage(
      std::string_view(reinterpret_cast<const char*>(data), size), &names, &sink);
  if (stats.ok() && stats->input_bytes != size) abort();
  return 0;
}
