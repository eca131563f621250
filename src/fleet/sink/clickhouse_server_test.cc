// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The sink and the fleet reads against a real clickhouse-server (Debian's 18.16) on loopback:
// schema creation, exactly-once delivery across retries, a server restart and a sink that died
// with spooled rows, and the fleet view's sums. Skips without the server binary unless
// INFERSCOPE_REQUIRE_CLICKHOUSE=1.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <thread>

#include "src/analyze/analysis.h"
#include "src/fleet/query/fleet_profile.h"
#include "src/fleet/query/fleet_query.h"
#include "src/fleet/sink/clickhouse_sink.h"
#include "src/fleet/sink/row_encoder.h"
#include "src/fleet/sink/schema.h"
#include "src/fleet/sink/test_clickhouse_fixture.h"
#include "src/fleet/sink/test_lossy_proxy.h"
#include "src/model/profile_merge.h"
#include "src/report/views.h"
#include "src/store/sqlite_store.h"

namespace inferscope::fleet {
namespace {

constexpr int64_t kBase = 1'764'201'600'000'000'000;  // 2025-11-27T00:00:00Z
constexpr int64_t kWindowNs = 10'000'000'000;

// One process with `devices` GPUs; idle grows with `idle_permille`.
model::ProfileWindow MakeWindow(int64_t index, uint32_t pid, int devices, int idle_permille) {
  model::ProfileWindow w;
  w.start_ns = kBase + index * kWindowNs;
  w.end_ns = w.start_ns + kWindowNs;
  model::ProcessProfile p;
  p.pid = pid;
  p.rank = 0;
  for (int dev = 0; dev < devices; ++dev) {
    model::DeviceProfile d;
    d.device = static_cast<uint32_t>(dev);
    d.device_name = "NVIDIA H100";
    d.first_start_ns = w.start_ns;
    d.last_end_ns = w.start_ns + 10'000'000'000;
    d.busy_ns = int64_t{10'000'000} * (1000 - idle_permille);
    d.compute_ns = d.busy_ns;
    d.kernel_count = 10;
    d.categories[0] = {10, d.busy_ns};
    model::KernelStats k;
    k.name = "gemm_" + std::to_string(index % 3);
    k.duration.Add(d.busy_ns);
    d.top_kernels.push_back(k);
    d.idle_causes.ns[3] = d.idle_ns();
    d.syncs[1].wait.Add(1000 + index);
    d.steps.plain.Add(20'000'000);
    p.devices.push_back(d);
  }
  w.processes.push_back(p);
  return w;
}

// `w` with a forward-phase split on every device: decode steps, prefill steps in even windows,
// and the time of steps not whole; figures grow with `index` so sums cannot hide a lost row.
model::ProfileWindow WithPhases(model::ProfileWindow w, int64_t index) {
  for (model::DeviceProfile& d : w.processes.at(0).devices) {
    model::PhaseStats& decode = d.phases.phases[static_cast<size_t>(model::Phase::kDecode)];
    decode.steps = 5 + static_cast<uint64_t>(index);
    decode.step_ns = 30'000'000 * (index + 1);
    decode.busy_ns = 20'000'000 * (index + 1) + d.device;
    decode.ops = 400;
    decode.category_ns[static_cast<size_t>(model::Category::kAttention)] = 7'000'000 + index;
    decode.category_ns[static_cast<size_t>(model::Category::kMatmul)] = 11'000'000;
    if (index % 2 == 0) {
      model::PhaseStats& prefill = d.phases.phases[static_cast<size_t>(model::Phase::kPrefill)];
      prefill.steps = 1;
      prefill.step_ns = 80'000'000;
      prefill.busy_ns = 75'000'000;
      prefill.ops = 90;
      prefill.category_ns[static_cast<size_t>(model::Category::kMatmul)] = 60'000'000 + index;
    }
    d.phases.outside_ops = 2;
    d.phases.outside_ns[static_cast<size_t>(model::Category::kCommunication)] = 1'000'000;
  }
  return w;
}

class ClickHouseServerTest : public testing::SharedServerTest<ClickHouseServerTest> {
 public:
  static constexpr bool kHttps = true;  // the TLS test skips when openssl cannot make a cert
  static constexpr const char* kWhat = "the ClickHouse sink tests";

 protected:
  void SetUp() override {
    RequireServer();
    if (IsSkipped() || HasFatalFailure()) return;
    char dir[] = "/tmp/inferscope_sink_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    state_dir_ = dir;
    auto store = store::SqliteStore::Open(state_dir_, store::SqliteStore::Mode::kReadWrite);
    ASSERT_TRUE(store.ok()) << store.status().message();
    database_ = TestDatabase("t_");
  }
  void TearDown() override {
    std::error_code ec;
    if (!state_dir_.empty()) std::filesystem::remove_all(state_dir_, ec);
  }

