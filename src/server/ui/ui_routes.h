// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The local web dashboard (docs/agent.md, "Dashboard"): static files embedded in the binary,
// served on the agent's loopback listener at /ui/. The page reads the JSON API (/api/v1/...) of
// the same listener, so it needs no network beyond the agent (air-gapped hosts included).

#include "src/server/http_server.h"

namespace inferscope::server {

// Registers GET /ui, /ui/ (the page) and /ui/<file> for every embedded file.
void AddUiRoutes(HttpServer* server);

// Whether this binary holds the built dashboard (false: /ui/ says how to build it).
bool UiAssetsBuilt();

}  // namespace inferscope::server
