// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// What a CUDA runtime or driver API call does, judged from its name. Shared by every source
// (Kineto `cuda_runtime`/`cuda_driver` events, Nsight RUNTIME rows, CUPTI callback names), so the
// same call is a launch, an allocation or a blocking sync whichever way it was recorded.

#include <string_view>

#include "src/model/events.h"

namespace inferscope::model {

struct CudaApiClass {
  ApiKind kind = ApiKind::kOther;
  SyncType sync = SyncType::kUnknown;  // for kSync
};

// Strips version and per-thread-stream suffixes: "cudaMalloc_v3020" -> "cudaMalloc",
// "cudaMemcpyAsync_ptsz_v7000" -> "cudaMemcpyAsync".
std::string_view StripApiSuffixes(std::string_view name);

// Classifies an API name (suffixes allowed).
CudaApiClass ClassifyCudaApi(std::string_view name);

}  // namespace inferscope::model
