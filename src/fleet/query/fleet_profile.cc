// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/fleet/query/fleet_profile.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "src/fleet/sink/schema.h"
#include "src/model/events.h"
#include "src/model/taxonomy.h"

namespace inferscope::fleet {
namespace {

// The columns a device is keyed by in every fact table, after the slice.
constexpr const char* kDeviceKey = "host, pid, process_start_ns, rank, device";
constexpr size_t kKeyColumns = 6;  // slice + the device key
// The longest kernel name list the configuration queries send (quoted names).
constexpr size_t kMaxKernelListBytes = 128 * 1024;

template <typename T>
bool ParseNumber(const std::string& s, T* out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// Which slice a window falls in: how many slice starts after the first are <= its start. A sum
// of comparisons, not arrayCount with a lambda: ClickHouse runs each comparison vectorized over
// the column, where 18.16's lambda materializes the array per row (several times slower;
// measured: docs/benchmarks.md, "The fleet's context and diff"). Starts before the first go to
// slice 0.
std::string SliceSql(const FleetProfileQuery& q) {
  if (q.slice_starts.size() <= 1) return "toUInt32(0)";
  std::string sum;
  for (size_t i = 1; i < q.slice_starts.size(); ++i)
    sum += (i > 1 ? " + " : "") + std::string("(window_start_ns >= ") +
           std::to_string(q.slice_starts[i]) + ")";
  return "toUInt32(" + sum + ")";
}

std::string Where(const FleetProfileQuery& q) {
  std::string where = FleetWhereSql(q.selection, true);
  if (q.pid) where += " AND pid = " + std::to_string(*q.pid);
  if (q.rank) where += " AND rank = " + std::to_string(*q.rank);
  if (q.device) where += " AND device = " + std::to_string(*q.device);
  return where;
}

// `array_join`: an ARRAY JOIN clause, which goes between the table (and FINAL) and WHERE.
std::string From(const std::string& database, const char* table, const FleetProfileQuery& q,
                 const std::string& array_join = "") {
  return " FROM " + database + "." + table + (q.selection.exact ? " FINAL" : "") + array_join +
         " WHERE " + Where(q);
}

// " AND kernel IN (...)" for config_kernels (empty: no condition).
std::string KernelNamesSql(const FleetProfileQuery& q) {
  if (q.config_kernels.empty()) return "";
  std::string in = " AND kernel IN (";
  for (size_t i = 0; i < q.config_kernels.size(); ++i)
    in += (i ? ", " : "") + SqlQuote(q.config_kernels[i]);
  return in + ")";
}

// A device of a process, and the slice, as the rows name them.
struct DeviceKey {
  uint32_t slice = 0;
  std::string host;
  uint32_t pid = 0;
  int64_t process_start_ns = 0;
  int32_t rank = -1;
  uint32_t device = 0;
  auto Tie() const { return std::tie(slice, host, rank, pid, process_start_ns, device); }
  bool operator<(const DeviceKey& o) const { return Tie() < o.Tie(); }
};

bool ParseKey(const std::vector<std::string>& row, DeviceKey* k) {
  k->host = row[1];
  return ParseNumber(row[0], &k->slice) && ParseNumber(row[2], &k->pid) &&
         ParseNumber(row[3], &k->process_start_ns) && ParseNumber(row[4], &k->rank) &&
         ParseNumber(row[5], &k->device);
}

// A device's sums while the rows arrive.
struct DeviceSums {
  int32_t world_size = -1;
  int64_t window_start_ns = 0, window_end_ns = 0;
  model::DeviceProfile profile;
  uint64_t top_count = 0;  // kernels kept: calls and time, to fold the cut ones into the tail
  int64_t top_ns = 0;
  uint64_t top_names = 0;
};

base::StatusOr<std::vector<std::vector<std::string>>> Run(const ClickHouseClient& client,
                                                          const std::string& sql, size_t columns) {
  auto answer = client.Execute(sql);
  const std::string& error = answer.ok() ? std::string() : answer.status().message();
  if (error.find("Code: 47,") != std::string::npos &&
      (error.find("first_start_ns") != std::string::npos ||
       error.find("last_end_ns") != std::string::npos || error.find("gap_") != std::string::npos))
    // A windows table created before the first/last-activity columns existed.
    return base::UnsupportedError(
        client.target().ToUrl() + ": " + kWindowsTable +
        " has no first_start_ns/last_end_ns/gap_* columns (schema 3; created by an older "
        "agent): start an agent of this version with --sink on it, which migrates the schema");
  ASSIGN_OR_RETURN(std::string body, std::move(answer));
  ASSIGN_OR_RETURN(auto rows, ParseTabSeparated(body));
  if (!rows.empty() && rows.front().size() != columns)
    return base::DataLossError(client.target().ToUrl() + ": unexpected answer (" +
                               std::to_string(rows.front().size()) + " columns, not " +
                               std::to_string(columns) + ")");
  return rows;
}

// A table of a newer schema than the database has (Code 60: no such table): the caller reads
// nothing from it.
bool MissingTable(const base::Status& status, const char* table) {
  return !status.ok() && status.message().find("Code: 60,") != std::string::npos &&
         status.message().find(table) != std::string::npos;
}

// A column of a newer schema than the table has: the caller reads nothing from it. 18.16 says
// Code 47 (unknown identifier) where a plain expression names it and Code 10 ("Not found column
// ... in block") where ARRAY JOIN does.
bool MissingColumn(const base::Status& status, const char* column) {
  if (status.ok() || status.message().find(column) == std::string::npos) return false;
  return status.message().find("Code: 47,") != std::string::npos ||
         status.message().find("Code: 10,") != std::string::npos;
}

base::Status BadNumber(const ClickHouseClient& client) {
  return base::DataLossError(client.target().ToUrl() + ": unexpected number in answer");
}

int SyncTypeIndex(const std::string& name) {
  for (size_t t = 0; t < static_cast<size_t>(model::SyncType::kCount); ++t)
    if (name == model::kSyncTypeNames[t]) return static_cast<int>(t);
  return -1;
}

}  // namespace

bool ParseLaunchConfigKey(const std::string& s, model::LaunchConfig* c) {
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return false;
  std::array<int32_t, 10> key{};
  size_t at = 1;
  for (size_t f = 0; f < key.size(); ++f) {
    const char* end = s.data() + s.size() - 1;
    const auto r = std::from_chars(s.data() + at, end, key[f]);
    if (r.ec != std::errc()) return false;
    at = static_cast<size_t>(r.ptr - s.data());
    const char want = f + 1 < key.size() ? ',' : ']';
    if (s[at] != want) return false;
    ++at;
  }
  if (at != s.size()) return false;
  c->grid = {key[0], key[1], key[2]};
  c->block = {key[3], key[4], key[5]};
  c->registers_per_thread = key[6];
  c->static_shared_bytes = key[7];
  c->dynamic_shared_bytes = key[8];
  c->shared_bytes = key[9];
  return true;
}

std::string FleetProfileSql(const std::string& database, const FleetProfileQuery& q,
                            FleetFact fact) {
  const bool collapse = q.collapse_devices;
  // Collapsed, the key columns are constants, not aliased: ClickHouse would substitute an alias
  // named like a column into the WHERE clause too.
  const std::string key =
      collapse ? "'', toUInt32(0), toInt64(0), toInt32(-1), toUInt32(0)" : kDeviceKey;
  const std::string by = collapse ? "slice" : std::string("slice, ") + kDeviceKey;
  const std::string head = "SELECT " + SliceSql(q) + " AS slice, " + key;
  const std::string group = " GROUP BY " + by;
  const std::string order = " ORDER BY " + by;
  switch (fact) {
    case FleetFact::kDevices: {
      // Per device: the bounds, then sums (or maxima). minIf/max over the activity bounds skip
      // rows without them (0); their count tells the reader to fall back to the summed spans.
      static const std::pair<const char*, bool> kFigures[] = {
          // expression, is a maximum
          {"sum(busy_ns)", false},
          {"sum(compute_ns)", false},
          {"sum(communication_ns)", false},
          {"sum(communication_overlap_ns)", false},
          {"sum(kernel_count)", false},
          {"sum(idle_allocation_ns)", false},
          {"sum(idle_sync_ns)", false},
          {"sum(idle_launch_ns)", false},
          {"sum(idle_host_idle_ns)", false},
          {"sum(idle_dependency_ns)", false},
          {"sum(idle_queued_ns)", false},
          {"sum(idle_unattributed_ns)", false},
          {"sum(idle_intervals)", false},
          {"sum(step_count)", false},
          {"sum(step_total_ns)", false},
          {"max(step_max_ns)", true},
          {"sum(gap_host_wait_count)", false},
          {"sum(gap_host_wait_ns)", false},
          {"max(gap_host_wait_max_ns)", true},
          {"sum(gap_kernel_wait_count)", false},
          {"sum(gap_kernel_wait_ns)", false},
          {"max(gap_kernel_wait_max_ns)", true},
          {"sum(gap_other_count)", false},
          {"sum(gap_other_ns)", false},
          {"max(gap_other_max_ns)", true}};
      std::string inner =
          "SELECT " + SliceSql(q) + " AS slice, " + kDeviceKey +
          ", any(world_size) AS c_world, any(gpu_model) AS c_gpu, "
          "count() AS c_rows, min(window_start_ns) AS c_start, "
          "max(window_end_ns) AS c_end, minIf(first_start_ns, last_end_ns > 0) "
          "AS c_first, max(last_end_ns) AS c_last, countIf(last_end_ns = 0 AND span_ns > 0) "
          "AS c_nobounds, sum(span_ns) AS c_span";
      for (size_t i = 0; i < std::size(kFigures); ++i)
        inner += std::string(", ") + kFigures[i].first + " AS c_" + std::to_string(i);
      inner += From(database, kWindowsTable, q) + " GROUP BY slice, " + kDeviceKey;
      if (!collapse) return inner + order + " FORMAT TabSeparated";
      // One synthetic GPU per slice whose span is the sum of the GPUs' range spans (first
      // activity to last, or the summed window spans for rows without the bounds): diff's
      // figures sum over ranks, so they are the same as over the GPUs one by one.
      std::string outer =
          "SELECT slice, " + key +
          ", toInt32(-1), any(c_gpu), sum(c_rows), min(c_start), max(c_end), min(c_start), "
          "min(c_start) + sum(if(c_nobounds = 0 AND c_last > 0, c_last - c_first, c_span)), "
          "toUInt64(0), sum(c_span)";
      for (size_t i = 0; i < std::size(kFigures); ++i)
        outer +=
            std::string(kFigures[i].second ? ", max(c_" : ", sum(c_") + std::to_string(i) + ")";
      return outer + " FROM (" + inner + ") GROUP BY slice ORDER BY slice FORMAT TabSeparated";
    }
    case FleetFact::kCategories:
      return head + ", category, sum(kernel_count), sum(time_ns)" +
             From(database, kCategoriesTable, q) + group + ", category" + order +
             ", category FORMAT TabSeparated";
    case FleetFact::kKernels:
      // The top_k heaviest names per device and slice; LIMIT BY keeps the answer to that.
      return head +
             ", kernel, any(category), any(subcategory), sum(kernel_count) AS n, "
             "sum(total_ns) AS t, min(min_ns), max(max_ns)" +
             From(database, kKernelsTable, q) + " AND is_tail = 0" + group + ", kernel" + order +
             ", t DESC, n DESC, kernel LIMIT " + std::to_string(std::max(1, q.top_k)) + " BY " +
             by + " FORMAT TabSeparated";
    case FleetFact::kKernelTotals:
      // Every named kernel's calls, time and names, and the windows' own tails: what the
      // kept kernels leave is the device's tail.
      return head +
             ", sumIf(kernel_count, is_tail = 0), sumIf(total_ns, is_tail = 0), "
             "uniqIf(kernel, is_tail = 0), sumIf(kernel_count, is_tail = 1), "
             "sumIf(total_ns, is_tail = 1), sumIf(distinct_names, is_tail = 1), "
             "maxIf(max_ns, is_tail = 1)" +
             From(database, kKernelsTable, q) + group + order + " FORMAT TabSeparated";
    case FleetFact::kSyncs:
      return head + ", sync_type, sum(sync_count), sum(wait_ns), max(max_ns)" +
             From(database, kSyncsTable, q) + group + ", sync_type" + order +
             ", sync_type FORMAT TabSeparated";
    case FleetFact::kPhases:
      return head + ", phase, sum(steps), sum(step_ns), sum(busy_ns), sum(ops)" +
             From(database, kPhasesTable, q) + group + ", phase" + order +
             ", phase FORMAT TabSeparated";
    case FleetFact::kPhaseCategories:
      return head + ", phase, category, sum(ns)" +
             From(database, kPhasesTable, q,
                  " ARRAY JOIN categories AS category, category_ns AS ns") +
             group + ", phase, category" + order + ", phase, category FORMAT TabSeparated";
    case FleetFact::kRanges:
      // Per process (the rows' device is 0): every name's sums, the tail rows' sums apart.
      return head +
             ", is_tail, name, sum(instances), sum(total_ns), minIf(min_ns, instances > 0), "
             "max(max_ns), sum(gpu_ops), sum(gpu_time_ns), sum(tail_names), sum(late)" +
             From(database, kRangesTable, q) + group + ", is_tail, name" + order +
             ", is_tail, name FORMAT TabSeparated";
    case FleetFact::kLaunchConfigs:
      // The named kernels' configurations (config_kernels: the kept ones); a few per kernel, so
      // at most kept names x configurations rows per device and slice travel.
      return head + ", kernel, c_key, sum(c_n), sum(c_t)" +
             From(database, kKernelsTable, q,
                  " ARRAY JOIN config_key AS c_key, config_count AS c_n, config_ns AS c_t") +
             " AND is_tail = 0" + KernelNamesSql(q) + group + ", kernel, c_key FORMAT TabSeparated";
    case FleetFact::kUnlistedConfigs:
      return head + ", kernel, sum(distinct_configs - length(config_count))" +
             From(database, kKernelsTable, q) +
             " AND is_tail = 0 AND distinct_configs > length(config_count)" + KernelNamesSql(q) +
             group + ", kernel FORMAT TabSeparated";
    case FleetFact::kWindowCount:
      return "SELECT uniqExact(host, pid, process_start_ns, window_start_ns)" +
             From(database, kWindowsTable, q) + " FORMAT TabSeparated";
  }
  return "";
}

std::string FleetWindowStartsSql(const std::string& database, const FleetProfileQuery& q,
                                 size_t limit) {
  return "SELECT window_start_ns" + From(database, kWindowsTable, q) +
         " GROUP BY window_start_ns ORDER BY window_start_ns LIMIT " + std::to_string(limit + 1) +
         " FORMAT TabSeparated";
}

base::StatusOr<std::vector<int64_t>> QueryWindowStarts(const ClickHouseClient& client,
                                                       const FleetProfileQuery& q, size_t limit) {
  ASSIGN_OR_RETURN(auto rows,
                   Run(client, FleetWindowStartsSql(client.target().database, q, limit), 1));
  std::vector<int64_t> starts;
  for (const auto& row : rows) {
    int64_t v = 0;
    if (!ParseNumber(row[0], &v)) return BadNumber(client);
    starts.push_back(v);
  }
  return starts;
}

base::StatusOr<FleetProfile> QueryFleetProfile(const ClickHouseClient& client,
                                               const FleetProfileQuery& q) {
  const std::string& db = client.target().database;
  std::map<DeviceKey, DeviceSums> devices;
  FleetProfile out;

  ASSIGN_OR_RETURN(auto rows,
                   Run(client, FleetProfileSql(db, q, FleetFact::kDevices), kKeyColumns + 34));
  for (const auto& row : rows) {
    DeviceKey key;
    if (!ParseKey(row, &key)) return BadNumber(client);
    DeviceSums& s = devices[key];
    model::DeviceProfile& d = s.profile;
    d.device = key.device;
    d.device_name = row[7];
    uint64_t count = 0, without_bounds = 0;
    int64_t first = 0, last = 0, span = 0, step_total = 0, step_max = 0;
    uint64_t step_count = 0;
    size_t i = 8;
    bool ok = ParseNumber(row[6], &s.world_size) && ParseNumber(row[i++], &count) &&
              ParseNumber(row[i++], &s.window_start_ns) &&
              ParseNumber(row[i++], &s.window_end_ns) && ParseNumber(row[i++], &first) &&
              ParseNumber(row[i++], &last) && ParseNumber(row[i++], &without_bounds) &&
              ParseNumber(row[i++], &span) && ParseNumber(row[i++], &d.busy_ns) &&
              ParseNumber(row[i++], &d.compute_ns) && ParseNumber(row[i++], &d.communication_ns) &&
              ParseNumber(row[i++], &d.communication_overlap_ns) &&
              ParseNumber(row[i++], &d.kernel_count);
    for (size_t c = 0; ok && c < model::kIdleCauseCount; ++c)
      ok = ParseNumber(row[i++], &d.idle_causes.ns[c]);
    ok = ok && ParseNumber(row[i++], &d.idle_causes.intervals) &&
         ParseNumber(row[i++], &step_count) && ParseNumber(row[i++], &step_total) &&
         ParseNumber(row[i++], &step_max);
    for (model::DurationStats* g :
         {&d.idle_gaps.host_wait, &d.idle_gaps.kernel_wait, &d.idle_gaps.other}) {
      ok = ok && ParseNumber(row[i++], &g->count) && ParseNumber(row[i++], &g->total_ns) &&
           ParseNumber(row[i++], &g->max_ns);
      if (g->count == 0) *g = {};
    }
    if (!ok) return BadNumber(client);
    out.rows += count;
    // The range's span runs from the first to the last activity (gaps between windows are idle),
    // as MergeWindow makes it; rows without the bounds (agents before schema 3: no bounds but a
    // span; a window without GPU activity has neither and is no such row) only have their own
    // spans, which are then summed.
    if (without_bounds == 0 && last > 0) {
      d.first_start_ns = first;
      d.last_end_ns = last;
    } else {
      out.rows_without_bounds += without_bounds;
      d.first_start_ns = s.window_start_ns;
      d.last_end_ns = s.window_start_ns + span;
    }
    // The fact table keeps plain and prefill steps as one figure (their sum).
    d.steps.plain.count = step_count;
    d.steps.plain.total_ns = step_total;
    d.steps.plain.max_ns = step_max;
    if (step_count > 0) d.steps.plain.min_ns = 0;  // not kept: unknown
  }

  auto device_of = [&](const std::vector<std::string>& row) -> DeviceSums* {
    DeviceKey key;
    if (!ParseKey(row, &key)) return nullptr;
    auto it = devices.find(key);
    return it == devices.end() ? nullptr : &it->second;
  };

  ASSIGN_OR_RETURN(rows,
                   Run(client, FleetProfileSql(db, q, FleetFact::kCategories), kKeyColumns + 3));
  for (const auto& row : rows) {
    DeviceSums* s = device_of(row);
    model::Category c;
    if (!s || !model::ParseCategory(row[6], &c)) {
      ++out.unknown_names;
      continue;
    }
    model::CategoryStats& cs = s->profile.categories[static_cast<size_t>(c)];
    if (!ParseNumber(row[7], &cs.count) || !ParseNumber(row[8], &cs.time_ns))
      return BadNumber(client);
  }

  ASSIGN_OR_RETURN(rows, Run(client, FleetProfileSql(db, q, FleetFact::kKernels), kKeyColumns + 7));
  for (const auto& row : rows) {
    DeviceSums* s = device_of(row);
    if (!s) {
      ++out.unknown_names;
      continue;
    }
    model::KernelStats k;
    k.name = row[6];
    if (!model::ParseCategory(row[7], &k.category)) k.category = model::Category::kOther;
    k.subcategory = row[8];
    if (!ParseNumber(row[9], &k.duration.count) || !ParseNumber(row[10], &k.duration.total_ns) ||
        !ParseNumber(row[11], &k.duration.min_ns) || !ParseNumber(row[12], &k.duration.max_ns))
      return BadNumber(client);
    s->top_count += k.duration.count;
    s->top_ns += k.duration.total_ns;
    ++s->top_names;
    s->profile.top_kernels.push_back(std::move(k));
  }

  // The kept kernels' launch configurations (schema 5), folded as the store's window merge
  // folds them (model::MergeLaunchConfigs).
  if (q.launch_configs && !devices.empty()) {
    // Only the kept names' rows travel, unless the list would make the query text long (18.16's
    // max_query_size is 256 KiB): then every name's, and the others are dropped here.
    FleetProfileQuery cq = q;
    std::set<std::string> kept;
    size_t bytes = 0;
    for (const auto& [key, s] : devices)
      for (const model::KernelStats& k : s.profile.top_kernels)
        if (kept.insert(k.name).second) bytes += k.name.size() + 4;
    if (bytes <= kMaxKernelListBytes) cq.config_kernels.assign(kept.begin(), kept.end());
    auto config_rows =
        Run(client, FleetProfileSql(db, cq, FleetFact::kLaunchConfigs), kKeyColumns + 4);
    if (MissingColumn(config_rows.status(), "config_")) {
      out.no_launch_configs = true;
    } else {
      ASSIGN_OR_RETURN(rows, std::move(config_rows));
      // Per device and kernel: the configurations (distinct, summed) and those seen but unlisted.
      std::map<std::pair<DeviceSums*, std::string>,
               std::pair<std::vector<model::LaunchConfig>, uint64_t>>
          configs;
      for (const auto& row : rows) {
        DeviceSums* s = device_of(row);
        if (!s) continue;
        model::LaunchConfig c;
        if (!ParseLaunchConfigKey(row[7], &c) || !ParseNumber(row[8], &c.count) ||
            !ParseNumber(row[9], &c.total_ns))
          return BadNumber(client);
        configs[{s, row[6]}].first.push_back(c);
      }
      ASSIGN_OR_RETURN(
          rows, Run(client, FleetProfileSql(db, cq, FleetFact::kUnlistedConfigs), kKeyColumns + 2));
      for (const auto& row : rows) {
        DeviceSums* s = device_of(row);
        if (!s) continue;
        uint64_t unlisted = 0;
        if (!ParseNumber(row[7], &unlisted)) return BadNumber(client);
        configs[{s, row[6]}].second += unlisted;
      }
      for (auto& [key, s] : devices)
        for (model::KernelStats& k : s.profile.top_kernels) {
          auto it = configs.find({&s, k.name});
          if (it == configs.end()) continue;
          const auto& [listed, unlisted] = it->second;
          model::MergeLaunchConfigs(listed, listed.size() + unlisted, &k.configs,
                                    &k.distinct_configs);
        }
    }
  }

  ASSIGN_OR_RETURN(rows,
                   Run(client, FleetProfileSql(db, q, FleetFact::kKernelTotals), kKeyColumns + 7));
  for (const auto& row : rows) {
    DeviceSums* s = device_of(row);
    if (!s) continue;
    uint64_t named_count = 0, names = 0, tail_count = 0, tail_names = 0;
    int64_t named_ns = 0, tail_ns = 0, tail_max = 0;
    if (!ParseNumber(row[6], &named_count) || !ParseNumber(row[7], &named_ns) ||
        !ParseNumber(row[8], &names) || !ParseNumber(row[9], &tail_count) ||
        !ParseNumber(row[10], &tail_ns) || !ParseNumber(row[11], &tail_names) ||
        !ParseNumber(row[12], &tail_max))
      return BadNumber(client);
    model::KernelStats& tail = s->profile.tail;
    tail.name = "(tail)";
    tail.duration.count = tail_count + (named_count - std::min(named_count, s->top_count));
    tail.duration.total_ns = tail_ns + std::max<int64_t>(0, named_ns - s->top_ns);
    tail.duration.max_ns = tail_max;
    if (tail.duration.count > 0) tail.duration.min_ns = 0;  // not kept: unknown
    tail.distinct_names = tail_names + (names - std::min(names, s->top_names));
    if (tail.duration.count == 0) tail = {};
  }

  ASSIGN_OR_RETURN(rows, Run(client, FleetProfileSql(db, q, FleetFact::kSyncs), kKeyColumns + 4));
  for (const auto& row : rows) {
    DeviceSums* s = device_of(row);
    const int t = SyncTypeIndex(row[6]);
    if (!s || t < 0) {
      ++out.unknown_names;
      continue;
    }
    model::DurationStats& w = s->profile.syncs[static_cast<size_t>(t)].wait;
    if (!ParseNumber(row[7], &w.count) || !ParseNumber(row[8], &w.total_ns) ||
        !ParseNumber(row[9], &w.max_ns))
      return BadNumber(client);
    if (w.count > 0) w.min_ns = 0;  // not kept: unknown
  }

  // The forward-phase split, summed per device as model::PhaseSplit::Merge sums a range's windows.
  auto phase_rows = Run(client, FleetProfileSql(db, q, FleetFact::kPhases), kKeyColumns + 5);
  if (MissingTable(phase_rows.status(), kPhasesTable)) {
    out.no_phases_table = true;
  } else {
    for (FleetFact fact : {FleetFact::kPhases, FleetFact::kPhaseCategories}) {
      if (fact == FleetFact::kPhaseCategories)
        phase_rows = Run(client, FleetProfileSql(db, q, fact), kKeyColumns + 3);
      ASSIGN_OR_RETURN(rows, std::move(phase_rows));
      for (const auto& row : rows) {
        DeviceSums* s = device_of(row);
        const RowFold f = !s ? RowFold::kUnknownName
                          : fact == FleetFact::kPhases
                              ? FoldPhaseRow(row, kKeyColumns, &s->profile.phases)
                              : FoldPhaseCategoryRow(row, kKeyColumns, &s->profile.phases);
        if (f == RowFold::kBadNumber) return BadNumber(client);
        if (f == RowFold::kUnknownName) ++out.unknown_names;
      }
    }
  }

  // NVTX range tables, per process (keyed like a device row of device 0), cut as the store's
  // merge cuts them once all windows are in.
  std::map<DeviceKey, model::RangeTable> ranges;
  auto range_rows = Run(client, FleetProfileSql(db, q, FleetFact::kRanges), kKeyColumns + 10);
  if (MissingTable(range_rows.status(), kRangesTable)) {
    out.no_ranges_table = true;
  } else {
    ASSIGN_OR_RETURN(rows, std::move(range_rows));
    for (const auto& row : rows) {
      DeviceKey key;
      if (!ParseKey(row, &key)) return BadNumber(client);
      key.device = 0;
      if (FoldRangeRow(row, kKeyColumns, &ranges[key]) == RowFold::kBadNumber)
        return BadNumber(client);
    }
    for (auto& [key, table] : ranges)
      table.Trim(static_cast<size_t>(std::max(0, q.top_k)), /*sort=*/true);
  }

  ASSIGN_OR_RETURN(rows, Run(client, FleetProfileSql(db, q, FleetFact::kWindowCount), 1));
  if (!rows.empty() && !ParseNumber(rows[0][0], &out.windows)) return BadNumber(client);

  // Fold the devices into one window per (slice, process); the map's order (slice, host, rank,
  // pid, process start, device) keeps processes and devices sorted as the Aggregator emits them.
  uint32_t max_slice = 0;
  for (const auto& [key, s] : devices) max_slice = std::max(max_slice, key.slice);
  out.slices.resize(devices.empty() ? std::max<size_t>(1, q.slice_starts.size())
                                    : std::max<size_t>(max_slice + 1, q.slice_starts.size()));
  std::set<std::tuple<std::string, uint32_t, int64_t>> processes;
  std::set<std::tuple<std::string, uint32_t, int64_t, uint32_t>> gpus;
  std::set<std::string> hosts;
  const DeviceKey* prev = nullptr;
  for (const auto& [key, s] : devices) {
    std::vector<model::ProfileWindow>& slice = out.slices[key.slice];
    if (!prev || prev->slice != key.slice || prev->host != key.host || prev->pid != key.pid ||
        prev->process_start_ns != key.process_start_ns || prev->rank != key.rank) {
      model::ProfileWindow w;
      w.start_ns = s.window_start_ns;
      w.end_ns = s.window_end_ns;
      model::ProcessProfile p;
      p.pid = key.pid;
      p.rank = key.rank;
      p.world_size = s.world_size;
      p.hostname = key.host;
      DeviceKey process_key = key;
      process_key.device = 0;
      if (auto it = ranges.find(process_key); it != ranges.end()) p.ranges = std::move(it->second);
      w.processes.push_back(std::move(p));
      slice.push_back(std::move(w));
    }
    model::ProfileWindow& w = slice.back();
    w.start_ns = std::min(w.start_ns, s.window_start_ns);
    w.end_ns = std::max(w.end_ns, s.window_end_ns);
    w.processes.back().devices.push_back(s.profile);
    processes.insert({key.host, key.pid, key.process_start_ns});
    gpus.insert({key.host, key.pid, key.process_start_ns, key.device});
    hosts.insert(key.host);
    prev = &key;
  }
  out.processes = processes.size();
  out.devices = gpus.size();
  out.hosts.assign(hosts.begin(), hosts.end());
  return out;
}

base::StatusOr<analyze::Analysis> QueryFleetKernels(const ClickHouseClient& client,
                                                    const FleetQuery& selection, int top_k,
                                                    bool* no_launch_configs) {
  FleetProfileQuery q;
  q.selection = selection;
  q.top_k = std::max(1, top_k);
  q.collapse_devices = true;
  ASSIGN_OR_RETURN(FleetProfile fleet, QueryFleetProfile(client, q));
  if (no_launch_configs) *no_launch_configs = fleet.no_launch_configs;
  analyze::AnalysisOptions options;
  options.top = q.top_k;
  options.window_kernels_view = true;
  std::vector<analyze::AnalysisInput> inputs;
  const std::string source = client.target().ToUrl();
  for (const model::ProfileWindow& w : fleet.slices.at(0))
    inputs.push_back({source, "clickhouse", &w});
  analyze::Analysis analysis = analyze::Analyze(inputs, options);
  // The windows are this function's: the analysis keeps their rows and views, not them.
  for (analyze::AnalysisInput& in : analysis.inputs) in.window = nullptr;
  return analysis;
}

base::StatusOr<ClickHouseTarget> ResolveFleetSource(const std::string& url,
                                                    const std::string& credentials_path) {
  auto target = ParseClickHouseUrl(url);
  if (!target.ok()) return base::InvalidArgumentError("--source: " + target.status().message());
  if (!credentials_path.empty()) {
    auto creds = ReadCredentialsFile(credentials_path);
    if (!creds.ok())
      return base::InvalidArgumentError("--source-credentials: " + creds.status().message());
    target->user = creds->user;
    target->password = creds->password;
  }
  return target;
}

}  // namespace inferscope::fleet
