// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// replay_engine: plays the CUDA driver and an inference engine without a GPU. It imports real
// traces, forks one process per rank, loads the injection library the way the driver does
// (CUDA_INJECTION64_PATH, dlopen, InitializeInjection) and replays each rank's GPU activity as
// CUPTI records through the fake CUPTI. See docs/testing-live.md.
//
//   replay_engine [--speed N] [--inject PATH] [--other-subscriber] [--fork-child]
//                 [--die-by-signal N] [--cupti-fail FUNCTION:N] [--corrupt-every N]
//                 [--loop-for SECONDS [--loop-period SECONDS]] TRACE...

#include <cupti.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "src/import/trace_importer.h"
#include "tests/fakes/fake_cupti/fake_cupti_control.h"
#include "tests/fakes/replay_engine/replay.h"

namespace inferscope::fakes {
namespace {

struct Rank {
  const ProcessTrace* trace;
  int rank;
  int local_rank;
  int world_size;
};

int Usage() {
  std::fprintf(stderr,
               "usage: replay_engine [--speed N] [--inject PATH] [--other-subscriber] "
               "[--fork-child] [--die-by-signal N] [--cupti-fail FUNCTION:N] [--corrupt-every N] "
               "[--loop-for SECONDS [--loop-period SECONDS]] [--nvml-index-of-device I,J,...] "
               "TRACE...\n");
  return 2;
}

// How the engine behaves around the replay, to exercise the profiler's fault paths.
struct EngineBehaviour {
  bool fork_child = false;  // fork a child after CUDA init that exits at once (multiprocessing)
  int die_by_signal = 0;    // end the process by this signal instead of a clean exit
};
EngineBehaviour g_behaviour;

// What the driver does in cuInit: load the tool named by CUDA_INJECTION64_PATH and call it.
int LoadInjection(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "replay_engine: cannot load injection library: %s\n", dlerror());
    return 1;
  }
  using InitFn = int (*)();
  auto init = reinterpret_cast<InitFn>(dlsym(handle, "InitializeInjection"));
  if (init == nullptr) {
    std::fprintf(stderr, "replay_engine: %s does not export InitializeInjection\n", path.c_str());
    return 1;
  }
  if (init() == 0) std::fprintf(stderr, "replay_engine: InitializeInjection returned 0\n");
  return 0;
}

