// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/wire/window_codec.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "src/wire/test_windows.h"
#include "src/wire/wire_buffer.h"

namespace inferscope::wire {
namespace {

using testing::FirstDifference;
using testing::FullWindow;

std::string Encode(const model::ProfileWindow& w) {
  std::string out;
  EncodeWindow(w, &out);
  return out;
}

// A window of this format holding one process (pid 7) with one device whose one top-kernel row
// is the encoded message `kernel`: for hand-built kernel fields.
std::string WindowOfKernel(const std::string& kernel) {
  std::string device;
  WireWriter dw(&device);
  dw.Tag(12, WireType::kBytes);
  dw.Varint(kernel.size());
  device += kernel;
  std::string process;
  WireWriter pw(&process);
  pw.U(1, 7);
  pw.Tag(5, WireType::kBytes);
  pw.Varint(device.size());
  process += device;
  std::string bytes;
  WireWriter bw(&bytes);
  bw.Varint(kWindowFormatMajor);
  bw.Varint(kWindowFormatMinor);
  bw.Tag(3, WireType::kBytes);
  bw.Varint(process.size());
  bytes += process;
  return bytes;
}

TEST(WindowCodecTest, RoundTripsEveryField) {
  const model::ProfileWindow w = FullWindow();
  const std::string bytes = Encode(w);
  auto decoded = DecodeWindow(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(FirstDifference(w, *decoded), "");
  EXPECT_TRUE(w == *decoded);
}

// Seeds for window_codec_fuzzer: windows that reach every field (steps, phases, ranges, launch
// configurations), which the fuzzer does not find from an empty corpus in a short run (it missed
// two re-encoding bugs in the step and phase fields that seeded runs found in seconds). Each seed
// must round-trip here; with $INFERSCOPE_FUZZ_SEEDS set (scripts/test.sh's fuzz stage) they are
// also written there, so the seeds always follow the current format.
TEST(WindowCodecTest, FuzzSeedsRoundTrip) {
  const std::vector<model::ProfileWindow> seeds = {FullWindow(), FullWindow(1, 1),
                                                   FullWindow(6, 12), model::ProfileWindow{}};
  const char* dir = std::getenv("INFERSCOPE_FUZZ_SEEDS");
  for (size_t i = 0; i < seeds.size(); ++i) {
    const std::string bytes = Encode(seeds[i]);
    auto decoded = DecodeWindow(bytes);
    ASSERT_TRUE(decoded.ok()) << i << ": " << decoded.status().message();
    EXPECT_EQ(FirstDifference(seeds[i], *decoded), "") << i;
    EXPECT_EQ(Encode(*decoded), bytes) << i;  // what the fuzzer checks of every input
    if (dir && *dir) {
      std::ofstream out(std::string(dir) + "/window_" + std::to_string(i) + ".bin",
                        std::ios::binary);
      out << bytes;
      ASSERT_TRUE(out.good()) << "cannot write seed " << i << " into " << dir;
    }
  }
}

TEST(WindowCodecTest, RoundTripsDefaultsAndExtremes) {
  model::ProfileWindow empty;
  auto d0 = DecodeWindow(Encode(empty));
  ASSERT_TRUE(d0.ok());
  EXPECT_TRUE(*d0 == empty);

  model::ProfileWindow w;
  w.start_ns = INT64_MIN;
  w.end_ns = INT64_MAX;
  auto& p = w.processes.emplace_back();
  p.pid = UINT32_MAX;
  p.rank = INT32_MIN;
  p.world_size = INT32_MAX;
  p.data_quality[0] = UINT64_MAX;
  auto& d = p.devices.emplace_back();
  d.device = UINT32_MAX;
  d.kernel_count = UINT64_MAX;
  d.busy_ns = INT64_MIN;
  d.tail.duration.min_ns = 0;    // differs from the "no min" default
  d.top_kernels.emplace_back();  // an all-default row keeps its place
  d.syncs[0].waited_on.emplace_back();
  d.timeline.busy_ns = {0, 0, 0};  // sizes differ from category_ns
  d.timeline.category_ns.resize(1);
  auto decoded = DecodeWindow(Encode(w));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(FirstDifference(w, *decoded), "");

  d.timeline.busy_ns.clear();
  d.timeline.category_ns.resize(4);
  d.timeline.category_ns[3][5] = 9;
  decoded = DecodeWindow(Encode(w));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(FirstDifference(w, *decoded), "");
}

TEST(WindowCodecTest, RejectsNewerMajorVersionClearly) {
  std::string bytes;
  WireWriter wr(&bytes);
  wr.Varint(kWindowFormatMajor + 1);
  wr.Varint(0);
  auto decoded = DecodeWindow(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), base::StatusCode::kUnsupported);
  EXPECT_NE(decoded.status().message().find("upgrade inferscope"), std::string::npos)
      << decoded.status().message();
}

TEST(WindowCodecTest, SkipsUnknownFieldsOfSameMajor) {
  // A "newer minor" writer: same major, higher minor, extra fields of every wire type at the top
  // level and inside a process.
  const model::ProfileWindow w = FullWindow(1, 2);
  std::string body = Encode(w);
  WireReader header(body);
  header.Varint();
  header.Varint();
  std::string fields = body.substr(body.size() - header.remaining());

  std::string newer;
  WireWriter out(&newer);
  out.Varint(kWindowFormatMajor);
  out.Varint(kWindowFormatMinor + 5);
  out.U(90, 12345);
  out.Str(91, "future field");
  out.Tag(92, WireType::kFixed64);
  newer.append(8, '\x7f');
  out.Tag(93, WireType::kFixed32);
  out.Fixed32(0xdeadbeef);
  // A process with an unknown nested field up front, then the real ones.
  std::string process;
  WireWriter pw(&process);
  pw.Str(77, "unknown nested");
  pw.U(1, 42);
  out.Tag(3, WireType::kBytes);
  out.Varint(process.size());
  newer.append(process);
  newer.append(fields);

  auto decoded = DecodeWindow(newer);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ASSERT_EQ(decoded->processes.size(), w.processes.size() + 1);
  EXPECT_EQ(decoded->processes[0].pid, 42u);
  decoded->processes.erase(decoded->processes.begin());
  EXPECT_EQ(FirstDifference(w, *decoded), "");
}

// Forward phases (1.3): a window without them has no field 32 (what a 1.2 writer sends decodes to
// no phase data); a newer writer's unknown phase, category values past the reader's categories and
// unknown fields inside are dropped, the rest kept.
TEST(WindowCodecTest, PhasesFromANewerWriter) {
  model::ProfileWindow w = FullWindow(1, 1);
  for (auto& p : w.processes)
    for (auto& d : p.devices) d.phases = {};
  auto plain = DecodeWindow(Encode(w));
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->processes[0].devices[0].phases.empty());
  EXPECT_EQ(FirstDifference(w, *plain), "");

