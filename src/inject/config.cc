// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/config.h"

#include <charconv>
#include <string_view>

#include "src/base/duration.h"
#include "src/base/state_dir.h"

namespace inferscope::inject {

namespace {

void ReadDuration(const char* (*env)(const char*), const char* name, int64_t min_ns, int64_t* out,
                  std::string* warnings) {
  const char* v = env(name);
  if (v == nullptr || *v == '\0') return;
  auto d = base::ParseDuration(v);
  if (!d.ok() || *d < min_ns) {
    *warnings += std::string(name) + "=" + v + " ignored (want a duration like 10s or 500ms)\n";
    return;
  }
  *out = *d;
}

template <typename T>
bool ParseInt(const char* v, T* out) {
  if (v == nullptr || *v == '\0') return false;
  const std::string_view s(v);
  T value{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || p != s.data() + s.size()) return false;
  *out = value;
  return true;
}

template <typename T>
void ReadCount(const char* (*env)(const char*), const char* name, T min, T max, T* out,
               std::string* warnings) {
  const char* v = env(name);
  if (v == nullptr || *v == '\0') return;
  T value{};
  if (!ParseInt(v, &value) || value < min || value > max) {
    *warnings += std::string(name) + "=" + v + " ignored (out of range)\n";
    return;
  }
  *out = value;
}

// The first of `names` that holds an integer.
int32_t FirstInt(const char* (*env)(const char*), std::initializer_list<const char*> names) {
  for (const char* n : names) {
    int32_t v = -1;
    if (ParseInt(env(n), &v)) return v;
  }
  return -1;
}

}  // namespace

std::string DefaultSocketPath(const char* (*env)(const char*)) {
  return base::DefaultStateDir(env) + "/agent.sock";
}

Config ReadConfig(const char* (*env)(const char*)) {
  Config c;
  ReadDuration(env, "INFERSCOPE_WINDOW", 100'000'000, &c.window_ns, &c.warnings);
  ReadDuration(env, "INFERSCOPE_FLUSH_PERIOD", 10'000'000, &c.flush_period_ns, &c.warnings);
  ReadDuration(env, "INFERSCOPE_LATENESS", 0, &c.lateness_ns, &c.warnings);
  ReadDuration(env, "INFERSCOPE_BIN", 1'000'000, &c.bin_ns, &c.warnings);
  ReadCount<int>(env, "INFERSCOPE_TOP", 1, 1000, &c.top_k, &c.warnings);
  ReadCount<size_t>(env, "INFERSCOPE_BUFFER_SIZE", 64 << 10, 256 << 20, &c.buffer_bytes,
                    &c.warnings);
  ReadCount<size_t>(env, "INFERSCOPE_BUFFER_COUNT", 2, 1024, &c.buffer_count, &c.warnings);
  if (const char* g = env("INFERSCOPE_GRAPH_NODES"); g && std::string_view(g) == "1")
    c.graph_nodes = true;
  if (const char* n = env("INFERSCOPE_NVTX"); n && *n) {
    const std::string_view v(n);
    if (v == "1")
      c.nvtx = true;
    else if (v != "0")
      c.warnings += "INFERSCOPE_NVTX=" + std::string(v) + " ignored (1 or 0)\n";
  }
  if (const char* p = env("INFERSCOPE_CUPTI_PATH"); p && *p) c.cupti_path = p;
  if (const char* g = env("INFERSCOPE_GRAPH_SAMPLE"); g && *g) {
    const std::string_view v(g);
    const size_t slash = v.find('/');
    base::StatusOr<int64_t> d = base::InvalidArgumentError(""), p = d;
    if (slash != std::string_view::npos) {
      d = base::ParseDuration(v.substr(0, slash));
      p = base::ParseDuration(v.substr(slash + 1));
    }
    if (v == "off") {
      c.graph_sample_ns = 0;
    } else if (d.ok() && p.ok() && *d >= 100'000'000 && *p >= 2 * *d) {
      c.graph_sample_ns = *d;
      c.graph_sample_period_ns = *p;
    } else {
      c.warnings += "INFERSCOPE_GRAPH_SAMPLE=" + std::string(v) +
                    " ignored (DURATION/PERIOD with DURATION >= 100ms and PERIOD >= 2 x DURATION, "
                    "like 1s/60s, or off)\n";
    }
  }
  if (const char* s = env("INFERSCOPE_SOCKET"); s && *s)
    c.socket_path = s;
  else
    c.socket_path = DefaultSocketPath(env);
  if (const char* l = env("INFERSCOPE_LOG"); l && *l) {
    const std::string_view level(l);
    if (level == "off")
      c.log_level = LogLevel::kOff;
    else if (level == "error")
      c.log_level = LogLevel::kError;
    else if (level == "info")
      c.log_level = LogLevel::kInfo;
    else if (level == "debug")
      c.log_level = LogLevel::kDebug;
    else
      c.warnings += "INFERSCOPE_LOG=" + std::string(level) + " ignored (off|error|info|debug)\n";
  }
  // torchrun/vLLM/DeepSpeed set RANK/LOCAL_RANK/WORLD_SIZE; SLURM and Open MPI their own.
  c.rank = FirstInt(env, {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"});
  c.local_rank = FirstInt(env, {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"});
  c.world_size = FirstInt(env, {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
  if (c.buffer_count * c.buffer_bytes > (size_t{1} << 30)) {
    c.warnings += "INFERSCOPE_BUFFER_COUNT x INFERSCOPE_BUFFER_SIZE over 1 GiB; using defaults\n";
    c.buffer_bytes = 4 << 20;
    c.buffer_count = 8;
  }
  return c;
}

}  // namespace inferscope::inject
