// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/fleet/sink/row_encoder.h"

#include <charconv>
#include <cstdio>
#include <vector>

#include "src/base/json_writer.h"
#include "src/fleet/sink/schema.h"
#include "src/model/events.h"
#include "src/model/taxonomy.h"
#include "src/telemetry/scrape/engine_window.h"

namespace inferscope::fleet {
namespace {

using base::JsonWriter;

// Appends `s` as a JSON string: as is when it needs no escaping (the common case: names and
// labels), else through base::JsonWriter::Quote (escapes, invalid UTF-8 replaced).
void AppendQuoted(std::string_view s, std::string* out) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
      out->append(JsonWriter::Quote(s));
      return;
    }
  }
  out->push_back('"');
  out->append(s);
  out->push_back('"');
}

template <typename T>
void AppendNumber(T v, std::string* out) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}

// One JSONEachRow object, written by hand: base::JsonWriter pretty-prints (the format wants one
// object per line) and this is the sink's hot path (docs/benchmarks.md measures it). `prefix` is
// the row's key and dimension columns, encoded once per device and shared by its rows.
class Row {
 public:
  Row(std::string* out, std::string_view prefix) : out_(out) {
    out_->push_back('{');
    out_->append(prefix);
  }
  ~Row() { out_->append("}\n"); }
  Row& Str(const char* key, std::string_view value) {
    Key(key);
    AppendQuoted(value, out_);
    return *this;
  }
  Row& Int(const char* key, int64_t value) {
    Key(key);
    AppendNumber(value, out_);
    return *this;
  }
  Row& UInt(const char* key, uint64_t value) {
    Key(key);
    AppendNumber(value, out_);
    return *this;
  }
  // `categories` and `category_ns`, the parallel arrays of a phase row's category times: the
  // categories with time, in the taxonomy's order.
  Row& CategoryArrays(const std::array<int64_t, model::kCategoryCount>& ns) {
    Key("categories");
    out_->push_back('[');
    bool first = true;
    for (size_t c = 0; c < ns.size(); ++c) {
      if (ns[c] == 0) continue;
      if (!first) out_->push_back(',');
      first = false;
      AppendQuoted(model::kCategoryNames[c], out_);
    }
    out_->append("]");
    Key("category_ns");
    out_->push_back('[');
    first = true;
    for (int64_t v : ns) {
      if (v == 0) continue;
      if (!first) out_->push_back(',');
      first = false;
      AppendNumber(v, out_);
    }
    out_->append("]");
    return *this;
  }
  // Schema 5's launch configurations of a top kernel row: `config_key` (each configuration's
  // model::LaunchConfig::key(), ten numbers), `config_count`, `config_ns` (parallel arrays, in the
  // row's MoreFrequentConfig order) and `distinct_configs`. Left out when the kernel has none
  // (tail rows, windows recorded without configurations): the columns' defaults are the same
  // empty arrays and 0, and the row stays as short as before.
  Row& LaunchConfigs(const std::vector<model::LaunchConfig>& configs, uint64_t distinct) {
    if (configs.empty() && distinct == 0) return *this;
    auto number = [this](auto v) { AppendNumber(v, out_); };
    Key("config_key");
    Array(configs, [&](const model::LaunchConfig& c) { Array(c.key(), number); });
    Key("config_count");
    Array(configs, [&](const model::LaunchConfig& c) { number(c.count); });
    Key("config_ns");
    Array(configs, [&](const model::LaunchConfig& c) { number(c.total_ns); });
    Key("distinct_configs");
    number(distinct);
    return *this;
  }
  Row& Labels(const fleet::Labels& labels) {
    Key("label_keys");
    Array(labels, [this](const auto& label) { AppendQuoted(label.first, out_); });
    Key("label_values");
    Array(labels, [this](const auto& label) { AppendQuoted(label.second, out_); });
    return *this;
  }

 private:
  // "[e0,e1,...]": `write` appends each item's element.
  template <typename Items, typename Write>
  void Array(const Items& items, Write write) {
    out_->push_back('[');
    bool first = true;
    for (const auto& item : items) {
      if (!first) out_->push_back(',');
      first = false;
      write(item);
    }
    out_->push_back(']');
  }
  void Key(const char* key) {
    if (out_->back() != '{') out_->push_back(',');
    out_->push_back('"');
    out_->append(key);
    out_->append("\":");
  }
  std::string* out_;
};

