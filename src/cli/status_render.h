// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope status`, rendering: what Gather learned as text for people (fits 100 columns, text
// from the agent made printable) or as JSON for scripts (keys in docs/cli.md).

#include <cstdint>
#include <string>

#include "src/cli/status_probe.h"

namespace inferscope::cli {

std::string RenderStatusJson(const Gathered& g, int64_t now_ns);
std::string RenderStatusText(const Gathered& g, int64_t now_ns);

}  // namespace inferscope::cli
