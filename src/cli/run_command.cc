// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/run_command.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <thread>
#include <vector>

#include "src/base/duration.h"
#include "src/base/state_dir.h"
#include "src/cli/exit_codes.h"
#include "src/net/agent_endpoints.h"
#include "src/net/http_client.h"

namespace inferscope::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kInjectLibName = "libinferscope_inject.so";

std::string Env(const char* (*getenv_fn)(const char*), const char* name) {
  const char* v = getenv_fn(name);
  return v ? std::string(v) : std::string();
}

// The library beside the binary: the build tree (src/cli/inferscope -> src/inject/) or an
// installed layout (bin/inferscope -> lib/inferscope/).
std::string FindInjectLib(const std::string& self_exe) {
  const fs::path dir = fs::path(self_exe).parent_path();
  for (const fs::path& candidate :
       {dir / ".." / "inject" / kInjectLibName, dir / ".." / "lib" / "inferscope" / kInjectLibName,
        dir / kInjectLibName}) {
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return fs::canonical(candidate, ec).string();
  }
  return {};
}

bool AgentAnswers(const std::string& socket_path) {
  sockaddr_un addr{};
  if (socket_path.size() >= sizeof(addr.sun_path)) return false;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

// Starts `inferscope agent` detached (its own session, output to <state_dir>/agent.log) and waits
// briefly for its socket. The agent exits by itself once the profiled processes are gone.
void StartAgent(const std::string& self_exe, const RunOptions& options, const RunPlan& plan,
                std::ostream& err) {
  const pid_t command_pid = ::getpid();
  // The agent's pid comes back through this pipe, so that an agent that exits at start (its
  // store cannot be opened, say) ends the wait at once instead of after the whole timeout.
  int pid_pipe[2] = {-1, -1};
  if (::pipe2(pid_pipe, O_CLOEXEC) != 0) pid_pipe[0] = pid_pipe[1] = -1;
  const pid_t child = ::fork();
  if (child < 0) {
    for (int fd : pid_pipe)
      if (fd >= 0) ::close(fd);
    err << "inferscope: warning: cannot start the agent: " << std::strerror(errno) << "\n";
    return;
  }
  if (child == 0) {
    ::setsid();
    const std::string log = plan.state_dir + "/agent.log";
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    // The grandchild is the agent; the child exits at once so the command never reaps it.
    if (const pid_t agent = ::fork(); agent != 0) {
      if (agent > 0 && pid_pipe[1] >= 0) {
        ssize_t unused = ::write(pid_pipe[1], &agent, sizeof(agent));
        (void)unused;
      }
      ::_exit(0);
    }
    // It stays while the command (this very pid, after exec) lives, then until no process has
    // been connected for 15 s: every profiled process has said goodbye and been stored.
    const std::string watch = std::to_string(command_pid);
    std::vector<const char*> argv = {self_exe.c_str(),       "agent",       "--state-dir",
                                     plan.state_dir.c_str(), "--watch-pid", watch.c_str(),
                                     "--exit-when-idle",     "15s"};
    // Its telemetry windows line up with the processes' windows.
    if (!options.window.empty()) argv.insert(argv.end(), {"--window", options.window.c_str()});
    if (!options.metrics_url.empty())
      argv.insert(argv.end(), {"--metrics-url", options.metrics_url.c_str()});
    if (!options.sink.empty()) argv.insert(argv.end(), {"--sink", options.sink.c_str()});
    if (!options.sink_credentials.empty())
      argv.insert(argv.end(), {"--sink-credentials", options.sink_credentials.c_str()});
    for (const std::string& label : options.labels)
      argv.insert(argv.end(), {"--label", label.c_str()});
    argv.push_back(nullptr);
    ::execv(self_exe.c_str(), const_cast<char* const*>(argv.data()));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  pid_t agent = -1;
  if (pid_pipe[1] >= 0) ::close(pid_pipe[1]);
  if (pid_pipe[0] >= 0) {
    if (::read(pid_pipe[0], &agent, sizeof(agent)) != static_cast<ssize_t>(sizeof(agent)))
      agent = -1;
    ::close(pid_pipe[0]);
  }
  // The agent is not our child (its parent exited), so it is reaped by init: kill(pid, 0) fails
  // once it has exited.
  auto alive = [agent] { return agent <= 0 || ::kill(agent, 0) == 0; };
  bool answers = AgentAnswers(plan.socket_path);
  for (int i = 0; i < 200 && !answers && alive(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    answers = AgentAnswers(plan.socket_path);
  }
  if (answers) return;
  const std::string log = plan.state_dir + "/agent.log";
  std::error_code ec;
  const bool has_log = fs::file_size(log, ec) > 0 && !ec;
  err << "inferscope: warning: the agent "
      << (alive() ? "did not start in time" : "exited at start")
      << (has_log ? " (see " + log + ")" : " (it wrote no log)")
      << "; windows will wait in each process and may be dropped\n";
}

// An agent already runs (started by another `run`, or a service): ask it to stay while this
// command lives. Best effort: an agent without the HTTP API simply idles out on its own terms.
void WatchWithRunningAgent(const RunPlan& plan) {
  auto endpoints = net::ReadAgentEndpoints(plan.state_dir);
  if (!endpoints.ok()) return;
  auto target = net::ParseHttpUrl(endpoints->api + "/watch?pid=" + std::to_string(::getpid()),
                                  "agent API URL");
  if (!target.ok()) return;
  net::FetchOptions options;
  options.connect_timeout_ms = 300;
  options.read_timeout_ms = 1000;
  options.bearer_token = endpoints->access_token;
  (void)net::HttpPost(*target, options);
}

}  // namespace

std::string WithAuthorizationHeader(const std::string& headers, const std::string& token) {
  std::string out;
  size_t pos = 0;
  while (pos <= headers.size() && !headers.empty()) {
    size_t end = headers.find(',', pos);
    if (end == std::string::npos) end = headers.size();
    std::string entry = headers.substr(pos, end - pos);
    std::string name = entry.substr(0, entry.find('='));
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!entry.empty() && name != "authorization") out += (out.empty() ? "" : ",") + entry;
    pos = end + 1;
  }
  // The token is hex (or at least free of spaces, commas and '%'): only the space needs encoding.
  return out + (out.empty() ? "" : ",") + "authorization=Bearer%20" + token;
}

OtelPlan PlanOtel(const std::vector<std::string>& command, const std::string& endpoint,
                  const std::string& token, const char* (*getenv_fn)(const char*)) {
  OtelPlan plan;
  auto has = [&](std::string_view arg) {
    for (const std::string& a : command)
      if (a == arg ||
          (a.size() > arg.size() && a.compare(0, arg.size(), arg) == 0 && a[arg.size()] == '='))
        return true;
    return false;
  };
  auto mentions = [&](std::string_view needle) {
    for (const std::string& a : command)
      if (a.find(needle) != std::string::npos) return true;
    return false;
  };
  const std::string program =
      command.empty() ? std::string() : fs::path(command[0]).filename().string();
  std::string flag;
  if (program == "vllm" || mentions("vllm.entrypoints")) {
    plan.engine = "vllm";
    flag = "--otlp-traces-endpoint";
  } else if (program == "sglang" || mentions("sglang.launch_server")) {
    plan.engine = "sglang";
    flag = "--otlp-traces-endpoint";
  } else if (program == "trtllm-serve") {
    plan.engine = "tensorrt_llm";
    flag = "--otlp_traces_endpoint";
  } else {
    plan.note =
        "--enable-otel: engine not recognized (vllm, sglang, trtllm-serve); point its OTLP "
        "traces exporter at " +
        endpoint +
        " with OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf and the agent's token "
        "(OTEL_EXPORTER_OTLP_TRACES_HEADERS=authorization=Bearer%20<the content of "
        "agent.token>)";
    return plan;
  }
  if (has(flag)) {
    plan.note = "--enable-otel: the command already sets " + flag +
                "; keeping it, so request spans go there, not to inferscope";
    return plan;
  }
  if (plan.engine == "sglang" && !has("--enable-trace"))
    plan.append_args.push_back("--enable-trace");
  plan.append_args.push_back(flag);
  plan.append_args.push_back(endpoint);
  // The engines' exporters default to gRPC; the agent receives OTLP over HTTP.
  const char* protocol = getenv_fn("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL");
  if (protocol == nullptr || std::string_view(protocol) != "http/protobuf")
    plan.set_env.emplace_back("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf");
  if (getenv_fn("OTEL_SERVICE_NAME") == nullptr)
    plan.set_env.emplace_back("OTEL_SERVICE_NAME", plan.engine);
  if (!token.empty()) {
    const char* traces = getenv_fn("OTEL_EXPORTER_OTLP_TRACES_HEADERS");
    const char* shared = getenv_fn("OTEL_EXPORTER_OTLP_HEADERS");
    plan.set_env.emplace_back(
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        WithAuthorizationHeader(traces ? traces : (shared ? shared : ""), token));
  }
  plan.note = "--enable-otel: " + plan.engine + " request spans go to " + endpoint + " (added";
  for (const std::string& a : plan.append_args) plan.note += " " + a;
  plan.note += ")";
  if (plan.engine == "tensorrt_llm")
    plan.note +=
        "; TensorRT-LLM sets latency attributes only with return_perf_metrics: true in its "
        "--extra_llm_api_options file";
  return plan;
}

base::StatusOr<RunPlan> PlanRun(const RunOptions& options, const char* (*getenv_fn)(const char*),
                                const std::string& self_exe) {
  if (options.command.empty())
    return base::InvalidArgumentError("no command given (usage: inferscope run -- CMD [ARGS...])");
  RunPlan plan;
  plan.state_dir = options.state_dir.empty() ? base::DefaultStateDir(getenv_fn) : options.state_dir;
  plan.socket_path = plan.state_dir + "/agent.sock";
  plan.set_env.emplace_back("INFERSCOPE_STATE_DIR", plan.state_dir);
  plan.set_env.emplace_back("INFERSCOPE_SOCKET", plan.socket_path);
  if (!options.window.empty()) {
    // Long units like every other duration flag ("1m"); the injection library reads sub-minute
    // units only, so it gets the window in seconds (or ms, or ns).
    auto w = base::ParseDuration(options.window, base::DurationUnits::kWithLongUnits);
    if (!w.ok() || *w < 100'000'000)
      return base::InvalidArgumentError("--window: want a duration of at least 100ms, like 10s");
    const std::string window = *w % 1'000'000'000 == 0 ? std::to_string(*w / 1'000'000'000) + "s"
                               : *w % 1'000'000 == 0   ? std::to_string(*w / 1'000'000) + "ms"
                                                       : std::to_string(*w) + "ns";
    plan.set_env.emplace_back("INFERSCOPE_WINDOW", window);
  }
  // CUPTI's marker activity costs every NVTX push/pop a callback: on request only.
  if (options.nvtx) plan.set_env.emplace_back("INFERSCOPE_NVTX", "1");
  const std::string existing = Env(getenv_fn, "CUDA_INJECTION64_PATH");
  if (!existing.empty()) {
    // Only one injection library per process: the user's choice wins, and says so.
    plan.inject_path = existing;
    plan.notes.push_back("CUDA_INJECTION64_PATH is already set (" + existing +
                         "); keeping it, so inferscope's library will not be injected");
  } else {
    plan.inject_path = options.inject_lib.empty() ? FindInjectLib(self_exe) : options.inject_lib;
    std::error_code ec;
    if (plan.inject_path.empty() || !fs::is_regular_file(plan.inject_path, ec))
      return base::NotFoundError("cannot find " + std::string(kInjectLibName) +
                                 " (looked beside the inferscope binary; pass --inject-lib PATH)");
    plan.set_env.emplace_back("CUDA_INJECTION64_PATH", plan.inject_path);
  }
  if (!options.cupti_path.empty()) {
    // Read by the injection library's CUPTI discovery only: the application's own library search
    // (LD_LIBRARY_PATH) is left alone.
    std::error_code ec;
    if (!fs::exists(options.cupti_path, ec))
      return base::InvalidArgumentError("--cupti-path: " + options.cupti_path + " does not exist");
    plan.set_env.emplace_back("INFERSCOPE_CUPTI_PATH",
                              fs::absolute(options.cupti_path, ec).string());
  }
  return plan;
}

