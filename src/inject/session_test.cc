// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The Session against the fake CUPTI (tests/fakes): how CUPTI is set up for a serving process on
// each CUPTI major, and that profiling stops cleanly (everything disabled) when something fails on
// one of our threads. A Session is a process singleton, so every case runs in a child process
// (a death-test fork) and reports by its exit status.

#include "src/inject/session.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "src/wire/capture_codec.h"
#include "src/wire/framing.h"
#include "tests/fakes/fake_cupti/fake_cupti_control.h"

namespace inferscope::inject {
namespace {

#define CHECK_OR_EXIT(cond)                                                   \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "check failed at line %d: %s\n", __LINE__, #cond); \
      std::_Exit(1);                                                          \
    }                                                                         \
  } while (0)

Config TestConfig() {
  Config config;
  config.window_ns = 100'000'000;
  config.flush_period_ns = 10'000'000;
  config.lateness_ns = 0;
  config.buffer_bytes = 64 << 10;
  config.buffer_count = 4;
  config.socket_path = "/nonexistent/agent.sock";
  config.log_level = LogLevel::kError;
  return config;
}

Session* StartOrExit(uint32_t cupti_version, Session::WindowCallback on_window) {
  fake_cupti_reset();
  fake_cupti_set_version(cupti_version);
  const CuptiBinding binding = BindCupti("");
  if (!binding.ok) std::fprintf(stderr, "bind: %s\n", binding.why.c_str());
  CHECK_OR_EXIT(binding.ok);
  std::string why;
  Session* s = Session::Start(TestConfig(), binding, std::move(on_window), nullptr, &why);
  if (s == nullptr) std::fprintf(stderr, "start: %s\n", why.c_str());
  CHECK_OR_EXIT(s != nullptr);
  return s;
}

uint64_t Attribute(CUpti_ActivityAttribute attr) {
  uint64_t v = 0;
  size_t size = sizeof(v);
  cuptiActivityGetAttribute(attr, &size, &v);
  return v;
}

FakeCuptiEmitResult EmitApi(CUpti_ActivityKind kind, uint32_t cbid, uint64_t t) {
  CUpti_ActivityAPI r;
  std::memset(&r, 0, sizeof(r));
  r.kind = kind;
  r.cbid = cbid;
  r.start = t;
  r.end = t + 1000;
  r.processId = static_cast<uint32_t>(getpid());
  r.threadId = 1;
  r.correlationId = 7;
  return fake_cupti_emit(reinterpret_cast<const CUpti_Activity*>(&r));
}

constexpr CUpti_ActivityKind kSessionKinds[] = {
    CUPTI_ACTIVITY_KIND_CONTEXT,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_GRAPH_TRACE,
    CUPTI_ACTIVITY_KIND_DEVICE};  // device UUIDs: the CUDA ordinal -> NVML index mapping

TEST(SessionTest, Cuda13IsSetUpForAServingProcess) {
  // Re-exec for the child (not a bare fork): sanitizers and CUPTI threads need a clean process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Session* s = StartOrExit(130001, [](model::ProfileWindow&&) {});
        // Every setting was accepted, PER_THREAD_ACTIVITY_BUFFER included (the fake refuses it
        // after the buffer callbacks are registered or a kind is enabled, as the header demands).
        CHECK_OR_EXIT(s->settings_refused().empty());
        CHECK_OR_EXIT(Attribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER) == 0);
        CHECK_OR_EXIT(Attribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) == 1);
        CHECK_OR_EXIT(Attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE) == (4u << 20));
        CHECK_OR_EXIT(Attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT) == 4);
        CHECK_OR_EXIT(Attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE) == 3);
        CHECK_OR_EXIT(fake_cupti_call_count("cuptiSetThreadIdType") == 1);
        CHECK_OR_EXIT(fake_cupti_call_count("cuptiActivityEnableAllSyncRecords") == 1);
        for (CUpti_ActivityKind k : kSessionKinds) CHECK_OR_EXIT(fake_cupti_kind_enabled(k));
        // API records: an allow-list of the calls the analyses use, not every call.
        CHECK_OR_EXIT(!fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
        CHECK_OR_EXIT(!fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_DRIVER));
        CHECK_OR_EXIT(EmitApi(CUPTI_ACTIVITY_KIND_RUNTIME,
                              CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                              1) == FAKE_CUPTI_WRITTEN);
        CHECK_OR_EXIT(EmitApi(CUPTI_ACTIVITY_KIND_RUNTIME,
                              CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 2) == FAKE_CUPTI_WRITTEN);
        CHECK_OR_EXIT(EmitApi(CUPTI_ACTIVITY_KIND_RUNTIME,
                              CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
                              3) == FAKE_CUPTI_FILTERED);
        s->Shutdown();
        // Stopped: every kind and every API record it enabled is off again.
        for (CUpti_ActivityKind k : kSessionKinds) CHECK_OR_EXIT(!fake_cupti_kind_enabled(k));
        CHECK_OR_EXIT(EmitApi(CUPTI_ACTIVITY_KIND_RUNTIME,
                              CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                              4) == FAKE_CUPTI_FILTERED);
        FakeCuptiCounters c;
        fake_cupti_get_counters(&c);
        // CUPTI never zeroed a buffer on the requesting thread, and every buffer we handed over
        // as zeroed was.
        CHECK_OR_EXIT(c.buffers_zeroed_by_cupti == 0);
        CHECK_OR_EXIT(c.dirty_buffers == 0);
        std::_Exit(0);
      },
      testing::ExitedWithCode(0), "");
}

