// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Fuzzes the capture payload decoders (agent side: chunks and ends; process side: requests): no
// crash, and a decoded chunk or end re-encodes to one that decodes to the same.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "src/wire/capture_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)inferscope::wire::DecodeCaptureRequest(in);
  // An end (with its optional drop counts) re-encodes to one that decodes the same.
  if (auto end = inferscope::wire::DecodeCaptureEnd(in); end.ok()) {
    std::string again;
    inferscope::wire::EncodeCaptureEnd(*end, &again);
    auto back = inferscope::wire::DecodeCaptureEnd(again);
    if (!back.ok() || !(*back == *end)) std::abort();
  }
  auto chunk = inferscope::wire::DecodeCaptureChunk(in);
  if (!chunk.ok()) return 0;
  inferscope::wire::CaptureChunkWriter w;
  w.Begin(chunk->capture_id, chunk->sequence);
  for (const auto& k : chunk->kernels) w.Kernel(k);
  auto again = inferscope::wire::DecodeCaptureChunk(w.Take());
  if (!again.ok() || again->kernels.size() != chunk->kernels.size()) std::abort();
  for (size_t i = 0; i < chunk->kernels.size(); ++i)
    if (again->kernels[i].start_ns != chunk->kernels[i].start_ns ||
        again->kernels[i].name != chunk->kernels[i].name)
      std::abort();
  return 0;
}
