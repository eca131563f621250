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
  // Resources are -1 (not recorded) or in range; the sum only with both parts.
  void OnKernelResources(const model::KernelResourcesEvent& e) override {
    const model::KernelResources& r = e.resources;
    if (r.registers_per_thread < -1 || r.registers_per_thread > model::kMaxRegistersPerThread ||
        r.static_shared_bytes < -1 || r.dynamic_shared_bytes < -1 || r.shared_bytes < -1)
      abort();
    if (r.shared_bytes >= 0 && (r.static_shared_bytes < 0 || r.dynamic_shared_bytes < 0)) abort();
  }
  void OnDataQuality(uint32_t, model::DataQuality, uint64_t) override {}

 private:
  static void Check(int64_t start, int64_t end) {
    if (start == 0 || end == 0 || end < start) abort();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  model::NameTable names;
  CheckingSink sink;
  auto stats = import::ImportNsysSqliteImage(bytes, &names, &sink);
  if (stats.ok() && stats->input_bytes != size) abort();
  if (!stats.ok()) return 0;
  // An image that imports: again with the kernel resources (the kernel table's three more columns).
  model::NameTable names_again;
  CheckingSink sink_again;
  (void)import::ImportNsysSqliteImage(bytes, &names_again, &sink_again,
                                      /*kernel_resources=*/true);
  return 0;
}
