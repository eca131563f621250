// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Moved to src/agent/agent_endpoints.h (library inferscope_agent_endpoints) so that clients of a
// running agent (`run`, `status`) need not link the HTTP server. Kept until every include names
// the new path.
#include "src/agent/agent_endpoints.h"  // IWYU pragma: export