  auto packed = [](int n, int64_t first) {
    std::string body;
    WireWriter p(&body);
    for (int i = 0; i < n; ++i) p.Varint(ZigZag(first + i));
    return body;
  };
  std::string decode_entry, future_entry, phases, device, process, window;
  WireWriter de(&decode_entry);
  de.U(1, 1);  // decode
  de.U(2, 3);
  de.Tag(6, WireType::kBytes);
  const std::string values = packed(model::kCategoryCount + 2, 100);
  de.Varint(values.size());
  decode_entry.append(values);
  de.U(15, 1);  // unknown
  WireWriter fe(&future_entry);
  fe.U(1, 9);  // a phase this reader does not know
  fe.U(2, 5);
  WireWriter ph(&phases);
  for (const std::string* e : {&decode_entry, &future_entry}) {
    ph.Tag(1, WireType::kBytes);
    ph.Varint(e->size());
    phases.append(*e);
  }
  ph.U(2, 4);
  ph.Str(9, "future");
  WireWriter dw(&device);
  dw.U(1, 0);
  dw.Tag(32, WireType::kBytes);
  dw.Varint(phases.size());
  device.append(phases);
  WireWriter pw(&process);
  pw.U(1, 7);
  pw.Tag(5, WireType::kBytes);
  pw.Varint(device.size());
  process.append(device);
  WireWriter ww(&window);
  ww.Varint(kWindowFormatMajor);
  ww.Varint(kWindowFormatMinor + 1);
  ww.Tag(3, WireType::kBytes);
  ww.Varint(process.size());
  window.append(process);
  auto decoded = DecodeWindow(window);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  const model::PhaseSplit& split = decoded->processes.at(0).devices.at(0).phases;
  const model::PhaseStats& decode = split.phases[static_cast<size_t>(model::Phase::kDecode)];
  EXPECT_EQ(decode.steps, 3u);
  for (size_t c = 0; c < model::kCategoryCount; ++c)
    EXPECT_EQ(decode.category_ns[c], 100 + static_cast<int64_t>(c));
  EXPECT_EQ(split.phases[static_cast<size_t>(model::Phase::kPrefill)].steps, 0u);
  EXPECT_EQ(split.outside_ops, 4u);
}

TEST(WindowCodecTest, RangesFromANewerWriterAndWindowsWithout) {
  // 1.4 range table (process field 8) from a newer writer: unknown fields in a row and in the
  // table are skipped, the known ones kept.
  std::string row;
  WireWriter rw(&row);
  rw.Str(1, "decode");
  rw.U(9, 77);  // unknown
  rw.U(3, 12);  // gpu ops
  std::string table;
  WireWriter tw(&table);
  tw.Tag(1, WireType::kBytes);
  tw.Varint(row.size());
  table += row;
  tw.Str(7, "a newer table field");
  tw.U(4, 2);  // late
  std::string process;
  WireWriter pw(&process);
  pw.U(1, 42);
  pw.Tag(8, WireType::kBytes);
  pw.Varint(table.size());
  process += table;
  std::string bytes;
  WireWriter w(&bytes);
  w.Varint(kWindowFormatMajor);
  w.Varint(kWindowFormatMinor + 1);
  w.Tag(3, WireType::kBytes);
  w.Varint(process.size());
  bytes += process;
  auto decoded = DecodeWindow(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ASSERT_EQ(decoded->processes.size(), 1u);
  const model::RangeTable& t = decoded->processes[0].ranges;
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].name, "decode");
  EXPECT_EQ(t.rows[0].gpu_ops, 12u);
  EXPECT_EQ(t.rows[0].duration.count, 0u);
  EXPECT_EQ(t.late, 2u);

