// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The fleet profile reads (context/diff --source clickhouse://): the SQL they send, and, against
// a real clickhouse-server (Debian's 18.16, skipped without it unless
// INFERSCOPE_REQUIRE_CLICKHOUSE=1), that the profile rebuilt from the fact tables equals the
// local merge (model::MergeWindow) of the same windows, whole and per slice, device by device and
// in diff's figures.
#include "src/fleet/query/fleet_profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>

#include "src/analyze/analysis.h"
#include "src/analyze/compare.h"
#include "src/fleet/sink/row_encoder.h"
#include "src/fleet/sink/schema.h"
#include "src/fleet/sink/test_clickhouse_fixture.h"
#include "src/model/profile_merge.h"

namespace inferscope::fleet {
namespace {

constexpr int64_t kBase = 1'764'201'600'000'000'000;  // 2025-11-27T00:00:00Z
constexpr int64_t kWindowNs = 10'000'000'000;
constexpr int kTopK = 3;

FleetProfileQuery Selection() {
  FleetProfileQuery q;
  q.selection.from_ns = kBase;
  q.selection.to_ns = kBase + 3600'000'000'000;
  q.top_k = kTopK;
  return q;
}

TEST(FleetProfileSql, GroupsPerDeviceAndNeverPerWindow) {
  FleetProfileQuery q = Selection();
  q.selection.hosts = {"node-a"};
  q.selection.labels = {{"replica", "it's"}};
  q.rank = 1;
  for (FleetFact f :
       {FleetFact::kDevices, FleetFact::kCategories, FleetFact::kKernels, FleetFact::kKernelTotals,
        FleetFact::kSyncs, FleetFact::kPhases, FleetFact::kPhaseCategories,
        FleetFact::kLaunchConfigs, FleetFact::kUnlistedConfigs}) {
    const std::string sql = FleetProfileSql("db", q, f);
    SCOPED_TRACE(sql);
    EXPECT_NE(sql.find("GROUP BY slice, host, pid, process_start_ns, rank, device"),
              std::string::npos);
    // Overlapping windows (end > from), as the local store's ranges, and the partition bound a
    // day earlier for a window that started before midnight.
    EXPECT_NE(sql.find("window_end_ns > 1764201600000000000 AND window_start_ns < "
                       "1764205200000000000"),
              std::string::npos);
    EXPECT_NE(sql.find("date >= toDate(1764115200)"), std::string::npos);
    EXPECT_NE(sql.find("host IN ('node-a')"), std::string::npos);
    EXPECT_NE(sql.find("label_values[indexOf(label_keys, 'replica')] = 'it\\'s'"),
              std::string::npos);
    EXPECT_NE(sql.find("AND rank = 1"), std::string::npos);
    EXPECT_EQ(sql.find("FINAL"), std::string::npos);
    EXPECT_NE(sql.find("toUInt32(0) AS slice"), std::string::npos);
  }
  EXPECT_NE(FleetProfileSql("db", q, FleetFact::kKernels)
                .find("ORDER BY slice, host, pid, process_start_ns, rank, device, t DESC, n DESC, "
                      "kernel LIMIT 3 BY slice, host, pid, process_start_ns, rank, device"),
            std::string::npos);
  EXPECT_NE(FleetProfileSql("db", q, FleetFact::kCategories).find("FROM db.inferscope_window_"),
            std::string::npos);
  // The configurations: the kernel rows' arrays ARRAY JOINed and summed per configuration, only
  // for the kept names when the caller lists them.
  const std::string configs = FleetProfileSql("db", q, FleetFact::kLaunchConfigs);
  EXPECT_NE(configs.find("ARRAY JOIN config_key AS c_key, config_count AS c_n, config_ns AS c_t"),
            std::string::npos)
      << configs;
  EXPECT_NE(configs.find("GROUP BY slice, host, pid, process_start_ns, rank, device, kernel, "
                         "c_key"),
            std::string::npos)
      << configs;
  EXPECT_EQ(configs.find("kernel IN"), std::string::npos);
  q.config_kernels = {"gemm", "it's"};
  EXPECT_NE(FleetProfileSql("db", q, FleetFact::kLaunchConfigs)
                .find("AND is_tail = 0 AND kernel IN ('gemm', 'it\\'s')"),
            std::string::npos);
  EXPECT_NE(FleetProfileSql("db", q, FleetFact::kUnlistedConfigs)
                .find("distinct_configs > length(config_count) AND kernel IN ('gemm', 'it\\'s')"),
            std::string::npos);
  q.config_kernels.clear();
  // Collapsed: one row per slice (and category, kernel, sync type); the key columns are
  // constants, never aliases that would shadow the columns the WHERE clause filters.
  q.collapse_devices = true;
  const std::string devices = FleetProfileSql("db", q, FleetFact::kDevices);
  EXPECT_NE(devices.find(") GROUP BY slice ORDER BY slice FORMAT"), std::string::npos) << devices;
  EXPECT_NE(devices.find("GROUP BY slice, host, pid, process_start_ns, rank, device"),
            std::string::npos);  // the inner per-GPU spans
  EXPECT_EQ(devices.find("AS host"), std::string::npos);
  EXPECT_NE(FleetProfileSql("db", q, FleetFact::kKernels).find("LIMIT 3 BY slice FORMAT"),
            std::string::npos);
  EXPECT_NE(FleetProfileSql("db", q, FleetFact::kSyncs).find("GROUP BY slice, sync_type"),
            std::string::npos);
  EXPECT_NE(FleetProfileSql("db", q, FleetFact::kPhases).find("GROUP BY slice, phase"),
            std::string::npos);
  q.collapse_devices = false;
  q.selection.exact = true;
  // The category times' arrays are joined between the table (FINAL included) and WHERE.
  const std::string phases = FleetProfileSql("db", q, FleetFact::kPhaseCategories);
  EXPECT_NE(phases.find("FROM db.inferscope_window_phases FINAL ARRAY JOIN categories AS "
                        "category, category_ns AS ns WHERE"),
            std::string::npos)
      << phases;
  EXPECT_NE(phases.find("GROUP BY slice, host, pid, process_start_ns, rank, device, phase, "
                        "category"),
            std::string::npos)
      << phases;
  q.slice_starts = {10, 20, 30};
  const std::string sql = FleetProfileSql("db", q, FleetFact::kSyncs);
  EXPECT_NE(sql.find("FROM db.inferscope_window_syncs FINAL WHERE"), std::string::npos) << sql;
  EXPECT_NE(sql.find("toUInt32((window_start_ns >= 20) + (window_start_ns >= 30)) AS slice"),
            std::string::npos)
      << sql;
  EXPECT_NE(FleetWindowStartsSql("db", q, 100).find("ORDER BY window_start_ns LIMIT 101"),
            std::string::npos);
  EXPECT_NE(FleetProfileSql("db", q, FleetFact::kWindowCount)
                .find("uniqExact(host, pid, process_start_ns, window_start_ns)"),
            std::string::npos);
}

TEST(FleetProfileSql, ResolveSourceNamesTheArgument) {
  auto bad = ResolveFleetSource("http://x", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("--source: ", 0), 0u) << bad.status().message();
  auto creds = ResolveFleetSource("clickhouse://127.0.0.1/db", "/nonexistent/creds");
  ASSERT_FALSE(creds.ok());
  EXPECT_EQ(creds.status().message().rfind("--source-credentials: ", 0), 0u);
  auto ok = ResolveFleetSource("clickhouse://127.0.0.1:9000/db", "");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->database, "db");
}

// The grouped answers' rows fold into the model the way PhaseSplit::Merge and RangeTable::Merge
// sum windows; unknown phases and categories are skipped, bad numbers refused.
TEST(FleetRows, LaunchConfigKeys) {
  model::LaunchConfig c;
  ASSERT_TRUE(ParseLaunchConfigKey("[132,2,1,256,1,1,168,0,98304,98304]", &c));
  EXPECT_EQ(c.grid, (std::array<int32_t, 3>{132, 2, 1}));
  EXPECT_EQ(c.block, (std::array<int32_t, 3>{256, 1, 1}));
  EXPECT_EQ(c.registers_per_thread, 168);
  EXPECT_EQ(c.static_shared_bytes, 0);
  EXPECT_EQ(c.dynamic_shared_bytes, 98304);
  EXPECT_EQ(c.shared_bytes, 98304);
  ASSERT_TRUE(ParseLaunchConfigKey("[64,1,1,128,1,1,-1,-1,-1,16384]", &c));
  EXPECT_EQ(c.registers_per_thread, -1);
  EXPECT_EQ(c.shared_bytes, 16384);
  for (const char* bad :
       {"", "[]", "[1,2,3]", "[1,2,3,4,5,6,7,8,9,10,11]", "[1,2,3,4,5,6,7,8,9,10",
        "1,2,3,4,5,6,7,8,9,10]", "[1,2,3,4,5,6,7,8,9,x]", "[1,2,3,4,5,6,7,8,9,10]x",
        "[1,2,3,4,5,6,7,8,9,99999999999]", "[1, 2,3,4,5,6,7,8,9,10]"})
    EXPECT_FALSE(ParseLaunchConfigKey(bad, &c)) << bad;
}

TEST(FleetRows, FoldPhaseAndRangeRows) {
  model::PhaseSplit split;
  EXPECT_EQ(FoldPhaseRow({"k", "decode", "3", "300", "200", "40"}, 1, &split), RowFold::kFolded);
  EXPECT_EQ(FoldPhaseRow({"k", "decode", "1", "100", "50", "10"}, 1, &split), RowFold::kFolded);
  EXPECT_EQ(FoldPhaseRow({"k", "outside", "0", "0", "0", "7"}, 1, &split), RowFold::kFolded);
  EXPECT_EQ(FoldPhaseRow({"k", "verify", "1", "1", "1", "1"}, 1, &split), RowFold::kUnknownName);
  EXPECT_EQ(FoldPhaseRow({"k", "decode", "x", "1", "1", "1"}, 1, &split), RowFold::kBadNumber);
  EXPECT_EQ(FoldPhaseRow({"k", "decode"}, 1, &split), RowFold::kBadNumber);
  EXPECT_EQ(FoldPhaseCategoryRow({"k", "decode", "attention", "900"}, 1, &split), RowFold::kFolded);
  EXPECT_EQ(FoldPhaseCategoryRow({"k", "outside", "matmul", "5"}, 1, &split), RowFold::kFolded);
  EXPECT_EQ(FoldPhaseCategoryRow({"k", "decode", "warp_drive", "5"}, 1, &split),
            RowFold::kUnknownName);
  const model::PhaseStats& decode = split.phases[static_cast<size_t>(model::Phase::kDecode)];
  EXPECT_EQ(decode.steps, 4u);
  EXPECT_EQ(decode.step_ns, 400);
  EXPECT_EQ(decode.busy_ns, 250);
  EXPECT_EQ(decode.ops, 50u);
  EXPECT_EQ(decode.category_ns[static_cast<size_t>(model::Category::kAttention)], 900);
  EXPECT_EQ(split.outside_ops, 7u);
  EXPECT_EQ(split.outside_time_ns(), 5);

  model::RangeTable t;
  EXPECT_EQ(FoldRangeRow({"0", "step", "2", "30", "10", "20", "4", "8", "0", "0"}, 0, &t),
            RowFold::kFolded);
  EXPECT_EQ(FoldRangeRow({"1", "", "1", "5", "5", "5", "1", "1", "3", "2"}, 0, &t),
            RowFold::kFolded);
  EXPECT_EQ(FoldRangeRow({"1", "", "0", "0", "0", "0", "0", "0", "1", "1"}, 0, &t),
            RowFold::kFolded);
  EXPECT_EQ(FoldRangeRow({"0", "step", "-"}, 0, &t), RowFold::kBadNumber);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].name, "step");
  EXPECT_EQ(t.rows[0].duration.min_ns, 10);
  EXPECT_EQ(t.tail.duration.count, 1u);
  EXPECT_EQ(t.tail.duration.min_ns, 5);  // the row without instances leaves the minimum alone
  EXPECT_EQ(t.tail_names, 4u);
  EXPECT_EQ(t.late, 3u);
}

