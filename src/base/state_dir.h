// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

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
// keeps its mode but must pass CheckStateDirTrusted. kUnavailable when it cannot be created or is
// not trusted.
Status CreateStateDir(const std::string& dir);

// Whether `dir` is a directory only this user can change: owned by the effective uid and not
// writable by others (nor by its group, unless the group is the user's own primary group, as
// with user private groups). Anyone else who can write it could replace the ingest socket, plant
// an agent.json naming their own server (the CLI would send it the access token) or swap the
// store. kNotFound when it does not exist; kUnavailable, with the fix, when it is not trusted.
Status CheckStateDirTrusted(const std::string& dir);

// Writes `contents` to `path` with mode 0600 whatever the umask, replacing it atomically (a
// temporary file beside it, then rename): readers see the old or the new file, never a part.
// A symlink at `path` is replaced, never followed.
Status WritePrivateFile(const std::string& path, std::string_view contents);

// Creates `dir` (one level) with mode 0700 whatever the umask, or sets an existing one we own to
// 0700. For the state directory's subdirectories (captures/).
Status CreatePrivateDir(const std::string& dir);

}  // namespace inferscope::base