  // A window without ranges (a 1.3 writer, or --nvtx off) writes nothing for them and reads an
  // empty table; a range field of the wrong wire type is corruption.
  model::ProfileWindow plain = FullWindow(1, 2);
  for (model::ProcessProfile& p : plain.processes) p.ranges = {};
  const std::string plain_bytes = Encode(plain);
  model::ProfileWindow with = plain;
  with.processes[0].ranges.rows.emplace_back().name = "x";
  with.processes[0].ranges.rows[0].duration.Add(1);
  EXPECT_GT(Encode(with).size(), plain_bytes.size());
  auto read = DecodeWindow(plain_bytes);
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(read->processes[0].ranges.empty());
  std::string wrong;
  WireWriter ww(&wrong);
  ww.Varint(kWindowFormatMajor);
  ww.Varint(kWindowFormatMinor);
  std::string bad_process;
  WireWriter bp(&bad_process);
  bp.U(8, 1);  // the range table must be a message
  ww.Tag(3, WireType::kBytes);
  ww.Varint(bad_process.size());
  wrong += bad_process;
  EXPECT_EQ(DecodeWindow(wrong).status().code(), base::StatusCode::kDataLoss);
}

// The launch configurations of the top kernels (1.5, kernel fields 7 and 8).
TEST(WindowCodecTest, LaunchConfigsRoundTripAndOldWindowsHaveNone) {
  const model::ProfileWindow w = FullWindow(3, 2);
  const model::KernelStats& k = w.processes[0].devices[0].top_kernels[0];
  ASSERT_EQ(k.configs.size(), 4u);
  auto decoded = DecodeWindow(Encode(w));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  const model::KernelStats& r = decoded->processes[0].devices[0].top_kernels[0];
  EXPECT_EQ(r.configs, k.configs);
  EXPECT_EQ(r.distinct_configs, 9u);
  EXPECT_EQ(decoded->processes[0].devices[0].top_kernels[1].distinct_configs, 1u);
  EXPECT_TRUE(decoded->processes[0].devices[0].top_kernels[2].configs.empty());
  EXPECT_EQ(decoded->processes[0].devices[0].top_kernels[2].distinct_configs, 0u);

  // A configuration repeating the previous one's block and resources costs its grid, count and
  // time only; the distinct count is left out when every configuration is listed.
  model::ProfileWindow one = FullWindow(1, 2);
  for (model::ProcessProfile& p : one.processes)
    for (model::DeviceProfile& d : p.devices)
      for (model::KernelStats& x : d.top_kernels) x.configs.clear(), x.distinct_configs = 0;
  const size_t none = Encode(one).size();
  model::KernelStats& row = one.processes[0].devices[0].top_kernels[0];
  model::LaunchConfig c;
  c.grid = {1024, 1, 1};
  c.block = {128, 1, 1};
  c.count = 100;
  c.total_ns = 1'000'000;
  c.registers_per_thread = 64;
  c.static_shared_bytes = 0;
  c.dynamic_shared_bytes = 16384;
  c.shared_bytes = 16384;
  row.configs = {c};
  row.distinct_configs = 1;
  const size_t first = Encode(one).size() - none;
  c.grid = {2048, 1, 1};
  c.count = 50;
  row.configs.push_back(c);
  row.distinct_configs = 2;
  const size_t second = Encode(one).size() - none - first;
  EXPECT_LE(first, 30u);
  EXPECT_LE(second, 14u);
  auto again = DecodeWindow(Encode(one));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->processes[0].devices[0].top_kernels[0], row);

  // Configurations that hold every launch of the row (a window's usual case): the last one's
  // count and time are left out and come back as the row's minus the others'.
  row.duration = {};
  for (int64_t d : {10, 20, 30}) row.duration.Add(d);
  row.configs[0].count = 2;
  row.configs[0].total_ns = 40;
  row.configs[1].count = 1;
  row.configs[1].total_ns = 20;
  const size_t held = Encode(one).size();
  auto derived = DecodeWindow(Encode(one));
  ASSERT_TRUE(derived.ok()) << derived.status().message();
  EXPECT_EQ(derived->processes[0].devices[0].top_kernels[0], row);
  row.configs[1].total_ns = 21;  // no longer adds up: written whole
  EXPECT_GT(Encode(one).size(), held);
  auto whole = DecodeWindow(Encode(one));
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->processes[0].devices[0].top_kernels[0], row);
  // A count left out that would be 0 or less: corrupt (the others' reach the row's).
  {
    std::string duration;
    WireWriter dw(&duration);
    dw.U(1, 2);  // count
    std::string first_config;
    WireWriter fw(&first_config);
    fw.U(3, 2);  // count: all of the row's
    std::string kernel;
    WireWriter kw(&kernel);
    kw.Str(1, "k");
    kw.Tag(4, WireType::kBytes);
    kw.Varint(duration.size());
    kernel += duration;
    kw.Tag(7, WireType::kBytes);
    kw.Varint(first_config.size());
    kernel += first_config;
    kw.Tag(7, WireType::kBytes);
    kw.Varint(0);  // a second configuration without a count
    EXPECT_EQ(DecodeWindow(WindowOfKernel(kernel)).status().code(), base::StatusCode::kDataLoss);
  }

  // A 1.4 window (written before the configurations existed): the same bytes with the version
  // of then decode to rows without configurations.
  model::ProfileWindow old = FullWindow(3, 2);
  for (model::ProcessProfile& p : old.processes)
    for (model::DeviceProfile& d : p.devices)
      for (model::KernelStats& x : d.top_kernels) x.configs.clear(), x.distinct_configs = 0;
  std::string old_bytes;
  WireWriter ow(&old_bytes);
  ow.Varint(1);
  ow.Varint(4);
  const std::string body = Encode(old);
  WireReader header(body);
  header.Varint();
  header.Varint();
  old_bytes += body.substr(body.size() - header.remaining());
  auto read = DecodeWindow(old_bytes);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(FirstDifference(old, *read), "");
  EXPECT_TRUE(read->processes[0].devices[0].top_kernels[0].configs.empty());

  // A grid that is not three values, or one out of int32, is corruption.
  for (const std::vector<int64_t>& grid :
       std::vector<std::vector<int64_t>>{{1, 1}, {1, 1, 1, 1}, {int64_t{1} << 40, 1, 1}}) {
    std::string packed;
    WireWriter pk(&packed);
    for (int64_t v : grid) pk.Varint(static_cast<uint64_t>(v));
    std::string config;
    WireWriter cw(&config);
    cw.Tag(1, WireType::kBytes);
    cw.Varint(packed.size());
    config += packed;
    std::string kernel;
    WireWriter kw(&kernel);
    kw.Str(1, "k");
    kw.Tag(7, WireType::kBytes);
    kw.Varint(config.size());
    kernel += config;
    EXPECT_EQ(DecodeWindow(WindowOfKernel(kernel)).status().code(), base::StatusCode::kDataLoss)
        << grid.size();
  }
}

