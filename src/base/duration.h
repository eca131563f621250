// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string_view>

#include "src/base/status.h"

namespace inferscope::base {

// Parses a duration flag: a non-negative number (decimals allowed) followed by ns, us, ms or s,
// e.g. "100ms", "30us", "1.5s", "250ns". A bare "0" is accepted; other bare numbers are rejected
// (ambiguous). Errors are kInvalidArgument with a message that names the accepted forms.
StatusOr<int64_t> ParseDuration(std::string_view text);

}  // namespace inferscope::base
