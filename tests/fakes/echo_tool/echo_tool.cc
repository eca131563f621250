// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// echo_tool: the smallest CUPTI injection library. It uses only the public CUPTI API (linked
// against the real libcupti, like libinferscope_inject.so), counts completed records per kind and
// prints one line at exit:
//   echo_tool pid=N rank=R kernel=K memcpy=M memset=S sync=Y runtime=U driver=D memory=A graph=G
//   overhead=O dropped=X buffers=B callbacks=C
// ECHO_TOOL_GRAPH_TRACE=1 also enables GRAPH_TRACE. Buffers are malloc'ed on demand (never
// exhausted), so every record the driver emits must be counted.

#include <cupti.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace {

std::atomic<uint64_t> g_counts[CUPTI_ACTIVITY_KIND_COUNT];
std::atomic<uint64_t> g_buffers{0};
std::atomic<uint64_t> g_callbacks{0};
std::atomic<uint64_t> g_dropped{0};
std::atomic<bool> g_initialized{false};
constexpr size_t kBufferBytes = 64 * 1024;

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
    if (record->kind < CUPTI_ACTIVITY_KIND_COUNT) g_counts[record->kind].fetch_add(1);
  g_buffers.fetch_add(1);
  std::free(buffer);
}

void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {
  g_callbacks.fetch_add(1);
}

uint64_t Count(CUpti_ActivityKind kind) { return g_counts[kind].load(); }

void PrintAtExit() {
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS)
    g_dropped.fetch_add(dropped);
  const char* rank = std::getenv("RANK");
  std::printf(
      "echo_tool pid=%d rank=%s kernel=%llu memcpy=%llu memset=%llu sync=%llu runtime=%llu "
      "driver=%llu memory=%llu graph=%llu overhead=%llu dropped=%llu buffers=%llu "
      "callbacks=%llu\n",
      static_cast<int>(getpid()), rank ? rank : "-",
      static_cast<unsigned long long>(Count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)),
      static_cast<unsigned long long>(Count(CUPTI_ACTIVITY_KIND_MEMCPY)),
      static_cast<unsigned long long>(Count(CUPTI_ACTIVITY_KIND_MEMSET)),
      static_cast<unsigned long long>(Count(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)),
      static_cast<unsigned long long>(Count(CUPTI_ACTIVITY_KIND_RUNTIME)),
      static_cast<unsigned long long>(Count(CUPTI_ACTIVITY_KIND_DRIVER)),
      static_cast<unsigned long long>(Count(CUPTI_ACTIVITY_KIND_MEMORY2)),
      static_cast<unsigned long long>(Count(CUPTI_ACTIVITY_KIND_GRAPH_TRACE)),
      static_cast<unsigned long long>(Count(CUPTI_ACTIVITY_KIND_OVERHEAD)),
      static_cast<unsigned long long>(g_dropped.load()),
      static_cast<unsigned long long>(g_buffers.load()),
      static_cast<unsigned long long>(g_callbacks.load()));
  std::fflush(stdout);
}

int Fail(const char* what, CUptiResult r) {
  const char* s = "?";
  cuptiGetResultString(r, &s);
  std::fprintf(stderr, "echo_tool: %s failed: %s\n", what, s);
  return 1;  // like the real tool: the application runs on without profiling
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (g_initialized.exchange(true)) return 1;
  CUpti_SubscriberHandle subscriber;
  if (CUptiResult r = cuptiSubscribe(&subscriber, OnCallback, nullptr); r != CUPTI_SUCCESS)
    return Fail("cuptiSubscribe", r);
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                      CUPTI_ACTIVITY_KIND_MEMCPY,
                                      CUPTI_ACTIVITY_KIND_MEMSET,
                                      CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                      CUPTI_ACTIVITY_KIND_RUNTIME,
                                      CUPTI_ACTIVITY_KIND_DRIVER,
                                      CUPTI_ACTIVITY_KIND_MEMORY2,
                                      CUPTI_ACTIVITY_KIND_OVERHEAD};
  for (CUpti_ActivityKind k : kinds)
    if (CUptiResult r = cuptiActivityEnable(k); r != CUPTI_SUCCESS)
      return Fail("cuptiActivityEnable", r);
  if (const char* g = std::getenv("ECHO_TOOL_GRAPH_TRACE"); g && *g == '1')
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  if (CUptiResult r = cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
      r != CUPTI_SUCCESS)
    return Fail("cuptiActivityRegisterCallbacks", r);
  cuptiActivityFlushPeriod(100);
  std::atexit(PrintAtExit);
  return 1;
}