TEST(WindowCodecTest, EveryTruncationFailsCleanly) {
  const std::string bytes = Encode(FullWindow());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto decoded = DecodeWindow(std::string_view(bytes).substr(0, n));
    // A cut exactly between two top-level fields is a valid (shorter) window; anything else must
    // be reported as data loss.
    if (!decoded.ok()) {
      EXPECT_EQ(decoded.status().code(), base::StatusCode::kDataLoss) << n;
      EXPECT_FALSE(decoded.status().message().empty());
    }
  }
  EXPECT_FALSE(DecodeWindow("").ok());
  EXPECT_FALSE(DecodeWindow(std::string_view(bytes).substr(0, 1)).ok());
}

TEST(WindowCodecTest, BitFlipsNeverCrash) {
  const std::string bytes = Encode(FullWindow());
  std::mt19937 rng(7);
  int failures = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bad = bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] ^= static_cast<char>(1 << (rng() % 8));
    auto decoded = DecodeWindow(bad);
    if (!decoded.ok()) ++failures;
  }
  EXPECT_GT(failures, 0);
}

TEST(WindowCodecTest, HugeCountsAndLengthsAreRejectedWithoutAllocating) {
  // A string length far beyond the input.
  std::string a;
  WireWriter w(&a);
  w.Varint(kWindowFormatMajor);
  w.Varint(0);
  w.Tag(3, WireType::kBytes);
  w.Varint(uint64_t{1} << 40);
  EXPECT_EQ(DecodeWindow(a).status().code(), base::StatusCode::kDataLoss);

  // A timeline claiming a million bins in a few bytes.
  std::string timeline;
  WireWriter tw(&timeline);
  tw.U(3, 1'000'000);
  std::string device;
  WireWriter dw(&device);
  dw.Tag(14, WireType::kBytes);
  dw.Varint(timeline.size());
  device += timeline;
  std::string process;
  WireWriter pw(&process);
  pw.Tag(5, WireType::kBytes);
  pw.Varint(device.size());
  process += device;
  std::string b;
  WireWriter bw(&b);
  bw.Varint(kWindowFormatMajor);
  bw.Varint(0);
  bw.Tag(3, WireType::kBytes);
  bw.Varint(process.size());
  b += process;
  auto decoded = DecodeWindow(b);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("timeline"), std::string::npos)
      << decoded.status().message();

  // An overlong varint.
  std::string c(12, '\xff');
  EXPECT_EQ(DecodeWindow(c).status().code(), base::StatusCode::kDataLoss);
}

