// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Fuzzes DecodeWindow: any input must decode or fail with a Status, never crash or allocate beyond
// the budget; whatever decodes must re-encode and decode to the same window.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "src/wire/window_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto decoded = inferscope::wire::DecodeWindow(input);
  if (!decoded.ok()) return 0;
  std::string again;
  inferscope::wire::EncodeWindow(*decoded, &again);
  auto twice = inferscope::wire::DecodeWindow(again);
  if (!twice.ok() || !(*twice == *decoded)) std::abort();
  return 0;
}
