// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>

namespace inferscope::inject {

enum class LogLevel : int { kOff = 0, kError = 1, kInfo = 2, kDebug = 3 };

// Settings of the injection library, all from the environment (`inferscope run` sets them; a user
// may too). Every variable is documented in docs/design/inject.md. Parsing never fails: a bad value
// falls back to the default and is reported in `warnings`.
struct Config {
  int64_t window_ns = 10'000'000'000;     // INFERSCOPE_WINDOW
  int64_t flush_period_ns = 500'000'000;  // INFERSCOPE_FLUSH_PERIOD
  int64_t lateness_ns = 1'000'000'000;    // INFERSCOPE_LATENESS: reorder horizon for records
  int64_t bin_ns = 100'000'000;           // INFERSCOPE_BIN: timeline bins
  int top_k = 20;                         // INFERSCOPE_TOP
  size_t buffer_bytes = 4 << 20;          // INFERSCOPE_BUFFER_SIZE: one CUPTI activity buffer
  size_t buffer_count = 8;                // INFERSCOPE_BUFFER_COUNT: preallocated buffers
  bool graph_nodes = false;               // INFERSCOPE_GRAPH_NODES=1: trace graph nodes as kernels
  // INFERSCOPE_NVTX=1 (`inferscope run --nvtx`): NVTX ranges through CUPTI's marker activity, a
  // range table per window. Off by default: every NVTX push/pop then goes through CUPTI.
  bool nvtx = false;
  // INFERSCOPE_GRAPH_SAMPLE=DURATION/PERIOD ("1s/60s") or "off": node-level samples of CUDA graph
  // launches, aligned to the wall clock so that every rank samples at once.
  int64_t graph_sample_ns = 1'000'000'000;
  int64_t graph_sample_period_ns = 60'000'000'000;
  std::string socket_path;  // INFERSCOPE_SOCKET, else $INFERSCOPE_STATE_DIR/agent.sock
  std::string cupti_path;   // INFERSCOPE_CUPTI_PATH: a libcupti file or its directory
  LogLevel log_level = LogLevel::kError;  // INFERSCOPE_LOG=off|error|info|debug
  // Distributed identity, from torchrun / vLLM / SLURM / Open MPI variables (-1 = unknown).
  int32_t rank = -1;
  int32_t local_rank = -1;
  int32_t world_size = -1;
  std::string warnings;  // one line per ignored value
};

// Reads the configuration from `getenv`; `getenv_fn` is injectable for tests.
Config ReadConfig(const char* (*getenv_fn)(const char*));

// The default socket when INFERSCOPE_SOCKET is unset: <state dir>/agent.sock, with the state dir
// rule of base::DefaultStateDir ($INFERSCOPE_STATE_DIR, $XDG_STATE_HOME/inferscope, ...), which
// the agent uses too.
std::string DefaultSocketPath(const char* (*getenv_fn)(const char*));

}  // namespace inferscope::inject