TEST(SessionTest, Cuda12RecordsEveryApiCallAndNeverCallsThe13OnlyFunctions) {
  // Re-exec for the child (not a bare fork): sanitizers and CUPTI threads need a clean process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Session* s = StartOrExit(22, [](model::ProfileWindow&&) {});
        CHECK_OR_EXIT(s->settings_refused().empty());
        CHECK_OR_EXIT(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
        CHECK_OR_EXIT(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_DRIVER));
        for (const char* fn : {"cuptiActivityEnableRuntimeApi", "cuptiActivityEnableDriverApi",
                               "cuptiActivityEnableAllSyncRecords", "cuptiSubscribe_v2"})
          CHECK_OR_EXIT(fake_cupti_call_count(fn) == 0);
        s->Shutdown();
        CHECK_OR_EXIT(!fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
        std::_Exit(0);
      },
      testing::ExitedWithCode(0), "");
}

// A failure on one of our threads (here: the window consumer throws, as a bad_alloc would) stops
// profiling with one line and disables everything; the process lives on.
TEST(SessionTest, AnExceptionOnOurThreadStopsProfilingNotTheProcess) {
  // Re-exec for the child (not a bare fork): sanitizers and CUPTI threads need a clean process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        StartOrExit(130001, [](model::ProfileWindow&&) { throw std::bad_alloc(); });
        uint64_t t = 1'000'000'000;
        FakeCuptiKernel k{};
        k.name = "k";
        k.stream_id = 7;
        k.context_id = 1;
        for (int i = 0; i < 50; ++i, t += 50'000'000) {  // 2.5 s of kernels: windows close
          k.start_ns = t;
          k.end_ns = t + 1000;
          k.correlation_id = static_cast<uint32_t>(i + 1);
          fake_cupti_emit_kernel(&k);
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) &&
               std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        for (CUpti_ActivityKind kind : kSessionKinds) CHECK_OR_EXIT(!fake_cupti_kind_enabled(kind));
        std::_Exit(0);
      },
      testing::ExitedWithCode(0), "profiling stopped: .*the application runs on unprofiled");
}

