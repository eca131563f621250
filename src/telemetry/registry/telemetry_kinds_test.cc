// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// "Adding a collector is one folder plus one registration": a kind only this file knows, once
// registered, is stored, merged by the range query and reported (JSON key and text section) with
// no other file knowing it. Also the registry's built-in order, which fixes the report's.
#include "src/telemetry/registry/telemetry_kinds.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "src/query/range_query.h"
#include "src/server/metrics_exporter.h"
#include "src/store/sqlite_store.h"
#include "src/telemetry/nvml/gpu_metrics_window.h"
#include "src/telemetry/otlp/span_window.h"
#include "src/telemetry/registry/telemetry.h"
#include "src/telemetry/scrape/engine_window.h"
#include "tests/temp_dir.h"

namespace inferscope::telemetry {
namespace {

using ::inferscope::testing::TempDir;

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kT0 = 1'700'000'000 * kSec;

// The test collector's window: widgets counted, and the largest batch seen.
struct WidgetWindow {
  int64_t widgets = 0;
  int64_t largest_batch = 0;

  void Merge(const WidgetWindow& o) {
    widgets += o.widgets;
    largest_batch = std::max(largest_batch, o.largest_batch);
  }
  void WriteJson(base::JsonWriter& w) const {
    w.BeginObject();
    w.Key("widgets").Int(widgets);
    w.Key("largest_batch").Int(largest_batch);
    w.EndObject();
  }
  static base::StatusOr<WidgetWindow> FromJson(std::string_view json) {
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    WidgetWindow w;
    if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS ||
        doc["widgets"].get(w.widgets) != simdjson::SUCCESS ||
        doc["largest_batch"].get(w.largest_batch) != simdjson::SUCCESS)
      return base::InvalidArgumentError("not a widget window");
    return w;
  }
};

void RenderWidgets(const WidgetWindow& w, std::string* out) {
  *out += "widgets: " + std::to_string(w.widgets) + "\n";
  *out += "largest batch: " + std::to_string(w.largest_batch) + "\n";
}

// Its /metrics series: the latest window's count.
void WidgetMetrics(const WidgetWindow& w, telemetry::MetricsSink& sink) {
  sink.Family("inferscope_widgets", "gauge", "Widgets counted in the latest window.");
  sink.Sample({}, static_cast<double>(w.widgets));
}

const telemetry::WindowKind<WidgetWindow>& WidgetKind();

// Its collector: one widget per poll, every 10 ms.
class WidgetCollector : public telemetry::Collector {
 public:
  int64_t poll_interval_ns() const override { return 10'000'000; }
  void Poll(int64_t) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++window_.widgets;
    window_.largest_batch = 1;
  }
  std::unique_ptr<telemetry::TelemetryData> TakeWindow(int64_t, int64_t) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (window_.widgets == 0) return nullptr;
    return WidgetKind().Wrap(std::exchange(window_, WidgetWindow()));
  }

 private:
  std::mutex mu_;
  WidgetWindow window_;
};

// Its one registration.
const telemetry::WindowKind<WidgetWindow>& WidgetKind() {
  static const auto* kind = new telemetry::WindowKind<WidgetWindow>(
      "widgets", "widgets", "Widgets (test collector)", &RenderWidgets,
      []() -> std::unique_ptr<telemetry::Collector> { return std::make_unique<WidgetCollector>(); },
      &WidgetMetrics);
  return *kind;
}

// Registers the widget kind for one test and takes it out again.
class WidgetKindTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(TelemetryKinds().Add(&WidgetKind()).ok()); }
  void TearDown() override { TelemetryKinds().Remove(&WidgetKind()); }
};

store::TelemetryRecord RecordOf(const telemetry::TelemetryData& data, int64_t start_ns) {
  return {data.kind().record_kind(), start_ns, start_ns + 10 * kSec, start_ns, data.ToJson()};
}