// Window `i` of a process: 2 devices, six kernels of fixed weights (so the top 3 are the same in
// every window and the merge's eviction order cannot matter), activity that starts and ends
// inside the window (the gaps between windows are idle in a range), syncs and idle gaps.
model::ProfileWindow MakeWindow(int i, uint32_t pid, int32_t rank, const std::string& host,
                                int64_t scale) {
  model::ProfileWindow w;
  w.start_ns = kBase + i * kWindowNs;
  w.end_ns = w.start_ns + kWindowNs;
  model::ProcessProfile p;
  p.pid = pid;
  p.rank = rank;
  p.world_size = 2;
  p.hostname = host;
  for (uint32_t dev = 0; dev < 2; ++dev) {
    model::DeviceProfile d;
    d.device = dev;
    d.device_name = "NVIDIA H100";
    d.first_start_ns = w.start_ns + 1'000'000 * (i + 1);
    d.last_end_ns = w.end_ns - 2'000'000 * (dev + 1);
    d.busy_ns = scale * (5'000'000'000 + 10'000'000 * i);
    d.compute_ns = d.busy_ns * 8 / 10;
    d.communication_ns = d.busy_ns / 10;
    d.communication_overlap_ns = d.busy_ns / 20;
    for (int k = 0; k < 6; ++k) {
      model::KernelStats ks;
      ks.name = "kernel_" + std::to_string(k);
      ks.category = k % 2 ? model::Category::kMatmul : model::Category::kAttention;
      ks.subcategory = k % 2 ? "dense" : "decode";
      for (int n = 0; n <= k; ++n) ks.duration.Add(scale * (600'000'000 - 90'000'000 * k + n));
      // Launch configurations (schema 5): window i lists up to three of a pool of five per
      // kernel, rotating, so a configuration drops out of one window's list and comes back in
      // a later one; in odd windows one more was seen than listed. Five over the range: the
      // store's merge is exact, so the fleet's must equal it.
      for (int j = 0; j < std::min(k, 3); ++j) {
        const int id = (i + j) % 5;
        model::LaunchConfig& c = ks.configs.emplace_back();
        c.grid = {32 * (id + 1), 1 + k, 1};
        c.block = {128, 1, 1};
        c.registers_per_thread = 32 + 8 * id;
        c.static_shared_bytes = id == 4 ? -1 : 1024 * id;
        c.dynamic_shared_bytes = id == 4 ? -1 : 4096;
        c.shared_bytes = id == 4 ? 8192 : c.static_shared_bytes + 4096;
        c.count = static_cast<uint64_t>(10 * (j + 1) + i + dev);
        c.total_ns = scale * (1'000'000 * (id + 1) + i);
      }
      std::sort(ks.configs.begin(), ks.configs.end(), model::MoreFrequentConfig);
      ks.distinct_configs = ks.configs.size() + (ks.configs.empty() ? 0 : i % 2);
      d.categories[static_cast<size_t>(ks.category)].count += ks.duration.count;
      d.categories[static_cast<size_t>(ks.category)].time_ns += ks.duration.total_ns;
      d.kernel_count += ks.duration.count;
      d.top_kernels.push_back(ks);
    }
    d.tail.name = "(tail)";
    d.tail.duration.Add(1000 + i);
    d.tail.distinct_names = 2;
    d.kernel_count += 1;
    d.idle_causes.ns[1] = d.idle_ns() / 2;
    d.idle_causes.ns[3] = d.idle_ns() - d.idle_ns() / 2;
    d.idle_causes.intervals = 4;
    d.idle_gaps.host_wait.Add(300'000 + i);
    d.idle_gaps.kernel_wait.Add(40'000);
    d.idle_gaps.kernel_wait.Add(50'000 * scale);
    d.syncs[static_cast<size_t>(model::SyncType::kStream)].wait.Add(2'000'000 + i);
    d.syncs[static_cast<size_t>(model::SyncType::kStreamWaitEvent)].wait.Add(7);
    d.steps.plain.Add(20'000'000);
    // Forward phases: decode steps in every window, prefill in every other, and on device 1 the
    // time of steps not whole.
    model::PhaseStats& decode = d.phases.phases[static_cast<size_t>(model::Phase::kDecode)];
    decode.steps = 3 + static_cast<uint64_t>(i);
    decode.step_ns = 60'000'000 * (i + 1);
    decode.busy_ns = 40'000'000 * (i + 1) * scale;
    decode.ops = 200 + static_cast<uint64_t>(i);
    decode.category_ns[static_cast<size_t>(model::Category::kAttention)] = 9'000'000 * (i + 1);
    decode.category_ns[static_cast<size_t>(model::Category::kMatmul)] = 25'000'000 * scale;
    if (i % 2 == 0) {
      model::PhaseStats& prefill = d.phases.phases[static_cast<size_t>(model::Phase::kPrefill)];
      prefill.steps = 1;
      prefill.step_ns = 90'000'000;
      prefill.busy_ns = 80'000'000;
      prefill.ops = 50;
      prefill.category_ns[static_cast<size_t>(model::Category::kMatmul)] = 70'000'000;
    }
    if (dev == 1) {
      d.phases.outside_ops = 4;
      d.phases.outside_ns[static_cast<size_t>(model::Category::kCommunication)] = 3'000'000 + i;
    }
    p.devices.push_back(d);
  }
  // An NVTX range table (`run --nvtx`): four names of fixed weights, so the top 3 are the same
  // in every window and the fourth folds into the tail of a merge, and a tail of its own.
  for (int r = 0; r < 4; ++r) {
    model::RangeStats rs;
    rs.name = "range_" + std::to_string(r);
    for (int n = 0; n <= r; ++n) rs.duration.Add(scale * (90'000'000 - 20'000'000 * r) + n + i);
    rs.gpu_ops = static_cast<uint64_t>(10 * (r + 1));
    rs.gpu_time_ns = 5'000'000 * (4 - r);
    p.ranges.rows.push_back(rs);
  }
  p.ranges.tail.duration.Add(1000 + i);
  p.ranges.tail.gpu_ops = 1;
  p.ranges.tail.gpu_time_ns = 77;
  p.ranges.tail_names = 2;
  p.ranges.late = static_cast<uint64_t>(i % 2);
  w.processes.push_back(p);
  return w;
}

// The range tables of a process: rows and tail as the local merge makes them (tail_names not
// compared: the local merge's counts a name each time it is evicted, an upper bound).
void ExpectSameRanges(const model::RangeTable& fleet, const model::RangeTable& local) {
  EXPECT_FALSE(local.empty());
  EXPECT_EQ(fleet.rows, local.rows);
  EXPECT_EQ(fleet.tail.duration, local.tail.duration);
  EXPECT_EQ(fleet.tail.gpu_ops, local.tail.gpu_ops);
  EXPECT_EQ(fleet.tail.gpu_time_ns, local.tail.gpu_time_ns);
  EXPECT_EQ(fleet.late, local.late);
  EXPECT_GE(local.tail_names, fleet.tail_names);
  EXPECT_GT(fleet.tail_names, 0u);
}

class FleetProfileServerTest : public testing::SharedServerTest<FleetProfileServerTest> {
 public:
  static constexpr bool kHttps = false;
  static constexpr const char* kWhat = "the fleet profile tests";

 protected:
  void SetUp() override {
    RequireServer();
    if (IsSkipped() || HasFatalFailure()) return;
    client_ = std::make_unique<ClickHouseClient>(server_->Target(TestDatabase("p_")));
    auto version = client_->EnsureSchema();
    ASSERT_TRUE(version.ok()) << version.status().message();
  }

  // Ships `windows` of one process as the sink does (its encoder, one insert per table).
  void Ship(const std::string& host, const std::string& replica, uint32_t pid,
            const std::vector<model::ProfileWindow>& windows) {
    FleetIdentity identity;
    identity.labels = {{"host", host}, {"replica", replica}};
    wire::Hello hello;
    hello.pid = pid;
    hello.process_start_unix_ns = 1000 + pid;
    RowBatch batch;
    for (const auto& w : windows) EncodeWindow(identity, hello, w, &batch);
    for (int t = 0; t < RowBatch::kTables; ++t)
      if (t != RowBatch::kTelemetry && batch.rows[t]) {
        ASSERT_TRUE(client_->InsertJsonEachRow(RowBatch::TableName(t), batch.body[t]).ok());
      }
  }

  std::unique_ptr<ClickHouseClient> client_;
};

// The local merge of `windows` (one process), as the store's range query folds them.
model::ProfileWindow LocalMerge(const std::vector<model::ProfileWindow>& windows) {
  model::ProfileWindow merged;
  model::MergeOptions options;
  options.top_k = kTopK;
  for (const auto& w : windows) model::MergeWindow(w, &merged, options);
  return merged;
}

void ExpectSameDevice(const model::DeviceProfile& fleet, const model::DeviceProfile& local) {
  EXPECT_EQ(fleet.device, local.device);
  EXPECT_EQ(fleet.device_name, local.device_name);
  EXPECT_EQ(fleet.first_start_ns, local.first_start_ns);
  EXPECT_EQ(fleet.last_end_ns, local.last_end_ns);
  EXPECT_EQ(fleet.busy_ns, local.busy_ns);
  EXPECT_EQ(fleet.compute_ns, local.compute_ns);
  EXPECT_EQ(fleet.communication_ns, local.communication_ns);
  EXPECT_EQ(fleet.communication_overlap_ns, local.communication_overlap_ns);
  EXPECT_EQ(fleet.kernel_count, local.kernel_count);
  EXPECT_EQ(fleet.categories, local.categories);
  EXPECT_EQ(fleet.idle_causes, local.idle_causes);
  // Idle gaps: count, total and max (the fact table keeps no minimum).
  const model::DurationStats* fg[] = {&fleet.idle_gaps.host_wait, &fleet.idle_gaps.kernel_wait,
                                      &fleet.idle_gaps.other};
  const model::DurationStats* lg[] = {&local.idle_gaps.host_wait, &local.idle_gaps.kernel_wait,
                                      &local.idle_gaps.other};
  for (size_t g = 0; g < 3; ++g) {
    EXPECT_EQ(fg[g]->count, lg[g]->count) << g;
    EXPECT_EQ(fg[g]->total_ns, lg[g]->total_ns) << g;
    EXPECT_EQ(fg[g]->max_ns, lg[g]->max_ns) << g;
  }
  for (size_t t = 0; t < fleet.syncs.size(); ++t) {
    EXPECT_EQ(fleet.syncs[t].wait.count, local.syncs[t].wait.count) << t;
    EXPECT_EQ(fleet.syncs[t].wait.total_ns, local.syncs[t].wait.total_ns) << t;
    EXPECT_EQ(fleet.syncs[t].wait.max_ns, local.syncs[t].wait.max_ns) << t;
  }
  ASSERT_EQ(fleet.top_kernels.size(), local.top_kernels.size());
  for (size_t k = 0; k < fleet.top_kernels.size(); ++k) {
    EXPECT_EQ(fleet.top_kernels[k].name, local.top_kernels[k].name);
    EXPECT_EQ(fleet.top_kernels[k].category, local.top_kernels[k].category);
    EXPECT_EQ(fleet.top_kernels[k].subcategory, local.top_kernels[k].subcategory);
    EXPECT_EQ(fleet.top_kernels[k].duration.count, local.top_kernels[k].duration.count);
    EXPECT_EQ(fleet.top_kernels[k].duration.total_ns, local.top_kernels[k].duration.total_ns);
    EXPECT_EQ(fleet.top_kernels[k].duration.min_ns, local.top_kernels[k].duration.min_ns);
    EXPECT_EQ(fleet.top_kernels[k].duration.max_ns, local.top_kernels[k].duration.max_ns);
    // Launch configurations: the same list (configuration, launches, time, order) and count.
    EXPECT_EQ(fleet.top_kernels[k].configs, local.top_kernels[k].configs)
        << fleet.top_kernels[k].name;
    EXPECT_EQ(fleet.top_kernels[k].distinct_configs, local.top_kernels[k].distinct_configs)
        << fleet.top_kernels[k].name;
  }
  EXPECT_EQ(fleet.tail.duration.count, local.tail.duration.count);
  EXPECT_EQ(fleet.tail.duration.total_ns, local.tail.duration.total_ns);
  // tail.distinct_names is not compared: the local merge's is an upper bound (a name evicted in
  // several merges counts each time), the fleet's counts each name once.
  EXPECT_EQ(fleet.steps.plain.count + fleet.steps.prefill.count,
            local.steps.plain.count + local.steps.prefill.count);
  // The forward-phase split: every field, as PhaseSplit::Merge sums it.
  EXPECT_EQ(fleet.phases, local.phases);
}

analyze::ProfileFigures Figures(const std::vector<const model::ProfileWindow*>& windows) {
  std::vector<analyze::AnalysisInput> inputs;
  for (const auto* w : windows) inputs.push_back({"", "", w});
  analyze::AnalysisOptions options;
  options.top = 50;
  return analyze::FiguresFromAnalysis(analyze::Analyze(inputs, options));
}

void ExpectSameFigures(const analyze::ProfileFigures& a, const analyze::ProfileFigures& b) {
  EXPECT_EQ(a.span_ns, b.span_ns);
  EXPECT_EQ(a.busy_ns, b.busy_ns);
  EXPECT_EQ(a.kernel_time_ns, b.kernel_time_ns);
  EXPECT_EQ(a.kernel_count, b.kernel_count);
  auto same = [](const std::map<std::string, analyze::ProfileFigures::Timed>& x,
                 const std::map<std::string, analyze::ProfileFigures::Timed>& y, const char* what) {
    ASSERT_EQ(x.size(), y.size()) << what;
    for (const auto& [k, v] : x) {
      auto it = y.find(k);
      ASSERT_NE(it, y.end()) << what << " " << k;
      EXPECT_EQ(v.time_ns, it->second.time_ns) << what << " " << k;
      EXPECT_EQ(v.count, it->second.count) << what << " " << k;
    }
  };
  same(a.categories, b.categories, "categories");
  same(a.kernels, b.kernels, "kernels");
  same(a.idle_gaps, b.idle_gaps, "idle gaps");
  same(a.syncs, b.syncs, "syncs");
  same(a.phases, b.phases, "phases");
}

TEST_F(FleetProfileServerTest, EqualsTheLocalMergeWholeAndPerSlice) {
  // Two hosts: node-a runs two processes (ranks 0 and 1), node-b one; 6 windows each.
  std::map<std::string, std::vector<model::ProfileWindow>> shipped;  // per process
  const struct {
    const char* host;
    const char* replica;
    uint32_t pid;
    int32_t rank;
    int64_t scale;
  } procs[] = {{"node-a", "r1", 11, 0, 1}, {"node-a", "r1", 12, 1, 1}, {"node-b", "r2", 21, 0, 2}};
  for (const auto& p : procs) {
    std::vector<model::ProfileWindow> ws;
    for (int i = 0; i < 6; ++i) ws.push_back(MakeWindow(i, p.pid, p.rank, p.host, p.scale));
    Ship(p.host, p.replica, p.pid, ws);
    shipped[std::string(p.host) + "/" + std::to_string(p.pid)] = ws;
  }
  FleetProfileQuery q = Selection();
  auto fleet = QueryFleetProfile(*client_, q);
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  ASSERT_EQ(fleet->slices.size(), 1u);
  ASSERT_EQ(fleet->slices[0].size(), 3u);
  EXPECT_EQ(fleet->windows, 18u);
  EXPECT_EQ(fleet->rows, 36u);
  EXPECT_EQ(fleet->processes, 3u);
  EXPECT_EQ(fleet->devices, 6u);
  EXPECT_EQ(fleet->hosts, (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_EQ(fleet->rows_without_bounds, 0u);
  EXPECT_EQ(fleet->unknown_names, 0u);
  std::vector<model::ProfileWindow> local;
  for (const auto& w : fleet->slices[0]) {
    const auto& p = w.processes.at(0);
    SCOPED_TRACE(p.hostname + "/" + std::to_string(p.pid));
    const model::ProfileWindow merged =
        LocalMerge(shipped.at(p.hostname + "/" + std::to_string(p.pid)));
    EXPECT_EQ(w.start_ns, merged.start_ns);
    EXPECT_EQ(w.end_ns, merged.end_ns);
    EXPECT_EQ(p.rank, merged.processes[0].rank);
    EXPECT_EQ(p.world_size, merged.processes[0].world_size);
    ASSERT_EQ(p.devices.size(), 2u);
    for (size_t d = 0; d < 2; ++d) ExpectSameDevice(p.devices[d], merged.processes[0].devices[d]);
    ExpectSameRanges(p.ranges, merged.processes[0].ranges);
    local.push_back(merged);
  }
  std::vector<const model::ProfileWindow*> fw, lw;
  for (const auto& w : fleet->slices[0]) fw.push_back(&w);
  for (const auto& w : local) lw.push_back(&w);
  ExpectSameFigures(Figures(fw), Figures(lw));
  EXPECT_EQ(Figures(fw).phases.size(), model::kPhaseCount);  // the phases did arrive
  EXPECT_FALSE(fleet->no_phases_table);
  EXPECT_FALSE(fleet->no_ranges_table);
  EXPECT_FALSE(fleet->no_launch_configs);
  {
    // The configurations did arrive, summed over the six windows: kernel_2 (kept, two listed a
    // window) ran all five configurations of its pool; its most frequent is the one windows
    // 0..5 list first or second most often. Worked out from MakeWindow by hand for node-b/21's
    // device 0: configuration id c is listed as j = 0 in window c and j = 1 in window c - 1
    // (mod 5), with 10 * (j + 1) + i launches.
    const model::DeviceProfile* d = nullptr;
    for (const auto& w : fleet->slices[0])
      if (w.processes.at(0).pid == 21) d = &w.processes[0].devices.at(0);
    ASSERT_NE(d, nullptr);
    const auto it = std::find_if(d->top_kernels.begin(), d->top_kernels.end(),
                                 [](const model::KernelStats& k) { return k.name == "kernel_2"; });
    ASSERT_NE(it, d->top_kernels.end());
    ASSERT_EQ(it->configs.size(), 5u);
    EXPECT_EQ(it->distinct_configs, 5u + 3u);  // five listed, one unlisted in windows 1, 3, 5
    uint64_t launches = 0;
    for (const model::LaunchConfig& c : it->configs) launches += c.count;
    // Windows 0..5 list j = 0 and j = 1: 10 + i and 20 + i launches.
    EXPECT_EQ(launches, 6u * 30u + 2u * (0 + 1 + 2 + 3 + 4 + 5));
    // Configuration 0: j = 0 in windows 0 and 5 (10, 15), j = 1 in window 4 (24): 49 launches.
    const auto c0 = std::find_if(it->configs.begin(), it->configs.end(),
                                 [](const model::LaunchConfig& c) { return c.grid[0] == 32; });
    ASSERT_NE(c0, it->configs.end());
    EXPECT_EQ(c0->count, 49u);
    EXPECT_EQ(c0->grid, (std::array<int32_t, 3>{32, 3, 1}));
    EXPECT_EQ(c0->registers_per_thread, 32);
    EXPECT_EQ(c0->total_ns, 2 * (3 * 1'000'000 + 0 + 5 + 4));
    EXPECT_TRUE(std::is_sorted(it->configs.begin(), it->configs.end(), model::MoreFrequentConfig));
  }

  // Slices: the window starts, two per slice, as diff cuts a range.
  auto starts = QueryWindowStarts(*client_, q, 100);
  ASSERT_TRUE(starts.ok()) << starts.status().message();
  ASSERT_EQ(starts->size(), 6u);
  q.slice_starts = {(*starts)[0], (*starts)[2], (*starts)[4]};
  auto sliced = QueryFleetProfile(*client_, q);
  ASSERT_TRUE(sliced.ok()) << sliced.status().message();
  ASSERT_EQ(sliced->slices.size(), 3u);
  q.collapse_devices = true;  // one synthetic GPU per slice: the same figures
  auto collapsed = QueryFleetProfile(*client_, q);
  ASSERT_TRUE(collapsed.ok()) << collapsed.status().message();
  ASSERT_EQ(collapsed->slices.size(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    SCOPED_TRACE("slice " + std::to_string(s));
    ASSERT_EQ(collapsed->slices[s].size(), 1u);
    ASSERT_EQ(collapsed->slices[s][0].processes.at(0).devices.size(), 1u);
    std::vector<model::ProfileWindow> merged;
    for (const auto& [name, ws] : shipped) merged.push_back(LocalMerge({ws[2 * s], ws[2 * s + 1]}));
    std::vector<const model::ProfileWindow*> a, b;
    for (const auto& w : sliced->slices[s]) a.push_back(&w);
    for (const auto& w : merged) b.push_back(&w);
    ASSERT_EQ(a.size(), 3u);
    ExpectSameFigures(Figures(a), Figures(b));
    ExpectSameFigures(Figures({&collapsed->slices[s][0]}), Figures(b));
    for (const model::ProfileWindow& w : sliced->slices[s]) {
      const auto& p = w.processes.at(0);
      const auto& ws = shipped.at(p.hostname + "/" + std::to_string(p.pid));
      ExpectSameRanges(p.ranges, LocalMerge({ws[2 * s], ws[2 * s + 1]}).processes[0].ranges);
    }
  }

  // Filters: a label (one replica), a host, a rank, a range that holds nothing.
  FleetProfileQuery r = Selection();
  r.selection.labels = {{"replica", "r2"}};
  auto r2 = QueryFleetProfile(*client_, r);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->hosts, std::vector<std::string>{"node-b"});
  r = Selection();
  r.selection.hosts = {"node-a"};
  r.rank = 1;
  auto rank1 = QueryFleetProfile(*client_, r);
  ASSERT_TRUE(rank1.ok());
  ASSERT_EQ(rank1->slices[0].size(), 1u);
  EXPECT_EQ(rank1->slices[0][0].processes[0].pid, 12u);
  r = Selection();
  r.selection.from_ns = kBase + 7200'000'000'000;
  r.selection.to_ns = r.selection.from_ns + 60'000'000'000;
  auto none = QueryFleetProfile(*client_, r);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->windows, 0u);
  EXPECT_TRUE(none->slices.at(0).empty());
  // FINAL gives the same after a duplicate insert (a retried batch).
  Ship("node-b", "r2", 21, shipped.at("node-b/21"));
  r = Selection();
  r.selection.exact = true;
  auto exact = QueryFleetProfile(*client_, r);
  ASSERT_TRUE(exact.ok()) << exact.status().message();
  std::vector<const model::ProfileWindow*> ew;
  for (const auto& w : exact->slices[0]) ew.push_back(&w);
  ExpectSameFigures(Figures(ew), Figures(lw));
}

// A window without GPU activity (a process idle for a window: no kernels, so no first/last
// activity and no span) is not a row of an older agent: the range still runs from the first
// activity to the last, as the local merge makes it (the live fleet test met it at a replay's
// first window).
TEST_F(FleetProfileServerTest, AWindowWithoutActivityKeepsTheRangeBounds) {
  std::vector<model::ProfileWindow> ws;
  for (int i = 0; i < 3; ++i) ws.push_back(MakeWindow(i, 31, 0, "node-c", 1));
  for (model::DeviceProfile& d : ws[0].processes[0].devices) {
    model::DeviceProfile idle;
    idle.device = d.device;
    idle.device_name = d.device_name;
    d = idle;
  }
  Ship("node-c", "r3", 31, ws);
  auto fleet = QueryFleetProfile(*client_, Selection());
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  EXPECT_EQ(fleet->rows_without_bounds, 0u);
  ASSERT_EQ(fleet->slices.at(0).size(), 1u);
  const model::ProfileWindow merged = LocalMerge(ws);
  const auto& devices = fleet->slices[0][0].processes.at(0).devices;
  ASSERT_EQ(devices.size(), 2u);
  for (size_t d = 0; d < 2; ++d) {
    const model::DeviceProfile& local = merged.processes.at(0).devices.at(d);
    EXPECT_EQ(devices[d].first_start_ns, local.first_start_ns) << d;
    EXPECT_EQ(devices[d].last_end_ns, local.last_end_ns) << d;
    EXPECT_EQ(devices[d].span_ns(), local.span_ns()) << d;
    EXPECT_GT(devices[d].span_ns(), kWindowNs) << d;  // across windows 1 and 2 and the gap
  }
}

TEST_F(FleetProfileServerTest, RowsOfOlderAgentsFallBackToSummedSpans) {
  // An agent before schema 2 writes no first/last activity (the columns read 0).
  ASSERT_TRUE(client_
                  ->InsertJsonEachRow(
                      kWindowsTable,
                      "{\"date\":\"2025-11-27\",\"window_start_ns\":" + std::to_string(kBase) +
                          ",\"window_end_ns\":" + std::to_string(kBase + kWindowNs) +
                          ",\"host\":\"old\",\"pid\":1,\"process_start_ns\":0,\"rank\":0,"
                          "\"world_size\":1,\"device\":0,\"span_ns\":900,\"busy_ns\":600}\n")
                  .ok());
  auto fleet = QueryFleetProfile(*client_, Selection());
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  ASSERT_EQ(fleet->slices[0].size(), 1u);
  const model::DeviceProfile& d = fleet->slices[0][0].processes[0].devices[0];
  EXPECT_EQ(d.span_ns(), 900);
  EXPECT_EQ(d.idle_ns(), 300);
  EXPECT_EQ(fleet->rows_without_bounds, 1u);
}

// A database of schema 3 (agents before the phases and ranges tables): the profile reads without
// phases and range tables.
TEST_F(FleetProfileServerTest, ADatabaseWithoutThePhasesTableHasNoPhases) {
  ClickHouseTarget t = client_->target();
  t.database = "p_schema3";
  const ClickHouseClient old(t);
  for (const Migration& m : Migrations())
    for (const std::string& statement : m.statements)
      if (m.version <= 3) {
        ASSERT_TRUE(old.Execute(WithDatabase(statement, t.database)).ok());
      }
  FleetIdentity identity;
  identity.labels = {{"host", "node-old"}};
  wire::Hello hello;
  hello.pid = 41;
  RowBatch batch;
  EncodeWindow(identity, hello, MakeWindow(0, 41, 0, "node-old", 1), &batch);
  ASSERT_GT(batch.rows[RowBatch::kPhases], 0u);
  ASSERT_TRUE(old.InsertJsonEachRow(kWindowsTable, batch.body[RowBatch::kWindows]).ok());
  auto profile = QueryFleetProfile(old, Selection());
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  EXPECT_TRUE(profile->no_phases_table);
  EXPECT_TRUE(profile->no_ranges_table);
  EXPECT_TRUE(profile->slices.at(0).at(0).processes.at(0).ranges.empty());
  ASSERT_EQ(profile->slices.at(0).size(), 1u);
  for (const model::DeviceProfile& d : profile->slices[0][0].processes.at(0).devices)
    EXPECT_TRUE(d.phases.empty());
  EXPECT_TRUE(profile->no_launch_configs);
}

// A database of schema 4 (agents before the launch-configuration columns): the profile reads
// its kernels without configurations, no error; once an agent of schema 5 has migrated it, the
// same rows read empty configurations and the new rows' configurations arrive.
TEST_F(FleetProfileServerTest, ADatabaseOfSchemaFourHasNoLaunchConfigs) {
  ClickHouseTarget t = client_->target();
  t.database = "p_schema4";
  const ClickHouseClient old(t);
  for (const Migration& m : Migrations())
    for (const std::string& statement : m.statements)
      if (m.version <= 4) {
        ASSERT_TRUE(old.Execute(WithDatabase(statement, t.database)).ok());
      }
  ASSERT_TRUE(old.Execute("INSERT INTO p_schema4.inferscope_schema VALUES (4, 0)").ok());
  // What an agent of schema 4 shipped: the same window without configurations.
  model::ProfileWindow w = MakeWindow(0, 42, 0, "node-4", 1);
  for (model::DeviceProfile& d : w.processes[0].devices)
    for (model::KernelStats& k : d.top_kernels) {
      k.configs.clear();
      k.distinct_configs = 0;
    }
  FleetIdentity identity;
  identity.labels = {{"host", "node-4"}};
  wire::Hello hello;
  hello.pid = 42;
  RowBatch batch;
  EncodeWindow(identity, hello, w, &batch);
  ASSERT_EQ(batch.body[RowBatch::kKernels].find("config_"), std::string::npos);
  ASSERT_TRUE(old.InsertJsonEachRow(kKernelsTable, batch.body[RowBatch::kKernels]).ok());
  ASSERT_TRUE(old.InsertJsonEachRow(kWindowsTable, batch.body[RowBatch::kWindows]).ok());
  auto profile = QueryFleetProfile(old, Selection());
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  EXPECT_TRUE(profile->no_launch_configs);
  ASSERT_EQ(profile->slices.at(0).size(), 1u);
  for (const model::DeviceProfile& d : profile->slices[0][0].processes.at(0).devices) {
    EXPECT_EQ(d.top_kernels.size(), static_cast<size_t>(kTopK));
    for (const model::KernelStats& k : d.top_kernels) {
      EXPECT_TRUE(k.configs.empty()) << k.name;
      EXPECT_EQ(k.distinct_configs, 0u) << k.name;
    }
  }
  // An agent of schema 5 migrates the database and ships window 1 with its configurations.
  auto found = old.EnsureSchema();
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, 4);
  const model::ProfileWindow w1 = MakeWindow(1, 42, 0, "node-4", 1);
  RowBatch batch1;
  EncodeWindow(identity, hello, w1, &batch1);
  ASSERT_TRUE(old.InsertJsonEachRow(kKernelsTable, batch1.body[RowBatch::kKernels]).ok());
  ASSERT_TRUE(old.InsertJsonEachRow(kWindowsTable, batch1.body[RowBatch::kWindows]).ok());
  auto migrated = QueryFleetProfile(old, Selection());
  ASSERT_TRUE(migrated.ok()) << migrated.status().message();
  EXPECT_FALSE(migrated->no_launch_configs);
  // The old window's rows add nothing: the configurations are window 1's, as the local merge of
  // the two windows (window 0 without configurations) makes them.
  const model::ProfileWindow local = LocalMerge({w, w1});
  const auto& devices = migrated->slices.at(0).at(0).processes.at(0).devices;
  ASSERT_EQ(devices.size(), 2u);
  for (size_t d = 0; d < 2; ++d) {
    const auto& fleet_kernels = devices[d].top_kernels;
    const auto& local_kernels = local.processes[0].devices[d].top_kernels;
    ASSERT_EQ(fleet_kernels.size(), local_kernels.size());
    for (size_t k = 0; k < fleet_kernels.size(); ++k) {
      EXPECT_EQ(fleet_kernels[k].configs, local_kernels[k].configs) << fleet_kernels[k].name;
      EXPECT_EQ(fleet_kernels[k].distinct_configs, local_kernels[k].distinct_configs);
      EXPECT_FALSE(fleet_kernels[k].configs.empty()) << fleet_kernels[k].name;
    }
  }
}

TEST_F(FleetProfileServerTest, TablesOfAnOlderAgentSayWhatToAdd) {
  ClickHouseTarget t = client_->target();
  t.database = "p_older";
  const ClickHouseClient old(t);
  ASSERT_TRUE(old.Execute("CREATE DATABASE IF NOT EXISTS p_older").ok());
  ASSERT_TRUE(old.Execute("CREATE TABLE IF NOT EXISTS p_older.inferscope_windows (date Date, "
                          "window_start_ns Int64, window_end_ns Int64, host String, pid UInt32, "
                          "process_start_ns Int64, rank Int32, device UInt32, "
                          "label_keys Array(String), label_values Array(String), span_ns Int64) "
                          "ENGINE = MergeTree() PARTITION BY date ORDER BY host")
                  .ok());
  auto profile = QueryFleetProfile(old, Selection());
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.status().code(), base::StatusCode::kUnsupported);
  EXPECT_NE(profile.status().message().find("created by an older agent"), std::string::npos)
      << profile.status().message();
}

}  // namespace
}  // namespace inferscope::fleet
