// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Hand-built profile windows for the analyze and report tests (test-only). Numbers are small and
// round so expectations can be checked by hand: span 1000 ns, kernel time 600 ns.

#include "src/model/profile.h"

namespace inferscope::analyze::testing {

inline model::KernelStats MakeKernel(const char* name, model::Category category, const char* sub,
                                     std::initializer_list<int64_t> durations_ns) {
  model::KernelStats k;
  k.name = name;
  k.category = category;
  k.subcategory = sub;
  for (int64_t d : durations_ns) {
    k.duration.Add(d);
    k.histogram.Add(d);
  }
  return k;
}

inline model::DeviceProfile MakeDevice(uint32_t device, int64_t busy_ns, int64_t compute_ns) {
  using model::Category;
  model::DeviceProfile d;
  d.device = device;
  d.device_name = "NVIDIA H100 80GB HBM3";
  d.first_start_ns = 1000;
  d.last_end_ns = 2000;
  d.busy_ns = busy_ns;
  d.compute_ns = compute_ns;
  d.communication_ns = 100;
  d.communication_overlap_ns = 40;
  d.kernel_count = 10;
  auto cat = [&d](Category c, uint64_t count, int64_t ns) {
    d.categories[static_cast<int>(c)] = {count, ns};
  };
  cat(Category::kAttention, 3, 300);
  cat(Category::kMatmul, 3, 150);
  cat(Category::kCommunication, 2, 100);
  cat(Category::kMemory, 2, 50);
  d.subcategories["attention.decode"] = {3, 300};
  d.subcategories["communication.all_reduce"] = {2, 100};
  d.subcategories["matmul.cublas"] = {3, 150};
  d.top_kernels.push_back(MakeKernel("void flashinfer::BatchDecodeKernel<true, 128u>(Params)",
                                     Category::kAttention, "attention.decode", {90, 100, 110}));
  d.top_kernels.push_back(
      MakeKernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                 Category::kCommunication, "communication.all_reduce", {50}));
  d.top_kernels.push_back(MakeKernel("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn",
                                     Category::kMatmul, "matmul.cublas", {30, 30, 40}));
  d.tail = MakeKernel("", Category::kOther, "other", {20, 30, 50});
  d.tail.distinct_names = 2;

  d.idle_gaps.host_wait.Add(100);
  d.idle_gaps.host_wait.Add(200);
  for (int i = 0; i < 4; ++i) d.idle_gaps.kernel_wait.Add(20);
  d.idle_gaps.other.Add(20);

  d.launch.cpu_launch.Add(2);
  d.launch.cpu_launch.Add(5);
  d.launch.cpu_launch.Add(8);
  d.launch.launch_delay.Add(1000);
  d.launch.launch_delay.Add(3000);
  d.launch.short_kernels = 5;

  model::SyncStats& stream = d.syncs[static_cast<int>(model::SyncType::kStream)];
  stream.wait.Add(20);
  stream.wait.Add(50);
  stream.waited_on.push_back({"void flashinfer::BatchDecodeKernel<true, 128u>(Params)", 2, 70});

  d.memcpy[static_cast<int>(model::MemcpyKind::kHtoD)] = {1, 1000, 40, 1};
  d.memcpy[static_cast<int>(model::MemcpyKind::kDtoH)] = {1, 10, 0, 0};
  d.memset = {1, 64, 10, 0};

  d.allocations.malloc_calls.Add(100);
  d.allocations.malloc_calls.Add(2'000'000);
  d.allocations.malloc_bytes = 4096;
  d.allocations.slow_calls = 1;
  d.allocations.slow_total_ns = 2'000'000;

  d.timeline.bin_ns = 500;
  d.timeline.origin_ns = 1000;
  d.timeline.category_ns.resize(2);
  d.timeline.category_ns[0][static_cast<int>(Category::kAttention)] = 200;
  d.timeline.category_ns[1][static_cast<int>(Category::kAttention)] = 100;
  d.timeline.category_ns[1][static_cast<int>(Category::kMatmul)] = 150;
  d.timeline.category_ns[1][static_cast<int>(Category::kCommunication)] = 100;
  d.timeline.category_ns[1][static_cast<int>(Category::kMemory)] = 50;
  d.timeline.busy_ns = {400, 200};
  return d;
}

inline model::ProfileWindow MakeWindow(uint32_t pid, int32_t rank, int64_t busy_ns,
                                       int64_t compute_ns) {
  model::ProfileWindow w;
  w.start_ns = 1000;
  w.end_ns = 2000;
  model::ProcessProfile p;
  p.pid = pid;
  p.rank = rank;
  p.hostname = "node-1";
  p.devices.push_back(MakeDevice(0, busy_ns, compute_ns));
  w.processes.push_back(std::move(p));
  return w;
}

}  // namespace inferscope::analyze::testing
