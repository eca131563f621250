// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// What a capture adds to a process's events about its GPUs: their names (the GPU tracks say which
// GPU) and NVML's metrics of the captured seconds as counter tracks beside the kernels.
// Kept apart from capture.cc, which is about the capture's protocol and state.

#include <cstdint>
#include <vector>

#include "src/agentd/capture.h"
#include "src/perfetto/trace_export.h"
#include "src/telemetry/nvml/gpu_sampler.h"

namespace inferscope::agentd {

// For each GPU the set has operations on: a DeviceInfo with the name and UUID `target` knows for
// it, and, when NVML samples a GPU of that UUID, one counter series per metric it sampled (all but
// the constant total memory), named "nvml: <metric>" (docs/gpu-metrics.md's names), over
// [from_unix_ns, to_unix_ns]: the sample in force at `from` (moved to `from`), then each sample.
// A GPU whose UUID the process has not reported (no window yet) gets neither.
void AddCaptureGpus(const CaptureTarget& target,
                    const std::vector<telemetry::GpuSampleSeries>& samples, int64_t from_unix_ns,
                    int64_t to_unix_ns, perfetto::EventSet* set);

}  // namespace inferscope::agentd
