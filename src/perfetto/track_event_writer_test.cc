// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The TrackEvent writer read back with src/wire's reader (no protoc needed; tests/perfetto checks
// the same output against Perfetto's schema): packet framing, interning once per sequence,
// incremental timestamps that never go backwards, and ends of nested slices in time order.

#include "src/perfetto/track_event_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/wire/wire_buffer.h"

namespace inferscope::perfetto {
namespace {

struct Event {
  uint64_t delta = 0;
  uint64_t type = 0;
  uint64_t name_iid = 0;
  uint64_t correlation_id = 0;
  uint64_t flow_out = 0;  // varint flow_ids_old
  uint64_t flow_in = 0;   // varint terminating_flow_ids_old
  int annotations = 0;
  std::vector<std::string> interned;  // strings interned in this packet
};

// The packets' TrackEvents in order (descriptor and sequence-start packets are skipped).
std::vector<Event> Events(const std::string& trace) {
  std::vector<Event> events;
  wire::WireReader trace_reader(trace);
  wire::WireField packet;
  while (trace_reader.NextField(&packet)) {
    EXPECT_EQ(packet.number, field::kTracePacket);
    wire::WireReader p(packet.bytes);
    wire::WireField f;
    Event e;
    bool has_event = false;
    while (p.NextField(&f)) {
      if (f.number == field::kTimestamp) e.delta = f.value;
      if (f.number == field::kTrackEvent) {
        has_event = true;
        wire::WireReader te(f.bytes);
        wire::WireField g;
        while (te.NextField(&g)) {
          if (g.number == field::kType) e.type = g.value;
          if (g.number == field::kNameIid) e.name_iid = g.value;
          if (g.number == field::kDebugAnnotations) ++e.annotations;
          if (g.number == field::kCorrelationId) {
            EXPECT_EQ(g.type, wire::WireType::kVarint);
            e.correlation_id = g.value;
          }
          if (g.number == field::kFlowIdsOld) {
            EXPECT_EQ(g.type, wire::WireType::kVarint);
            e.flow_out = g.value;
          }
          if (g.number == field::kTerminatingFlowIdsOld) {
            EXPECT_EQ(g.type, wire::WireType::kVarint);
            e.flow_in = g.value;
          }
        }
      }
      if (f.number == field::kInternedData) {
        wire::WireReader in(f.bytes);
        wire::WireField entry;
        while (in.NextField(&entry)) {
          wire::WireReader er(entry.bytes);
          wire::WireField g;
          while (er.NextField(&g))
            if (g.number == 2) e.interned.emplace_back(g.bytes);
        }
      }
    }
    EXPECT_TRUE(p.ok());
    if (has_event) events.push_back(e);
  }
  EXPECT_TRUE(trace_reader.ok());
  return events;
}

TEST(TrackEventWriterTest, InternsOncePerSequenceAndWritesDeltas) {
  std::string out;
  TrackEventWriter writer([&](std::string_view b) { out.append(b); });
  writer.PlainTrack(1, 0, "stream 7");
  writer.BeginSequence(1);
  const Arg args[] = {Arg::String("grid", "1,1,1"), Arg::Uint("correlation_id", 5)};
  writer.WriteSlice({1000, 1500, "k", "matmul", args, 2, 0, 0});
  writer.WriteSlice({2000, 2600, "k", "matmul", args, 2, 0, 0});
  const uint64_t written = writer.Finish();
  EXPECT_EQ(written, out.size());

  const std::vector<Event> events = Events(out);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].type, kTypeSliceBegin);
  EXPECT_EQ(events[0].delta, 1000u);  // the first is relative to the clock snapshot's 0
  EXPECT_EQ(events[1].type, kTypeSliceEnd);
  EXPECT_EQ(events[1].delta, 500u);
  EXPECT_EQ(events[2].delta, 500u);
  EXPECT_EQ(events[3].delta, 600u);
  EXPECT_EQ(events[0].interned,
            (std::vector<std::string>{"matmul", "k", "grid", "1,1,1", "correlation_id"}));
  EXPECT_TRUE(events[2].interned.empty());  // the second slice costs ids only
  EXPECT_EQ(events[2].name_iid, events[0].name_iid);
}

