// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Kernel resources from Kineto kernel args ("registers per thread", "shared memory"): delivered on
// request, once per change of a kernel name's resources, before the kernel they describe.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "src/import/kineto/kineto_importer.h"
#include "src/model/event_buffer.h"
#include "tests/test_traces.h"

namespace inferscope::import {
namespace {

// "R name regs/static/dynamic/sum" for a KernelResourcesEvent, "K name corr" for a kernel, in
// delivery order.
std::vector<std::string> Sequence(model::EventBuffer& buffer, const model::NameTable& names) {
  std::vector<std::string> out;
  for (const model::AnyEvent& any : buffer.events()) {
    if (const auto* r = std::get_if<model::KernelResourcesEvent>(&any)) {
      const model::KernelResources& x = r->resources;
      out.push_back("R " + std::string(names.Get(r->name)) + " " +
                    std::to_string(x.registers_per_thread) + "/" +
                    std::to_string(x.static_shared_bytes) + "/" +
                    std::to_string(x.dynamic_shared_bytes) + "/" + std::to_string(x.shared_bytes));
    } else if (const auto* k = std::get_if<model::KernelEvent>(&any)) {
      out.push_back("K " + std::string(names.Get(k->name)) + " " +
                    std::to_string(k->correlation_id));
    }
  }
  return out;
}

std::string Kernel(const std::string& name, int corr, const std::string& extra_args) {
  return R"({"ph": "X", "cat": "kernel", "name": ")" + name + R"(", "pid": 0, "tid": 7, "ts": )" +
         std::to_string(100 + corr * 10) + R"(, "dur": 5, "args": {"device": 0, "stream": 7, )" +
         R"("correlation": )" + std::to_string(corr) +
         R"(, "grid": [4, 1, 1], "block": [128, 1, 1])" + extra_args + "}}";
}

std::string Trace(const std::vector<std::string>& events) {
  std::string json = R"({"traceEvents": [)";
  json += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 55, )"
          R"("tid": 56, "ts": 1, "dur": 1, "args": {"correlation": 1}})";
  for (const std::string& e : events) json += ",\n" + e;
  return json + "]}";
}

const std::vector<std::string> kKernels = {
    Kernel("gemm", 1, R"(, "registers per thread": 168, "shared memory": 231424)"),
    Kernel("gemm", 2, R"(, "shared memory": 231424, "registers per thread": 168)"),  // same
    Kernel("gemm", 3, R"(, "registers per thread": 168, "shared memory": 0)"),       // changed
    Kernel("norm", 4, ""),  // absent: not recorded
    Kernel("odd", 5, R"(, "registers per thread": -4, "shared memory": "big")"),
    Kernel("odd", 6, R"(, "registers per thread": 70000, "shared memory": 4294967296)"),
    Kernel("odd", 7, R"(, "registers per thread": "48", "shared memory": null)"),  // quoted: 48
    Kernel("odd", 8, R"(, "registers per thread": [1], "shared memory": {"a": 1})"),
    Kernel("gemm", 9, R"(, "registers per thread": 168, "shared memory": 0)"),
};

TEST(KinetoKernelResourcesTest, OnEachChangeBeforeTheKernel) {
  model::NameTable names;
  model::EventBuffer buffer;
  KinetoImportOptions options;
  options.kernel_resources = true;
  auto stats = ImportKinetoJson(Trace(kKernels), &names, &buffer, options);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->kernels, 9u);
  EXPECT_THAT(Sequence(buffer, names),
              ::testing::ElementsAre(
                  // Kineto records the shared-memory sum only: static and dynamic unknown
                  "R gemm 168/-1/-1/231424", "K gemm 1", "K gemm 2", "R gemm 168/-1/-1/0",
                  "K gemm 3", "R norm -1/-1/-1/-1", "K norm 4",
                  // negative, not a number, above 16 bits / 31 bits: not recorded
                  "R odd -1/-1/-1/-1", "K odd 5", "K odd 6", "R odd 48/-1/-1/-1", "K odd 7",
                  "R odd -1/-1/-1/-1", "K odd 8", "K gemm 9"));
  // The resources carry the host process, like the kernels.
  for (const model::AnyEvent& any : buffer.events()) {
    if (const auto* r = std::get_if<model::KernelResourcesEvent>(&any)) {
      EXPECT_EQ(r->pid, 55u);
    }
  }
}

TEST(KinetoKernelResourcesTest, NotDeliveredUnlessAsked) {
  model::NameTable names;
  model::EventBuffer buffer;
  auto stats = ImportKinetoJson(Trace(kKernels), &names, &buffer, KinetoImportOptions{});
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  for (const model::AnyEvent& any : buffer.events())
    EXPECT_FALSE(std::holds_alternative<model::KernelResourcesEvent>(any));
}

// A real trace that records them (TraceLens h100: HF Qwen inference): every kernel name gets its
// registers and shared memory, in a few events per name, not one per launch.
TEST(KinetoKernelResourcesTest, RealTraceRecordsRegistersAndSharedMemory) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  const std::string path =
      testing::SharedTrace("TraceLens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
  model::NameTable names;
  model::EventBuffer buffer;
  KinetoImportOptions options;
  options.kernel_resources = true;
  auto stats = ImportKinetoTrace(path, &names, &buffer, options);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  std::map<model::NameId, model::KernelResources> current;
  size_t kernels = 0, events = 0, known = 0;
  for (const model::AnyEvent& any : buffer.events()) {
    if (const auto* r = std::get_if<model::KernelResourcesEvent>(&any)) {
      current[r->name] = r->resources;
      ++events;
    } else if (const auto* k = std::get_if<model::KernelEvent>(&any)) {
      ++kernels;
      ASSERT_TRUE(current.count(k->name)) << "a kernel before its name's resources";
      const model::KernelResources& x = current[k->name];
      if (x.registers_per_thread >= 0 && x.shared_bytes >= 0) ++known;
      EXPECT_LE(x.registers_per_thread, 255);  // what the GPUs allow
    }
  }
  EXPECT_EQ(kernels, stats->kernels);
  EXPECT_EQ(known, kernels);  // this trace records them for every kernel
  EXPECT_LT(events * 4, kernels);
}

}  // namespace
}  // namespace inferscope::import
