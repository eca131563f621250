// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The CUPTI decoder on activity buffers built in memory, one per record layout, as CUPTI would hand
// them over (the test plays cuptiActivityGetNextRecord): no fake library, no replay process.

#include "src/inject/cupti_decoder.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <vector>

namespace inferscope::inject {
namespace {

// The buffer walker the test hands the decoder as cuptiActivityGetNextRecord: records lie back to
// back, each as long as its struct in the layout under test (g_layout).
CuptiLayout g_layout = CuptiLayout::kCuda13_0;

size_t Stride(uint32_t kind) {
  const bool v13 = g_layout == CuptiLayout::kCuda13_0;
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return v13 ? sizeof(CUpti_ActivityKernel10) : sizeof(CUpti_ActivityKernel9);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return g_layout == CuptiLayout::kCuda12_0 ? sizeof(CUpti_ActivityMemcpy5)
                                                : sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return g_layout == CuptiLayout::kCuda12_0 ? sizeof(CUpti_ActivitySynchronization)
                                                : sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      return v13 ? sizeof(CUpti_ActivityContext3) : sizeof(CUpti_ActivityContext2);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
      return sizeof(CUpti_ActivityGraphTrace2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_MARKER:
      return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      return sizeof(CUpti_ActivityAPI);
    default:
      return 0;
  }
}

CUptiResult CUPTIAPI NextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  size_t offset = 0;
  if (*record != nullptr)
    offset =
        static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) + Stride((*record)->kind);
  if (offset >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI CallbackName(CUpti_CallbackDomain, uint32_t, const char** name) {
  *name = "cudaLaunchKernel_v7000";
  return CUPTI_SUCCESS;
}

class Buffer {
 public:
  template <typename T>
  void Add(const T& record) {
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &record, sizeof(T));
  }
  uint8_t* data() { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<uint8_t> bytes_;
};

template <typename Kernel>
Kernel MakeKernel(uint64_t start, uint32_t device, uint32_t context, const char* name) {
  Kernel k;
  std::memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = start + 1000;
  k.deviceId = device;
  k.contextId = context;
  k.streamId = 7;
  k.correlationId = static_cast<uint32_t>(start);
  k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
  k.name = name;
  return k;
}

template <typename Memcpy>
Memcpy MakeMemcpy(uint64_t start, uint32_t device) {
  Memcpy m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.bytes = 4096;
  m.start = start;
  m.end = start + 500;
  m.deviceId = device;
  m.streamId = 7;
  return m;
}

template <typename Sync>
Sync MakeSync(uint64_t start, uint32_t context) {
  Sync s;
  std::memset(&s, 0, sizeof(s));
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.start = start;
  s.end = start + 2000;
  s.contextId = context;
  s.streamId = 7;
  return s;
}

template <typename Context>
Context MakeContext(uint32_t context, uint32_t device) {
  Context c;
  std::memset(&c, 0, sizeof(c));
  c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  c.contextId = context;
  c.deviceId = device;
  return c;
}

struct Decoded {
  model::ProfileWindow window;
  size_t records = 0;
  uint64_t unknown = 0, deviceless = 0;
};

Decoded DecodeAll(Buffer& buffer, CuptiLayout layout, bool ranges = false) {
  g_layout = layout;
  CuptiApi api;
  api.ActivityGetNextRecord = &NextRecord;
  api.GetCallbackName = &CallbackName;
  model::NameTable names;
  model::KernelClassifier classifier;
  Decoded out;
  aggregate::AggregatorOptions options;
  options.ranges = ranges;
  aggregate::Aggregator aggregator(options, &names, &classifier,
                                   [&](model::ProfileWindow&& w) { out.window = std::move(w); });
  model::ProcessInfo process;
  process.pid = 42;
  aggregator.OnProcess(process);
  CuptiDecoder decoder(&names, 42, &api, layout);
  out.records = decoder.Decode(buffer.data(), buffer.size(), &aggregator);
  out.unknown = decoder.unknown_records();
  out.deviceless = decoder.deviceless_graph_launches();
  aggregator.Finish();
  return out;
}

const model::DeviceProfile* Device(const Decoded& d, uint32_t device) {
  for (const auto& p : d.window.processes)
    for (const auto& dev : p.devices)
      if (dev.device == device) return &dev;
  return nullptr;
}

template <typename Kernel, typename Memcpy, typename Sync, typename Context>
void ExpectLayoutDecodes(CuptiLayout layout) {
  Buffer b;
  // The context record maps context 5 to device 1 before any kernel of it: the sync of that
  // context lands on device 1.
  b.Add(MakeContext<Context>(5, 1));
  b.Add(MakeSync<Sync>(10'000, 5));
  b.Add(MakeKernel<Kernel>(1'000, 0, 4, "void vllm::rms_norm_kernel<c10::BFloat16>(...)"));
  b.Add(MakeKernel<Kernel>(3'000, 1, 5, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"));
  b.Add(MakeMemcpy<Memcpy>(5'000, 0));
  const Decoded d = DecodeAll(b, layout);
  EXPECT_EQ(d.records, 5u);
  EXPECT_EQ(d.unknown, 0u);
  const model::DeviceProfile* d0 = Device(d, 0);
  const model::DeviceProfile* d1 = Device(d, 1);
  ASSERT_NE(d0, nullptr);
  ASSERT_NE(d1, nullptr);
  EXPECT_EQ(d0->kernel_count, 1u);
  EXPECT_EQ(d1->kernel_count, 1u);
  const auto htod = d0->memcpy[static_cast<size_t>(model::MemcpyKind::kHtoD)];
  EXPECT_EQ(htod.count, 1u);
  EXPECT_EQ(htod.bytes, 4096u);
  EXPECT_EQ(htod.pageable_count, 1u);
  EXPECT_EQ(d1->syncs[static_cast<size_t>(model::SyncType::kStream)].wait.count, 1u);
  EXPECT_EQ(d1->categories[static_cast<size_t>(model::Category::kCommunication)].count, 1u);
}

TEST(CuptiDecoderTest, Cuda13Layout) {
  ExpectLayoutDecodes<CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivitySynchronization2,
                      CUpti_ActivityContext3>(CuptiLayout::kCuda13_0);
}

TEST(CuptiDecoderTest, Cuda12_0Layout) {
  ExpectLayoutDecodes<CUpti_ActivityKernel9, CUpti_ActivityMemcpy5, CUpti_ActivitySynchronization,
                      CUpti_ActivityContext2>(CuptiLayout::kCuda12_0);
}

TEST(CuptiDecoderTest, Cuda12_8Layout) {
  ExpectLayoutDecodes<CUpti_ActivityKernel9, CUpti_ActivityMemcpy6, CUpti_ActivitySynchronization2,
                      CUpti_ActivityContext2>(CuptiLayout::kCuda12_8);
}

TEST(CuptiDecoderTest, GraphLaunchesFromTheHostAndUnknownKindsAreCountedNotMisread) {
  Buffer b;
  CUpti_ActivityGraphTrace2 g;
  std::memset(&g, 0, sizeof(g));
  g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
  g.start = 1'000;
  g.end = 9'000;
  g.graphId = 3;
  g.deviceId = INT_MAX;  // starts with a host node: the device is where it ends
  g.endDeviceId = 2;
  b.Add(g);
  g.start = 20'000;
  g.end = 29'000;
  g.endDeviceId = INT_MAX;  // host at both ends: no device to put it on
  b.Add(g);
  CUpti_ActivityOverhead3 o;
  std::memset(&o, 0, sizeof(o));
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  b.Add(o);
  const Decoded d = DecodeAll(b, CuptiLayout::kCuda13_0);
  EXPECT_EQ(d.records, 3u);
  EXPECT_EQ(d.unknown, 1u);
  EXPECT_EQ(d.deviceless, 1u);
  const model::DeviceProfile* d2 = Device(d, 2);
  ASSERT_NE(d2, nullptr);
  EXPECT_EQ(d2->kernel_count, 1u);
  ASSERT_FALSE(d2->top_kernels.empty());
  // Graph ids are process-local: the pseudo-kernel's name says whose.
  EXPECT_EQ(d2->top_kernels[0].name, "[cuda graph 3 of pid 42]");
  EXPECT_EQ(Device(d, static_cast<uint32_t>(INT_MAX)), nullptr);
}

// DEVICE records give each CUDA ordinal its name and UUID, spelt as NVML spells it, so that the
// agent can find the NVML index of "CUDA 0" when CUDA_VISIBLE_DEVICES renumbers the GPUs.
template <typename Kernel>
void ExpectDeviceUuids(CuptiLayout layout) {
  Buffer b;
  CUpti_ActivityDevice5 dev;
  std::memset(&dev, 0, sizeof(dev));
  dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  dev.id = 0;
  dev.name = "NVIDIA H100 80GB HBM3";
  const uint8_t uuid[16] = {0xfa, 0x4e, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                            0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0xee};
  std::memcpy(dev.uuid.bytes, uuid, 16);
  b.Add(dev);
  dev.id = 1;  // a device without a UUID (all zero): no identity rather than a made-up one
  std::memset(dev.uuid.bytes, 0, 16);
  b.Add(dev);
  b.Add(MakeKernel<Kernel>(1'000, 0, 4, "k"));
  b.Add(MakeKernel<Kernel>(2'000, 1, 5, "k"));
  const Decoded d = DecodeAll(b, layout);
  EXPECT_EQ(d.records, 4u);
  EXPECT_EQ(d.unknown, 0u);
  const model::DeviceProfile* d0 = Device(d, 0);
  const model::DeviceProfile* d1 = Device(d, 1);
  ASSERT_NE(d0, nullptr);
  ASSERT_NE(d1, nullptr);
  EXPECT_EQ(d0->device_uuid, "GPU-fa4e0102-0304-0506-0708-090a0b0c0dee");
  EXPECT_EQ(d0->device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d1->device_uuid, "");
}

TEST(CuptiDecoderTest, DeviceRecordsCarryTheUuidInNvmlSpelling) {
  ExpectDeviceUuids<CUpti_ActivityKernel10>(CuptiLayout::kCuda13_0);
  ExpectDeviceUuids<CUpti_ActivityKernel9>(CuptiLayout::kCuda12_8);
  ExpectDeviceUuids<CUpti_ActivityKernel9>(CuptiLayout::kCuda12_0);
}

CUpti_ActivityMarker2 Marker(uint32_t flags, uint32_t id, uint64_t timestamp, const char* name,
                             uint32_t tid = 7) {
  CUpti_ActivityMarker2 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = static_cast<CUpti_ActivityFlag>(flags);
  m.timestamp = timestamp;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 42;
  m.objectId.pt.threadId = tid;
  m.name = name;
  m.domain = nullptr;
  return m;
}

// NVTX ranges (--nvtx): start and end marker records pair by id into ranges on the start's
// thread; GPU work launched inside them is projected by correlation. The layout is
// CUpti_ActivityMarker2 in 12.x and 13.x alike.
TEST(CuptiDecoderTest, MarkerRecordsPairIntoRangesWithTheirGpuWork) {
  for (CuptiLayout layout : {CuptiLayout::kCuda13_0, CuptiLayout::kCuda12_8}) {
    Buffer b;
    b.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, "forward"));
    b.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 200, "inner"));
    b.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 3, 250, "a mark"));  // not a range
    CUpti_ActivityAPI api;
    std::memset(&api, 0, sizeof(api));
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = 211;
    api.start = 300;
    api.end = 350;
    api.processId = 42;
    api.threadId = 7;
    api.correlationId = 1000;
    b.Add(api);
    b.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 400, nullptr));
    b.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 99, 450, nullptr));  // its start never came
    // nvtxRangeEnd on another thread: the range stays on its start's thread.
    b.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 900, nullptr, /*tid=*/8));
    if (layout == CuptiLayout::kCuda13_0)
      b.Add(MakeKernel<CUpti_ActivityKernel10>(1'000, 0, 4, "k"));
    else
      b.Add(MakeKernel<CUpti_ActivityKernel9>(1'000, 0, 4, "k"));
    const Decoded d = DecodeAll(b, layout, /*ranges=*/true);
    EXPECT_EQ(d.records, 8u);
    EXPECT_EQ(d.unknown, 0u);
    ASSERT_EQ(d.window.processes.size(), 1u);
    const model::RangeTable& t = d.window.processes[0].ranges;
    ASSERT_EQ(t.rows.size(), 2u);
    EXPECT_EQ(t.rows[0].name, "forward");
    EXPECT_EQ(t.rows[0].duration.count, 1u);
    EXPECT_EQ(t.rows[0].duration.total_ns, 800);
    EXPECT_EQ(t.rows[0].gpu_ops, 1u);
    EXPECT_EQ(t.rows[0].gpu_time_ns, 1000);
    EXPECT_EQ(t.rows[1].name, "inner");
    EXPECT_EQ(t.rows[1].duration.total_ns, 200);
    EXPECT_EQ(t.rows[1].gpu_ops, 1u);
  }
  // Without --nvtx the Aggregator keeps no table (the records still decode).
  Buffer b;
  b.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, "forward"));
  b.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 900, nullptr));
  const Decoded d = DecodeAll(b, CuptiLayout::kCuda13_0);
  EXPECT_EQ(d.unknown, 0u);
  for (const model::ProcessProfile& p : d.window.processes) EXPECT_TRUE(p.ranges.empty());
}

}  // namespace
}  // namespace inferscope::inject
