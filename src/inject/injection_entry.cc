// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The one exported symbol of libinferscope_inject.so. The CUDA driver calls it from cuInit when
// CUDA_INJECTION64_PATH names this library (docs/design/inject.md). Whatever happens here, the
// application must run on: every failure disables profiling with one log line and returns success.

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "src/inject/config.h"
#include "src/inject/cupti_binding.h"
#include "src/inject/log.h"
#include "src/inject/session.h"
#include "src/inject/window_sender.h"

namespace {

using inferscope::inject::Config;
using inferscope::inject::CuptiBinding;
using inferscope::inject::EventCapture;
using inferscope::inject::Log;
using inferscope::inject::LogLevel;
using inferscope::inject::ProfilingStatus;
using inferscope::inject::Session;
using inferscope::inject::WindowSender;

// The agent's last chance at exit: a process's exit is never held longer than this by an absent,
// slow or dead agent (an absent one costs nothing: FlushUntil gives up when it cannot connect).
constexpr int64_t kExitDeliveryNs = 100'000'000;
// How long a process whose profiling is off keeps trying to tell the agent so.
constexpr int64_t kOffReportNs = 5'000'000'000;

std::atomic<WindowSender*> g_sender{nullptr};
// The process whose off report is still in flight (0: none). A fork's child has no such thread.
std::atomic<pid_t> g_off_report_pending{0};
LogLevel g_log_level = LogLevel::kError;

const char* GetEnv(const char* name) { return std::getenv(name); }

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// At exit: the last (partial) window and a goodbye, delivered within a short deadline.
void OnExit() noexcept {
  try {
    if (Session* s = Session::Instance()) s->Shutdown();
    if (WindowSender* sender = g_sender.load()) {
      const int64_t started = inferscope::inject::AgentClient::MonotonicNs();
      sender->Finish(kExitDeliveryNs);
      const int64_t took_ms =
          (inferscope::inject::AgentClient::MonotonicNs() - started) / 1'000'000;
      Log(g_log_level, LogLevel::kInfo,
          "at exit: " + std::to_string(sender->client().sent_frames()) + " frames delivered, " +
              std::to_string(sender->client().queued_frames()) + " left undelivered, in " +
              std::to_string(took_ms) + " ms");
      // Lost windows are otherwise invisible (the agent never saw them): say so, once.
      if (const uint64_t dropped = sender->dropped_frames(); dropped > 0)
        Log(g_log_level, LogLevel::kError,
            std::to_string(dropped) + " of " + std::to_string(sender->windows()) +
                " profile windows were dropped (the agent was unreachable or too slow)");
    }
  } catch (...) {
  }
}

void OnForkChild() noexcept {
  if (Session* s = Session::Instance()) s->DisableAfterFork();
  g_sender.store(nullptr);  // its socket belongs to the parent
}

// At exit with profiling off: a short-lived process would otherwise exit before its report
// thread reached the agent, and `status` would never show it. Held at most as long as the last
// delivery of a profiled process (an absent agent ends the report at once; a dead one costs the
// bound).
void WaitForOffReport() noexcept {
  const int64_t deadline = RealtimeNs() + kExitDeliveryNs;
  while (g_off_report_pending.load() == ::getpid() && RealtimeNs() < deadline) {
    const timespec ms{0, 1'000'000};
    nanosleep(&ms, nullptr);
  }
}

// Profiling is off: tell the agent why (hello + goodbye) from a short-lived thread with every
// signal blocked, so that `inferscope status` shows the reason; never from the thread that called
// InitializeInjection (it is inside cuInit). The thread owns the sender and frees it when done; the
// process's exit waits for it up to kExitDeliveryNs (WaitForOffReport), past that the heap object
// simply goes with the process.
void ReportOffToAgent(const Config& config, const ProfilingStatus& status) {
  auto* sender = new WindowSender(config, static_cast<uint32_t>(::getpid()), RealtimeNs(), status);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    g_off_report_pending.store(::getpid());
    std::thread([sender] {
      try {
        sender->Finish(kOffReportNs);
      } catch (...) {
      }
      delete sender;
      g_off_report_pending.store(0);
    }).detach();
    std::atexit(&WaitForOffReport);
  } catch (...) {
    g_off_report_pending.store(0);
    delete sender;  // no thread: nobody will send
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) noexcept {
  static std::atomic<bool> initialized{false};
  if (initialized.exchange(true)) return 1;
  try {
    const Config config = inferscope::inject::ReadConfig(&GetEnv);
    g_log_level = config.log_level;
    if (!config.warnings.empty()) Log(config.log_level, LogLevel::kError, config.warnings);
    // CUPTI is bound at run time: one library for CUDA 12 and 13 stacks (cupti_binding.h).
    const CuptiBinding binding = inferscope::inject::BindCupti(config.cupti_path);
    ProfilingStatus status;
    if (!binding.release.empty()) {
      status.cupti_release = binding.release;
      status.cupti_path = binding.path;
    }
    std::string why = binding.why;
    // NVTX reaches CUPTI only through NVTX's own injection hook: NVTX_INJECTION64_PATH naming the
    // libcupti bound here, read by the process's first NVTX call. Set at CUDA initialization
    // (ranges the process opened before it are not seen); a value the user set is kept.
    if (config.nvtx && binding.ok && !binding.path.empty() &&
        GetEnv("NVTX_INJECTION64_PATH") == nullptr)
      ::setenv("NVTX_INJECTION64_PATH", binding.path.c_str(), 0);
    Session* session = nullptr;
    WindowSender* sender = nullptr;
    if (binding.ok) {
      // Lives until the process ends (CUPTI and the exit handler use it after main returns).
      sender = new WindowSender(config, static_cast<uint32_t>(::getpid()), RealtimeNs(), status);
      session = Session::Start(
          config, binding,
          [sender](inferscope::model::ProfileWindow&& w) { sender->OnWindow(std::move(w)); },
          [sender](bool after_flush) {
            Session* s = Session::Instance();
            EventCapture* capture = s != nullptr ? s->capture() : nullptr;
            if (after_flush)
              sender->Tick(capture);
            else if (capture != nullptr)
              sender->TakeRequests(capture);
          },
          &why);
      if (session == nullptr) delete sender;  // profiling is off: nothing will ever send
    }
    if (session == nullptr) {
      // One line whatever happens next: a process that never reaches the agent still says why.
      status.off_reason = why.empty() ? "unknown reason" : why;
      Log(config.log_level, LogLevel::kError, "profiling disabled: " + status.off_reason);
      ReportOffToAgent(config, status);
      return 1;
    }
    g_sender.store(sender);
    pthread_atfork(nullptr, nullptr, &OnForkChild);
    std::atexit(&OnExit);
  } catch (const std::exception& e) {
    Log(g_log_level, LogLevel::kError, std::string("profiling disabled: ") + e.what());
  } catch (...) {
    Log(g_log_level, LogLevel::kError, "profiling disabled: unexpected error");
  }
  return 1;
}
