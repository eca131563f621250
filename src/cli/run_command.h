// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope run [options] -- CMD...`: profile a command (and every CUDA process it starts) with
// no code change: set CUDA_INJECTION64_PATH to the injection library, pass the settings by
// environment, start the host agent if none runs, then exec the command (same PID, signals and
// exit code are the command's own).

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "src/base/status.h"

namespace inferscope::cli {

struct RunOptions {
  std::vector<std::string> command;
  std::string state_dir;     // --state-dir (else $INFERSCOPE_STATE_DIR, else the user's default)
  std::string window;        // --window, e.g. "10s" (empty: the library's default)
  std::string inject_lib;    // --inject-lib (else found beside the inferscope binary)
  std::string cupti_path;    // --cupti-path: libcupti file or directory (INFERSCOPE_CUPTI_PATH)
  bool start_agent = true;   // --no-agent clears it
  bool enable_otel = false;  // --enable-otel: point the engine's request tracing at the agent
  bool nvtx = false;         // --nvtx: NVTX range tables in the windows (INFERSCOPE_NVTX=1)
  std::string metrics_url;   // --metrics-url: the engine's /metrics, for the agent it starts
  // --sink, --sink-credentials, --label: passed to the agent it starts (docs/fleet.md).
  std::string sink, sink_credentials;
  std::vector<std::string> labels;
};

// How `--enable-otel` changes the command of a known engine (docs/request-spans.md, "Engine
// flags"): arguments appended, environment set, and a note for the user.
struct OtelPlan {
  std::string engine;  // "vllm", "sglang", "tensorrt_llm"; empty when not recognized
  std::vector<std::string> append_args;
  std::vector<std::pair<std::string, std::string>> set_env;
  std::string note;  // what was done, or why nothing was
};

// `endpoint` is the agent's OTLP/HTTP traces URL, `token` its access token: the exporter sends
// it as `authorization: Bearer <token>` through OTEL_EXPORTER_OTLP_TRACES_HEADERS (the traces
// exporter's own variable, so a metrics or logs exporter pointed elsewhere never gets it), after
// the headers the user set there or, failing that, in OTEL_EXPORTER_OTLP_HEADERS (which the
// traces variable replaces). Never overrides a flag the user gave.
OtelPlan PlanOtel(const std::vector<std::string>& command, const std::string& endpoint,
                  const std::string& token, const char* (*getenv_fn)(const char*));

// `authorization=Bearer%20<token>` appended to an OTEL_EXPORTER_OTLP_*_HEADERS value (W3C
// baggage form: comma-separated, percent-encoded values) that may be empty; an authorization
// entry already there is replaced.
std::string WithAuthorizationHeader(const std::string& headers, const std::string& token);

// What `run` will change before exec'ing the command; computed without side effects (tests).
struct RunPlan {
  std::vector<std::pair<std::string, std::string>> set_env;
  std::vector<std::string> notes;  // shown on stderr (e.g. "keeping your CUDA_INJECTION64_PATH")
  std::string inject_path;         // the library that will be injected
  std::string state_dir;
  std::string socket_path;
};

// `self_exe`: path of the running inferscope binary (to find the library beside it).
base::StatusOr<RunPlan> PlanRun(const RunOptions& options, const char* (*getenv_fn)(const char*),
                                const std::string& self_exe);

// Applies the plan, starts the agent when asked and none answers, and execs the command. Returns
// only on failure (exit code: 2 usage, 127 command not found, 126 not executable, 1 other).
int RunRun(const RunOptions& options, std::ostream& err);

}  // namespace inferscope::cli