TEST(TelemetryKindsTest, BuiltinKindsInReportOrder) {
  const auto& kinds = TelemetryKinds().kinds();
  ASSERT_GE(kinds.size(), 3u);
  EXPECT_EQ(kinds[0], &GpuMetricsKind());
  EXPECT_EQ(kinds[1], &telemetry::scrape::EngineMetricsKind());
  EXPECT_EQ(kinds[2], &telemetry::otlp::SpanKind());
  // The names stores and reports already hold: they must never change.
  EXPECT_EQ(kinds[0]->record_kind(), "gpu");
  EXPECT_EQ(kinds[0]->report_key(), "gpu_metrics");
  EXPECT_EQ(kinds[1]->record_kind(), "engine");
  EXPECT_EQ(kinds[1]->report_key(), "engine");
  EXPECT_EQ(kinds[2]->record_kind(), "spans");
  EXPECT_EQ(kinds[2]->report_key(), "requests");
  EXPECT_EQ(TelemetryKinds().FindByRecordKind("spans"), &telemetry::otlp::SpanKind());
  EXPECT_EQ(TelemetryKinds().FindByRecordKind("nope"), nullptr);
}

TEST_F(WidgetKindTest, RefusesATakenName) {
  static const telemetry::WindowKind<WidgetWindow> clash("gpu", "other", "Clash", &RenderWidgets);
  EXPECT_FALSE(TelemetryKinds().Add(&clash).ok());
  EXPECT_TRUE(TelemetryKinds().Add(&WidgetKind()).ok());  // adding twice is harmless
  EXPECT_EQ(TelemetryKinds().kinds().size(), 4u);
}