// The key and dimension columns every per-window fact table starts with (schema.cc), encoded
// once per device.
std::string KeyPrefix(const std::string& date, const model::ProfileWindow& window,
                      const std::string& host, const wire::Hello& hello,
                      const model::ProcessProfile& process, const model::DeviceProfile& device,
                      const FleetIdentity& identity, const std::string& engine,
                      const std::string& model_name) {
  std::string prefix;
  prefix.reserve(256);
  prefix.push_back('{');
  {
    Row r(&prefix, "");
    r.Str("date", date)
        .Int("window_start_ns", window.start_ns)
        .Int("window_end_ns", window.end_ns)
        .Str("host", host)
        .UInt("pid", process.pid)
        .Int("process_start_ns", hello.process_start_unix_ns)
        .Int("rank", process.rank)
        .Int("world_size", process.world_size)
        .UInt("device", device.device)
        .Str("engine", engine)
        .Str("model", model_name)
        .Str("gpu_model", device.device_name)
        .Labels(identity.labels);
  }
  // Drop the braces and newline the Row wrote: the prefix goes inside other rows.
  return prefix.substr(2, prefix.size() - 4);
}

}  // namespace

std::string FleetIdentity::LabelOr(std::string_view key, std::string_view fallback) const {
  for (const auto& [k, v] : labels)
    if (k == key) return v;
  return std::string(fallback);
}

void FleetIdentity::LearnFromEngineRecord(std::string_view json) {
  auto window = telemetry::scrape::EngineMetricsWindow::FromJson(json);
  if (!window.ok()) return;
  std::string joined;
  for (const std::string& name : window->model_names) joined += (joined.empty() ? "" : ",") + name;
  scraped_engine = window->engine == "unknown" ? "" : window->engine;
  scraped_model = std::move(joined);
}

uint64_t RowBatch::total_rows() const {
  uint64_t n = 0;
  for (uint64_t r : rows) n += r;
  return n;
}

size_t RowBatch::total_bytes() const {
  size_t n = 0;
  for (const std::string& b : body) n += b.size();
  return n;
}

void RowBatch::Clear() {
  for (std::string& b : body) b.clear();
  rows.fill(0);
}

const char* RowBatch::TableName(int table) {
  static const char* kNames[kTables] = {kWindowsTable, kCategoriesTable, kKernelsTable,
                                        kSyncsTable,   kTelemetryTable,  kPhasesTable,
                                        kRangesTable};
  return kNames[table];
}

std::string UtcDate(int64_t unix_ns) {
  // Days since 1970-01-01 to a civil date (the proleptic Gregorian calendar in 400-year eras).
  int64_t days = unix_ns / 86'400'000'000'000LL;
  if (unix_ns < 0 && unix_ns % 86'400'000'000'000LL != 0) --days;
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2);
  // ClickHouse's Date covers 1970..2105; clamp so a bad clock cannot make the insert fail.
  if (y < 1970) return "1970-01-01";
  if (y > 2105) return "2105-12-31";
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d", static_cast<int>(y), static_cast<int>(m),
                static_cast<int>(d));
  return buf;
}