  // `port` > 0: send to that port (a proxy) instead of the server's.
  std::unique_ptr<ClickHouseSink> MakeSink(const std::string& host, int port = 0) {
    ClickHouseTarget target = server_->Target(database_);
    if (port > 0) target.http.port = static_cast<uint16_t>(port);
    return MakeSinkTo(host, target);
  }
  std::unique_ptr<ClickHouseSink> MakeSinkTo(const std::string& host, ClickHouseTarget target) {
    ClickHouseSinkOptions o;
    o.target = std::move(target);
    o.identity.labels = {{"host", host}, {"model", "llama"}};
    o.state_dir = state_dir_;
    o.flush_interval_ns = 3600'000'000'000;  // only Flush() sends
    o.timeout_ms = 3000;
    o.log = [](std::string_view) {};
    auto s = ClickHouseSink::Start(o);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(*s) : nullptr;
  }

  // A scalar query's answer as an integer (-1 on error).
  int64_t Scalar(const std::string& sql) {
    ClickHouseClient c(server_->Target(database_));
    auto r = c.Execute(sql);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::atoll(r->c_str()) : -1;
  }
  std::string Table(const char* t) { return database_ + "." + t; }

  // What one host's agent ships: `windows` of process `pid` through a sink labelled `host`,
  // flushed.
  void ShipWindows(const std::string& host, uint32_t pid,
                   const std::vector<model::ProfileWindow>& windows) {
    auto sink = MakeSink(host);
    ASSERT_NE(sink, nullptr);
    wire::Hello hello;
    hello.pid = pid;
    for (const model::ProfileWindow& w : windows) sink->OnWindow(hello, w);
    ASSERT_TRUE(sink->Flush().ok()) << sink->stats().last_error;
  }
  // The fleet view of the test's database over the day the windows fall in.
  static FleetQuery DayQuery() {
    FleetQuery q;
    q.from_ns = kBase;
    q.to_ns = kBase + 86400'000'000'000;
    return q;
  }
  base::StatusOr<FleetView> View(const FleetQuery& q) {
    return QueryFleet(ClickHouseClient(server_->Target(database_)), q);
  }

  std::string state_dir_, database_;
};

TEST_F(ClickHouseServerTest, EveryWindowOnceAcrossRetries) {
  auto sink = MakeSink("node-a");
  ASSERT_NE(sink, nullptr);
  wire::Hello hello;
  hello.pid = 7;
  hello.process_start_unix_ns = 99;
  for (int i = 0; i < 20; ++i) sink->OnWindow(hello, MakeWindow(i, 7, 2, 100));
  sink->OnTelemetry({"gpu", kBase, kBase + kWindowNs, 0, "{\"sm\": 1}"});
  ASSERT_TRUE(sink->Flush().ok()) << sink->stats().last_error;
  EXPECT_EQ(Scalar("SELECT max(version) FROM " + Table(kSchemaTable)), LatestSchemaVersion());
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable) + " FINAL"), 40);
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kKernelsTable) + " FINAL"), 40);
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kTelemetryTable) + " FINAL"), 1);
  // A retry (the same windows again, as after a lost acknowledgement) adds no row.
  for (int i = 0; i < 20; ++i) sink->OnWindow(hello, MakeWindow(i, 7, 2, 100));
  ASSERT_TRUE(sink->Flush().ok());
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable) + " FINAL"), 40);
  EXPECT_EQ(
      Scalar("SELECT uniqExact(host, window_start_ns, pid, device) FROM " + Table(kWindowsTable)),
      40);
  Scalar("OPTIMIZE TABLE " + Table(kWindowsTable) + " FINAL");
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable)), 40);
  const store::SinkStats st = sink->stats();
  EXPECT_TRUE(st.connected);
  EXPECT_EQ(st.dropped_rows, 0u);
  EXPECT_EQ(st.spooled_rows, 0u);
}

TEST_F(ClickHouseServerTest, ServerRestartSpoolsThenDrains) {
  auto sink = MakeSink("node-b");
  ASSERT_NE(sink, nullptr);
  wire::Hello hello;
  hello.pid = 8;
  for (int i = 0; i < 5; ++i) sink->OnWindow(hello, MakeWindow(i, 8, 1, 100));
  ASSERT_TRUE(sink->Flush().ok());
  server_->Stop(/*kill=*/true);
  for (int i = 5; i < 15; ++i) sink->OnWindow(hello, MakeWindow(i, 8, 1, 100));
  EXPECT_FALSE(sink->Flush().ok());
  store::SinkStats st = sink->stats();
  EXPECT_FALSE(st.connected);
  EXPECT_GT(st.spooled_rows, 0u);
  EXPECT_FALSE(st.last_error.empty());
  ASSERT_TRUE(server_->Start()) << server_->error();
  for (int i = 15; i < 20; ++i) sink->OnWindow(hello, MakeWindow(i, 8, 1, 100));
  ASSERT_TRUE(sink->Flush().ok()) << sink->stats().last_error;
  st = sink->stats();
  EXPECT_TRUE(st.connected);
  EXPECT_EQ(st.spooled_rows, 0u);
  EXPECT_EQ(st.spool_drained, st.spooled_total);
  EXPECT_EQ(st.dropped_rows, 0u);
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable) + " FINAL"), 20);
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable)), 20);  // nothing sent twice
}

