// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The agent's access token: one per-user secret in the state directory (<state dir>/agent.token,
// 0600), created by the agent, read by every client of its HTTP API (the CLI, MCP clients, the
// engines' OTLP exporters under `inferscope run`), sent as `Authorization: Bearer <token>`.

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>

#include "src/base/status.h"

namespace inferscope::base {

inline constexpr const char* kAccessTokenFile = "agent.token";
// The MCP route's token file of earlier versions: an agent that finds it adopts its content as
// the access token (so configured MCP clients keep working) and removes it.
inline constexpr const char* kLegacyMcpTokenFile = "mcp.token";

// The token of `state_dir`, whitespace trimmed. kNotFound when there is none (no agent has run
// there yet); kUnavailable when the file is not a regular file of this user's with mode 0600 or
// stricter (a token others can read is no secret), or is empty.
StatusOr<std::string> ReadAccessToken(const std::string& state_dir);

// The token of `state_dir`, created (32 random bytes, hex) when there is none, or adopted from
// mcp.token. Two agents racing to create it agree: the file is linked into place exclusively.
StatusOr<std::string> EnsureAccessToken(const std::string& state_dir);

// 32 bytes from the kernel's CSPRNG (getrandom), as 64 hex digits.
StatusOr<std::string> RandomHexToken(size_t bytes = 32);

// Constant-time equality: a comparison does not reveal how many leading bytes matched.
bool SameSecret(const std::string& a, const std::string& b);

// A token file as it is now: re-read when the file changes (inode, size or
// ctime, which a write, chmod or chown moves), so it can be rotated while the agent runs.
// Thread-safe.
class AccessTokenFile {
 public:
  // `path`: the token file (<state dir>/agent.token, or a --metrics-token file).
  explicit AccessTokenFile(std::string path) : path_(std::move(path)) {}
  // The current token; an error when the file is gone or no longer private (requests are then
  // refused: fail closed).
  StatusOr<std::string> Current();

 private:
  std::string path_;
  std::mutex mu_;
  bool cached_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  off_t size_ = 0;
  int64_t ctime_ns_ = 0;
  std::string token_;
};

}  // namespace inferscope::base