void EncodeWindow(const FleetIdentity& identity, const wire::Hello& process,
                  const model::ProfileWindow& window, RowBatch* out) {
  const std::string date = UtcDate(window.start_ns);
  const std::string engine = identity.Engine();
  const std::string model_name = identity.Model();
  for (const model::ProcessProfile& p : window.processes) {
    const std::string host =
        identity.LabelOr("host", p.hostname.empty() ? process.hostname : p.hostname);
    if (!p.ranges.empty()) {
      // The process's NVTX range table: per process, so keyed as device 0 (its first GPU's name).
      model::DeviceProfile process_key;
      if (!p.devices.empty()) process_key.device_name = p.devices.front().device_name;
      const std::string key =
          KeyPrefix(date, window, host, process, p, process_key, identity, engine, model_name);
      auto range_row = [&](const model::RangeStats& r, bool tail) {
        Row row(&out->body[RowBatch::kRanges], key);
        row.Str("name", r.name)
            .UInt("is_tail", tail ? 1 : 0)
            .UInt("instances", r.duration.count)
            .Int("total_ns", r.duration.total_ns)
            .Int("min_ns", r.duration.min_or_zero_ns())
            .Int("max_ns", r.duration.max_ns)
            .UInt("gpu_ops", r.gpu_ops)
            .Int("gpu_time_ns", r.gpu_time_ns)
            .UInt("tail_names", tail ? p.ranges.tail_names : 0)
            .UInt("late", tail ? p.ranges.late : 0);
        ++out->rows[RowBatch::kRanges];
      };
      for (const model::RangeStats& r : p.ranges.rows) range_row(r, false);
      model::RangeStats tail = p.ranges.tail;
      tail.name.clear();
      range_row(tail, true);  // always: it carries the table's tail_names and late counts
    }
    for (const model::DeviceProfile& d : p.devices) {
      const std::string key =
          KeyPrefix(date, window, host, process, p, d, identity, engine, model_name);
      {
        int64_t sync_wait_ns = 0;
        uint64_t sync_count = 0;
        for (size_t t = 0; t < d.syncs.size(); ++t) {
          // stream_wait_event is a GPU-side wait, not the host blocked (events.h).
          if (t == static_cast<size_t>(model::SyncType::kStreamWaitEvent)) continue;
          sync_wait_ns += d.syncs[t].wait.total_ns;
          sync_count += d.syncs[t].wait.count;
        }
        const uint64_t steps = d.steps.plain.count + d.steps.prefill.count;
        const int64_t step_ns = d.steps.plain.total_ns + d.steps.prefill.total_ns;
        const int64_t step_max = std::max(d.steps.plain.max_ns, d.steps.prefill.max_ns);
        const int64_t exposed = d.communication_ns - d.communication_overlap_ns;
        Row r(&out->body[RowBatch::kWindows], key);
        r.Int("span_ns", d.span_ns())
            .Int("busy_ns", d.busy_ns)
            .Int("idle_ns", d.idle_ns())
            .Int("compute_ns", d.compute_ns)
            .Int("communication_ns", d.communication_ns)
            .Int("communication_overlap_ns", d.communication_overlap_ns)
            .Int("exposed_communication_ns", exposed > 0 ? exposed : 0)
            .UInt("kernel_count", d.kernel_count);
        static const char* kIdle[model::kIdleCauseCount] = {
            "idle_allocation_ns", "idle_sync_ns",   "idle_launch_ns",      "idle_host_idle_ns",
            "idle_dependency_ns", "idle_queued_ns", "idle_unattributed_ns"};
        for (size_t c = 0; c < model::kIdleCauseCount; ++c) r.Int(kIdle[c], d.idle_causes.ns[c]);
        r.UInt("idle_intervals", d.idle_causes.intervals)
            .UInt("sync_count", sync_count)
            .Int("sync_wait_ns", sync_wait_ns)
            .UInt("step_count", steps)
            .Int("step_total_ns", step_ns)
            .Int("step_max_ns", steps ? step_max : 0)
            .Int("first_start_ns", d.first_start_ns)
            .Int("last_end_ns", d.last_end_ns);
        const model::IdleGapStats& g = d.idle_gaps;
        r.UInt("gap_host_wait_count", g.host_wait.count)
            .Int("gap_host_wait_ns", g.host_wait.total_ns)
            .Int("gap_host_wait_max_ns", g.host_wait.max_ns)
            .UInt("gap_kernel_wait_count", g.kernel_wait.count)
            .Int("gap_kernel_wait_ns", g.kernel_wait.total_ns)
            .Int("gap_kernel_wait_max_ns", g.kernel_wait.max_ns)
            .UInt("gap_other_count", g.other.count)
            .Int("gap_other_ns", g.other.total_ns)
            .Int("gap_other_max_ns", g.other.max_ns);
        ++out->rows[RowBatch::kWindows];
      }
      for (int c = 0; c < model::kCategoryCount; ++c) {
        const model::CategoryStats& cs = d.categories[static_cast<size_t>(c)];
        if (cs.count == 0 && cs.time_ns == 0) continue;
        Row r(&out->body[RowBatch::kCategories], key);
        r.Str("category", model::kCategoryNames[c])
            .UInt("kernel_count", cs.count)
            .Int("time_ns", cs.time_ns);
        ++out->rows[RowBatch::kCategories];
      }
      auto kernel_row = [&](const model::KernelStats& k, bool tail) {
        Row r(&out->body[RowBatch::kKernels], key);
        r.Str("kernel", tail ? std::string_view("(tail)") : std::string_view(k.name))
            .Str("category", tail ? "" : model::kCategoryNames[static_cast<int>(k.category)])
            .Str("subcategory", tail ? "" : k.subcategory)
            .UInt("is_tail", tail ? 1 : 0)
            .UInt("kernel_count", k.duration.count)
            .Int("total_ns", k.duration.total_ns)
            .Int("min_ns", k.duration.min_or_zero_ns())
            .Int("max_ns", k.duration.max_ns)
            .UInt("distinct_names", tail ? k.distinct_names : 1);
        if (!tail) r.LaunchConfigs(k.configs, k.distinct_configs);
        ++out->rows[RowBatch::kKernels];
      };
      for (const model::KernelStats& k : d.top_kernels) kernel_row(k, false);
      if (d.tail.duration.count > 0) kernel_row(d.tail, true);
      for (size_t t = 0; t < d.syncs.size(); ++t) {
        const model::DurationStats& w = d.syncs[t].wait;
        if (w.count == 0) continue;
        Row r(&out->body[RowBatch::kSyncs], key);
        r.Str("sync_type", model::kSyncTypeNames[t])
            .UInt("sync_count", w.count)
            .Int("wait_ns", w.total_ns)
            .Int("max_ns", w.max_ns);
        ++out->rows[RowBatch::kSyncs];
      }
      // The forward-phase split: a row per phase with steps, and the GPU time of steps not whole
      // (the reads fold them back into model::PhaseSplit).
      for (size_t ph = 0; ph < model::kPhaseCount; ++ph) {
        const model::PhaseStats& ps = d.phases.phases[ph];
        if (ps.steps == 0 && ps.ops == 0 && ps.gpu_time_ns() == 0) continue;
        Row r(&out->body[RowBatch::kPhases], key);
        r.Str("phase", model::kPhaseNames[ph])
            .UInt("steps", ps.steps)
            .Int("step_ns", ps.step_ns)
            .Int("busy_ns", ps.busy_ns)
            .UInt("ops", ps.ops)
            .CategoryArrays(ps.category_ns);
        ++out->rows[RowBatch::kPhases];
      }
      if (d.phases.outside_ops > 0 || d.phases.outside_time_ns() != 0) {
        Row r(&out->body[RowBatch::kPhases], key);
        r.Str("phase", kOutsidePhase)
            .UInt("steps", 0)
            .Int("step_ns", 0)
            .Int("busy_ns", 0)
            .UInt("ops", d.phases.outside_ops)
            .CategoryArrays(d.phases.outside_ns);
        ++out->rows[RowBatch::kPhases];
      }
    }
  }
}

