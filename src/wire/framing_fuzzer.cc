// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Fuzzes FrameReader (fed in chunks whose sizes come from the input) and the hello/window decoders
// behind it: no crash, no unbounded buffering, the same frames whatever the chunking.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "src/wire/framing.h"
#include "src/wire/window_codec.h"

namespace {

std::vector<inferscope::wire::Frame> ReadAll(std::string_view stream, size_t chunk) {
  inferscope::wire::FrameReader reader;
  std::vector<inferscope::wire::Frame> frames;
  for (size_t i = 0; i < stream.size(); i += chunk) {
    reader.Append(stream.substr(i, chunk));
    inferscope::wire::Frame f;
    while (reader.Next(&f)) frames.push_back(f);
    if (reader.buffered_bytes() >
        inferscope::wire::kFrameHeaderBytes + inferscope::wire::kMaxFramePayloadBytes + chunk)
      std::abort();
  }
  return frames;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t chunk = 1 + data[0] % 64;
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto a = ReadAll(stream, chunk);
  const auto b = ReadAll(stream, stream.size() + 1);
  if (a.size() != b.size()) std::abort();
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type != b[i].type || a[i].payload != b[i].payload) std::abort();
    if (a[i].type == static_cast<uint16_t>(inferscope::wire::FrameType::kHello))
      (void)inferscope::wire::DecodeHello(a[i].payload);
    if (a[i].type == static_cast<uint16_t>(inferscope::wire::FrameType::kWindow))
      (void)inferscope::wire::DecodeWindow(a[i].payload);
  }
  // Raw input as a hello payload, too.
  (void)inferscope::wire::DecodeHello(stream);
  return 0;
}
