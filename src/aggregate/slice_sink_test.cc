// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/aggregate/slice_sink.h"

#include <gtest/gtest.h>

#include <vector>

namespace inferscope::aggregate {
namespace {

model::KernelEvent Kernel(int64_t start) {
  model::KernelEvent k;
  k.start_ns = start;
  k.end_ns = start + 10;
  return k;
}

TEST(SliceSinkTest, AbsoluteSliceKeepsWhatStartsInside) {
  model::EventBuffer out;
  TimeSlice slice;
  slice.from_ns = 100;
  slice.to_ns = 200;
  SliceSink sink(slice, &out);
  sink.OnProcess({});
  sink.OnKernel(Kernel(95));  // ends inside, starts before: out
  sink.OnKernel(Kernel(100));
  sink.OnKernel(Kernel(199));
  sink.OnKernel(Kernel(200));  // the end is exclusive
  model::NvtxEvent n;
  n.start_ns = 150;
  n.end_ns = 400;
  sink.OnNvtx(n);
  sink.OnDataQuality(1, model::DataQuality::kMalformedEvent, 2);
  sink.Finish();
  EXPECT_EQ(sink.kept(), 3u);
  EXPECT_EQ(sink.dropped(), 2u);
  ASSERT_EQ(out.size(), 5u);  // process, two kernels, the range, the data-quality count
  EXPECT_EQ(std::get<model::KernelEvent>(out.events()[1]).start_ns, 100);
  EXPECT_EQ(std::get<model::KernelEvent>(out.events()[2]).start_ns, 199);
  EXPECT_EQ(std::get<model::NvtxEvent>(out.events()[3]).end_ns, 400);  // not clipped
}

// Kernel resources hold for the kernels of their name after them, in the slice or not: they
// always pass, in order, and never set a relative slice's origin (they have no time).
TEST(SliceSinkTest, KernelResourcesAlwaysPassInOrder) {
  for (const bool relative : {false, true}) {
    model::EventBuffer out;
    TimeSlice slice;
    slice.relative = relative;
    slice.from_ns = relative ? 100 : 1'100;
    slice.to_ns = relative ? 200 : 1'200;
    SliceSink sink(slice, &out);
    model::KernelResourcesEvent r;
    r.resources.registers_per_thread = 40;
    sink.OnKernel(Kernel(1'000));
    sink.OnKernelResources(r);
    sink.OnKernel(Kernel(1'050));  // out
    sink.OnKernel(Kernel(1'150));  // in
    sink.Finish();
    ASSERT_EQ(out.size(), 2u) << relative;
    EXPECT_EQ(std::get<model::KernelResourcesEvent>(out.events()[0]).resources, r.resources);
    EXPECT_EQ(std::get<model::KernelEvent>(out.events()[1]).start_ns, 1'150);
    EXPECT_EQ(sink.kept(), 1u);
  }
}

TEST(SliceSinkTest, RelativeSliceCountsFromTheFirstEventWhateverTheOrder) {
  model::EventBuffer out;
  TimeSlice slice;
  slice.relative = true;
  slice.from_ns = 50;  // open end
  SliceSink sink(slice, &out);
  sink.OnKernel(Kernel(1'120));
  sink.OnKernel(Kernel(1'030));
  model::ApiCallEvent first;  // the trace starts here, though it arrives last
  first.start_ns = 1'000;
  first.end_ns = 1'005;
  sink.OnApiCall(first);
  EXPECT_TRUE(out.empty());  // held until the end
  sink.Finish();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<model::KernelEvent>(out.events()[0]).start_ns, 1'120);
  EXPECT_EQ(sink.dropped(), 2u);
}

TEST(SliceSinkTest, InactiveByDefault) { EXPECT_FALSE(TimeSlice{}.active()); }

}  // namespace
}  // namespace inferscope::aggregate
