// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The fake CUPTI seen from a tool: subscribe, enable kinds, hand out buffers, walk completed ones.
// Run under TSan and ASan too (docs/testing-live.md).

#include <cupti.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakes/fake_cupti/fake_cupti_control.h"

namespace {

// A minimal tool: a buffer pool and a log of every record completed, with the thread it came on.
struct Tool {
  std::mutex mu;
  size_t buffer_bytes = 4096;
  size_t max_records = 0;
  size_t pool_limit = 1000;  // buffers the tool will ever hand out
  bool recycle = true;       // completed buffers go back to the pool
  std::vector<uint8_t*> pool;
  std::vector<std::unique_ptr<uint8_t, decltype(&std::free)>> owned;
  std::vector<std::vector<uint8_t>> records;
  std::vector<std::string> kernel_names;  // copied during completion
  std::vector<std::thread::id> completion_threads;
  size_t completions = 0;
  size_t empty_completions = 0;
};
Tool* g_tool = nullptr;

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  std::lock_guard<std::mutex> lock(g_tool->mu);
  *buffer = nullptr;
  *size = 0;
  *max_records = g_tool->max_records;
  if (g_tool->pool.empty() && g_tool->owned.size() < g_tool->pool_limit) {
    auto* b = static_cast<uint8_t*>(std::aligned_alloc(8, g_tool->buffer_bytes));
    g_tool->owned.emplace_back(b, &std::free);
    g_tool->pool.push_back(b);
  }
  if (g_tool->pool.empty()) return;  // exhausted: CUPTI drops records
  *buffer = g_tool->pool.back();
  *size = g_tool->buffer_bytes;
  g_tool->pool.pop_back();
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<std::vector<uint8_t>> got;
  std::vector<std::string> names;
  CUpti_Activity* record = nullptr;
  CUptiResult r;
  while ((r = cuptiActivityGetNextRecord(buffer, valid, &record)) == CUPTI_SUCCESS) {
    size_t size = 0;
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL:
        size = sizeof(CUpti_ActivityKernel10);
        {
          const char* name = reinterpret_cast<CUpti_ActivityKernel10*>(record)->name;
          names.emplace_back(name);
        }
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        size = sizeof(CUpti_ActivityMemcpy6);
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        size = sizeof(CUpti_ActivityMemset4);
        break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        size = sizeof(CUpti_ActivitySynchronization2);
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
        size = sizeof(CUpti_ActivityAPI);
        break;
      case CUPTI_ACTIVITY_KIND_MEMORY2:
        size = sizeof(CUpti_ActivityMemory4);
        break;
      case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        size = sizeof(CUpti_ActivityGraphTrace2);
        break;
      case CUPTI_ACTIVITY_KIND_OVERHEAD:
        size = sizeof(CUpti_ActivityOverhead3);
        break;
      default:
        ADD_FAILURE() << "unexpected kind " << record->kind;
    }
    auto* p = reinterpret_cast<uint8_t*>(record);
    got.emplace_back(p, p + size);
  }
  EXPECT_EQ(r, CUPTI_ERROR_MAX_LIMIT_REACHED);
  std::lock_guard<std::mutex> lock(g_tool->mu);
  for (auto& g : got) g_tool->records.push_back(std::move(g));
  for (auto& n : names) g_tool->kernel_names.push_back(std::move(n));
  g_tool->completion_threads.push_back(std::this_thread::get_id());
  ++g_tool->completions;
  if (valid == 0) ++g_tool->empty_completions;
  if (g_tool->recycle) g_tool->pool.push_back(buffer);
}

class FakeCuptiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_cupti_reset();
    g_tool = &tool_;
  }
  void TearDown() override {
    fake_cupti_reset();  // completes outstanding buffers while tool_ is alive
    g_tool = nullptr;
  }
  void Attach(std::initializer_list<CUpti_ActivityKind> kinds) {
    ASSERT_EQ(cuptiSubscribe(&subscriber_, nullptr, nullptr), CUPTI_SUCCESS);
    for (CUpti_ActivityKind k : kinds) ASSERT_EQ(cuptiActivityEnable(k), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted), CUPTI_SUCCESS);
  }
  size_t Completed() {
    std::lock_guard<std::mutex> lock(tool_.mu);
    return tool_.records.size();
  }
  static CUpti_ActivityKernel10 Kernel(uint32_t correlation, const char* name = "kern") {
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 1000 + correlation;
    k.end = 2000 + correlation;
    k.correlationId = correlation;
    k.name = name;
    return k;
  }
  static FakeCuptiEmitResult Emit(const void* record) {
    return fake_cupti_emit(static_cast<const CUpti_Activity*>(record));
  }

  Tool tool_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
};

