// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Fuzzes the parsers of the agent's JSON answers that `inferscope status` reads (/api/v1/status,
// /processes, /devices): whatever a process on the agent's port sends, no input may crash or hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "src/cli/status_command.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace inferscope::cli;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto status = ParseAgentStatus(body);
  auto processes = ParseProcesses(body);
  auto devices = ParseDevices(body);
  // All three accept exactly the JSON objects: they must agree on what is one.
  if (status.ok() != processes.ok() || status.ok() != devices.ok()) abort();
  if (status.ok() && !status->has_collectors &&
      (status->nvml.state != "unknown" || !status->nvml.devices.empty()))
    abort();
  return 0;
}
