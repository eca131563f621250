// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/fleet/sink/row_encoder.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <vector>

#include "src/base/json_writer.h"
#include "src/fleet/sink/schema.h"
#include "src/model/taxonomy.h"
#include "src/telemetry/scrape/engine_window.h"

namespace inferscope::fleet {
namespace {

// The rows of a JSONEachRow body, one per line (every row ends with '\n').
std::vector<std::string> BodyLines(const std::string& body) {
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < body.size();) {
    size_t nl = body.find('\n', pos);
    if (nl == std::string::npos) nl = body.size();  // a last row without its newline
    lines.push_back(body.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

model::ProfileWindow TwoDeviceWindow() {
  model::ProfileWindow w;
  w.start_ns = 1'764'201'600'000'000'000;  // 2025-11-27T00:00:00Z
  w.end_ns = w.start_ns + 10'000'000'000;
  model::ProcessProfile p;
  p.pid = 42;
  p.rank = 1;
  p.world_size = 2;
  p.hostname = "node\"7";
  for (uint32_t dev : {0u, 1u}) {
    model::DeviceProfile d;
    d.device = dev;
    d.device_name = "NVIDIA H100";
    d.first_start_ns = w.start_ns;
    d.last_end_ns = w.start_ns + 8'000'000'000;
    d.busy_ns = 6'000'000'000;
    d.compute_ns = 5'000'000'000;
    d.communication_ns = 1'000'000'000;
    d.communication_overlap_ns = 400'000'000;
    d.kernel_count = 100;
    d.categories[0] = {60, 3'000'000'000};
    d.categories[2] = {40, 3'000'000'000};
    model::KernelStats k;
    k.name = "gemm";
    k.duration.Add(10);
    d.top_kernels.push_back(k);
    d.tail.duration.Add(5);
    d.tail.distinct_names = 3;
    d.idle_causes.ns[1] = 1'500'000'000;
    d.idle_causes.ns[3] = 500'000'000;
    d.syncs[static_cast<size_t>(model::SyncType::kDevice)].wait.Add(700);
    d.syncs[static_cast<size_t>(model::SyncType::kStreamWaitEvent)].wait.Add(900);
    p.devices.push_back(d);
  }
  w.processes.push_back(p);
  return w;
}

TEST(RowEncoder, RowsPerTableAndValues) {
  FleetIdentity id;
  id.labels = {{"engine", "vllm"}, {"replica", "r1"}};
  wire::Hello hello;
  hello.pid = 42;
  hello.hostname = "ignored";
  hello.process_start_unix_ns = 123;
  RowBatch b;
  EncodeWindow(id, hello, TwoDeviceWindow(), &b);
  EXPECT_EQ(b.rows[RowBatch::kWindows], 2u);
  EXPECT_EQ(b.rows[RowBatch::kCategories], 4u);
  EXPECT_EQ(b.rows[RowBatch::kKernels], 4u);  // gemm + tail per device
  EXPECT_EQ(b.rows[RowBatch::kSyncs], 4u);
  // Each line is one JSON object with the key columns and the figures.
  simdjson::dom::parser parser;
  const std::string& windows = b.body[RowBatch::kWindows];
  const std::string first = windows.substr(0, windows.find('\n'));
  simdjson::dom::element row;
  ASSERT_EQ(parser.parse(first).get(row), simdjson::SUCCESS) << first;
  EXPECT_EQ(std::string_view(row["date"].get_string().value()), "2025-11-27");
  EXPECT_EQ(std::string_view(row["host"].get_string().value()), "node\"7");
  EXPECT_EQ(std::string_view(row["engine"].get_string().value()), "vllm");
  EXPECT_EQ(std::string_view(row["gpu_model"].get_string().value()), "NVIDIA H100");
  EXPECT_EQ(row["process_start_ns"].get_int64().value(), 123);
  EXPECT_EQ(row["span_ns"].get_int64().value(), 8'000'000'000);
  EXPECT_EQ(row["idle_ns"].get_int64().value(), 2'000'000'000);
  EXPECT_EQ(row["exposed_communication_ns"].get_int64().value(), 600'000'000);
  EXPECT_EQ(row["sync_wait_ns"].get_int64().value(), 700);  // stream_wait_event left out
  EXPECT_EQ(row["idle_sync_ns"].get_int64().value(), 1'500'000'000);
  EXPECT_EQ(row["label_keys"].at(1).get_string().value(), "replica");
  // Deterministic: the same window encodes to the same bytes (a retry has the same keys).
  RowBatch again;
  EncodeWindow(id, hello, TwoDeviceWindow(), &again);
  EXPECT_EQ(again.body, b.body);
}

// Schema 5: a top kernel row carries its launch configurations as parallel arrays (each
// configuration's ten-field key, launches, time) and distinct_configs; the tail row and a kernel
// without configurations leave the columns out (their defaults: empty arrays, 0).
TEST(RowEncoder, LaunchConfigArrays) {
  model::ProfileWindow w = TwoDeviceWindow();
  model::KernelStats& gemm = w.processes[0].devices[1].top_kernels[0];
  model::LaunchConfig a;
  a.grid = {132, 2, 1};
  a.block = {256, 1, 1};
  a.registers_per_thread = 168;
  a.static_shared_bytes = 0;
  a.dynamic_shared_bytes = 98304;
  a.shared_bytes = 98304;
  a.count = 900;
  a.total_ns = 4'500'000;
  model::LaunchConfig b;  // Kineto-like: the shared-memory sum only
  b.grid = {64, 1, 1};
  b.block = {128, 1, 1};
  b.shared_bytes = 16384;
  b.count = 100;
  b.total_ns = 200'000;
  gemm.configs = {a, b};
  gemm.distinct_configs = 3;
  RowBatch batch;
  EncodeWindow(FleetIdentity{}, wire::Hello{}, w, &batch);
  const std::vector<std::string> rows = BodyLines(batch.body[RowBatch::kKernels]);
  ASSERT_EQ(rows.size(), 4u);  // device 0: gemm, tail; device 1: gemm, tail
  EXPECT_EQ(rows[0].find("config_"), std::string::npos) << rows[0];  // no configurations
  EXPECT_EQ(rows[1].find("config_"), std::string::npos) << rows[1];  // the tail
  EXPECT_EQ(rows[3].find("config_"), std::string::npos) << rows[3];
  EXPECT_NE(rows[2].find("\"config_key\":[[132,2,1,256,1,1,168,0,98304,98304],"
                         "[64,1,1,128,1,1,-1,-1,-1,16384]],\"config_count\":[900,100],"
                         "\"config_ns\":[4500000,200000],\"distinct_configs\":3}"),
            std::string::npos)
      << rows[2];
  simdjson::dom::parser parser;
  simdjson::dom::element row;
  ASSERT_EQ(parser.parse(rows[2]).get(row), simdjson::SUCCESS) << rows[2];
  EXPECT_EQ(row["config_key"].at(1).at(9).get_int64().value(), 16384);
  EXPECT_EQ(row["config_count"].at(0).get_uint64().value(), 900u);
}

// The forward-phase split: a row per phase with steps (in kPhaseNames order), one `outside` row
// for the steps not whole, the category times as parallel arrays of the categories with time.
TEST(RowEncoder, PhaseRows) {
  model::ProfileWindow w = TwoDeviceWindow();
  {
    RowBatch none;  // no steps: no phase rows
    EncodeWindow(FleetIdentity{}, wire::Hello{}, w, &none);
    EXPECT_EQ(none.rows[RowBatch::kPhases], 0u);
    EXPECT_TRUE(none.body[RowBatch::kPhases].empty());
  }
  model::PhaseSplit& split = w.processes[0].devices[1].phases;
  model::PhaseStats& decode = split.phases[static_cast<size_t>(model::Phase::kDecode)];
  decode.steps = 12;
  decode.step_ns = 240'000'000;
  decode.busy_ns = 200'000'000;
  decode.ops = 3000;
  decode.category_ns[static_cast<size_t>(model::Category::kAttention)] = 50'000'000;
  decode.category_ns[static_cast<size_t>(model::Category::kCommunication)] = 7'000'000;
  model::PhaseStats& mixed = split.phases[static_cast<size_t>(model::Phase::kMixed)];
  mixed.steps = 1;
  mixed.step_ns = 30'000'000;
  split.outside_ops = 9;
  split.outside_ns[static_cast<size_t>(model::Category::kMatmul)] = 4'000'000;
  RowBatch b;
  EncodeWindow(FleetIdentity{}, wire::Hello{}, w, &b);
  ASSERT_EQ(b.rows[RowBatch::kPhases], 3u);  // device 1 only: decode, mixed, outside
  simdjson::dom::parser parser;
  const std::vector<std::string> lines = BodyLines(b.body[RowBatch::kPhases]);
  ASSERT_EQ(lines.size(), 3u);
  simdjson::dom::element row;
  ASSERT_EQ(parser.parse(lines[0]).get(row), simdjson::SUCCESS) << lines[0];
  EXPECT_EQ(row["device"].get_uint64().value(), 1u);
  EXPECT_EQ(std::string_view(row["phase"].get_string().value()), "decode");
  EXPECT_EQ(row["steps"].get_uint64().value(), 12u);
  EXPECT_EQ(row["step_ns"].get_int64().value(), 240'000'000);
  EXPECT_EQ(row["busy_ns"].get_int64().value(), 200'000'000);
  EXPECT_EQ(row["ops"].get_uint64().value(), 3000u);
  ASSERT_EQ(row["categories"].get_array().size(), 2u);
  EXPECT_EQ(std::string_view(row["categories"].at(0).get_string().value()),
            model::kCategoryNames[static_cast<size_t>(model::Category::kAttention)]);
  EXPECT_EQ(std::string_view(row["categories"].at(1).get_string().value()),
            model::kCategoryNames[static_cast<size_t>(model::Category::kCommunication)]);
  EXPECT_EQ(row["category_ns"].at(0).get_int64().value(), 50'000'000);
  EXPECT_EQ(row["category_ns"].at(1).get_int64().value(), 7'000'000);
  ASSERT_EQ(parser.parse(lines[1]).get(row), simdjson::SUCCESS) << lines[1];
  EXPECT_EQ(std::string_view(row["phase"].get_string().value()), "mixed");
  EXPECT_EQ(row["categories"].get_array().size(), 0u);  // steps without GPU time
  ASSERT_EQ(parser.parse(lines[2]).get(row), simdjson::SUCCESS) << lines[2];
  EXPECT_EQ(std::string_view(row["phase"].get_string().value()), kOutsidePhase);
  EXPECT_EQ(row["steps"].get_uint64().value(), 0u);
  EXPECT_EQ(row["ops"].get_uint64().value(), 9u);
  EXPECT_EQ(row["category_ns"].at(0).get_int64().value(), 4'000'000);
  // Split into inserts like the other tables: its own table, every row with the batch id.
  uint64_t next = 0;
  const std::vector<Insert> inserts = SplitIntoInserts(b, [&] { return ++next; });
  ASSERT_FALSE(inserts.empty());
  EXPECT_EQ(inserts.back().table, RowBatch::kPhases);
  EXPECT_EQ(inserts.back().rows, 3u);
  EXPECT_STREQ(RowBatch::TableName(RowBatch::kPhases), kPhasesTable);
}

// The NVTX range table (`run --nvtx`): per process, so written once whatever its GPUs (device 0,
// the first GPU's name), a row per kept name and a tail row that carries tail_names and late.
TEST(RowEncoder, RangeRows) {
  model::ProfileWindow w = TwoDeviceWindow();
  {
    RowBatch none;
    EncodeWindow(FleetIdentity{}, wire::Hello{}, w, &none);
    EXPECT_EQ(none.rows[RowBatch::kRanges], 0u);
  }
  model::RangeTable& t = w.processes[0].ranges;
  for (const char* name : {"forward", "attn\tlayer"}) {
    model::RangeStats r;
    r.name = name;
    r.duration.Add(4'000'000);
    r.duration.Add(6'000'000);
    r.gpu_ops = 12;
    r.gpu_time_ns = 3'000'000;
    t.rows.push_back(r);
  }
  t.tail.duration.Add(500);
  t.tail_names = 7;
  t.late = 2;
  RowBatch b;
  EncodeWindow(FleetIdentity{}, wire::Hello{}, w, &b);
  ASSERT_EQ(b.rows[RowBatch::kRanges], 3u);
  simdjson::dom::parser parser;
  const std::vector<std::string> lines = BodyLines(b.body[RowBatch::kRanges]);
  ASSERT_EQ(lines.size(), 3u);
  simdjson::dom::element row;
  ASSERT_EQ(parser.parse(lines[1]).get(row), simdjson::SUCCESS) << lines[1];
  EXPECT_EQ(row["device"].get_uint64().value(), 0u);
  EXPECT_EQ(std::string_view(row["gpu_model"].get_string().value()), "NVIDIA H100");
  EXPECT_EQ(std::string_view(row["name"].get_string().value()), "attn\tlayer");
  EXPECT_EQ(row["is_tail"].get_uint64().value(), 0u);
  EXPECT_EQ(row["instances"].get_uint64().value(), 2u);
  EXPECT_EQ(row["total_ns"].get_int64().value(), 10'000'000);
  EXPECT_EQ(row["min_ns"].get_int64().value(), 4'000'000);
  EXPECT_EQ(row["max_ns"].get_int64().value(), 6'000'000);
  EXPECT_EQ(row["gpu_ops"].get_uint64().value(), 12u);
  EXPECT_EQ(row["gpu_time_ns"].get_int64().value(), 3'000'000);
  EXPECT_EQ(row["tail_names"].get_uint64().value(), 0u);
  ASSERT_EQ(parser.parse(lines[2]).get(row), simdjson::SUCCESS) << lines[2];
  EXPECT_EQ(std::string_view(row["name"].get_string().value()), "");
  EXPECT_EQ(row["is_tail"].get_uint64().value(), 1u);
  EXPECT_EQ(row["instances"].get_uint64().value(), 1u);
  EXPECT_EQ(row["tail_names"].get_uint64().value(), 7u);
  EXPECT_EQ(row["late"].get_uint64().value(), 2u);
  EXPECT_STREQ(RowBatch::TableName(RowBatch::kRanges), kRangesTable);
  // A table with no tail still writes its tail row (zeros, min 0): it holds late and tail_names.
  t.tail = {};
  t.tail_names = 0;
  RowBatch again;
  EncodeWindow(FleetIdentity{}, wire::Hello{}, w, &again);
  EXPECT_EQ(again.rows[RowBatch::kRanges], 3u);
  EXPECT_NE(again.body[RowBatch::kRanges].find("\"is_tail\":1,\"instances\":0,\"total_ns\":0,"
                                               "\"min_ns\":0,"),
            std::string::npos)
      << again.body[RowBatch::kRanges];
}

TEST(RowEncoder, HostLabelWins) {
  FleetIdentity id;
  id.labels = {{"host", "replica-a"}};
  RowBatch b;
  EncodeWindow(id, wire::Hello{}, TwoDeviceWindow(), &b);
  EXPECT_NE(b.body[RowBatch::kWindows].find("\"host\":\"replica-a\""), std::string::npos);
  store::TelemetryRecord rec{"gpu", 1'764'201'600'000'000'000, 1'764'201'610'000'000'000, 0,
                             "{\n}"};
  EncodeTelemetry(id, "machine", rec, &b);
  EXPECT_EQ(b.rows[RowBatch::kTelemetry], 1u);
  EXPECT_NE(b.body[RowBatch::kTelemetry].find("\"json\":\"{\\n}\""), std::string::npos);
}

// Without `engine`/`model` labels, both dimensions come from the agent's engine scrape (its
// telemetry record, as the agent hands it to the sink); a label still wins.
TEST(RowEncoder, EngineAndModelFromTheScrape) {
  telemetry::scrape::EngineMetricsWindow scraped;
  scraped.start_unix_ns = 1'764'201'600'000'000'000;
  scraped.end_unix_ns = scraped.start_unix_ns + 10'000'000'000;
  scraped.engine = "sglang";
  scraped.model_names = {"Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B"};
  base::JsonWriter w;
  scraped.WriteJson(w);
  FleetIdentity id;
  id.LearnFromEngineRecord(w.str());
  EXPECT_EQ(id.Engine(), "sglang");
  EXPECT_EQ(id.Model(), "Qwen/Qwen3-8B,meta-llama/Llama-3.1-8B");
  RowBatch b;
  EncodeWindow(id, wire::Hello{}, TwoDeviceWindow(), &b);
  store::TelemetryRecord rec{"engine", scraped.start_unix_ns, scraped.end_unix_ns, 0, w.str()};
  EncodeTelemetry(id, "machine", rec, &b);
  for (const int table : {RowBatch::kWindows, RowBatch::kTelemetry}) {
    EXPECT_NE(b.body[table].find("\"engine\":\"sglang\""), std::string::npos) << table;
    EXPECT_NE(b.body[table].find("\"model\":\"Qwen/Qwen3-8B,meta-llama/Llama-3.1-8B\""),
              std::string::npos)
        << table;
  }
  // A label wins; a record that does not parse and an unidentified engine keep or clear as said.
  id.labels = {{"model", "served-as"}};
  EXPECT_EQ(id.Model(), "served-as");
  id.LearnFromEngineRecord("not json");
  EXPECT_EQ(id.Engine(), "sglang");
  scraped.engine = "unknown";
  scraped.model_names.clear();
  base::JsonWriter unknown;
  scraped.WriteJson(unknown);
  id.LearnFromEngineRecord(unknown.str());
  EXPECT_EQ(id.Engine(), "");
}

TEST(RowEncoder, UtcDate) {
  EXPECT_EQ(UtcDate(0), "1970-01-01");
  EXPECT_EQ(UtcDate(951'782'400'000'000'000), "2000-02-29");
  EXPECT_EQ(UtcDate(1'764'201'599'999'999'999), "2025-11-26");
  EXPECT_EQ(UtcDate(-5), "1970-01-01");
}

TEST(RowEncoder, SplitIntoInsertsByTableAndDay) {
  FleetIdentity id;
  RowBatch b;
  model::ProfileWindow late = TwoDeviceWindow();
  late.start_ns -= 10'000'000'000;  // 2025-11-26T23:59:50Z: the day before
  EncodeWindow(id, wire::Hello{}, late, &b);
  EncodeWindow(id, wire::Hello{}, TwoDeviceWindow(), &b);
  store::TelemetryRecord rec{"gpu", late.start_ns, late.end_ns, 0, "{}"};
  EncodeTelemetry(id, "machine", rec, &b);
  uint64_t next = 0;
  const std::vector<Insert> inserts = SplitIntoInserts(b, [&] { return ++next; });
  // Four window tables x two days, then one telemetry insert; table order kept.
  ASSERT_EQ(inserts.size(), 9u);
  simdjson::dom::parser parser;
  uint64_t rows = 0;
  for (size_t i = 0; i < inserts.size(); ++i) {
    const Insert& in = inserts[i];
    EXPECT_EQ(in.batch_id, i + 1);
    EXPECT_EQ(in.table, std::min<int>(static_cast<int>(i) / 2, RowBatch::kTelemetry));
    EXPECT_EQ(in.date, i % 2 == 0 ? "2025-11-26" : "2025-11-27") << i;
    rows += in.rows;
    const std::vector<std::string> lines = BodyLines(in.body);
    for (const std::string& line : lines) {
      simdjson::dom::element row;
      ASSERT_EQ(parser.parse(line).get(row), simdjson::SUCCESS) << line;
      EXPECT_EQ(row["batch_id"].get_uint64().value(), in.batch_id);
      EXPECT_EQ(std::string_view(row["date"].get_string().value()), in.date);
    }
    EXPECT_EQ(lines.size(), in.rows);
  }
  EXPECT_EQ(rows, b.total_rows());
}

TEST(RowEncoder, SplitIntoInsertsBoundsRowsPerInsert) {
  FleetIdentity id;
  RowBatch b;
  for (uint64_t i = 0; i < kMaxRowsPerInsert + 5; ++i)
    EncodeTelemetry(id, "m", {"gpu", 1'764'201'600'000'000'000, 1, 0, "{}"}, &b);
  uint64_t next = 0;
  const std::vector<Insert> inserts = SplitIntoInserts(b, [&] { return ++next; });
  ASSERT_EQ(inserts.size(), 2u);
  EXPECT_EQ(inserts[0].rows, kMaxRowsPerInsert);
  EXPECT_EQ(inserts[1].rows, 5u);
  EXPECT_NE(inserts[0].batch_id, inserts[1].batch_id);
}

}  // namespace
}  // namespace inferscope::fleet