TEST(WindowCodecTest, WrongWireTypeForKnownFieldIsCorrupt) {
  std::string a;
  WireWriter w(&a);
  w.Varint(kWindowFormatMajor);
  w.Varint(0);
  w.Str(1, "start_ns should be a varint");
  EXPECT_EQ(DecodeWindow(a).status().code(), base::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace inferscope::wire

namespace inferscope::wire {
namespace {

// Graph time from capture split by known durations (1.6, CUDA graph field 11).
TEST(WindowCodecTest, GraphTimeSplitByDurationRoundTripsAndOldWindowsReadAsByCount) {
  model::ProfileWindow w = FullWindow(1, 1);
  model::CudaGraphStats& g = w.processes[0].devices[0].graphs;
  ASSERT_GT(g.composition_timed_ns, 0);
  ASSERT_LT(g.composition_timed_ns, g.composition_ns);
  const std::string with = Encode(w);
  auto decoded = DecodeWindow(with);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->processes[0].devices[0].graphs, g);
  // What a 1.5 writer sends: no field 11; the time from capture is all by count.
  const int64_t composition = g.composition_ns;
  g.composition_timed_ns = 0;
  const std::string without = Encode(w);
  EXPECT_LT(without.size(), with.size());
  auto old = DecodeWindow(without);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->processes[0].devices[0].graphs.composition_ns, composition);
  EXPECT_EQ(old->processes[0].devices[0].graphs.composition_timed_ns, 0);
}

}  // namespace
}  // namespace inferscope::wire