int RunRank(const Rank& r, const std::string& inject, const model::NameTable& names,
            const ReplayOptions& options) {
  setenv("RANK", std::to_string(r.rank).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(r.local_rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(r.world_size).c_str(), 1);
  if (!inject.empty())
    if (int rc = LoadInjection(inject); rc != 0) return rc;
  if (g_behaviour.fork_child) {
    // Like a Python multiprocessing fork after CUDA init: the child inherits the loaded tool (its
    // threads do not survive the fork) and exits through exit(), running atexit handlers.
    const pid_t child = fork();
    if (child == 0) std::exit(0);
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "replay_engine: forked child failed (status %d)\n", status);
      return 1;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const ReplayCounts c = ReplayProcess(*r.trace, names, options);
  if (g_behaviour.die_by_signal != 0) {
    std::fprintf(stderr, "replay_engine: rank %d pid %d: dying by signal %d\n", r.rank,
                 static_cast<int>(getpid()), g_behaviour.die_by_signal);
    std::signal(g_behaviour.die_by_signal, SIG_DFL);
    std::raise(g_behaviour.die_by_signal);
  }
  // The tool's teardown path: a last flush, then detach.
  const auto teardown_start = std::chrono::steady_clock::now();
  cuptiActivityFlushAll(0);
  cuptiFinalize();
  const auto end = std::chrono::steady_clock::now();
  const double ms = std::chrono::duration<double, std::milli>(end - start).count();
  const double teardown_ms =
      std::chrono::duration<double, std::milli>(end - teardown_start).count();
  std::fprintf(
      stderr,
      "replay_engine: rank %d pid %d: %llu kernels, %llu graph launches (+%llu as nodes), "
      "%llu memcpys, "
      "%llu memsets, %llu syncs, %llu api calls, %llu allocations; records written "
      "%llu, filtered %llu, dropped %llu, corrupted %llu zero + %llu reversed; %.1f ms\n",
      r.rank, static_cast<int>(getpid()), static_cast<unsigned long long>(c.kernels),
      static_cast<unsigned long long>(c.graph_launches),
      static_cast<unsigned long long>(c.graph_node_launches),
      static_cast<unsigned long long>(c.memcpys), static_cast<unsigned long long>(c.memsets),
      static_cast<unsigned long long>(c.syncs), static_cast<unsigned long long>(c.api_calls),
      static_cast<unsigned long long>(c.allocations), static_cast<unsigned long long>(c.written),
      static_cast<unsigned long long>(c.filtered), static_cast<unsigned long long>(c.dropped),
      static_cast<unsigned long long>(c.zeroed), static_cast<unsigned long long>(c.reversed), ms);
  // The same for scripts, one JSON object per rank ("kernels_written": kernel records the tool
  // received, which is what its stored windows must add up to).
  std::fprintf(
      stderr,
      "replay_engine_summary {\"rank\": %d, \"pid\": %d, \"loops\": %llu, "
      "\"kernels\": %llu, \"kernels_written\": %llu, \"records_written\": %llu, "
      "\"records_filtered\": %llu, \"records_dropped\": %llu, \"graph_launches\": %llu, "
      "\"graph_node_launches\": %llu, \"ranges\": %llu, \"longest_loop_ms\": %.1f, "
      "\"median_loop_ms\": %.1f, \"teardown_ms\": %.1f, \"elapsed_ms\": %.1f}\n",
      r.rank, static_cast<int>(getpid()), static_cast<unsigned long long>(c.loops),
      static_cast<unsigned long long>(c.kernels),
      static_cast<unsigned long long>(c.kernels_written),
      static_cast<unsigned long long>(c.written), static_cast<unsigned long long>(c.filtered),
      static_cast<unsigned long long>(c.dropped), static_cast<unsigned long long>(c.graph_launches),
      static_cast<unsigned long long>(c.graph_node_launches),
      static_cast<unsigned long long>(c.ranges), c.longest_loop_ms, c.median_loop_ms, teardown_ms,
      ms);
  return 0;
}

int Main(int argc, char** argv) {
  ReplayOptions options;
  std::string inject;
  if (const char* env = std::getenv("CUDA_INJECTION64_PATH")) inject = env;
  std::vector<std::string> traces;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--speed" && i + 1 < argc) {
      char* end = nullptr;
      options.speed = std::strtod(argv[++i], &end);
      if (*end != '\0' || options.speed < 0) return Usage();
    } else if (arg == "--inject" && i + 1 < argc) {
      inject = argv[++i];
    } else if (arg == "--cupti-fail" && i + 1 < argc) {
      // FUNCTION:N: that CUPTI function (or "*") fails with CUPTI_ERROR_UNKNOWN after N calls.
      const std::string spec = argv[++i];
      const size_t colon = spec.rfind(':');
      if (colon == std::string::npos || colon == 0) return Usage();
      static std::string function;  // the fake keeps the pointer
      function = spec.substr(0, colon);
      fake_cupti_fail_after(function.c_str(), std::atoll(spec.c_str() + colon + 1),
                            CUPTI_ERROR_UNKNOWN);
    } else if (arg == "--corrupt-every" && i + 1 < argc) {
      options.corrupt_every = std::strtoull(argv[++i], nullptr, 10);
    } else if ((arg == "--loop-for" || arg == "--loop-period") && i + 1 < argc) {
      char* end = nullptr;
      const double seconds = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(seconds >= 0)) return Usage();
      (arg == "--loop-for" ? options.loop_for_s : options.loop_period_s) = seconds;
    } else if (arg == "--fork-child") {
      g_behaviour.fork_child = true;
    } else if (arg == "--die-by-signal" && i + 1 < argc) {
      g_behaviour.die_by_signal = std::atoi(argv[++i]);
      if (g_behaviour.die_by_signal <= 0) return Usage();
    } else if (arg == "--nvml-index-of-device" && i + 1 < argc) {
      // "1,0": CUDA ordinal 0 is NVML index 1 and 1 is 0 (as CUDA_VISIBLE_DEVICES=1,0 would do).
      const std::string list = argv[++i];
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        char* end = nullptr;
        const unsigned long v = std::strtoul(list.c_str() + at, &end, 10);
        if (end != list.c_str() + comma || comma == at) return Usage();
        options.nvml_index_of_device.push_back(static_cast<uint32_t>(v));
        at = comma + 1;
      }
    } else if (arg == "--other-subscriber") {
      // Another CUPTI tool (Nsight Systems, torch.profiler) already holds the subscription.
      fake_cupti_set_other_subscriber(1);
    } else if (arg.starts_with("--")) {
      return Usage();
    } else {
      traces.push_back(arg);
    }
  }
  if (traces.empty()) return Usage();

  model::NameTable names;
  std::vector<CollectingSink> sinks(traces.size());
  std::vector<Rank> ranks;
  for (size_t i = 0; i < traces.size(); ++i) {
    import::ImportOptions import_options;
    import_options.kernel_resources = true;  // registers and shared memory into the records
    auto stats = import::ImportTrace(traces[i], &names, &sinks[i], import_options);
    if (!stats.ok()) {
      std::fprintf(stderr, "replay_engine: %s\n", stats.status().message().c_str());
      return 2;
    }
    for (auto& [pid, trace] : sinks[i].processes())
      ranks.push_back({&trace, trace.info.rank, 0, 0});
  }
  if (ranks.empty()) {
    std::fprintf(stderr, "replay_engine: no processes in the traces\n");
    return 2;
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    Rank& r = ranks[i];
    r.local_rank = static_cast<int>(i);
    if (r.rank < 0) r.rank = static_cast<int>(i);
    r.world_size =
        r.trace->info.world_size > 0 ? r.trace->info.world_size : static_cast<int>(ranks.size());
  }
  if (ranks.size() == 1) return RunRank(ranks[0], inject, names, options);

  // One process per rank, like an engine's workers; each loads the tool itself.
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> children;
  for (const Rank& r : ranks) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("replay_engine: fork");
      return 1;
    }
    if (pid == 0) std::exit(RunRank(r, inject, names, options));  // exit(): the tool's atexit runs
    children.push_back(pid);
  }
  int rc = 0;
  for (pid_t pid : children) {
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "replay_engine: rank process %d failed (status %d)\n",
                   static_cast<int>(pid), status);
      rc = 1;
    }
  }
  return rc;
}

}  // namespace
}  // namespace inferscope::fakes

int main(int argc, char** argv) { return inferscope::fakes::Main(argc, argv); }
