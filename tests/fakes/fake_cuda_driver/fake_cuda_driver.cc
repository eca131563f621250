// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// libfake_cuda_driver.so (SONAME libcuda.so.1): the one driver entry point the injection library
// calls, cuDriverGetVersion, for test processes that play the CUDA driver (the replay engine, the
// benchmarks). FAKE_CUDA_DRIVER_VERSION sets the answer: a number like 12040 or 13000 (default),
// or "stub" for what the toolkit's stub libcuda answers on a machine without a driver
// (CUDA_ERROR_STUB_LIBRARY, 34).

#include <cstdlib>
#include <cstring>

extern "C" __attribute__((visibility("default"))) int cuDriverGetVersion(int* version) {
  if (version == nullptr) return 1;  // CUDA_ERROR_INVALID_VALUE
  const char* v = std::getenv("FAKE_CUDA_DRIVER_VERSION");
  if (v != nullptr && std::strcmp(v, "stub") == 0) return 34;  // CUDA_ERROR_STUB_LIBRARY
  *version = v != nullptr && *v != '\0' ? std::atoi(v) : 13000;
  return 0;
}
