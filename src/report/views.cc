// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The views tables (model/views.h) and the report's CSV tables: JSON, text sections and CSV rows
// from one builder per table.

#include "src/report/views.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "src/model/kernel_names.h"
#include "src/report/format.h"
#include "src/report/ranges_json.h"

namespace inferscope::report {
namespace {

using analyze::Analysis;
using base::JsonWriter;

constexpr size_t kSlowestSteps = 5;
constexpr size_t kTextSteps = 20;  // steps listed in the text report (the slowest first)

ViewCell Num(int64_t v, std::string text) { return {std::to_string(v), std::move(text)}; }
ViewCell Ns(int64_t ns) { return {std::to_string(ns), FormatDuration(ns)}; }
ViewCell Count(uint64_t n) { return {std::to_string(n), FormatCount(n)}; }
ViewCell PctCell(double pct) { return {fmt::format("{:.2f}", pct), FormatPct(pct)}; }
ViewCell Text(std::string s) { return {s, std::move(s)}; }
ViewCell KernelName(const std::string& name) { return {name, model::DisplayKernelName(name)}; }

void AddColumn(ViewTable* t, std::string header, std::string csv, bool right, bool flexible = false,
               bool csv_only = false) {
  t->columns.push_back({std::move(header), right, flexible, flexible});
  t->csv_headers.push_back(std::move(csv));
  t->csv_only.push_back(csv_only);
}
constexpr bool kFlexible = true, kCsvOnly = true;

ViewTable NewTable(std::string key, std::string title) {
  ViewTable t;
  t.key = std::move(key);
  t.title = std::move(title);
  return t;
}

std::string Dim3(const std::array<int32_t, 3>& d) {
  return fmt::format("{}x{}x{}", d[0], d[1], d[2]);
}

// The rank a (input, pid, device) is reported as; the pid itself when no rank entry has it.
std::string RankOf(const Analysis& a, size_t input, uint32_t pid, const uint32_t* device) {
  for (const analyze::RankAnalysis& r : a.ranks)
    if (r.input_index == input && r.pid == pid && (device == nullptr || r.device == *device))
      return std::to_string(r.rank);
  return "pid " + std::to_string(pid);
}

template <typename F>
void ForEachProcess(const Analysis& a, F&& f) {
  for (size_t i = 0; i < a.views.size(); ++i)
    for (const model::ProcessViews& p : a.views[i].processes) f(i, p);
}

bool Selected(const Analysis& a, bool model::ViewSelection::*which) {
  for (const model::TraceViews& v : a.views)
    if (v.selection.*which) return true;
  return false;
}

void AddDurationCells(const model::DurationSummary& d, std::vector<ViewCell>* row) {
  row->push_back(Ns(d.mean_ns));
  row->push_back(Ns(d.median_ns));
  row->push_back(Ns(d.min_ns));
  row->push_back(Ns(d.max_ns));
  row->push_back({fmt::format("{:.0f}", d.stddev_ns),
                  FormatDuration(static_cast<int64_t>(d.stddev_ns + 0.5))});
}

ViewTable KernelStats(const Analysis& a) {
  ViewTable t = NewTable("kernel_stats", "Kernel statistics (like nsys cuda_gpu_kern_sum)");
  AddColumn(&t, "rank", "rank", true);
  AddColumn(&t, "kernel", "name", false, true);
  AddColumn(&t, "count", "count", true);
  AddColumn(&t, "total", "total_ns", true);
  AddColumn(&t, "mean", "mean_ns", true, !kFlexible, kCsvOnly);
  AddColumn(&t, "median", "median_ns", true);
  AddColumn(&t, "min", "min_ns", true);
  AddColumn(&t, "max", "max_ns", true);
  AddColumn(&t, "stddev", "stddev_ns", true);
  AddColumn(&t, "p99", "p99_ns", true);
  AddColumn(&t, "category", "category", false, !kFlexible, kCsvOnly);
  ForEachProcess(a, [&](size_t input, const model::ProcessViews& p) {
    for (const model::DeviceViews& d : p.devices) {
      const std::string rank = RankOf(a, input, p.pid, &d.device);
      const bool exact = !a.views[input].from_windows;  // live windows: no order statistics
      auto add = [&](ViewCell name, const model::DurationSummary& s, std::string category) {
        std::vector<ViewCell> row = {Text(rank), std::move(name), Count(s.count), Ns(s.total_ns)};
        if (exact) {
          AddDurationCells(s, &row);
          row.push_back(Ns(s.p99_ns));
        } else {
          row.insert(row.end(),
                     {Ns(s.mean_ns), {"", "-"}, Ns(s.min_ns), Ns(s.max_ns), {"", "-"}, {"", "-"}});
        }
        row.push_back(Text(std::move(category)));
        t.rows.push_back(std::move(row));
      };
      for (const model::KernelStatRow& k : d.kernels)
        add(KernelName(k.name), k.duration, std::string(model::CategoryName(k.category)));
      if (d.kernel_tail_names > 0)
        add(Text(fmt::format("other ({} kernels)", d.kernel_tail_names)), d.kernel_tail.duration,
            "");
    }
  });
  t.notes = {"exact order statistics per kernel name and device; stddev is the sample standard",
             "deviation; p99 is the nearest-rank 99th percentile (the JSON and CSV add the mean",
             "and the category)."};
  return t;
}

// A recorded resource (-1: not recorded): CSV empty, text "-".
ViewCell ResourceCount(int32_t v) {
  return v < 0 ? ViewCell{"", "-"} : Count(static_cast<uint64_t>(v));
}
ViewCell ResourceBytes(int32_t v) {
  return v < 0 ? ViewCell{"", "-"}
               : ViewCell{std::to_string(v), FormatBytes(static_cast<uint64_t>(v))};
}

ViewTable LaunchConfigs(const Analysis& a) {
  ViewTable t = NewTable("launch_configs", "Launch configurations");
  AddColumn(&t, "rank", "rank", true);
  AddColumn(&t, "kernel", "name", false, true);
  AddColumn(&t, "grid", "grid", true);
  AddColumn(&t, "block", "block", true);
  const size_t first_resource = t.columns.size();
  AddColumn(&t, "regs", "registers_per_thread", true);
  AddColumn(&t, "smem", "shared_bytes", true);
  AddColumn(&t, "static smem", "static_shared_bytes", true, !kFlexible, kCsvOnly);
  AddColumn(&t, "dyn smem", "dynamic_shared_bytes", true);
  const size_t end_resource = t.columns.size();
  AddColumn(&t, "count", "count", true);
  AddColumn(&t, "total", "total_ns", true);
  AddColumn(&t, "configs", "distinct_configs", true);
  bool any_resources = false, any_split = false;
  ForEachProcess(a, [&](size_t input, const model::ProcessViews& p) {
    for (const model::DeviceViews& d : p.devices) {
      const std::string rank = RankOf(a, input, p.pid, &d.device);
      for (const model::KernelStatRow& k : d.kernels)
        for (const model::LaunchConfig& c : k.configs) {
          any_resources = any_resources || c.registers_per_thread >= 0 || c.shared_bytes >= 0;
          any_split = any_split || c.dynamic_shared_bytes >= 0;
          t.rows.push_back({Text(rank), KernelName(k.name), Text(Dim3(c.grid)), Text(Dim3(c.block)),
                            ResourceCount(c.registers_per_thread), ResourceBytes(c.shared_bytes),
                            ResourceBytes(c.static_shared_bytes),
                            ResourceBytes(c.dynamic_shared_bytes), Count(c.count), Ns(c.total_ns),
                            Count(k.distinct_configs)});
        }
    }
  });
  // The text report leaves out what no input recorded (the CSV keeps its columns, empty).
  for (size_t i = first_resource; i < end_resource; ++i) {
    const bool split = t.csv_headers[i] == "dynamic_shared_bytes";
    if (!any_resources || (split && !any_split)) t.csv_only[i] = true;
  }
  t.notes = {
      fmt::format(
          "the {} most frequent configurations of each kernel above (grid, block, registers "
          "per thread, shared memory: static + dynamic); configs: how many it ran with.",
          model::kMaxLaunchConfigs),
      "regs and smem as recorded (Kineto records only the shared-memory sum); - : not recorded."};
  return t;
}

ViewTable Streams(const Analysis& a) {
  ViewTable t = NewTable("streams", "Streams (busy, idle and overlap per stream)");
  AddColumn(&t, "rank", "rank", true);
  AddColumn(&t, "stream", "stream", true);
  AddColumn(&t, "kernels", "kernels", true);
  AddColumn(&t, "copies", "memcpys", true);
  AddColumn(&t, "memsets", "memsets", true);
  AddColumn(&t, "span", "span_ns", true);
  AddColumn(&t, "busy", "busy_ns", true);
  AddColumn(&t, "busy %", "busy_pct", true);
  AddColumn(&t, "idle", "idle_ns", true);
  AddColumn(&t, "overlap", "overlap_ns", true);
  AddColumn(&t, "overlap %", "overlap_pct", true);
  std::vector<std::string> multi;
  ForEachProcess(a, [&](size_t input, const model::ProcessViews& p) {
    for (const model::DeviceViews& d : p.devices) {
      const std::string rank = RankOf(a, input, p.pid, &d.device);
      for (const model::StreamRow& s : d.streams) {
        const int64_t span = s.last_end_ns - s.first_start_ns;
        t.rows.push_back(
            {Text(rank), Num(s.stream, std::to_string(s.stream)), Count(s.kernels),
             Count(s.memcpys), Count(s.memsets), Ns(span), Ns(s.busy_ns),
             PctCell(analyze::Pct(static_cast<double>(s.busy_ns), static_cast<double>(span))),
             Ns(s.idle_ns), Ns(s.overlap_ns),
             PctCell(
                 analyze::Pct(static_cast<double>(s.overlap_ns), static_cast<double>(s.busy_ns)))});
      }
      if (d.streams.size() > 1)
        multi.push_back(fmt::format("rank {}: two or more streams busy at once for {}", rank,
                                    FormatDuration(d.multi_stream_ns)));
    }
  });
  t.notes = {
      "span: the stream's first to last operation; busy: union of its kernels, copies and",
      "memsets; idle = span - busy; overlap: busy while another stream of the GPU was busy."};
  t.notes.insert(t.notes.end(), multi.begin(), multi.end());
  return t;
}

// The largest categories of a step, as "matmul 61%, attention 22%".
std::string TopCategories(const model::ProjectedGpu& g) {
  std::vector<std::pair<int64_t, size_t>> c;
  for (size_t i = 0; i < model::kCategoryCount; ++i)
    if (g.category_ns[i] > 0) c.emplace_back(g.category_ns[i], i);
  std::sort(c.rbegin(), c.rend());
  std::string out;
  for (size_t i = 0; i < c.size() && i < 2; ++i)
    out +=
        fmt::format("{}{} {:.0f}%", i ? ", " : "", model::kCategoryNames[c[i].second],
                    analyze::Pct(static_cast<double>(c[i].first), static_cast<double>(g.time_ns)));
  return out;
}

model::ProjectedGpu PhaseGpu(const model::PhaseRow& ph) {
  model::ProjectedGpu g;
  g.time_ns = ph.gpu_time_ns;
  g.category_ns = ph.category_ns;
  return g;
}

ViewTable Steps(const Analysis& a, bool text) {
  ViewTable t = NewTable("steps", "Steps (ProfilerStep / NVTX step ranges)");
  AddColumn(&t, "rank", "rank", true);
  AddColumn(&t, "step", "name", false);
  AddColumn(&t, "phase", "phase", false);
  if (!text) {
    AddColumn(&t, "start", "start_ns", true);
    AddColumn(&t, "end", "end_ns", true);
  }
  AddColumn(&t, "duration", "duration_ns", true);
  AddColumn(&t, "gpu ops", "gpu_ops", true);
  AddColumn(&t, "gpu span", "gpu_span_ns", true);
  AddColumn(&t, "gpu busy", "gpu_busy_ns", true);
  AddColumn(&t, "busy %", "gpu_busy_pct", true);
  if (text) {
    AddColumn(&t, "top categories", "top_categories", false);
  } else {
    for (size_t c = 0; c < model::kCategoryCount; ++c)
      AddColumn(&t, model::kCategoryNames[c], std::string(model::kCategoryNames[c]) + "_ns", true);
  }
  ForEachProcess(a, [&](size_t input, const model::ProcessViews& p) {
    if (p.steps_total == 0) return;
    const std::string rank = RankOf(a, input, p.pid, nullptr);
    std::vector<const model::StepRow*> steps;
    for (const model::StepRow& s : p.steps) steps.push_back(&s);
    if (text) {
      // The slowest first: what a reader looks for; the JSON and CSV keep time order.
      std::stable_sort(steps.begin(), steps.end(),
                       [](const model::StepRow* x, const model::StepRow* y) {
                         return x->end_ns - x->start_ns > y->end_ns - y->start_ns;
                       });
      if (steps.size() > kTextSteps) steps.resize(kTextSteps);
    }
    for (const model::StepRow* s : steps) {
      const int64_t span = s->gpu.last_end_ns - s->gpu.first_start_ns;
      std::vector<ViewCell> row = {Text(rank), Text(s->name), Text(s->phase)};
      if (!text) {
        row.push_back(Ns(s->start_ns));
        row.push_back(Ns(s->end_ns));
      }
      row.push_back(Ns(s->end_ns - s->start_ns));
      row.push_back(Count(s->gpu.ops));
      row.push_back(Ns(span));
      row.push_back(Ns(s->gpu.busy_ns));
      row.push_back(
          PctCell(analyze::Pct(static_cast<double>(s->gpu.busy_ns), static_cast<double>(span))));
      if (text) {
        row.push_back(Text(TopCategories(s->gpu)));
      } else {
        for (size_t c = 0; c < model::kCategoryCount; ++c) row.push_back(Ns(s->gpu.category_ns[c]));
      }
      t.rows.push_back(std::move(row));
    }
    const model::DurationSummary& d = p.step_duration;
    const model::DurationSummary& g = p.step_gpu_time;
    t.notes.push_back(fmt::format(
        "rank {}: {} steps{}; duration mean {}, median {}, min {}, max {}, stddev {} (cv {:.1f}%); "
        "gpu span median {}, max {}",
        rank, p.steps_total,
        p.steps_total > p.steps.size() ? fmt::format(" (first {} kept)", p.steps.size()) : "",
        FormatDuration(d.mean_ns), FormatDuration(d.median_ns), FormatDuration(d.min_ns),
        FormatDuration(d.max_ns), FormatDuration(static_cast<int64_t>(d.stddev_ns + 0.5)),
        analyze::Pct(d.stddev_ns, static_cast<double>(d.mean_ns)), FormatDuration(g.median_ns),
        FormatDuration(g.max_ns)));
    for (const model::PhaseRow& ph : p.phases)
      t.notes.push_back(
          fmt::format("rank {}: {} {} steps, duration median {} max {}, gpu time {}, gpu busy {}{}",
                      rank, ph.duration.count, ph.phase, FormatDuration(ph.duration.median_ns),
                      FormatDuration(ph.duration.max_ns), FormatDuration(ph.gpu_time_ns),
                      FormatDuration(ph.gpu_busy_ns),
                      ph.gpu_time_ns > 0 ? " (" + TopCategories(PhaseGpu(ph)) + ")" : ""));
  });
  t.notes.push_back(
      "GPU work is projected onto a step by correlation: the kernels, copies and memsets whose "
      "launch call started inside the step's host range (any thread of the process); busy % = "
      "gpu busy / gpu span. phase: the engine's word in the step name (prefill/extend, decode), "
      "else the attention kernels it launched (attention.prefill, attention.decode, both: mixed).");
  if (text) t.notes.push_back("slowest steps first (the JSON and CSV list them in time order).");
  t.empty_note =
      "no step ranges: none named ProfilerStep#N (torch.profiler with schedule/step()) or with a "
      "--step-range prefix";
  return t;
}

// The columns of a range table, the first naming the rank (or a fleet group: `lead`).
ViewTable RangeTable(bool gpu, const std::string& lead) {
  ViewTable t = gpu ? NewTable("gpu_ranges", "GPU annotations (Kineto gpu_user_annotation)")
                    : NewTable("ranges", "NVTX / annotation ranges (like nsys nvtx_sum)");
  AddColumn(&t, lead, lead, true);
  AddColumn(&t, "range", "name", false, true);
  AddColumn(&t, "time %", "time_pct", true);
  AddColumn(&t, "count", "count", true);
  AddColumn(&t, "total", "total_ns", true);
  AddColumn(&t, "mean", "mean_ns", true, !kFlexible, kCsvOnly);
  AddColumn(&t, "median", "median_ns", true);
  AddColumn(&t, "min", "min_ns", true, !kFlexible, kCsvOnly);
  AddColumn(&t, "max", "max_ns", true);
  AddColumn(&t, "stddev", "stddev_ns", true);
  AddColumn(&t, "gpu ops", "gpu_ops", true);
  AddColumn(&t, "gpu time", "gpu_time_ns", true);
  return t;
}

// One process's (or group's) range rows led by `lead`, the tail as "other (N names)"; `exact`
// false (live windows): no median or stddev.
void AddRangeRows(const std::string& lead, const std::vector<model::RangeRow>& list,
                  const model::RangeRow& other, uint64_t other_names, bool exact, ViewTable* t) {
  if (list.empty()) return;
  int64_t all = other.duration.total_ns;
  for (const model::RangeRow& r : list) all += r.duration.total_ns;
  auto add = [&](ViewCell name, const model::RangeRow& r, bool tail) {
    std::vector<ViewCell> row = {
        Text(lead), std::move(name),
        PctCell(analyze::Pct(static_cast<double>(r.duration.total_ns), static_cast<double>(all))),
        Count(r.duration.count), Ns(r.duration.total_ns)};
    if (tail) {
      row.push_back(Ns(r.duration.mean_ns));
      for (int i = 0; i < 4; ++i) row.push_back({"", ""});
    } else if (!exact) {  // live windows: no median or stddev
      row.push_back(Ns(r.duration.mean_ns));
      row.push_back({"", "-"});
      row.push_back(Ns(r.duration.min_ns));
      row.push_back(Ns(r.duration.max_ns));
      row.push_back({"", "-"});
    } else {
      AddDurationCells(r.duration, &row);
    }
    row.push_back(Count(r.gpu.ops));
    row.push_back(Ns(r.gpu.time_ns));
    t->rows.push_back(std::move(row));
  };
  for (const model::RangeRow& r : list) add(Text(r.name), r, false);
  if (other_names > 0) add(Text(fmt::format("other ({} names)", other_names)), other, true);
}

const char* kLiveRangesNote =
    "Live windows (run --nvtx): a range counts in the window it starts in; median and stddev "
    "are not kept (-).";

void AddHostRangeNotes(bool live, ViewTable* t) {
  t->empty_note = "no NVTX / user_annotation ranges in the inputs";
  t->notes = {
      "host time of each range name (time % of all ranges' time; nested ranges both count;",
      "PyTorch's \", seq = \", \", op_id = \", \", sizes = \" suffixes are dropped from names);",
      "gpu: the kernels, copies and memsets launched inside its instances on their thread",
      "(by correlation), each counted once per name. The JSON and CSV add mean and min."};
  if (live) t->notes.push_back(kLiveRangesNote);
}

// The host range table (`gpu` false) or the GPU annotation table (Kineto gpu_user_annotation).
ViewTable Ranges(const Analysis& a, bool gpu = false) {
  ViewTable t = RangeTable(gpu, "rank");
  bool live = false;  // some input is live windows (no order statistics)
  ForEachProcess(a, [&](size_t input, const model::ProcessViews& p) {
    const std::vector<model::RangeRow>& list = gpu ? p.gpu_ranges : p.ranges;
    if (list.empty()) return;
    const bool exact = !a.views[input].from_windows;
    if (!exact) live = true;
    AddRangeRows(RankOf(a, input, p.pid, nullptr), list, gpu ? p.gpu_range_tail : p.range_tail,
                 gpu ? p.gpu_range_tail_names : p.range_tail_names, exact, &t);
  });
  if (gpu) {
    t.empty_note = "no gpu_user_annotation events in the inputs (Kineto traces write them)";
    t.notes = {"the GPU-side span Kineto gives each user annotation on a stream (time % of all",
               "annotations' time); gpu: the kernels, copies and memsets that started inside it on",
               "its stream, each counted once per name. The JSON and CSV add mean and min."};
    return t;
  }
  AddHostRangeNotes(live, &t);
  return t;
}

// The operator table (`modules` false) or the module table of the ops view.
ViewTable Ops(const Analysis& a, bool modules) {
  ViewTable t = modules
                    ? NewTable("modules", "GPU time by module (nn.Module, with_modules)")
                    : NewTable("ops", "GPU time by operator (like torch.profiler key_averages)");
  AddColumn(&t, "rank", "rank", true);
  AddColumn(&t, modules ? "module" : "operator", "name", false, true);
  AddColumn(&t, "count", "count", true);
  AddColumn(&t, "top level", "top_level", true, !kFlexible, kCsvOnly);
  AddColumn(&t, "cpu total", "cpu_total_ns", true);
  AddColumn(&t, "cpu self", "cpu_self_ns", true);
  AddColumn(&t, "gpu self", "gpu_self_ns", true);
  AddColumn(&t, "gpu self %", "gpu_self_pct", true);
  AddColumn(&t, "gpu total", "gpu_total_ns", true);
  AddColumn(&t, "launched", "gpu_ops", true);
  AddColumn(&t, "kernels", "kernels", true, !kFlexible, kCsvOnly);
  std::vector<std::string> outside;
  ForEachProcess(a, [&](size_t input, const model::ProcessViews& p) {
    const model::OpsView& v = p.ops;
    const std::vector<model::OpRow>& list = modules ? v.modules : v.ops;
    const model::OpRow& other = modules ? v.module_tail : v.op_tail;
    const uint64_t other_names = modules ? v.module_tail_names : v.op_tail_names;
    if (list.empty()) return;
    const std::string rank = RankOf(a, input, p.pid, nullptr);
    // GPU self time sums to all the GPU time launched inside the hierarchy.
    int64_t all = other.gpu_self_ns;
    for (const model::OpRow& r : list) all += r.gpu_self_ns;
    auto add = [&](ViewCell name, const model::OpRow& r) {
      t.rows.push_back(
          {Text(rank), std::move(name), Count(r.count), Count(r.top_level), Ns(r.cpu_total_ns),
           Ns(r.cpu_self_ns), Ns(r.gpu_self_ns),
           PctCell(analyze::Pct(static_cast<double>(r.gpu_self_ns), static_cast<double>(all))),
           Ns(r.gpu_total_ns), Count(r.gpu_ops), Count(r.kernels)});
    };
    for (const model::OpRow& r : list) add(Text(r.name), r);
    if (other_names > 0) add(Text(fmt::format("other ({} names)", other_names)), other);
    if (!modules && v.outside_gpu_ops > 0)
      outside.push_back(fmt::format("rank {}: {} GPU ops ({}) launched outside every operator",
                                    rank, FormatCount(v.outside_gpu_ops),
                                    FormatDuration(v.outside_gpu_ns)));
  });
  if (modules) {
    t.empty_note =
        "no modules in the inputs (torch.profiler with_stack=True or with_modules=True names them "
        "\"nn.Module: X\")";
    t.notes = {"modules grouped by class (\"nn.Module: Linear_0\" -> Linear); gpu self: launched",
               "with no module nested deeper; gpu total: launched anywhere inside (modules nest,",
               "so totals overlap)."};
    return t;
  }
  t.empty_note = "no CPU operators in the inputs (Kineto cpu_op events; Nsight exports have none)";
  t.notes = {
      "gpu self: the kernels, copies and memsets an operator launched itself (the innermost",
      "operator open on the launching thread, joined by correlation id; gpu self % of all",
      "launched inside operators); gpu total: launched inside it or any operator nested in it;",
      "cpu self: its host time minus the operators directly inside it. The JSON and CSV add",
      "top-level instances and the kernel count."};
  t.notes.insert(t.notes.end(), outside.begin(), outside.end());
  return t;
}

// Tables over the analysis itself (no view needed).
ViewTable CategoriesTable(const Analysis& a) {
  ViewTable t = NewTable("categories", "");
  AddColumn(&t, "rank", "rank", true);
  AddColumn(&t, "category", "category", false);
  AddColumn(&t, "time", "time_ns", true);
  AddColumn(&t, "count", "count", true);
  AddColumn(&t, "%", "pct", true);
  for (const analyze::RankAnalysis& r : a.ranks)
    for (const analyze::CategoryRow& c : r.categories)
      t.rows.push_back({Text(std::to_string(r.rank)), Text(c.name), Ns(c.time_ns), Count(c.count),
                        PctCell(c.pct)});
  return t;
}

ViewTable KernelsTable(const Analysis& a) {
  ViewTable t = NewTable("kernels", "");
  AddColumn(&t, "rank", "rank", true);
  AddColumn(&t, "kernel", "name", false, true);
  AddColumn(&t, "category", "category", false);
  AddColumn(&t, "sub-category", "subcategory", false);
  AddColumn(&t, "count", "count", true);
  AddColumn(&t, "total", "total_ns", true);
  AddColumn(&t, "mean", "mean_ns", true);
  AddColumn(&t, "min", "min_ns", true);
  AddColumn(&t, "max", "max_ns", true);
  AddColumn(&t, "%", "pct", true);
  for (const analyze::RankAnalysis& r : a.ranks) {
    for (const analyze::KernelRow& k : r.top_kernels)
      t.rows.push_back({Text(std::to_string(r.rank)), KernelName(k.name), Text(k.category),
                        Text(k.subcategory), Count(k.count), Ns(k.total_ns), Ns(k.mean_ns),
                        Ns(k.min_ns), Ns(k.max_ns), PctCell(k.pct)});
    if (r.other_kernels.distinct_names > 0)
      t.rows.push_back({Text(std::to_string(r.rank)),
                        Text(fmt::format("other ({} kernels)", r.other_kernels.distinct_names)),
                        Text(""), Text(""), Count(r.other_kernels.count),
                        Ns(r.other_kernels.total_ns), Text(""), Text(""), Text(""),
                        PctCell(r.other_kernels.pct)});
  }
  return t;
}

ViewTable TemporalTable(const Analysis& a) {
  ViewTable t = NewTable("temporal", "");
  AddColumn(&t, "rank", "rank", true);
  AddColumn(&t, "gpu", "device", true);
  for (const char* key : {"span", "busy", "idle", "compute", "non_compute"})
    AddColumn(&t, key, std::string(key) + "_ns", true);
  AddColumn(&t, "busy %", "busy_pct", true);
  for (const analyze::RankAnalysis& r : a.ranks) {
    const analyze::TemporalBreakdown& b = r.temporal;
    t.rows.push_back({Text(std::to_string(r.rank)), Text(std::to_string(r.device)), Ns(b.span_ns),
                      Ns(b.busy_ns), Ns(b.idle_ns), Ns(b.compute_ns), Ns(b.non_compute_ns),
                      PctCell(b.busy_pct)});
  }
  return t;
}

ViewTable IdleCausesTable(const Analysis& a) {
  ViewTable t = NewTable("idle_causes", "");
  AddColumn(&t, "rank", "rank", true);
  AddColumn(&t, "cause", "cause", false);
  AddColumn(&t, "time", "total_ns", true);
  AddColumn(&t, "%", "pct", true);
  for (const analyze::RankAnalysis& r : a.ranks)
    for (const analyze::IdleCauseRow& c : r.idle_causes)
      t.rows.push_back(
          {Text(std::to_string(r.rank)), Text(c.cause), Ns(c.total_ns), PctCell(c.pct)});
  return t;
}

// The per-stream gap kinds, one row per rank and kind; pct is of the rank's stream idle (the
// kinds' total), which the row carries so a script can check the whole.
ViewTable IdleGapsTable(const Analysis& a) {
  ViewTable t = NewTable("idle_gaps", "");
  AddColumn(&t, "rank", "rank", true);
  AddColumn(&t, "gpu", "device", true);
  AddColumn(&t, "kind", "kind", false);
  AddColumn(&t, "count", "count", true);
  AddColumn(&t, "time", "total_ns", true);
  AddColumn(&t, "max", "max_ns", true);
  AddColumn(&t, "stream idle", "stream_idle_ns", true);
  AddColumn(&t, "%", "pct", true);
  for (const analyze::RankAnalysis& r : a.ranks) {
    const int64_t stream_idle_ns = analyze::StreamIdleNs(r.idle_gaps);
    for (const analyze::IdleGapRow& g : r.idle_gaps)
      t.rows.push_back({Text(std::to_string(r.rank)), Text(std::to_string(r.device)), Text(g.kind),
                        Count(g.count), Ns(g.total_ns), Ns(g.max_ns), Ns(stream_idle_ns),
                        PctCell(g.pct)});
  }
  return t;
}

// The live steps' forward phases (analyze::PhaseSummary), one row per rank, phase and category
// with time; the GPU time of steps not counted whole as phase "outside".
ViewTable PhasesTable(const Analysis& a) {
  ViewTable t = NewTable("phases", "");
  AddColumn(&t, "rank", "rank", true);
  AddColumn(&t, "gpu", "device", true);
  AddColumn(&t, "phase", "phase", false);
  AddColumn(&t, "steps", "steps", true);
  AddColumn(&t, "step time", "step_total_ns", true);
  AddColumn(&t, "busy", "busy_ns", true);
  AddColumn(&t, "category", "category", false);
  AddColumn(&t, "time", "time_ns", true);
  AddColumn(&t, "%", "pct_of_phase", true);
  for (const analyze::RankAnalysis& r : a.ranks) {
    const std::string rank = std::to_string(r.rank), gpu = std::to_string(r.device);
    for (const analyze::PhaseSummaryRow& p : r.phases.phases)
      for (const analyze::CategoryRow& c : p.categories)
        t.rows.push_back({Text(rank), Text(gpu), Text(p.phase), Count(p.steps), Ns(p.step_total_ns),
                          Ns(p.busy_ns), Text(c.name), Ns(c.time_ns), PctCell(c.pct)});
    const model::PhaseSplit& split = r.phases.split;
    const int64_t outside = r.phases.outside_ns;
    for (int c = 0; c < model::kCategoryCount && outside > 0; ++c)
      if (split.outside_ns[c] > 0)
        t.rows.push_back({Text(rank), Text(gpu), Text("outside"), Count(0), Ns(0), Ns(0),
                          Text(model::kCategoryNames[c]), Ns(split.outside_ns[c]),
                          PctCell(analyze::Pct(static_cast<double>(split.outside_ns[c]),
                                               static_cast<double>(outside)))});
  }
  return t;
}

// `exact` false: a summary of live windows, which keep no order statistics (null in the JSON).
void WriteDuration(JsonWriter& w, const model::DurationSummary& d, bool exact = true) {
  w.BeginObject();
  w.Key("count").UInt(d.count);
  w.Key("total_ns").Int(d.total_ns);
  w.Key("mean_ns").Int(d.mean_ns);
  if (exact)
    w.Key("median_ns").Int(d.median_ns);
  else
    w.Key("median_ns").Null();
  w.Key("min_ns").Int(d.min_ns);
  w.Key("max_ns").Int(d.max_ns);
  if (exact) {
    w.Key("p99_ns").Int(d.p99_ns);
    w.Key("stddev_ns").Double(d.stddev_ns);
  } else {
    w.Key("p99_ns").Null();
    w.Key("stddev_ns").Null();
  }
  w.EndObject();
}

void WriteDim3(JsonWriter& w, const std::array<int32_t, 3>& d) {
  w.BeginArray();
  for (int32_t v : d) w.Int(v);
  w.EndArray();
}

void WriteProjected(JsonWriter& w, const model::ProjectedGpu& g, bool categories) {
  w.BeginObject();
  w.Key("ops").UInt(g.ops);
  w.Key("time_ns").Int(g.time_ns);
  if (categories) {
    w.Key("busy_ns").Int(g.busy_ns);
    w.Key("first_start_ns").Int(g.first_start_ns);
    w.Key("last_end_ns").Int(g.last_end_ns);
    w.Key("categories_ns").BeginObject();
    for (size_t c = 0; c < model::kCategoryCount; ++c)
      if (g.category_ns[c] > 0) w.Key(model::kCategoryNames[c]).Int(g.category_ns[c]);
    w.EndObject();
  }
  w.EndObject();
}

// One ops-view row; a tail row (`named` false) carries the count of names it sums instead.
void WriteOpRow(JsonWriter& w, const model::OpRow& r, bool named, uint64_t distinct_names = 0) {
  w.BeginObject();
  if (named)
    w.Key("name").String(r.name);
  else
    w.Key("distinct_names").UInt(distinct_names);
  w.Key("count").UInt(r.count);
  w.Key("top_level").UInt(r.top_level);
  w.Key("cpu_total_ns").Int(r.cpu_total_ns);
  w.Key("cpu_self_ns").Int(r.cpu_self_ns);
  w.Key("gpu_ops").UInt(r.gpu_ops);
  w.Key("kernels").UInt(r.kernels);
  w.Key("gpu_self_ns").Int(r.gpu_self_ns);
  w.Key("gpu_total_ns").Int(r.gpu_total_ns);
  w.EndObject();
}

void WriteProcess(JsonWriter& w, const Analysis& a, size_t input, const model::ProcessViews& p,
                  const model::ViewSelection& sel) {
  w.BeginObject();
  w.Key("pid").UInt(p.pid);
  w.Key("devices").BeginArray();
  for (const model::DeviceViews& d : p.devices) {
    w.BeginObject();
    w.Key("device").UInt(d.device);
    const std::string rank = RankOf(a, input, p.pid, &d.device);
    if (rank.rfind("pid ", 0) == 0)
      w.Key("rank").Null();
    else
      w.Key("rank").Int(std::stoll(rank));
    if (sel.kernels) {
      w.Key("kernel_stats").BeginArray();
      for (const model::KernelStatRow& k : d.kernels) {
        w.BeginObject();
        w.Key("name").String(k.name);
        w.Key("display_name").String(model::DisplayKernelName(k.name));
        w.Key("category").String(model::CategoryName(k.category));
        w.Key("duration");
        WriteDuration(w, k.duration, !a.views[input].from_windows);
        WriteLaunchConfigs(w, k.configs, k.distinct_configs);
        w.EndObject();
      }
      w.EndArray();
      w.Key("kernel_stats_other").BeginObject();
      w.Key("distinct_names").UInt(d.kernel_tail_names);
      w.Key("duration");
      WriteDuration(w, d.kernel_tail.duration, !a.views[input].from_windows);
      w.EndObject();
    }
    if (sel.streams) {
      w.Key("streams").BeginArray();
      for (const model::StreamRow& s : d.streams) {
        w.BeginObject();
        w.Key("stream").UInt(s.stream);
        w.Key("kernels").UInt(s.kernels);
        w.Key("memcpys").UInt(s.memcpys);
        w.Key("memsets").UInt(s.memsets);
        w.Key("first_start_ns").Int(s.first_start_ns);
        w.Key("last_end_ns").Int(s.last_end_ns);
        w.Key("busy_ns").Int(s.busy_ns);
        w.Key("idle_ns").Int(s.idle_ns);
        w.Key("overlap_ns").Int(s.overlap_ns);
        w.EndObject();
      }
      w.EndArray();
      w.Key("multi_stream_ns").Int(d.multi_stream_ns);
    }
    w.EndObject();
  }
  w.EndArray();
  if (sel.steps) {
    w.Key("steps").BeginObject();
    w.Key("count").UInt(p.steps_total);
    w.Key("duration");
    WriteDuration(w, p.step_duration);
    w.Key("gpu_span");
    WriteDuration(w, p.step_gpu_time);
    std::vector<const model::StepRow*> slowest;
    for (const model::StepRow& s : p.steps) slowest.push_back(&s);
    std::stable_sort(slowest.begin(), slowest.end(),
                     [](const model::StepRow* x, const model::StepRow* y) {
                       return x->end_ns - x->start_ns > y->end_ns - y->start_ns;
                     });
    if (slowest.size() > kSlowestSteps) slowest.resize(kSlowestSteps);
    w.Key("phases").BeginArray();
    for (const model::PhaseRow& ph : p.phases) {
      w.BeginObject();
      w.Key("phase").String(ph.phase);
      w.Key("duration");
      WriteDuration(w, ph.duration);
      w.Key("gpu_time_ns").Int(ph.gpu_time_ns);
      w.Key("gpu_busy_ns").Int(ph.gpu_busy_ns);
      w.Key("categories_ns").BeginObject();
      for (size_t c = 0; c < model::kCategoryCount; ++c)
        if (ph.category_ns[c] > 0) w.Key(model::kCategoryNames[c]).Int(ph.category_ns[c]);
      w.EndObject();
      w.EndObject();
    }
    w.EndArray();
    w.Key("slowest").BeginArray();
    for (const model::StepRow* s : slowest) w.String(s->name);
    w.EndArray();
    w.Key("list").BeginArray();
    for (const model::StepRow& s : p.steps) {
      w.BeginObject();
      w.Key("name").String(s.name);
      w.Key("phase").String(s.phase);
      w.Key("tid").UInt(s.tid);
      w.Key("start_ns").Int(s.start_ns);
      w.Key("end_ns").Int(s.end_ns);
      w.Key("duration_ns").Int(s.end_ns - s.start_ns);
      w.Key("gpu");
      WriteProjected(w, s.gpu, true);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  if (sel.ranges) {
    // The host ranges and the GPU annotations: the same table of ranges, each in its object.
    const bool exact = !a.views[input].from_windows;
    w.Key("ranges").BeginObject();
    WriteRangeTableFields(w, p.nvtx_ranges, p.ranges, p.range_tail_names, p.range_tail, exact);
    // Live windows: ranges counted in the window they ended in (longer than the horizon).
    if (!exact) w.Key("late").UInt(p.late_ranges);
    w.Key("gpu_annotations").BeginObject();
    WriteRangeTableFields(w, p.gpu_annotations, p.gpu_ranges, p.gpu_range_tail_names,
                          p.gpu_range_tail, exact);
    w.EndObject();
    w.EndObject();
  }
  if (sel.ops) {
    const model::OpsView& v = p.ops;
    w.Key("ops").BeginObject();
    w.Key("operator_instances").UInt(v.op_instances);
    w.Key("operators").BeginArray();
    for (const model::OpRow& r : v.ops) WriteOpRow(w, r, true);
    w.EndArray();
    w.Key("operators_other");
    WriteOpRow(w, v.op_tail, false, v.op_tail_names);
    w.Key("module_instances").UInt(v.module_instances);
    w.Key("modules").BeginArray();
    for (const model::OpRow& r : v.modules) WriteOpRow(w, r, true);
    w.EndArray();
    w.Key("modules_other");
    WriteOpRow(w, v.module_tail, false, v.module_tail_names);
    w.Key("outside_operators").BeginObject();
    w.Key("gpu_ops").UInt(v.outside_gpu_ops);
    w.Key("gpu_time_ns").Int(v.outside_gpu_ns);
    w.EndObject();
    w.EndObject();
  }
  if (sel.steps || sel.ranges || sel.ops) w.Key("unprojected_gpu_ops").UInt(p.unprojected_ops);
  w.EndObject();
}

}  // namespace

void WriteRangeTableFields(JsonWriter& w, uint64_t instances,
                           const std::vector<model::RangeRow>& rows, uint64_t tail_names,
                           const model::RangeRow& tail, bool exact) {
  w.Key("instances").UInt(instances);
  w.Key("list").BeginArray();
  for (const model::RangeRow& r : rows) {
    w.BeginObject();
    w.Key("name").String(r.name);
    w.Key("duration");
    WriteDuration(w, r.duration, exact);
    w.Key("gpu");
    WriteProjected(w, r.gpu, false);
    w.EndObject();
  }
  w.EndArray();
  w.Key("other").BeginObject();
  w.Key("distinct_names").UInt(tail_names);
  w.Key("count").UInt(tail.duration.count);
  w.Key("total_ns").Int(tail.duration.total_ns);
  w.Key("gpu");
  WriteProjected(w, tail.gpu, false);
  w.EndObject();
}

const std::vector<std::string>& TableNames() {
  static const std::vector<std::string> kNames = {
      "temporal",     "categories",     "kernels", "idle_gaps", "idle_causes", "phases",
      "kernel_stats", "launch_configs", "streams", "steps",     "ranges",      "gpu_ranges",
      "ops",          "modules"};
  return kNames;
}

bool BuildTable(const Analysis& a, const std::string& key, ViewTable* table) {
  if (key == "temporal") {
    *table = TemporalTable(a);
  } else if (key == "categories") {
    *table = CategoriesTable(a);
  } else if (key == "kernels") {
    *table = KernelsTable(a);
  } else if (key == "idle_gaps") {
    *table = IdleGapsTable(a);
  } else if (key == "idle_causes") {
    *table = IdleCausesTable(a);
  } else if (key == "phases") {
    *table = PhasesTable(a);
  } else if (key == "kernel_stats") {
    *table = KernelStats(a);
  } else if (key == "launch_configs") {
    *table = LaunchConfigs(a);
  } else if (key == "streams") {
    *table = Streams(a);
  } else if (key == "steps") {
    *table = Steps(a, /*text=*/false);
  } else if (key == "ranges") {
    *table = Ranges(a);
  } else if (key == "gpu_ranges") {
    *table = Ranges(a, /*gpu=*/true);
  } else if (key == "ops") {
    *table = Ops(a, /*modules=*/false);
  } else if (key == "modules") {
    *table = Ops(a, /*modules=*/true);
  } else {
    return false;
  }
  return true;
}

std::vector<ViewTable> BuildViewTables(const Analysis& a) {
  std::vector<ViewTable> tables;
  if (Selected(a, &model::ViewSelection::kernels)) {
    tables.push_back(KernelStats(a));
    tables.push_back(LaunchConfigs(a));
  }
  if (Selected(a, &model::ViewSelection::streams)) tables.push_back(Streams(a));
  if (Selected(a, &model::ViewSelection::steps)) tables.push_back(Steps(a, /*text=*/true));
  if (Selected(a, &model::ViewSelection::ranges)) {
    tables.push_back(Ranges(a));
    ViewTable gpu = Ranges(a, /*gpu=*/true);
    if (!gpu.rows.empty()) tables.push_back(std::move(gpu));  // Kineto only: no empty section
  }
  if (Selected(a, &model::ViewSelection::ops)) {
    tables.push_back(Ops(a, /*modules=*/false));
    ViewTable modules = Ops(a, /*modules=*/true);
    if (!modules.rows.empty()) tables.push_back(std::move(modules));
  }
  return tables;
}

void WriteViewsJson(JsonWriter& w, const Analysis& a) {
  w.BeginObject();
  w.Key("selected").BeginArray();
  const std::pair<bool model::ViewSelection::*, const char*> kViews[] = {
      {&model::ViewSelection::kernels, "kernels"},
      {&model::ViewSelection::streams, "streams"},
      {&model::ViewSelection::steps, "steps"},
      {&model::ViewSelection::ranges, "ranges"},
      {&model::ViewSelection::ops, "ops"}};
  for (const auto& [which, name] : kViews)
    if (Selected(a, which)) w.String(name);
  w.EndArray();
  w.Key("inputs").BeginArray();
  for (size_t i = 0; i < a.views.size(); ++i) {
    w.BeginObject();
    w.Key("input").UInt(i);
    w.Key("from_windows").Bool(a.views[i].from_windows);
    w.Key("processes").BeginArray();
    for (const model::ProcessViews& p : a.views[i].processes)
      WriteProcess(w, a, i, p, a.views[i].selection);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

namespace {

// A view table as a report section: the table without its CSV-only columns (and without the rank
// column when every row has the same rank), then its notes; the empty note without rows.
Section SectionOf(const ViewTable& t) {
  Section s;
  s.title = t.title;
  if (t.rows.empty()) {
    s.blocks.push_back(
        {Block::Kind::kParagraph,
         {t.empty_note.empty() ? "no data in the inputs for this view" : t.empty_note},
         {}});
    return s;
  }
  // One rank: its column says nothing and the names need the room.
  bool one_rank = true;
  for (const std::vector<ViewCell>& row : t.rows)
    one_rank = one_rank && row[0].text == t.rows[0][0].text;
  auto shown = [&](size_t i) { return !(i == 0 && one_rank) && !t.csv_only[i]; };
  Block b;
  b.kind = Block::Kind::kTable;
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (shown(i)) b.table.columns.push_back(t.columns[i]);
  for (const std::vector<ViewCell>& row : t.rows) {
    std::vector<std::string> cells;
    for (size_t i = 0; i < row.size(); ++i)
      if (shown(i)) cells.push_back(row[i].text);
    b.table.rows.push_back(std::move(cells));
  }
  s.blocks.push_back(std::move(b));
  if (!t.notes.empty()) s.blocks.push_back({Block::Kind::kParagraph, t.notes, {}});
  return s;
}

}  // namespace

void AppendViewSections(const Analysis& a, Document* doc) {
  for (ViewTable& t : BuildViewTables(a)) doc->sections.push_back(SectionOf(t));
}

Section GroupRangesSection(const std::string& key_header, const std::vector<GroupRanges>& groups) {
  ViewTable t = RangeTable(/*gpu=*/false, key_header);
  t.columns[0].right = false;  // a group's name, not a rank number
  for (const GroupRanges& g : groups)
    AddRangeRows(g.key, g.rows, g.tail, g.tail_names, /*exact=*/false, &t);
  AddHostRangeNotes(/*live=*/true, &t);
  return SectionOf(t);
}

void WriteLaunchConfigs(JsonWriter& w, const std::vector<model::LaunchConfig>& configs,
                        uint64_t distinct) {
  w.Key("distinct_launch_configs").UInt(distinct);
  w.Key("launch_configs").BeginArray();
  for (const model::LaunchConfig& c : configs) {
    w.BeginObject();
    w.Key("grid");
    WriteDim3(w, c.grid);
    w.Key("block");
    WriteDim3(w, c.block);
    // null where the source did not record it
    auto resource = [&w](const char* key, int32_t v) {
      if (v < 0)
        w.Key(key).Null();
      else
        w.Key(key).Int(v);
    };
    resource("registers_per_thread", c.registers_per_thread);
    resource("static_shared_bytes", c.static_shared_bytes);
    resource("dynamic_shared_bytes", c.dynamic_shared_bytes);
    resource("shared_bytes", c.shared_bytes);
    w.Key("count").UInt(c.count);
    w.Key("total_ns").Int(c.total_ns);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace inferscope::report