// Fills a record with a byte pattern, then sets its kind.
template <typename T>
T Patterned(CUpti_ActivityKind kind, uint8_t seed) {
  T r;
  auto* p = reinterpret_cast<uint8_t*>(&r);
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<uint8_t>(seed + i * 7);
  r.kind = kind;
  return r;
}

TEST_F(FakeCuptiTest, RecordsComeBackByteExact) {
  Attach({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
          CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
          CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MEMORY2,
          CUPTI_ACTIVITY_KIND_GRAPH_TRACE, CUPTI_ACTIVITY_KIND_OVERHEAD});
  std::string name = "ampere_sgemm_128x64_nn";
  auto kernel = Patterned<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 1);
  kernel.name = name.c_str();
  auto memory = Patterned<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2, 7);
  memory.name = nullptr;
  std::vector<std::vector<uint8_t>> sent;
  auto send = [&](const auto& r) {
    ASSERT_EQ(Emit(&r), FAKE_CUPTI_WRITTEN);
    auto* p = reinterpret_cast<const uint8_t*>(&r);
    sent.emplace_back(p, p + sizeof(r));
  };
  send(kernel);
  send(Patterned<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY, 2));
  send(Patterned<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET, 3));
  send(Patterned<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, 4));
  send(Patterned<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME, 5));
  send(Patterned<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER, 6));
  send(memory);
  send(Patterned<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, 8));
  send(Patterned<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD, 9));
  name.assign(name.size(), 'x');  // the driver's string may die: the fake holds its own copy
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  ASSERT_EQ(tool_.records.size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    std::vector<uint8_t> got = tool_.records[i];
    if (i == 0) {  // the name pointer is the fake's interned copy; compare everything else
      const size_t off = offsetof(CUpti_ActivityKernel10, name);
      std::memcpy(got.data() + off, sent[0].data() + off, sizeof(const char*));
    }
    EXPECT_EQ(got, sent[i]) << "record " << i;
  }
  ASSERT_EQ(tool_.kernel_names.size(), 1u);
  EXPECT_EQ(tool_.kernel_names[0], "ampere_sgemm_128x64_nn");
}