TEST_F(ClickHouseServerTest, SpoolOutlivesTheSink) {
  wire::Hello hello;
  hello.pid = 9;
  {
    auto warm = MakeSink("node-c");  // creates the schema
    ASSERT_TRUE(warm->Flush().ok());
  }
  server_->Stop();
  {
    auto sink = MakeSink("node-c");
    for (int i = 0; i < 12; ++i) sink->OnWindow(hello, MakeWindow(i, 9, 2, 200));
    EXPECT_FALSE(sink->Flush().ok());
    EXPECT_EQ(sink->stats().spooled_rows, 12u * 2 + 12u * 2 + 12u * 2 + 12u * 2);
  }  // the agent goes away with its rows in the spool
  ASSERT_TRUE(server_->Start()) << server_->error();
  auto next = MakeSink("node-c");  // the next agent on the same state dir
  EXPECT_EQ(next->stats().spooled_rows, 96u);
  ASSERT_TRUE(next->Flush().ok()) << next->stats().last_error;
  EXPECT_EQ(next->stats().spool_drained, 96u);
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable) + " FINAL"), 24);
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable)), 24);
}

TEST_F(ClickHouseServerTest, RetentionDropsOldDays) {
  auto sink = MakeSink("node-r");
  wire::Hello hello;
  hello.pid = 12;
  // Three days: 2025-11-27, -28, -29.
  for (int day = 0; day < 3; ++day)
    sink->OnWindow(hello, MakeWindow(int64_t{day} * 8640, 12, 1, 100));
  ASSERT_TRUE(sink->Flush().ok());
  ClickHouseClient client(server_->Target(database_));
  auto dropped = client.DropPartitionsBefore("2025-11-29");
  ASSERT_TRUE(dropped.ok()) << dropped.status().message();
  EXPECT_EQ(*dropped, 2 * 4);  // two days of the four window tables (no telemetry rows)
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable)), 1);
  EXPECT_EQ(Scalar("SELECT min(date) = toDate('2025-11-29') FROM " + Table(kWindowsTable)), 1);
  auto again = client.DropPartitionsBefore("2025-11-29");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);
}

TEST_F(ClickHouseServerTest, FleetViewSumsAndOutliers) {
  // Four hosts; node-z idles 60% where the others idle 10-15%.
  const std::pair<const char*, int> hosts[] = {
      {"node-w", 100}, {"node-x", 120}, {"node-y", 150}, {"node-z", 600}};
  int64_t idle_total = 0, span_total = 0;
  for (const auto& [host, idle] : hosts) {
    std::vector<model::ProfileWindow> windows;
    for (int i = 0; i < 6; ++i) {
      windows.push_back(MakeWindow(i, 11, 2, idle));
      for (const auto& d : windows.back().processes[0].devices) {
        idle_total += d.idle_ns();
        span_total += d.span_ns();
      }
    }
    ShipWindows(host, 11, windows);
    if (HasFatalFailure()) return;
  }
  FleetQuery q = DayQuery();
  auto view = View(q);
  ASSERT_TRUE(view.ok()) << view.status().message();
  ASSERT_EQ(view->groups.size(), 4u);
  EXPECT_EQ(view->groups[0].key, "node-z");  // worst idle first
  EXPECT_EQ(view->total.idle_ns, idle_total);
  EXPECT_EQ(view->total.span_ns, span_total);
  EXPECT_EQ(view->total.gpus, 8u);
  EXPECT_EQ(view->total.windows, 48u);
  EXPECT_TRUE(view->total.phases.empty());  // windows without steps: no phases
  ASSERT_EQ(view->outliers.size(), 1u) << RenderFleetText(*view, q, "x");
  EXPECT_EQ(view->outliers[0].key, "node-z");
  EXPECT_NEAR(view->outliers[0].value, 0.6, 1e-9);
  // Filters: a host list, a label, another grouping.
  q.exact = true;  // the same answer with FINAL
  auto exact = View(q);
  ASSERT_TRUE(exact.ok()) << exact.status().message();
  EXPECT_EQ(exact->total.idle_ns, idle_total);
  EXPECT_EQ(exact->groups[0].key, "node-z");
  q.hosts = {"node-w", "node-x"};
  auto two = View(q);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->groups.size(), 2u);
  q.hosts.clear();
  q.labels = {{"host", "node-y"}};
  q.group_by = GroupBy::kModel;
  auto by_model = View(q);
  ASSERT_TRUE(by_model.ok()) << by_model.status().message();
  ASSERT_EQ(by_model->groups.size(), 1u);
  EXPECT_EQ(by_model->groups[0].key, "llama");
  EXPECT_EQ(by_model->groups[0].windows, 12u);
  const std::string text = RenderFleetText(*view, FleetQuery{}, "clickhouse://x");
  EXPECT_NE(text.find("node-z: idle 60.0%"), std::string::npos) << text;
  EXPECT_EQ(text.find("Forward phases"), std::string::npos) << text;
}

