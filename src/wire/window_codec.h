// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The one cross-process encoding of a ProfileWindow (injection library -> agent -> store). The
// format is described in src/wire/README.md: tagged little-endian fields with varints and zigzag,
// a major.minor format version in front, unknown fields skipped. Lossless for every field.

#include <cstdint>
#include <string>
#include <string_view>

#include "src/base/status.h"
#include "src/model/profile.h"

namespace inferscope::wire {

// Window format version. A reader accepts any minor version of its major (skipping the fields it
// does not know) and rejects a newer major. Bump the minor when adding a field, the major when
// changing the meaning or encoding of an existing one.
inline constexpr uint32_t kWindowFormatMajor = 1;
// 1: idle causes (21), steps (22); 2: device uuid (31); 3: forward phases (32); 4: NVTX range
// tables (process field 8); 5: launch configurations of the top kernels (kernel fields 7, 8);
// 6: graph time from capture split by known kernel durations (CUDA graph field 11)
inline constexpr uint32_t kWindowFormatMinor = 6;

// Decoding limits: anything beyond them is rejected as corrupt (no window the Aggregator builds
// comes near them).
inline constexpr uint64_t kMaxTimelineBins = 1u << 20;

// Appends the encoding of `window` to `*out`. Never fails.
void EncodeWindow(const model::ProfileWindow& window, std::string* out);

// Decodes a payload written by EncodeWindow (this or any older minor version of the same major).
// Any malformed input gives kDataLoss (a newer major version: kUnsupported), never a crash; memory
// is bounded by the input size (every list element costs at least one input byte).
base::StatusOr<model::ProfileWindow> DecodeWindow(std::string_view payload);

}  // namespace inferscope::wire