TEST_F(FakeCuptiTest, FlushAllCompletesPartialBufferOnCallingThread) {
  Attach({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  for (uint32_t i = 0; i < 3; ++i) {
    auto k = Kernel(i);
    ASSERT_EQ(Emit(&k), FAKE_CUPTI_WRITTEN);
  }
  fake_cupti_wait_worker_idle();
  EXPECT_EQ(Completed(), 0u);  // a partly filled buffer waits for a flush
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  EXPECT_EQ(Completed(), 3u);  // blocking: done when FlushAll returns
  ASSERT_EQ(tool_.completion_threads.size(), 1u);
  EXPECT_EQ(tool_.completion_threads[0], std::this_thread::get_id());
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);  // nothing left: no empty completion
  EXPECT_EQ(tool_.completions, 1u);
}

TEST_F(FakeCuptiTest, FullBufferCompletesOnWorkerThread) {
  tool_.buffer_bytes = 2 * sizeof(CUpti_ActivityKernel10) + 8;  // room for two kernels
  Attach({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  for (uint32_t i = 0; i < 5; ++i) {
    auto k = Kernel(i);
    ASSERT_EQ(Emit(&k), FAKE_CUPTI_WRITTEN);
  }
  fake_cupti_wait_worker_idle();
  EXPECT_EQ(Completed(), 4u);  // two full buffers; the fifth record waits
  for (auto id : tool_.completion_threads) EXPECT_NE(id, std::this_thread::get_id());
  ASSERT_EQ(cuptiFinalize(), CUPTI_SUCCESS);
  EXPECT_EQ(Completed(), 5u);
  for (size_t i = 0; i < 5; ++i)
    EXPECT_EQ(reinterpret_cast<CUpti_ActivityKernel10*>(tool_.records[i].data())->correlationId, i);
}

TEST_F(FakeCuptiTest, MaxNumRecordsLimitsABuffer) {
  tool_.max_records = 1;
  Attach({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  for (uint32_t i = 0; i < 3; ++i) {
    auto k = Kernel(i);
    ASSERT_EQ(Emit(&k), FAKE_CUPTI_WRITTEN);
  }
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  EXPECT_EQ(tool_.completions, 3u);
}

TEST_F(FakeCuptiTest, PeriodicFlushDeliversOnlyFullBuffers) {
  tool_.buffer_bytes = sizeof(CUpti_ActivityKernel10);
  Attach({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  ASSERT_EQ(cuptiActivityFlushPeriod(20), CUPTI_SUCCESS);
  EXPECT_EQ(fake_cupti_flush_period_ms(), 20u);
  for (uint32_t i = 0; i < 2; ++i) {
    auto k = Kernel(i);
    ASSERT_EQ(Emit(&k), FAKE_CUPTI_WRITTEN);
  }
  for (int i = 0; i < 200 && Completed() < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // The worker counts its delivery after handing the buffer over: poll for the count instead of
  // guessing a sleep (sanitizer builds run the worker slowly), then give it more ticks in which
  // it must not deliver the current, not yet displaced buffer.
  FakeCuptiCounters c{};
  for (int i = 0; i < 400; ++i) {
    fake_cupti_get_counters(&c);
    if (c.periodic_flushes >= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE(c.periodic_flushes, 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(Completed(), 1u);  // the second (current, full but not yet displaced) buffer stays
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  EXPECT_EQ(Completed(), 2u);
}

TEST_F(FakeCuptiTest, FinalizeReturnsEveryBufferAndDetaches) {
  Attach({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  auto k = Kernel(1);
  ASSERT_EQ(Emit(&k), FAKE_CUPTI_WRITTEN);
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  ASSERT_EQ(Emit(&k), FAKE_CUPTI_WRITTEN);
  ASSERT_EQ(cuptiFinalize(), CUPTI_SUCCESS);
  EXPECT_EQ(tool_.pool.size(), tool_.owned.size());  // the pool is whole again
  EXPECT_FALSE(fake_cupti_is_subscribed());
  EXPECT_EQ(Emit(&k), FAKE_CUPTI_FILTERED);  // kinds are off after detach
  CUpti_SubscriberHandle again;
  EXPECT_EQ(cuptiSubscribe(&again, nullptr, nullptr), CUPTI_SUCCESS);  // can attach again
}

TEST_F(FakeCuptiTest, PoolExhaustionDropsAndCounts) {
  tool_.buffer_bytes = 2 * sizeof(CUpti_ActivityKernel10);
  tool_.pool_limit = 2;
  tool_.recycle = false;  // the tool is slow: nothing comes back
  Attach({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  int written = 0, dropped = 0;
  for (uint32_t i = 0; i < 7; ++i) {
    auto k = Kernel(i);
    FakeCuptiEmitResult r = Emit(&k);
    written += r == FAKE_CUPTI_WRITTEN;
    dropped += r == FAKE_CUPTI_DROPPED;
  }
  EXPECT_EQ(written, 4);
  EXPECT_EQ(dropped, 3);
  size_t n = 0;
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &n), CUPTI_SUCCESS);
  EXPECT_EQ(n, 3u);
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &n), CUPTI_SUCCESS);
  EXPECT_EQ(n, 0u);  // reading resets
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  EXPECT_EQ(Completed(), 4u);
  FakeCuptiCounters c;
  fake_cupti_get_counters(&c);
  EXPECT_EQ(c.records_dropped, 3u);
  EXPECT_EQ(c.records_emitted, 4u);
  EXPECT_EQ(c.buffers_refused, 3u);  // one request per dropped record
}

TEST_F(FakeCuptiTest, MisalignedOrTinyBuffersAreHandedBack) {
  tool_.buffer_bytes = 16;  // smaller than any kernel record
  Attach({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  auto k = Kernel(1);
  EXPECT_EQ(Emit(&k), FAKE_CUPTI_DROPPED);
  fake_cupti_wait_worker_idle();
  EXPECT_EQ(tool_.empty_completions, 1u);
}

TEST_F(FakeCuptiTest, DisabledKindsAreNotProduced) {
  Attach({CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_KERNEL});
  auto memset = Patterned<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET, 1);
  auto memcpy = Patterned<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY, 1);
  auto api = Patterned<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME, 1);
  api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020;
  auto k = Kernel(1);
  EXPECT_EQ(Emit(&memset), FAKE_CUPTI_FILTERED);
  EXPECT_EQ(Emit(&api), FAKE_CUPTI_FILTERED);
  EXPECT_EQ(Emit(&memcpy), FAKE_CUPTI_WRITTEN);
  EXPECT_EQ(Emit(&k), FAKE_CUPTI_WRITTEN);  // CONCURRENT_KERNEL record, KERNEL enabled
  ASSERT_EQ(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 1),
            CUPTI_SUCCESS);
  EXPECT_EQ(Emit(&api), FAKE_CUPTI_WRITTEN);  // enabled per callback id
  ASSERT_EQ(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY), CUPTI_SUCCESS);
  EXPECT_EQ(Emit(&memcpy), FAKE_CUPTI_FILTERED);
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  ASSERT_EQ(tool_.records.size(), 3u);
  EXPECT_EQ(reinterpret_cast<CUpti_Activity*>(tool_.records[1].data())->kind,
            CUPTI_ACTIVITY_KIND_KERNEL);
  FakeCuptiCounters c;
  fake_cupti_get_counters(&c);
  EXPECT_EQ(c.records_filtered, 3u);
}

TEST_F(FakeCuptiTest, GetNextRecordRejectsGarbage) {
  alignas(8) uint8_t buffer[64] = {};
  uint32_t bogus = 9999;
  std::memcpy(buffer, &bogus, sizeof(bogus));
  CUpti_Activity* r = nullptr;
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, sizeof(buffer), &r), CUPTI_ERROR_INVALID_KIND);
  uint32_t kind = CUPTI_ACTIVITY_KIND_RUNTIME;  // 40-byte record in a 32-byte valid range
  std::memcpy(buffer, &kind, sizeof(kind));
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, 32, &r), CUPTI_ERROR_INVALID_KIND);
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, 0, &r), CUPTI_ERROR_MAX_LIMIT_REACHED);
  ASSERT_EQ(cuptiActivityGetNextRecord(buffer, 40, &r), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, 40, &r), CUPTI_ERROR_MAX_LIMIT_REACHED);
}

TEST_F(FakeCuptiTest, FailureInjection) {
  fake_cupti_set_other_subscriber(1);
  CUpti_SubscriberHandle h;
  EXPECT_EQ(cuptiSubscribe(&h, nullptr, nullptr), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  char old_name[64] = {};
  CUpti_SubscriberParams params = {sizeof(params), "inferscope", old_name, sizeof(old_name)};
  EXPECT_EQ(cuptiSubscribe_v2(&h, nullptr, nullptr, &params),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_STRNE(old_name, "");
  fake_cupti_set_other_subscriber(0);
  ASSERT_EQ(cuptiSubscribe(&h, nullptr, nullptr), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiSubscribe(&h, nullptr, nullptr), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);

  fake_cupti_fail_after("cuptiActivityEnable", 2, CUPTI_ERROR_UNKNOWN);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_ERROR_UNKNOWN);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_ERROR_UNKNOWN);
  EXPECT_FALSE(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
  EXPECT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);  // other functions unaffected
  EXPECT_EQ(cuptiGetLastError(), CUPTI_ERROR_UNKNOWN);

  fake_cupti_fail_after("*", 1, CUPTI_ERROR_UNKNOWN);
  uint64_t ts = 0;
  EXPECT_EQ(cuptiGetTimestamp(&ts), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiGetTimestamp(&ts), CUPTI_ERROR_UNKNOWN);
  EXPECT_EQ(cuptiActivityFlushAll(0), CUPTI_ERROR_UNKNOWN);
  const char* s = nullptr;
  EXPECT_EQ(cuptiGetResultString(CUPTI_ERROR_UNKNOWN, &s), CUPTI_SUCCESS);
  EXPECT_STREQ(s, "CUPTI_ERROR_UNKNOWN");
  fake_cupti_fail_after("*", -1, CUPTI_SUCCESS);
  EXPECT_EQ(cuptiGetTimestamp(&ts), CUPTI_SUCCESS);

  fake_cupti_fail_activity_enable(CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ERROR_NOT_COMPATIBLE);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), CUPTI_ERROR_NOT_COMPATIBLE);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), CUPTI_SUCCESS);
  EXPECT_EQ(fake_cupti_call_count("cuptiActivityEnable"), 6u);
}