TEST_F(ClickHouseServerTest, FleetViewSpanRunsFromFirstToLastActivity) {
  // One GPU with windows 0 and 3 only (the process sent nothing for 20 s): as in the store's
  // range merge, its span runs from its first activity to its last and the silence is idle, so
  // `report --source`'s idle share is the one `report` on that host shows.
  std::vector<model::ProfileWindow> windows = {MakeWindow(0, 12, 1, 100),
                                               MakeWindow(3, 12, 1, 100)};
  int64_t busy = 0;
  for (const model::ProfileWindow& w : windows) busy += w.processes[0].devices[0].busy_ns;
  ShipWindows("node-gap", 12, windows);
  if (HasFatalFailure()) return;
  FleetQuery q = DayQuery();
  for (bool exact : {false, true}) {
    q.exact = exact;
    auto view = View(q);
    ASSERT_TRUE(view.ok()) << view.status().message();
    ASSERT_EQ(view->groups.size(), 1u);
    const FleetGroup& g = view->groups[0];
    EXPECT_EQ(g.windows, 2u);
    EXPECT_EQ(g.gpus, 1u);
    EXPECT_EQ(g.span_ns, 4 * kWindowNs);  // kBase to the end of window 3's activity
    EXPECT_EQ(g.busy_ns, busy);
    EXPECT_EQ(g.idle_ns, 4 * kWindowNs - busy);
  }
}

// The forward-phase split (schema 4's phases table): each group's phases are its GPUs' windows
// summed as the store sums them (model::MergeWindow per process, then over the ranks, as the
// report's summary does), with FINAL too, per host and per model; the text and JSON show them.
TEST_F(ClickHouseServerTest, FleetViewSumsForwardPhasesAsTheStore) {
  std::map<std::string, model::PhaseSplit> expected;  // per host
  model::PhaseSplit all;
  for (const char* host : {"node-p", "node-q"}) {
    std::vector<model::ProfileWindow> windows;
    model::ProfileWindow merged;
    for (int i = 0; i < 5; ++i) {
      windows.push_back(WithPhases(MakeWindow(i, 13, host[5] == 'p' ? 2 : 1, 100), i));
      model::MergeWindow(windows.back(), &merged);
    }
    ShipWindows(host, 13, windows);
    if (HasFatalFailure()) return;
    for (const model::DeviceProfile& d : merged.processes.at(0).devices) {
      expected[host].Merge(d.phases);
      all.Merge(d.phases);
    }
  }
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kPhasesTable)),
            15 * 2 + 9);  // decode and outside in every device window, prefill in even ones
  FleetQuery q = DayQuery();
  for (bool exact : {false, true}) {
    q.exact = exact;
    auto view = View(q);
    ASSERT_TRUE(view.ok()) << view.status().message();
    EXPECT_FALSE(view->no_phases_table);
    ASSERT_EQ(view->groups.size(), 2u);
    for (const FleetGroup& g : view->groups) EXPECT_EQ(g.phases, expected.at(g.key)) << g.key;
    EXPECT_EQ(view->total.phases, all);
  }
  q.exact = false;
  q.group_by = GroupBy::kModel;
  auto by_model = View(q);
  ASSERT_TRUE(by_model.ok()) << by_model.status().message();
  ASSERT_EQ(by_model->groups.size(), 1u);
  EXPECT_EQ(by_model->groups[0].phases, all);
  q.group_by = GroupBy::kHost;
  q.hosts = {"node-q"};
  auto one = View(q);
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_EQ(one->groups.size(), 1u);
  EXPECT_EQ(one->total.phases, expected.at("node-q"));
  // The text section and the JSON `phases`, as a report's (analyze::Phases of the sums).
  auto view = View(DayQuery());
  ASSERT_TRUE(view.ok());
  const std::string text = RenderFleetText(*view, DayQuery(), "clickhouse://x");
  EXPECT_NE(text.find("Forward phases (prefill vs decode)"), std::string::npos) << text;
  const analyze::PhaseSummary p = analyze::Phases(expected.at("node-p"));
  ASSERT_EQ(p.phases.size(), 2u);
  EXPECT_NE(text.find("node-p"), std::string::npos);
  EXPECT_NE(text.find(" decode "), std::string::npos) << text;
  EXPECT_NE(text.find("(outside)"), std::string::npos) << text;
  // The store report's section (src/report renders both), a group in place of rank and GPU.
  EXPECT_NE(
      text.find("host     phase      steps  mean step  gpu time      %    busy  top categories"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("node-p   decode        70    12.9 ms    180 ms  32.7%  600 ms  matmul 61.1%, "
                "attention 38.9%"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("(fleet)  prefill        9"), std::string::npos) << text;
  const std::string json = RenderFleetJson(*view, DayQuery(), "clickhouse://x");
  EXPECT_NE(json.find("\"step_total_ns\": " + std::to_string(p.phases[0].step_total_ns)),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"outside_ops\": " + std::to_string(p.outside_ops)), std::string::npos);
}

