// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/model/cuda_api.h"

#include <initializer_list>

namespace inferscope::model {
namespace {

// Removes one trailing "_v<digits>", "_ptsz" or "_ptds"; false when there is none.
bool StripOneSuffix(std::string_view* name) {
  if (name->size() > 5 && (name->ends_with("_ptsz") || name->ends_with("_ptds"))) {
    name->remove_suffix(5);
    return true;
  }
  size_t digits = 0;
  while (digits < name->size() && (*name)[name->size() - 1 - digits] >= '0' &&
         (*name)[name->size() - 1 - digits] <= '9') {
    ++digits;
  }
  if (digits == 0 || name->size() <= digits + 2) return false;
  if ((*name)[name->size() - digits - 1] != 'v' || (*name)[name->size() - digits - 2] != '_') {
    return false;
  }
  name->remove_suffix(digits + 2);
  return true;
}

}  // namespace

std::string_view StripApiSuffixes(std::string_view name) {
  while (StripOneSuffix(&name)) {
  }
  return name;
}

CudaApiClass ClassifyCudaApi(std::string_view raw) {
  const std::string_view name = StripApiSuffixes(raw);
  auto any = [&](std::initializer_list<std::string_view> names) {
    for (std::string_view n : names) {
      if (name == n) return true;
    }
    return false;
  };
  auto prefix = [&](std::initializer_list<std::string_view> prefixes) {
    for (std::string_view p : prefixes) {
      if (name.starts_with(p)) return true;
    }
    return false;
  };
  if (prefix({"cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchCooperativeKernel",
              "cuLaunchCooperativeKernel", "cuLaunchGrid"}) ||
      name == "cudaLaunch") {
    return {ApiKind::kKernelLaunch};
  }
  if (any({"cudaGraphLaunch", "cuGraphLaunch"})) return {ApiKind::kGraphLaunch};
  if (prefix({"cudaMalloc", "cuMemAlloc", "cudaHostAlloc", "cuMemHostAlloc"}) ||
      name == "cuMemCreate") {
    return {ApiKind::kMalloc};
  }
  if (prefix({"cudaFree", "cuMemFree"}) || name == "cuMemRelease") return {ApiKind::kFree};
  if (prefix({"cudaMemcpy", "cuMemcpy"})) return {ApiKind::kMemcpy};
  if (prefix({"cudaMemset", "cuMemset"})) return {ApiKind::kMemset};
  if (any({"cudaDeviceSynchronize", "cudaThreadSynchronize", "cuCtxSynchronize"})) {
    return {ApiKind::kSync, SyncType::kDevice};
  }
  if (any({"cudaStreamSynchronize", "cuStreamSynchronize"})) {
    return {ApiKind::kSync, SyncType::kStream};
  }
  if (any({"cudaEventSynchronize", "cuEventSynchronize"})) {
    return {ApiKind::kSync, SyncType::kEvent};
  }
  if (any({"cudaStreamWaitEvent", "cuStreamWaitEvent"})) {
    return {ApiKind::kSync, SyncType::kStreamWaitEvent};
  }
  // Polls never block, though CUPTI writes a synchronization record for each of them.
  if (any({"cudaEventQuery", "cuEventQuery", "cudaStreamQuery", "cuStreamQuery"})) {
    return {ApiKind::kQuery};
  }
  return {};
}

}  // namespace inferscope::model