std::vector<std::pair<CUpti_CallbackId, uint32_t>> g_callbacks;  // (cbid, site or -1)
void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* data) {
  EXPECT_EQ(userdata, &g_callbacks);
  uint32_t site = 99;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    auto* d = static_cast<const CUpti_CallbackData*>(data);
    site = d->callbackSite;
    EXPECT_EQ(d->correlationId, 42u);
    EXPECT_STREQ(d->functionName, "cudaLaunchKernel");
  }
  g_callbacks.emplace_back(cbid, site);
}

TEST_F(FakeCuptiTest, CallbacksFollowEnableState) {
  g_callbacks.clear();
  CUpti_SubscriberHandle h;
  ASSERT_EQ(cuptiSubscribe(&h, OnCallback, &g_callbacks), CUPTI_SUCCESS);
  CUpti_ResourceData resource = {};
  EXPECT_EQ(fake_cupti_fire_callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                                     &resource),
            0);
  ASSERT_EQ(
      cuptiEnableCallback(1, h, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED),
      CUPTI_SUCCESS);
  EXPECT_EQ(fake_cupti_fire_callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                                     &resource),
            1);
  EXPECT_EQ(fake_cupti_fire_callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_CREATED,
                                     &resource),
            0);
  ASSERT_EQ(cuptiEnableDomain(1, h, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  EXPECT_EQ(fake_cupti_fire_api_call(CUPTI_CB_DOMAIN_RUNTIME_API,
                                     CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                     "cudaLaunchKernel", 42, nullptr),
            2);
  ASSERT_EQ(g_callbacks.size(), 3u);
  EXPECT_EQ(g_callbacks[1].second, static_cast<uint32_t>(CUPTI_API_ENTER));
  EXPECT_EQ(g_callbacks[2].second, static_cast<uint32_t>(CUPTI_API_EXIT));
  ASSERT_EQ(cuptiUnsubscribe(h), CUPTI_SUCCESS);
  EXPECT_EQ(fake_cupti_fire_callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                                     &resource),
            0);
}