// The NVTX range tables (`run --nvtx`, schema 4's ranges table): each group's table is its
// processes' windows merged as the store merges them (model::MergeWindow), and the text and JSON
// show it; windows without ranges add none.
TEST_F(ClickHouseServerTest, FleetViewSumsRangeTables) {
  std::map<std::string, model::RangeTable> expected;
  for (const char* host : {"node-r1", "node-r2"}) {
    std::vector<model::ProfileWindow> windows;
    model::ProfileWindow merged;
    for (int i = 0; i < 4; ++i) {
      model::ProfileWindow w = MakeWindow(i, 14, 1, 100);
      model::RangeTable& t = w.processes[0].ranges;
      for (int r = 0; r < 3; ++r) {
        model::RangeStats rs;
        rs.name = std::string(host) + "/step_" + std::to_string(r);
        rs.duration.Add(1'000'000 * (r + 1) + i);
        rs.duration.Add(2'000'000 * (r + 1));
        rs.gpu_ops = 5;
        rs.gpu_time_ns = 700'000 + i;
        t.rows.push_back(rs);
      }
      std::sort(t.rows.begin(), t.rows.end(), [](const auto& a, const auto& b) {
        return a.duration.total_ns > b.duration.total_ns;
      });
      t.tail.duration.Add(300 + i);
      t.tail.gpu_ops = 1;
      t.tail_names = 3;
      t.late = 1;
      windows.push_back(w);
      model::MergeWindow(w, &merged);
    }
    windows.push_back(MakeWindow(4, 14, 1, 100));  // a window without ranges
    ShipWindows(host, 14, windows);
    if (HasFatalFailure()) return;
    expected[host] = merged.processes.at(0).ranges;
  }
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kRangesTable)), 2 * 4 * 4);
  for (bool exact : {false, true}) {
    FleetQuery q = DayQuery();
    q.exact = exact;
    auto view = View(q);
    ASSERT_TRUE(view.ok()) << view.status().message();
    EXPECT_FALSE(view->no_ranges_table);
    ASSERT_EQ(view->groups.size(), 2u);
    for (const FleetGroup& g : view->groups) {
      SCOPED_TRACE(g.key);
      EXPECT_EQ(g.ranges, expected.at(g.key));
      EXPECT_EQ(g.ranges.rows.size(), 3u);
    }
    EXPECT_EQ(view->total.ranges.instances(),
              expected["node-r1"].instances() + expected["node-r2"].instances());
  }
  auto view = View(DayQuery());
  ASSERT_TRUE(view.ok());
  const std::string text = RenderFleetText(*view, DayQuery(), "clickhouse://x");
  EXPECT_NE(text.find("node-r2/step_2"), std::string::npos) << text;
  EXPECT_NE(text.find("other (12 names)"), std::string::npos) << text;
  // The store report's range section (src/report renders both): its title, columns and notes.
  EXPECT_NE(text.find("NVTX / annotation ranges (like nsys nvtx_sum)"), std::string::npos) << text;
  EXPECT_NE(text.find("node-r1  node-r1/step_2     50.0%      8  36.0 ms       -  6.00 ms"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("median and stddev are not kept"), std::string::npos) << text;
  const std::string json = RenderFleetJson(*view, DayQuery(), "clickhouse://x");
  EXPECT_NE(json.find("\"name\": \"node-r1/step_0\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"late\": 4"), std::string::npos) << json;

  // One writer: each group's `ranges` is, field for field, the store report's views `ranges` of
  // the same table (a report of the host's windows: `duration` and `gpu` objects, null order
  // statistics, `other` with its `gpu`).
  simdjson::dom::parser fleet_parser, report_parser;
  simdjson::dom::element fleet;
  ASSERT_EQ(fleet_parser.parse(json).get(fleet), simdjson::SUCCESS) << json;
  size_t compared = 0;
  for (simdjson::dom::element g : fleet["groups"].get_array()) {
    const std::string key(g["key"].get_string().value());
    SCOPED_TRACE(key);
    model::ProfileWindow w = MakeWindow(0, 14, 1, 100);
    w.processes[0].ranges = expected.at(key);
    const analyze::Analysis a = analyze::Analyze({{"w", "inferscope_store", &w}}, {});
    base::JsonWriter rw;
    report::WriteViewsJson(rw, a);
    simdjson::dom::element views;
    ASSERT_EQ(report_parser.parse(rw.str()).get(views), simdjson::SUCCESS) << rw.str();
    simdjson::dom::element want = views["inputs"].at(0)["processes"].at(0)["ranges"];
    for (const char* field : {"instances", "list", "other", "late"})
      EXPECT_EQ(simdjson::minify(g["ranges"][field]), simdjson::minify(want[field])) << field;
    EXPECT_TRUE(g["ranges"]["list"].at(0)["duration"]["median_ns"].is_null());
    ++compared;
  }
  EXPECT_EQ(compared, 2u);
}

