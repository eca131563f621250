// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace inferscope::base {

// The directory shared by the agent (socket, lock, store) and the injection library (socket):
// $INFERSCOPE_STATE_DIR, else $XDG_STATE_HOME/inferscope, else $HOME/.local/state/inferscope,
// else /tmp/inferscope. One rule in one place, so `inferscope agent`, `inferscope report` and
// every injected process agree without configuration. `getenv_fn` is injectable for tests.
std::string DefaultStateDir(const char* (*getenv_fn)(const char*));

}  // namespace inferscope::base
