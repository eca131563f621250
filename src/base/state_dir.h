// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "src/base/status.h"

namespace inferscope::base {

// The directory shared by the agent (socket, lock, store) and the injection library (socket):
// $INFERSCOPE_STATE_DIR, else $XDG_STATE_HOME/inferscope, else $HOME/.local/state/inferscope,
// else /tmp/inferscope. One rule in one place, so `inferscope agent`, `inferscope report` and
// every injected process agree without configuration. `getenv_fn` is injectable for tests.
std::string DefaultStateDir(const char* (*getenv_fn)(const char*));

// Creates the state directory owner-only (0700, whatever the umask) when it does not exist, with
// any missing parents as the umask makes them. Whoever creates it (the agent, its store, `run`
// before it starts the agent), the socket and the profiles stay this user's. An existing directory
// is left as it is. kUnavailable when it cannot be created.
Status CreateStateDir(const std::string& dir);

}  // namespace inferscope::base