TEST_F(FakeCuptiTest, TimestampsAndVersion) {
  uint64_t a = 0, b = 0;
  ASSERT_EQ(cuptiGetTimestamp(&a), CUPTI_SUCCESS);
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ASSERT_EQ(cuptiGetTimestamp(&b), CUPTI_SUCCESS);
  const uint64_t now = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
  EXPECT_LE(a, now);
  EXPECT_GE(b, now);
  uint32_t version = 0;
  ASSERT_EQ(cuptiGetVersion(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version, static_cast<uint32_t>(CUPTI_API_VERSION));
}

// The tool's drain thread flushes while the driver thread emits: every record arrives exactly once.
TEST_F(FakeCuptiTest, ConcurrentEmitAndFlush) {
  tool_.buffer_bytes = 16 * sizeof(CUpti_ActivityKernel10);
  tool_.pool_limit = 1 << 20;  // never refuse: a slow flusher must not turn into drops here
  Attach({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY});
  ASSERT_EQ(cuptiActivityFlushPeriod(1), CUPTI_SUCCESS);
  constexpr uint32_t kRecords = 20000;
  std::atomic<bool> done{false};
  std::thread driver([&] {
    for (uint32_t i = 0; i < kRecords; ++i) {
      if (i % 3 == 0) {
        auto m = Patterned<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY, 0);
        m.correlationId = i;
        EXPECT_EQ(Emit(&m), FAKE_CUPTI_WRITTEN);
      } else {
        FakeCuptiKernel k = {};
        k.correlation_id = i;
        k.name = (i % 2) ? "odd_kernel" : "even_kernel";
        EXPECT_EQ(fake_cupti_emit_kernel(&k), FAKE_CUPTI_WRITTEN);
      }
    }
    done = true;
  });
  std::thread tool_thread([&] {
    while (!done) {
      EXPECT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
      size_t dropped;
      cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
      std::this_thread::yield();
    }
  });
  driver.join();
  tool_thread.join();
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  ASSERT_EQ(tool_.records.size(), kRecords);
  std::vector<int> seen(kRecords, 0);
  for (const auto& r : tool_.records) {
    const auto kind = reinterpret_cast<const CUpti_Activity*>(r.data())->kind;
    const uint32_t id =
        kind == CUPTI_ACTIVITY_KIND_MEMCPY
            ? reinterpret_cast<const CUpti_ActivityMemcpy6*>(r.data())->correlationId
            : reinterpret_cast<const CUpti_ActivityKernel10*>(r.data())->correlationId;
    ASSERT_LT(id, kRecords);
    ++seen[id];
  }
  for (uint32_t i = 0; i < kRecords; ++i) ASSERT_EQ(seen[i], 1) << i;
  for (const auto& n : tool_.kernel_names) ASSERT_TRUE(n == "odd_kernel" || n == "even_kernel");
}

}  // namespace