int RunRun(const RunOptions& options, std::ostream& err) {
  std::error_code ec;
  const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  auto plan = PlanRun(
      options, [](const char* n) -> const char* { return std::getenv(n); }, self);
  if (!plan.ok()) {
    err << "inferscope: error: " << plan.status().message() << "\n";
    return plan.status().code() == base::StatusCode::kInvalidArgument ? kExitUsage : kExitError;
  }
  for (const std::string& note : plan->notes) err << "inferscope: " << note << "\n";
  // A state dir someone else can change could hold their socket: the command's kernels, its
  // windows and captures, would go to them. Refuse before anything runs.
  if (base::Status trusted = base::CreateStateDir(plan->state_dir); !trusted.ok()) {
    err << "inferscope: error: " << trusted.message() << "\n";
    return kExitError;
  }
  for (const auto& [name, value] : plan->set_env) ::setenv(name.c_str(), value.c_str(), 1);
  if (options.start_agent) {
    if (AgentAnswers(plan->socket_path)) {
      WatchWithRunningAgent(*plan);
      if (!options.metrics_url.empty())
        err << "inferscope: note: an agent already runs for " << plan->state_dir
            << "; --metrics-url applies only to an agent this command starts (restart the agent "
               "with 'inferscope agent --metrics-url URL')\n";
      if (!options.sink.empty())
        err << "inferscope: note: an agent already runs for " << plan->state_dir
            << "; --sink applies only to an agent this command starts (restart the agent "
               "with 'inferscope agent --sink URL')\n";
    } else
      StartAgent(self, options, *plan, err);
  }

  std::vector<std::string> command = options.command;
  if (options.enable_otel) {
    auto endpoints = net::ReadAgentEndpoints(plan->state_dir);
    if (!endpoints.ok() || endpoints->otlp_http.empty()) {
      err << "inferscope: warning: --enable-otel: no agent endpoints in " << plan->state_dir
          << " (is the agent running with its HTTP API?); request spans will not be collected\n";
    } else {
      if (endpoints->access_token.empty())
        err << "inferscope: warning: --enable-otel: " << endpoints->access_token_error
            << "; the agent will refuse the spans\n";
      const OtelPlan otel = PlanOtel(command, endpoints->otlp_http, endpoints->access_token,
                                     [](const char* n) -> const char* { return std::getenv(n); });
      err << "inferscope: " << otel.note << "\n";
      command.insert(command.end(), otel.append_args.begin(), otel.append_args.end());
      for (const auto& [name, value] : otel.set_env) ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  const int e = errno;
  err << "inferscope: error: cannot run " << options.command[0] << ": " << std::strerror(e) << "\n";
  return e == ENOENT ? 127 : 126;
}

}  // namespace inferscope::cli
