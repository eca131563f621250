// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: arbitrary bytes into the Kineto importer, with the default chunk size and with
// a tiny one (chosen by the first byte) so that elements straddle chunk boundaries; the second run
// also asks for the views' ranges (cpu_op, modules, gpu_user_annotation) and kernel resources.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/import/kineto/kineto_importer.h"

namespace {

class NullSink final : public inferscope::model::EventSink {
 public:
  void OnProcess(const inferscope::model::ProcessInfo&) override {}
  void OnDevice(const inferscope::model::DeviceInfo&) override {}
  void OnKernel(const inferscope::model::KernelEvent& e) override { sum += e.end_ns - e.start_ns; }
  void OnMemcpy(const inferscope::model::MemcpyEvent&) override {}
  void OnMemset(const inferscope::model::MemsetEvent&) override {}
  void OnSync(const inferscope::model::SyncEvent&) override {}
  void OnApiCall(const inferscope::model::ApiCallEvent&) override {}
  void OnNvtx(const inferscope::model::NvtxEvent&) override {}
  void OnViewRange(const inferscope::model::ViewRangeEvent& e) override {
    sum += e.end_ns - e.start_ns;
  }
  void OnKernelResources(const inferscope::model::KernelResourcesEvent& e) override {
    sum += e.resources.registers_per_thread + e.resources.shared_bytes;
  }
  void OnDataQuality(uint32_t, inferscope::model::DataQuality, uint64_t) override {}
  int64_t sum = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  {
    inferscope::model::NameTable names;
    NullSink sink;
    (void)inferscope::import::ImportKinetoJson(json, &names, &sink);
  }
  if (size > 0) {
    inferscope::import::KinetoImportOptions options;
    options.chunk_bytes = 16 + data[0] % 64;
    options.max_element_bytes = 4096;
    options.host_ops = true;
    options.gpu_annotations = true;
    options.kernel_resources = true;
    inferscope::model::NameTable names;
    NullSink sink;
    (void)inferscope::import::ImportKinetoJson(json, &names, &sink, options);
  }
  return 0;
}