TEST_F(WidgetKindTest, FlowsFromStoreThroughRangeQueryToReport) {
  TempDir dir;
  auto store = store::SqliteStore::Open(dir.path(), store::SqliteStore::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.status().message();
  // Two windows of widgets (as a collector thread would store them), one corrupt record, and a
  // window outside the range.
  ASSERT_TRUE(
      (*store)
          ->AppendTelemetry(RecordOf(*WidgetKind().Wrap({.widgets = 3, .largest_batch = 2}), kT0))
          .ok());
  ASSERT_TRUE((*store)
                  ->AppendTelemetry(RecordOf(*WidgetKind().Wrap({.widgets = 4, .largest_batch = 1}),
                                             kT0 + 10 * kSec))
                  .ok());
  ASSERT_TRUE(
      (*store)->AppendTelemetry({"widgets", kT0 + 20 * kSec, kT0 + 30 * kSec, kT0, "{"}).ok());
  ASSERT_TRUE((*store)
                  ->AppendTelemetry(RecordOf(
                      *WidgetKind().Wrap({.widgets = 100, .largest_batch = 50}), kT0 + 100 * kSec))
                  .ok());

  query::RangeQuery query;
  query.from_ns = kT0;
  query.to_ns = kT0 + 60 * kSec;
  query.now_ns = kT0 + 60 * kSec;
  auto profile = query::QueryRangeProfile(**store, query, "store:" + dir.path());
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  const WidgetWindow* merged = profile->telemetry.Get<WidgetWindow>();
  ASSERT_NE(merged, nullptr);
  EXPECT_EQ(merged->widgets, 7);
  EXPECT_EQ(merged->largest_batch, 2);
  EXPECT_EQ(profile->telemetry_windows, 2u);
  EXPECT_EQ(profile->corrupt_telemetry, 1u);
  EXPECT_EQ(profile->telemetry.Get<GpuMetricsWindow>(), nullptr);

  // JSON: its key after the built-in kinds (null: nothing collected), before cost.
  const std::string json = query::RenderRangeReport(*profile, report::ReportFormat::kJson);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  int64_t widgets = 0;
  ASSERT_EQ(doc["widgets"]["widgets"].get(widgets), simdjson::SUCCESS) << json;
  EXPECT_EQ(widgets, 7);
  for (const char* key : {"gpu_metrics", "engine", "requests", "cost"}) {
    simdjson::dom::element v;
    ASSERT_EQ(doc[key].get(v), simdjson::SUCCESS) << key;
    EXPECT_TRUE(v.is_null()) << key;
  }
  std::vector<std::string_view> keys;
  simdjson::dom::object top;
  ASSERT_EQ(doc.get(top), simdjson::SUCCESS);
  for (auto field : top) keys.push_back(field.key);
  auto at = [&keys](std::string_view key) { return std::find(keys.begin(), keys.end(), key); };
  EXPECT_EQ(at("widgets") - at("requests"), 1);
  EXPECT_EQ(at("cost") - at("widgets"), 1);

  // Text and markdown: its section, with its renderer's lines.
  for (auto format : {report::ReportFormat::kText, report::ReportFormat::kMarkdown}) {
    const std::string text = query::RenderRangeReport(*profile, format);
    EXPECT_NE(text.find("Widgets (test collector)"), std::string::npos) << text;
    EXPECT_NE(text.find("widgets: 7"), std::string::npos) << text;
    EXPECT_NE(text.find("largest batch: 2"), std::string::npos) << text;
  }
}

// The whole path: the agent's telemetry runs the kind's collector and stores its windows; the
// range query and the report find them.
TEST_F(WidgetKindTest, ItsCollectorRunsWithTheAgentsTelemetry) {
  TelemetryOptions options;
  options.window_ns = 100'000'000;
  options.nvml = options.scrape = options.otlp = false;
  std::mutex mu;
  std::vector<store::TelemetryRecord> records;
  int64_t widgets_emitted = 0;
  Telemetry telemetry(options, [&](TelemetryWindow&& w) {
    std::lock_guard<std::mutex> lock(mu);
    for (store::TelemetryRecord& r : w.records) records.push_back(std::move(r));
    if (const WidgetWindow* x = w.others.Get<WidgetWindow>()) widgets_emitted += x->widgets;
  });
  telemetry.Start();
  for (int i = 0; i < 250; ++i) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (records.size() >= 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  telemetry.Stop();
  ASSERT_GE(records.size(), 2u);
  EXPECT_GT(widgets_emitted, 0);

  TempDir dir;
  auto store = store::SqliteStore::Open(dir.path(), store::SqliteStore::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.status().message();
  query::RangeQuery query;
  query.from_ns = records.front().start_ns;
  query.to_ns = records.back().end_ns;
  query.now_ns = query.to_ns;
  for (const store::TelemetryRecord& r : records) {
    EXPECT_EQ(r.kind, "widgets");
    ASSERT_TRUE((*store)->AppendTelemetry(r).ok());
  }
  auto profile = query::QueryRangeProfile(**store, query, "store:" + dir.path());
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  const WidgetWindow* merged = profile->telemetry.Get<WidgetWindow>();
  ASSERT_NE(merged, nullptr);
  EXPECT_EQ(merged->widgets, widgets_emitted);
  EXPECT_EQ(profile->telemetry_windows, records.size());
  const std::string json = query::RenderRangeReport(*profile, report::ReportFormat::kJson);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  int64_t reported = 0;
  ASSERT_EQ(doc["widgets"]["widgets"].get(reported), simdjson::SUCCESS) << json;
  EXPECT_EQ(reported, widgets_emitted);
}

TEST_F(WidgetKindTest, ItsSeriesAreOnMetrics) {
  server::MetricsExporter metrics;
  telemetry::TelemetrySet latest;
  latest.Merge(WidgetKind().Wrap({.widgets = 5, .largest_batch = 2}));
  metrics.OnTelemetry(nullptr, nullptr, nullptr, &latest);
  const std::string out = metrics.Render({});
  EXPECT_NE(out.find("# HELP inferscope_widgets Widgets counted in the latest window.\n"
                     "# TYPE inferscope_widgets gauge\n"
                     "inferscope_widgets 5\n"),
            std::string::npos)
      << out;
  // A window without widgets: the gauge goes.
  metrics.OnTelemetry(nullptr, nullptr, nullptr, nullptr);
  EXPECT_EQ(metrics.Render({}).find("inferscope_widgets"), std::string::npos);
}

TEST(TelemetrySetTest, MergesPerKindAndCopiesDeep) {
  telemetry::TelemetrySet set;
  GpuMetricsWindow a;
  a.start_unix_ns = 10;
  a.end_unix_ns = 20;
  GpuMetricsWindow b = a;
  b.start_unix_ns = 20;
  b.end_unix_ns = 30;
  set.Merge(GpuMetricsKind().Wrap(a));
  set.Merge(GpuMetricsKind().Wrap(b));
  ASSERT_NE(set.Get<GpuMetricsWindow>(), nullptr);
  EXPECT_EQ(set.Get<GpuMetricsWindow>()->start_unix_ns, 10);
  EXPECT_EQ(set.Get<GpuMetricsWindow>()->end_unix_ns, 30);
  EXPECT_EQ(set.Get<telemetry::otlp::SpanWindow>(), nullptr);

  telemetry::TelemetrySet copy = set;
  copy.GetMutable<GpuMetricsWindow>()->end_unix_ns = 99;
  EXPECT_EQ(set.Get<GpuMetricsWindow>()->end_unix_ns, 30);
  copy.Erase(GpuMetricsKind());
  EXPECT_TRUE(copy.empty());
  EXPECT_FALSE(set.empty());
}

}  // namespace
}  // namespace inferscope::telemetry