void EncodeTelemetry(const FleetIdentity& identity, const std::string& hostname,
                     const store::TelemetryRecord& record, RowBatch* out) {
  Row r(&out->body[RowBatch::kTelemetry], "");
  r.Str("date", UtcDate(record.start_ns))
      .Int("start_ns", record.start_ns)
      .Int("end_ns", record.end_ns)
      .Str("host", identity.LabelOr("host", hostname))
      .Str("kind", record.kind)
      .Str("engine", identity.Engine())
      .Str("model", identity.Model())
      .Labels(identity.labels)
      .Str("json", record.json);
  ++out->rows[RowBatch::kTelemetry];
}

std::vector<Insert> SplitIntoInserts(const RowBatch& batch,
                                     const std::function<uint64_t()>& next_batch_id) {
  constexpr std::string_view kDateKey = "\"date\":\"";
  std::vector<Insert> out;
  for (int t = 0; t < RowBatch::kTables; ++t) {
    const std::string& body = batch.body[t];
    // Inserts of this table still open for rows, by date (a batch spans at most a few days).
    std::vector<size_t> open;
    size_t pos = 0;
    while (pos < body.size()) {
      size_t nl = body.find('\n', pos);
      if (nl == std::string::npos) nl = body.size();
      const std::string_view line(body.data() + pos, nl - pos);
      pos = nl + 1;
      if (line.size() < 2 || line.front() != '{') continue;
      // Every row starts with its date (KeyPrefix, EncodeTelemetry).
      std::string date;
      const size_t at = line.find(kDateKey);
      if (at != std::string_view::npos && line.size() >= at + kDateKey.size() + 10)
        date = std::string(line.substr(at + kDateKey.size(), 10));
      Insert* insert = nullptr;
      for (size_t i : open)
        if (out[i].date == date && out[i].rows < kMaxRowsPerInsert) insert = &out[i];
      if (!insert) {
        open.push_back(out.size());
        insert = &out.emplace_back();
        insert->table = t;
        insert->date = date;
        insert->batch_id = next_batch_id();
      }
      insert->body += "{\"batch_id\":";
      AppendNumber(insert->batch_id, &insert->body);
      insert->body.push_back(',');
      insert->body.append(line.substr(1));
      insert->body.push_back('\n');
      ++insert->rows;
    }
  }
  return out;
}

}  // namespace inferscope::fleet