// The exactly-once fault test: an insert the server stored but whose answer was lost is not sent
// again, so a plain count (no FINAL, merges stopped so the ReplacingMergeTree cannot hide a
// duplicate) sees every row once; an insert that never reached the server is sent again.
TEST_F(ClickHouseServerTest, LostAnswerIsNotResent) {
  testing::LossyProxy proxy(server_->http_port());
  ASSERT_GT(proxy.port(), 0);
  wire::Hello hello;
  hello.pid = 21;
  auto sink = MakeSink("node-l", proxy.port());
  sink->OnWindow(hello, MakeWindow(0, 21, 2, 100));
  ASSERT_TRUE(sink->Flush().ok()) << sink->stats().last_error;  // creates the schema
  for (const char* t : {kWindowsTable, kCategoriesTable, kKernelsTable, kSyncsTable})
    Scalar("SYSTEM STOP MERGES " + Table(t));

  // 1. The windows insert is stored, its answer lost: the sink cannot tell, spools it.
  proxy.LoseInsertAnswers(1);
  for (int i = 1; i < 10; ++i) sink->OnWindow(hello, MakeWindow(i, 21, 2, 100));
  EXPECT_FALSE(sink->Flush().ok());
  EXPECT_EQ(proxy.answers_lost(), 1);
  EXPECT_EQ(sink->stats().spooled_rows, 9u * 2 * 4);  // all four tables' rows of the batch
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable)), 20);  // stored already
  ASSERT_TRUE(sink->Flush().ok()) << sink->stats().last_error;
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable)), 20);
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kKernelsTable)), 20);
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kSyncsTable)), 20);

  // 2. The same, and the agent dies before it could check: the next agent counts first.
  proxy.LoseInsertAnswers(1);
  for (int i = 10; i < 20; ++i) sink->OnWindow(hello, MakeWindow(i, 21, 2, 100));
  EXPECT_FALSE(sink->Flush().ok());
  proxy.SetDown(true);  // the dying agent's last drain cannot reach the server either
  sink.reset();
  proxy.SetDown(false);
  auto next = MakeSink("node-l");  // straight to the server
  EXPECT_EQ(next->stats().spooled_rows, 10u * 2 * 4);
  ASSERT_TRUE(next->Flush().ok()) << next->stats().last_error;
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable)), 40);
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kCategoriesTable)), 40);
  next.reset();

  // 3. An insert that never reached the server: counted (none there) and sent again.
  auto third = MakeSink("node-l", proxy.port());
  proxy.DropInserts(1);
  for (int i = 20; i < 30; ++i) third->OnWindow(hello, MakeWindow(i, 21, 2, 100));
  EXPECT_FALSE(third->Flush().ok());
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable)), 40);
  ASSERT_TRUE(third->Flush().ok()) << third->stats().last_error;
  EXPECT_EQ(third->stats().dropped_rows, 0u);

  // Every row once, without FINAL and without any merge.
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable)), 60);
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kKernelsTable)), 60);
  EXPECT_EQ(
      Scalar("SELECT uniqExact(host, window_start_ns, pid, device) FROM " + Table(kWindowsTable)),
      60);
  EXPECT_EQ(Scalar("SELECT countIf(batch_id = 0) FROM " + Table(kWindowsTable)), 0);
  // What the count check rests on: one insert is one part (all or nothing). Four windows inserts
  // reached the server (the first, two with lost answers, the resent one), merges stopped.
  EXPECT_EQ(Scalar("SELECT count() FROM system.parts WHERE active AND database = '" + database_ +
                   "' AND table = '" + kWindowsTable + "'"),
            4);
  EXPECT_EQ(Scalar("SELECT uniqExact(batch_id) FROM " + Table(kWindowsTable)), 4);
  for (const char* t : {kWindowsTable, kCategoriesTable, kKernelsTable, kSyncsTable})
    Scalar("SYSTEM START MERGES " + Table(t));
}

// A database the previous agent version created (schema version 1, no batch_id) is migrated in
// place: the column is added (its old rows read 0), and two agents migrating at once both succeed.
TEST_F(ClickHouseServerTest, MigratesVersionOneTables) {
  ClickHouseClient client(server_->Target(database_));
  for (const std::string& statement : Migrations().front().statements)
    ASSERT_TRUE(client.Execute(WithDatabase(statement, database_)).ok());
  ASSERT_TRUE(client.Execute("INSERT INTO " + Table(kSchemaTable) + " VALUES (1, 0)").ok());
  ASSERT_TRUE(client
                  .Execute("INSERT INTO " + Table(kWindowsTable) +
                           " (date, window_start_ns, host) VALUES ('2025-11-27', 1, 'old')")
                  .ok());
  base::StatusOr<int> a = 0, b = 0;
  std::thread other([&] { b = ClickHouseClient(server_->Target(database_)).EnsureSchema(); });
  a = client.EnsureSchema();
  other.join();
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(*a, 1);
  EXPECT_EQ(Scalar("SELECT max(version) FROM " + Table(kSchemaTable)), LatestSchemaVersion());
  // Version 3: the windows' first/last activity and idle gaps (the fleet profile reads).
  EXPECT_EQ(Scalar("SELECT count() FROM system.columns WHERE database = '" + database_ +
                   "' AND table = '" + kWindowsTable +
                   "' AND (name LIKE 'gap\\_%' OR name IN ('first_start_ns', 'last_end_ns'))"),
            11);
  for (const char* t :
       {kWindowsTable, kCategoriesTable, kKernelsTable, kSyncsTable, kTelemetryTable})
    EXPECT_EQ(Scalar("SELECT count() FROM system.columns WHERE database = '" + database_ +
                     "' AND table = '" + t + "' AND name = 'batch_id'"),
              1)
        << t;
  EXPECT_EQ(Scalar("SELECT sum(batch_id) FROM " + Table(kWindowsTable) + " WHERE host = 'old'"), 0);
  // Version 4: the phases and ranges tables.
  EXPECT_EQ(Scalar("SELECT count() FROM system.tables WHERE database = '" + database_ +
                   "' AND name IN ('" + kPhasesTable + "', '" + kRangesTable + "')"),
            2);
  // Version 5: the kernel rows' launch configurations; the old rows read none.
  EXPECT_EQ(Scalar("SELECT count() FROM system.columns WHERE database = '" + database_ +
                   "' AND table = '" + kKernelsTable +
                   "' AND name IN ('config_key', 'config_count', 'config_ns', "
                   "'distinct_configs')"),
            4);
  // The new agent writes into the migrated tables.
  auto sink = MakeSink("node-m");
  wire::Hello hello;
  hello.pid = 22;
  sink->OnWindow(hello, WithPhases(MakeWindow(0, 22, 1, 100), 0));
  ASSERT_TRUE(sink->Flush().ok()) << sink->stats().last_error;
  EXPECT_EQ(Scalar("SELECT countIf(batch_id != 0) FROM " + Table(kWindowsTable)), 1);
  EXPECT_EQ(Scalar("SELECT countIf(batch_id != 0) FROM " + Table(kPhasesTable)), 3);
}

