// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope top`: a live terminal view of the host agent's store for SSH sessions. Every
// interval (the agent's window by default) it queries the last interval of stored data through
// the range pipeline (query::QueryRangeProfile, as `report` does) and shows per GPU the busy
// share and a category bar, the top kernels, the sync waits, requests/s and latency percentiles.
// On a TTY it redraws in place (ANSI) and fits the terminal width; otherwise it prints one plain
// frame per refresh (100 columns), or one with --once (docs/cli.md, "inferscope top").

#include <array>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "src/query/range_query.h"

namespace CLI {
class App;
}  // namespace CLI

namespace inferscope::cli {

struct TopOptions {
  std::string state_dir;
  int64_t interval_ns = 0;  // 0: the agent's window (agent.json), else 10 s
  std::optional<uint32_t> pid;
  std::optional<int32_t> rank;
  std::optional<uint32_t> device;
  int top = 5;              // kernels listed
  size_t width = 0;         // 0: the terminal's (TTY) or 100
  bool tty = false;         // redraw in place with ANSI sequences, read 'q' from the terminal
  uint64_t frames = 0;      // stop after this many frames (--once: 1); 0 = until q / Ctrl-C
  int64_t now_unix_ns = 0;  // 0: the clock (tests pin it)
};

// What one frame shows, taken from one RangeProfile (so it equals what the HTTP API and `report`
// say of the same range).
struct TopFrame {
  struct Gpu {
    int32_t rank = 0;
    uint32_t pid = 0;
    uint32_t device = 0;
    double busy_pct = 0;                                     // of the device's span in the range
    std::vector<std::pair<std::string, double>> categories;  // name, % of kernel time; by share
  };
  struct Kernel {
    std::string name;  // display name
    uint64_t count = 0;
    int64_t total_ns = 0;
    double pct = 0;  // of kernel time
  };
  struct Sync {
    std::string type;
    uint64_t count = 0;
    int64_t total_ns = 0, max_ns = 0;
  };
  int64_t from_ns = 0, to_ns = 0;  // the range shown (whole seconds)
  std::string filters;             // "rank 0, device 1" or ""
  size_t processes = 0;
  std::vector<Gpu> gpus;
  std::vector<Kernel> kernels;
  std::vector<Sync> syncs;  // summed over GPUs per type; types with waits only
  std::optional<double> requests_per_s;
  std::string latency_source;  // "spans", "engine" or "" (none)
  // stage ("e2e", "ttft") -> p50, p90, p99 in ns
  std::vector<std::pair<std::string, std::array<int64_t, 3>>> latencies;
  std::string note;  // shown instead of the tables ("waiting for the first window ...")
};

// The frame of `profile` (top `top` kernels over all its GPUs).
TopFrame BuildTopFrame(const query::RangeProfile& profile, int top);

// The frame as text lines of at most `width` columns (>= 60); nothing is cut but kernel names
// (in their middle) and the list of category names after each bar.
std::string RenderTopFrame(const TopFrame& frame, size_t width);

// Runs the command until q, Ctrl-C (exit 0) or `frames`. Exit codes: 0 ok, 3 no agent runs for
// the state dir or it has no store (the message says how to start one), 1 other errors.
int RunTop(const TopOptions& options, std::ostream& out, std::ostream& err);

// Registers the `top` subcommand on the binary's CLI11 app and runs it when parsed.
class TopCommand {
 public:
  explicit TopCommand(CLI::App* app);
  std::optional<int> RunIfParsed();

 private:
  CLI::App* cmd_ = nullptr;
  std::string state_dir_, interval_;
  std::optional<uint32_t> pid_, device_;
  std::optional<int32_t> rank_;
  int top_ = 5;
  bool once_ = false;
};

}  // namespace inferscope::cli