// The correlation id is TrackEvent's own field and flows use the varint ids, not annotations and
// fixed64s: a kernel slice with its launch argument, correlation id and flow end stays within the
// 40-byte target (the end packet included).
TEST(TrackEventWriterTest, CorrelationIdAndFlowsAreVarintFields) {
  std::string out;
  TrackEventWriter writer([&](std::string_view b) { out.append(b); });
  writer.BeginSequence(1);
  const Arg launch[] = {Arg::String("launch", "void k(int) <<<(1,1,1), (32,1,1)>>>")};
  Slice s{1000, 1500, "k", "matmul", launch, 1};
  s.correlation_id = 123456;
  s.flow_in = 300;
  writer.WriteSlice(s);
  // As the export writes a kernel at the end of its launch flow: the correlation id is the
  // launching call's.
  s.start_ns = 2000;
  s.end_ns = 2600;
  s.correlation_id = 0;
  s.flow_in = 301;
  const uint64_t before = writer.bytes_written();
  writer.WriteSlice(s);  // the first slice's end, then this one's begin: a slice's worth
  const uint64_t one_slice = writer.bytes_written() - before;
  writer.Finish();

  const std::vector<Event> events = Events(out);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].correlation_id, 123456u);
  EXPECT_EQ(events[0].flow_in, 300u);
  EXPECT_EQ(events[0].annotations, 1);
  EXPECT_EQ(events[2].correlation_id, 0u);
  EXPECT_EQ(events[2].flow_in, 301u);
  EXPECT_EQ(events[1].correlation_id, 0u);  // ends carry nothing but their time
  EXPECT_LE(one_slice, 40u);
}

// A process's labels (a live capture's drops) are repeated ProcessDescriptor.process_labels.
TEST(TrackEventWriterTest, ProcessLabelsAreRepeatedStringsOfTheDescriptor) {
  std::string out;
  TrackEventWriter writer([&](std::string_view b) { out.append(b); });
  writer.ProcessTrack(9, 1234, "rank 0 (pid 1234)", {"5 events dropped: the bytes cap", "x"});
  writer.Finish();
  std::vector<std::string> names, labels;
  wire::WireReader trace_reader(out);
  wire::WireField packet;
  while (trace_reader.NextField(&packet)) {
    wire::WireReader p(packet.bytes);
    wire::WireField f;
    while (p.NextField(&f)) {
      if (f.number != field::kTrackDescriptor) continue;
      wire::WireReader d(f.bytes);
      wire::WireField g;
      while (d.NextField(&g)) {
        if (g.number != field::kTrackProcess) continue;
        wire::WireReader pd(g.bytes);
        wire::WireField h;
        while (pd.NextField(&h)) {
          if (h.number == field::kProcessName) names.emplace_back(h.bytes);
          if (h.number == field::kProcessLabels) labels.emplace_back(h.bytes);
        }
      }
    }
  }
  EXPECT_EQ(names, std::vector<std::string>{"rank 0 (pid 1234)"});
  EXPECT_EQ(labels, (std::vector<std::string>{"5 events dropped: the bytes cap", "x"}));
}

TEST(TrackEventWriterTest, NestedSlicesEndInTimeOrderAndAreCutToTheirParent) {
  std::string out;
  TrackEventWriter writer([&](std::string_view b) { out.append(b); });
  writer.BeginSequence(1);
  writer.WriteSlice({100, 1000, "runtime", "cuda_api", nullptr, 0, 0, 0});
  writer.WriteSlice({200, 400, "driver", "cuda_api", nullptr, 0, 0, 0});
  writer.WriteSlice({500, 1200, "outlasts its parent", "cuda_api", nullptr, 0, 0, 0});
  writer.WriteSlice({2000, 2100, "next", "cuda_api", nullptr, 0, 0, 0});
  writer.Finish();

  std::vector<uint64_t> types, times;
  uint64_t t = 0;
  for (const Event& e : Events(out)) {
    t += e.delta;
    types.push_back(e.type);
    times.push_back(t);
  }
  EXPECT_EQ(types, (std::vector<uint64_t>{1, 1, 2, 1, 2, 2, 1, 2}));
  EXPECT_EQ(times, (std::vector<uint64_t>{100, 200, 400, 500, 1000, 1000, 2000, 2100}));
}

TEST(TrackEventWriterTest, NewSequenceStartsInterningAndTheClockOver) {
  std::string out;
  TrackEventWriter writer([&](std::string_view b) { out.append(b); });
  writer.BeginSequence(1);
  writer.WriteSlice({5000, 6000, "k", "matmul", nullptr, 0, 0, 0});
  writer.BeginSequence(2);
  writer.WriteSlice({5000, 6000, "k", "matmul", nullptr, 0, 0, 0});
  writer.WriteCounter(7000, 0.5);
  writer.Finish();
  const std::vector<Event> events = Events(out);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[2].delta, 5000u);
  EXPECT_EQ(events[2].interned, (std::vector<std::string>{"matmul", "k"}));
  EXPECT_EQ(events[4].type, kTypeCounter);
  EXPECT_EQ(events[4].delta, 1000u);
}

}  // namespace
}  // namespace inferscope::perfetto