// `report --source ... --views kernels`: two hosts' agents ship the same kernels with launch
// configurations through the sink; the fleet's kernels view sums each kernel's configurations
// over the windows and hosts (model::MergeLaunchConfigs, as the store's range merge), and the
// text and JSON show them.
TEST_F(ClickHouseServerTest, FleetKernelsViewMergesLaunchConfigsAcrossHosts) {
  auto config = [](int32_t grid_x, int32_t regs, int32_t dynamic_smem, uint64_t count, int64_t ns) {
    model::LaunchConfig c;
    c.grid = {grid_x, 1, 1};
    c.block = {256, 1, 1};
    c.registers_per_thread = regs;
    c.static_shared_bytes = 1024;
    c.dynamic_shared_bytes = dynamic_smem;
    c.shared_bytes = 1024 + dynamic_smem;
    c.count = count;
    c.total_ns = ns;
    return c;
  };
  // Host a: gemm_0 with X (grid 132) and Y (grid 66) in window 0, X alone in window 3.
  // Host b: gemm_0 with X and Z (grid 264, another dynamic shared memory) in window 0, and one
  // configuration seen but not listed.
  const model::LaunchConfig x = config(132, 128, 65536, 0, 0);
  const model::LaunchConfig y = config(66, 128, 65536, 0, 0);
  const model::LaunchConfig z = config(264, 96, 32768, 0, 0);
  auto with = [](model::LaunchConfig c, uint64_t n, int64_t ns) {
    c.count = n;
    c.total_ns = ns;
    return c;
  };
  auto shipped = [&](int64_t index, std::vector<model::LaunchConfig> configs, uint64_t distinct) {
    model::ProfileWindow w = MakeWindow(index, 13, 1, 100);
    model::KernelStats& k = w.processes[0].devices[0].top_kernels.at(0);
    EXPECT_EQ(k.name, "gemm_" + std::to_string(index % 3));
    std::sort(configs.begin(), configs.end(), model::MoreFrequentConfig);
    k.configs = std::move(configs);
    k.distinct_configs = distinct;
    return w;
  };
  ShipWindows("node-a", 13,
              {shipped(0, {with(x, 40, 4'000'000), with(y, 10, 500'000)}, 2),
               shipped(3, {with(x, 25, 2'500'000)}, 1)});
  if (HasFatalFailure()) return;
  ShipWindows("node-b", 13, {shipped(0, {with(x, 30, 3'100'000), with(z, 60, 1'200'000)}, 3)});
  if (HasFatalFailure()) return;

  FleetQuery q = DayQuery();
  bool no_configs = true;
  auto kernels =
      QueryFleetKernels(ClickHouseClient(server_->Target(database_)), q, 20, &no_configs);
  ASSERT_TRUE(kernels.ok()) << kernels.status().message();
  EXPECT_FALSE(no_configs);
  // One synthetic GPU: gemm_0 (windows 0 and 3 of both hosts), its configurations X 40+25+30,
  // Z 60, Y 10; distinct: three listed and one unlisted.
  ASSERT_EQ(kernels->views.size(), 1u);
  ASSERT_EQ(kernels->views[0].processes.size(), 1u);
  ASSERT_EQ(kernels->views[0].processes[0].devices.size(), 1u);
  const auto& rows = kernels->views[0].processes[0].devices[0].kernels;
  const auto gemm0 = std::find_if(rows.begin(), rows.end(),
                                  [](const model::KernelStatRow& r) { return r.name == "gemm_0"; });
  ASSERT_NE(gemm0, rows.end());
  EXPECT_EQ(gemm0->configs,
            (std::vector<model::LaunchConfig>{with(x, 95, 9'600'000), with(z, 60, 1'200'000),
                                              with(y, 10, 500'000)}));
  EXPECT_EQ(gemm0->distinct_configs, 4u);
  for (const model::KernelStatRow& r : rows) {
    if (r.name != "gemm_0") {
      EXPECT_TRUE(r.configs.empty()) << r.name;  // shipped none
    }
  }

  auto view = View(q);
  ASSERT_TRUE(view.ok()) << view.status().message();
  const std::string json = RenderFleetJson(*view, q, "clickhouse://x", &*kernels);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  simdjson::dom::array stats;
  ASSERT_EQ(
      doc["views"]["inputs"].at(0)["processes"].at(0)["devices"].at(0)["kernel_stats"].get(stats),
      simdjson::SUCCESS)
      << json;
  bool found = false;
  for (simdjson::dom::element k : stats) {
    if (std::string_view(k["name"].get_string().value()) != "gemm_0") continue;
    found = true;
    EXPECT_EQ(k["distinct_launch_configs"].get_uint64().value(), 4u);
    simdjson::dom::element first = k["launch_configs"].at(0);
    EXPECT_EQ(first["grid"].at(0).get_int64().value(), 132);
    EXPECT_EQ(first["registers_per_thread"].get_int64().value(), 128);
    EXPECT_EQ(first["dynamic_shared_bytes"].get_int64().value(), 65536);
    EXPECT_EQ(first["count"].get_uint64().value(), 95u);
    EXPECT_EQ(first["total_ns"].get_int64().value(), 9'600'000);
    EXPECT_EQ(k["launch_configs"].at(1)["grid"].at(0).get_int64().value(), 264);
  }
  EXPECT_TRUE(found) << json;
  const std::string text = RenderFleetText(*view, q, "clickhouse://x", &*kernels);
  EXPECT_NE(text.find("Launch configurations"), std::string::npos) << text;
  EXPECT_NE(text.find("132x1x1"), std::string::npos) << text;
  EXPECT_EQ(RenderFleetText(*view, q, "clickhouse://x").find("Launch configurations"),
            std::string::npos);
}

// A database an agent of schema 3 created (no phases table): the fleet view answers without
// phases, and the next agent's migration adds the table, after which the phases arrive.
TEST_F(ClickHouseServerTest, MigratesVersionThreeTables) {
  ClickHouseClient client(server_->Target(database_));
  for (const Migration& m : Migrations()) {
    if (m.version > 3) continue;
    for (const std::string& statement : m.statements)
      ASSERT_TRUE(client.Execute(WithDatabase(statement, database_)).ok()) << statement;
    ASSERT_TRUE(client
                    .Execute("INSERT INTO " + Table(kSchemaTable) + " VALUES (" +
                             std::to_string(m.version) + ", 0)")
                    .ok());
  }
  RowBatch batch;
  FleetIdentity identity;
  identity.labels = {{"host", "node-3"}};
  wire::Hello hello;
  hello.pid = 23;
  EncodeWindow(identity, hello, WithPhases(MakeWindow(0, 23, 1, 100), 0), &batch);
  ASSERT_TRUE(client.InsertJsonEachRow(kWindowsTable, batch.body[RowBatch::kWindows]).ok());
  auto before = View(DayQuery());
  ASSERT_TRUE(before.ok()) << before.status().message();
  EXPECT_TRUE(before->no_phases_table);
  EXPECT_TRUE(before->total.phases.empty());
  ASSERT_EQ(before->groups.size(), 1u);
  auto migrated = client.EnsureSchema();
  ASSERT_TRUE(migrated.ok()) << migrated.status().message();
  EXPECT_EQ(*migrated, 3);
  EXPECT_EQ(Scalar("SELECT max(version) FROM " + Table(kSchemaTable)), LatestSchemaVersion());
  ShipWindows("node-4", 24, {WithPhases(MakeWindow(1, 24, 1, 100), 1)});
  if (HasFatalFailure()) return;
  auto after = View(DayQuery());
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_FALSE(after->no_phases_table);
  EXPECT_EQ(after->total.phases,
            WithPhases(MakeWindow(1, 24, 1, 100), 1).processes[0].devices[0].phases);
}

// clickhouses://: the sink and the reads over HTTPS (18.16's https_port, a self-signed
// certificate made by the openssl CLI); the certificate is verified unless skip_verify.
TEST_F(ClickHouseServerTest, TlsSinkAndCertificateChecks) {
  if (!https_error_.empty()) {
    if (testing::ClickHouseRequired()) FAIL() << https_error_;
    GTEST_SKIP() << "no HTTPS server for the TLS test: " << https_error_;
  }
  auto parsed =
      ParseClickHouseUrl("clickhouses://127.0.0.1:" + std::to_string(server_->https_port()) + "/" +
                         database_ + "?ca_file=" + server_->cert_file());
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const ClickHouseTarget tls = *parsed;
  auto one = ClickHouseClient(tls).Execute("SELECT 1");
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(*one, "1\n");

  auto sink = MakeSinkTo("node-t", tls);
  wire::Hello hello;
  hello.pid = 31;
  for (int i = 0; i < 3; ++i) sink->OnWindow(hello, MakeWindow(i, 31, 2, 100));
  ASSERT_TRUE(sink->Flush().ok()) << sink->stats().last_error;
  EXPECT_EQ(sink->stats().url, tls.ToUrl());
  EXPECT_EQ(Scalar("SELECT count() FROM " + Table(kWindowsTable)), 6);

  // The system's CAs do not know the self-signed certificate: refused before anything is sent.
  ClickHouseTarget system_cas = tls;
  system_cas.ca_file.clear();
  auto refused = ClickHouseClient(system_cas).Execute("SELECT 1");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), base::StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find("did not verify"), std::string::npos)
      << refused.status().message();
  ClickHouseTarget skip = system_cas;
  skip.tls_skip_verify = true;
  EXPECT_TRUE(ClickHouseClient(skip).Execute("SELECT 1").ok());
  // Plain HTTP to the HTTPS port gets no HTTP answer.
  ClickHouseTarget plain = tls;
  plain.tls = false;
  EXPECT_FALSE(ClickHouseClient(plain, 2000).Execute("SELECT 1").ok());
}

}  // namespace
}  // namespace inferscope::fleet