// A capture through the session: requested on the drain thread's tick (as the sender does it),
// fed by decoding on CUPTI's completion path while the application thread emits, ended by a
// later tick. Run under TSan: the decoder's tee and the tick share the aggregator lock.
// The child of ACaptureRecordsTheKernelsOfItsSpan (a function: the body has commas a macro
// argument cannot hold).
void CaptureChild() {
  fake_cupti_reset();
  fake_cupti_set_version(130001);
  const CuptiBinding binding = BindCupti("");
  CHECK_OR_EXIT(binding.ok);
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  const int64_t now = int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
  static std::vector<std::string> frames;  // written under the session's lock
  static std::atomic<bool> ended{false};
  static std::atomic<bool> armed{false};
  static int64_t start_ns = 0;
  start_ns = now + 1'000'000'000;  // late enough for a loaded machine to arm it first
  auto on_tick = [](bool after_flush) {
    if (!after_flush) return;
    EventCapture* c = Session::Instance()->capture();
    static bool requested = false;
    if (!requested) {
      c->Request({9, start_ns, 200'000'000, 1 << 20, 1000});
      requested = true;
      armed = true;
    }
    timespec t{};
    clock_gettime(CLOCK_REALTIME, &t);
    c->Poll(int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec, 10'000'000, &frames);
    if (!c->active() && !frames.empty()) ended = true;
  };
  std::string why;
  Session* s = Session::Start(
      TestConfig(), binding, [](model::ProfileWindow&&) {}, on_tick, &why);
  CHECK_OR_EXIT(s != nullptr);
  // Decoding happens at the flush before each tick: emit only once a tick has armed the capture.
  for (int i = 0; i < 1000 && !armed; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK_OR_EXIT(armed);
  FakeCuptiKernel k{};
  k.name = "captured_kernel";
  k.stream_id = 7;
  k.context_id = 1;
  for (int i = 0; i < 60; ++i) {  // every 10 ms from 0.6 s on: 20 start in the span
    k.start_ns = static_cast<uint64_t>(now + 600'000'000 + i * 10'000'000);
    k.end_ns = k.start_ns + 1000;
    k.correlation_id = static_cast<uint32_t>(i + 1);
    fake_cupti_emit_kernel(&k);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ended && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  s->Shutdown();
  CHECK_OR_EXIT(ended);
  wire::FrameReader reader;
  for (const auto& f : frames) reader.Append(f);
  wire::Frame frame;
  size_t kernels = 0;
  bool named = false, end_ok = false;
  while (reader.Next(&frame)) {
    if (frame.type == static_cast<uint16_t>(wire::FrameType::kCaptureChunk)) {
      auto c = wire::DecodeCaptureChunk(frame.payload);
      CHECK_OR_EXIT(c.ok());
      kernels += c->kernels.size();
      for (const auto& [id, text] : c->names) named |= text == "captured_kernel";
      for (const auto& kernel : c->kernels)
        CHECK_OR_EXIT(kernel.start_ns >= start_ns && kernel.start_ns < start_ns + 200'000'000);
    } else if (frame.type == static_cast<uint16_t>(wire::FrameType::kCaptureEnd)) {
      auto e = wire::DecodeCaptureEnd(frame.payload);
      end_ok = e.ok() && e->events == 20 && e->capture_id == 9;
    }
  }
  if (kernels != 20) std::fprintf(stderr, "captured %zu kernels\n", kernels);
  CHECK_OR_EXIT(kernels == 20 && named && end_ok);
  std::_Exit(0);
}

TEST(SessionTest, ACaptureRecordsTheKernelsOfItsSpan) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(CaptureChild(), testing::ExitedWithCode(0), "");
}

// Our threads block every signal: the application's handlers run on its own threads.
TEST(SessionTest, TheDrainThreadBlocksSignals) {
  // Re-exec for the child (not a bare fork): sanitizers and CUPTI threads need a clean process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        StartOrExit(130001, [](model::ProfileWindow&&) {});
        std::string sigblk;
        for (int attempt = 0; attempt < 100 && sigblk.empty(); ++attempt) {
          DIR* tasks = opendir("/proc/self/task");
          CHECK_OR_EXIT(tasks != nullptr);
          while (dirent* e = readdir(tasks)) {
            const std::string dir = std::string("/proc/self/task/") + e->d_name;
            std::string comm;
            std::getline(std::ifstream(dir + "/comm"), comm);
            if (comm != "inferscope-drn") continue;
            std::ifstream status(dir + "/status");
            for (std::string line; std::getline(status, line);)
              if (line.rfind("SigBlk:", 0) == 0) sigblk = line.substr(7);
          }
          closedir(tasks);
          if (sigblk.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        CHECK_OR_EXIT(!sigblk.empty());
        const uint64_t mask = std::stoull(sigblk, nullptr, 16);
        for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGHUP})
          CHECK_OR_EXIT(mask & (uint64_t{1} << (sig - 1)));
        std::_Exit(0);
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace inferscope::inject
