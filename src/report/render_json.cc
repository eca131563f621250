// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The JSON report (schema in docs/report-schema.md). Keys carry their units; key order is fixed.

#include <string>

#include "src/base/json_writer.h"
#include "src/report/document.h"
#include "src/report/phases_json.h"
#include "src/report/report.h"
#include "src/report/views.h"

#ifndef INFERSCOPE_VERSION
#define INFERSCOPE_VERSION "0.0.0"
#endif

namespace inferscope::report {
using base::JsonWriter;

namespace {

using analyze::Analysis;
using analyze::RankAnalysis;

void WriteTemporal(JsonWriter& w, const analyze::TemporalBreakdown& t) {
  w.BeginObject();
  w.Key("span_ns").Int(t.span_ns);
  w.Key("busy_ns").Int(t.busy_ns);
  w.Key("idle_ns").Int(t.idle_ns);
  w.Key("compute_ns").Int(t.compute_ns);
  w.Key("non_compute_ns").Int(t.non_compute_ns);
  w.Key("busy_pct").Double(t.busy_pct);
  w.Key("idle_pct").Double(t.idle_pct);
  w.Key("compute_pct").Double(t.compute_pct);
  w.Key("non_compute_pct").Double(t.non_compute_pct);
  w.EndObject();
}

void WriteCategories(JsonWriter& w, const std::vector<analyze::CategoryRow>& rows) {
  w.BeginObject();
  for (const analyze::CategoryRow& c : rows) {
    w.Key(c.name).BeginObject();
    w.Key("time_ns").Int(c.time_ns);
    w.Key("count").UInt(c.count);
    w.Key("pct").Double(c.pct);
    w.EndObject();
  }
  w.EndObject();
}

void WriteKernels(JsonWriter& w, const std::vector<analyze::KernelRow>& rows) {
  w.BeginArray();
  for (const analyze::KernelRow& k : rows) {
    w.BeginObject();
    w.Key("name").String(k.name);
    w.Key("display_name").String(k.display_name);
    w.Key("category").String(k.category);
    w.Key("subcategory").String(k.subcategory);
    w.Key("count").UInt(k.count);
    w.Key("total_ns").Int(k.total_ns);
    w.Key("mean_ns").Int(k.mean_ns);
    w.Key("min_ns").Int(k.min_ns);
    w.Key("max_ns").Int(k.max_ns);
    w.Key("median_ns").Int(k.median_ns);
    w.Key("pct").Double(k.pct);
    // Live windows only (traces: the kernels view); absent when the windows carried none.
    if (!k.launch_configs.empty())
      WriteLaunchConfigs(w, k.launch_configs, k.distinct_launch_configs);
    w.EndObject();
  }
  w.EndArray();
}

void WriteOther(JsonWriter& w, const analyze::OtherKernels& o) {
  w.BeginObject();
  w.Key("distinct_names").UInt(o.distinct_names);
  w.Key("count").UInt(o.count);
  w.Key("total_ns").Int(o.total_ns);
  w.Key("pct").Double(o.pct);
  w.EndObject();
}

void WriteIdleGaps(JsonWriter& w, const std::vector<analyze::IdleGapRow>& rows) {
  w.BeginObject();
  // The whole every row's pct is of (per-stream gaps summed over streams).
  w.Key("stream_idle_ns").Int(analyze::StreamIdleNs(rows));
  for (const analyze::IdleGapRow& g : rows) {
    w.Key(g.kind).BeginObject();
    w.Key("count").UInt(g.count);
    w.Key("total_ns").Int(g.total_ns);
    w.Key("max_ns").Int(g.max_ns);
    w.Key("pct").Double(g.pct);
    w.EndObject();
  }
  w.EndObject();
}

void WriteIdleCauses(JsonWriter& w, const std::vector<analyze::IdleCauseRow>& rows,
                     uint64_t intervals) {
  w.BeginObject();
  w.Key("intervals").UInt(intervals);
  for (const analyze::IdleCauseRow& c : rows) {
    w.Key(c.cause).BeginObject();
    w.Key("total_ns").Int(c.total_ns);
    w.Key("pct").Double(c.pct);
    w.EndObject();
  }
  w.EndObject();
}

void WriteSteps(JsonWriter& w, const analyze::StepSummary& s) {
  w.BeginObject();
  w.Key("plain_count").UInt(s.plain_count);
  w.Key("plain_total_ns").Int(s.plain_total_ns);
  w.Key("plain_mean_ns").Int(s.plain_mean_ns);
  w.Key("prefill_count").UInt(s.prefill_count);
  w.Key("prefill_total_ns").Int(s.prefill_total_ns);
  w.Key("prefill_mean_ns").Int(s.prefill_mean_ns);
  w.EndObject();
}

// The forward-phase split of the live steps: always present, `list` empty without whole steps.
void WriteDataQuality(JsonWriter& w, const std::vector<std::pair<std::string, uint64_t>>& rows) {
  w.BeginObject();
  for (const auto& [name, count] : rows) w.Key(name).UInt(count);
  w.EndObject();
}

void WriteRank(JsonWriter& w, const RankAnalysis& r) {
  w.BeginObject();
  w.Key("rank").Int(r.rank);
  w.Key("rank_from_trace").Bool(r.rank_from_trace);
  w.Key("world_size").Int(r.world_size);
  w.Key("input_index").UInt(r.input_index);
  w.Key("pid").UInt(r.pid);
  w.Key("hostname").String(r.hostname);
  w.Key("device").UInt(r.device);
  w.Key("device_name").String(r.device_name);
  w.Key("device_uuid").String(r.device_uuid);
  w.Key("first_start_ns").Int(r.first_start_ns);
  w.Key("last_end_ns").Int(r.last_end_ns);
  w.Key("temporal_breakdown");
  WriteTemporal(w, r.temporal);
  w.Key("kernel_count").UInt(r.kernel_count);
  w.Key("kernel_time_ns").Int(r.kernel_time_ns);
  w.Key("categories");
  WriteCategories(w, r.categories);
  w.Key("subcategories");
  WriteCategories(w, r.subcategories);
  w.Key("top_kernels");
  WriteKernels(w, r.top_kernels);
  w.Key("other_kernels");
  WriteOther(w, r.other_kernels);
  w.Key("idle_gaps");
  WriteIdleGaps(w, r.idle_gaps);
  w.Key("idle_causes");
  WriteIdleCauses(w, r.idle_causes, r.idle_intervals);
  w.Key("steps");
  WriteSteps(w, r.steps);
  w.Key("phases");
  WritePhasesJson(w, r.phases);

  const analyze::LaunchSummary& l = r.launch;
  w.Key("launch").BeginObject();
  w.Key("cpu_launch_count").UInt(l.cpu_launch_count);
  w.Key("cpu_launch_total_ns").Int(l.cpu_launch_total_ns);
  w.Key("cpu_launch_mean_ns").Int(l.cpu_launch_mean_ns);
  w.Key("cpu_launch_max_ns").Int(l.cpu_launch_max_ns);
  w.Key("launch_delay_count").UInt(l.launch_delay_count);
  w.Key("launch_delay_mean_ns").Int(l.launch_delay_mean_ns);
  w.Key("launch_delay_max_ns").Int(l.launch_delay_max_ns);
  w.Key("short_kernels").UInt(l.short_kernels);
  w.Key("short_kernel_pct").Double(l.short_kernel_pct);
  w.Key("graph_launches").UInt(l.graph_launches);
  w.Key("kernels_from_graphs").UInt(l.kernels_from_graphs);
  w.EndObject();

  w.Key("sync_waits").BeginObject();
  for (const analyze::SyncRow& s : r.syncs) {
    w.Key(s.type).BeginObject();
    w.Key("count").UInt(s.count);
    w.Key("total_ns").Int(s.total_ns);
    w.Key("mean_ns").Int(s.mean_ns);
    w.Key("max_ns").Int(s.max_ns);
    w.Key("waited_on").BeginArray();
    for (const analyze::WaitedOnRow& t : s.waited_on) {
      w.BeginObject();
      w.Key("name").String(t.kernel_name);
      w.Key("display_name").String(t.display_name);
      w.Key("count").UInt(t.count);
      w.Key("wait_ns").Int(t.wait_ns);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndObject();

  w.Key("memory_transfers").BeginObject();
  for (const analyze::TransferRow& t : r.transfers) {
    w.Key(t.direction).BeginObject();
    w.Key("count").UInt(t.count);
    w.Key("bytes").UInt(t.bytes);
    w.Key("time_ns").Int(t.time_ns);
    w.Key("bandwidth_gbps").Double(t.bandwidth_gbps);
    w.Key("pageable_count").UInt(t.pageable_count);
    w.EndObject();
  }
  w.EndObject();

  const analyze::AllocationSummary& a = r.allocations;
  w.Key("allocations").BeginObject();
  w.Key("malloc_calls").UInt(a.malloc_calls);
  w.Key("malloc_total_ns").Int(a.malloc_total_ns);
  w.Key("malloc_max_ns").Int(a.malloc_max_ns);
  w.Key("malloc_bytes").UInt(a.malloc_bytes);
  w.Key("free_calls").UInt(a.free_calls);
  w.Key("free_total_ns").Int(a.free_total_ns);
  w.Key("free_max_ns").Int(a.free_max_ns);
  w.Key("slow_calls").UInt(a.slow_calls);
  w.Key("slow_total_ns").Int(a.slow_total_ns);
  w.EndObject();

  // CUDA graph attribution (docs/design/cuda-graphs.md): null without graph launches.
  const model::CudaGraphStats& g = r.graphs;
  w.Key("cuda_graphs");
  if (g.launches == 0) {
    w.Null();
  } else {
    w.BeginObject();
    w.Key("launches").UInt(g.launches);
    w.Key("launch_ns").Int(g.launch_ns);
    w.Key("measured_ns").Int(g.measured_ns);
    w.Key("estimated_ns").Int(g.estimated_ns);
    w.Key("composition_ns").Int(g.composition_ns);
    w.Key("composition_timed_ns").Int(g.composition_timed_ns);
    w.Key("unattributed_ns").Int(g.unattributed_ns);
    w.Key("deduplicated_ns").Int(g.deduplicated_ns);
    w.Key("max_share_age_ns").Int(g.max_share_age_ns);
    w.Key("checks").UInt(g.checks);
    w.Key("max_error_pp").Double(static_cast<double>(g.max_error_bp) / 100.0);
    w.EndObject();
  }

  w.Key("communication_ns").Int(r.communication_ns);
  w.Key("communication_overlap_ns").Int(r.communication_overlap_ns);
  w.Key("comm_compute_overlap_pct").Double(r.comm_compute_overlap_pct);

  w.Key("timeline").BeginObject();
  w.Key("bin_ns").Int(r.timeline.bin_ns);
  w.Key("origin_ns").Int(r.timeline.origin_ns);
  w.Key("truncated").Bool(r.timeline.truncated);
  w.Key("bins").BeginArray();
  for (const analyze::TimelineBin& b : r.timeline.bins) {
    w.BeginObject();
    w.Key("start_ns").Int(b.start_ns);
    w.Key("busy_ns").Int(b.busy_ns);
    w.Key("busy_pct").Double(b.busy_pct);
    w.Key("categories_ns").BeginObject();
    for (int c = 0; c < model::kCategoryCount && c < static_cast<int>(b.category_ns.size()); ++c)
      if (b.category_ns[c] != 0) w.Key(model::kCategoryNames[c]).Int(b.category_ns[c]);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();

  w.Key("data_quality");
  WriteDataQuality(w, r.data_quality);
  w.Key("profiler_cpu_ns").Int(r.profiler_cpu_ns);
  w.EndObject();
}

void WriteSpread(JsonWriter& w, const analyze::Spread& s) {
  w.BeginObject();
  w.Key("min_ns").Int(s.min_ns);
  w.Key("min_rank").Int(s.min_rank);
  w.Key("max_ns").Int(s.max_ns);
  w.Key("max_rank").Int(s.max_rank);
  w.Key("mean_ns").Double(s.mean_ns);
  w.Key("imbalance").Double(s.imbalance);
  w.EndObject();
}

void WriteDiagnosis(JsonWriter& w, const analyze::Diagnosis& d) {
  w.BeginObject();
  w.Key("primary").String(d.primary);
  w.Key("findings").BeginArray();
  for (const analyze::Finding& f : d.findings) {
    w.BeginObject();
    w.Key("id").String(f.id);
    w.Key("severity").String(f.severity);
    w.Key("confidence").Double(f.confidence);
    w.Key("score").Double(f.score);
    w.Key("summary").String(f.summary);
    w.Key("rank").Int(f.rank);
    w.Key("evidence").BeginArray();
    for (const analyze::Evidence& e : f.evidence) {
      w.BeginObject();
      w.Key("name").String(e.name);
      w.Key("value").Double(e.value);
      w.Key("unit").String(e.unit);
      w.EndObject();
    }
    w.EndArray();
    w.Key("fixes").BeginArray();
    for (const std::string& fix : f.fixes) w.String(fix);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// "a\nb\n" -> {"a", "b"}: a data section's text as preformatted lines.
std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

void WritePhasesJson(JsonWriter& w, const analyze::PhaseSummary& s) {
  w.BeginObject();
  w.Key("list").BeginArray();
  for (const analyze::PhaseSummaryRow& p : s.phases) {
    w.BeginObject();
    w.Key("phase").String(p.phase);
    w.Key("steps").UInt(p.steps);
    w.Key("step_total_ns").Int(p.step_total_ns);
    w.Key("step_mean_ns").Int(p.step_mean_ns);
    w.Key("busy_ns").Int(p.busy_ns);
    w.Key("gpu_time_ns").Int(p.gpu_time_ns);
    w.Key("ops").UInt(p.ops);
    w.Key("pct").Double(p.pct);
    w.Key("categories").BeginObject();
    for (const analyze::CategoryRow& c : p.categories) {
      w.Key(c.name).BeginObject();
      w.Key("time_ns").Int(c.time_ns);
      w.Key("pct").Double(c.pct);
      w.EndObject();
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.Key("outside_ns").Int(s.outside_ns);
  w.Key("outside_ops").UInt(s.outside_ops);
  w.Key("outside_pct").Double(s.outside_pct);
  w.EndObject();
}

const char* ToolVersion() { return INFERSCOPE_VERSION; }

std::string RenderJson(const Analysis& a) {
  // A trace has no host telemetry; the keys are there all the same (null), so the schema is one.
  return RenderJson(a, [](JsonWriter& w) {
    for (const char* key : {"range", "gpu_metrics", "engine", "requests", "cost"})
      w.Key(key).Null();
  });
}

std::string RenderJson(const Analysis& a, const std::function<void(JsonWriter&)>& extra_keys) {
  JsonWriter w;
  w.BeginObject();
  w.Key("schema_version").Int(kJsonSchemaVersion);
  w.Key("tool").BeginObject();
  w.Key("name").String("inferscope");
  w.Key("version").String(ToolVersion());
  w.EndObject();

  w.Key("inputs").BeginArray();
  for (const analyze::AnalysisInput& in : a.inputs) {
    w.BeginObject();
    w.Key("path").String(in.path);
    w.Key("format").String(in.format);
    w.EndObject();
  }
  w.EndArray();

  // Inputs of other jobs are left out, never mixed in as ranks (GroupTracesByJob, store runs).
  w.Key("jobs").BeginObject();
  w.Key("count").UInt(a.other_jobs.size() + 1);
  w.Key("warning").String(a.job_warning);
  w.Key("left_out").BeginArray();
  for (const analyze::OtherJob& job : a.other_jobs) {
    w.BeginObject();
    w.Key("inputs").BeginArray();
    for (const std::string& input : job.inputs) w.String(input);
    w.EndArray();
    w.Key("why").String(job.why);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();

  w.Key("options").BeginObject();
  w.Key("top").Int(a.options.top);
  w.Key("bin_ns").Int(a.options.bin_ns);
  w.Key("kernel_wait_threshold_ns").Int(a.options.kernel_wait_threshold_ns);
  w.Key("rules_path").String(a.options.rules_path);
  w.Key("slice").String(a.options.slice);
  w.EndObject();

  w.Key("diagnosis");
  WriteDiagnosis(w, a.diagnosis);

  w.Key("ranks").BeginArray();
  for (const RankAnalysis& r : a.ranks) WriteRank(w, r);
  w.EndArray();

  const analyze::JobSummary& s = a.summary;
  w.Key("summary").BeginObject();
  w.Key("rank_count").UInt(s.rank_count);
  w.Key("process_count").UInt(s.process_count);
  w.Key("span_ns").Int(s.span_ns);
  w.Key("temporal_breakdown");
  WriteTemporal(w, s.temporal);
  w.Key("kernel_count").UInt(s.kernel_count);
  w.Key("kernel_time_ns").Int(s.kernel_time_ns);
  w.Key("categories");
  WriteCategories(w, s.categories);
  w.Key("subcategories");
  WriteCategories(w, s.subcategories);
  w.Key("top_kernels");
  WriteKernels(w, s.top_kernels);
  w.Key("other_kernels");
  WriteOther(w, s.other_kernels);
  w.Key("idle_gaps");
  WriteIdleGaps(w, s.idle_gaps);
  w.Key("idle_causes");
  WriteIdleCauses(w, s.idle_causes, s.idle_intervals);
  w.Key("steps");
  WriteSteps(w, s.steps);
  w.Key("phases");
  WritePhasesJson(w, s.phases);
  w.Key("communication_ns").Int(s.communication_ns);
  w.Key("communication_overlap_ns").Int(s.communication_overlap_ns);
  w.Key("comm_compute_overlap_pct").Double(s.comm_compute_overlap_pct);
  w.Key("data_quality");
  WriteDataQuality(w, s.data_quality);
  w.EndObject();

  const analyze::RankComparison& c = a.comparison;
  w.Key("rank_comparison").BeginObject();
  w.Key("ranks").BeginArray();
  for (const analyze::RankComparisonRow& row : c.ranks) {
    w.BeginObject();
    w.Key("rank").Int(row.rank);
    w.Key("device").UInt(row.device);
    w.Key("span_ns").Int(row.span_ns);
    w.Key("busy_ns").Int(row.busy_ns);
    w.Key("idle_ns").Int(row.idle_ns);
    w.Key("compute_ns").Int(row.compute_ns);
    w.Key("communication_ns").Int(row.communication_ns);
    w.Key("busy_pct").Double(row.busy_pct);
    w.EndObject();
  }
  w.EndArray();
  w.Key("busy");
  WriteSpread(w, c.busy);
  w.Key("idle");
  WriteSpread(w, c.idle);
  w.Key("compute");
  WriteSpread(w, c.compute);
  w.Key("communication");
  WriteSpread(w, c.communication);
  w.Key("busy_imbalance").Double(c.busy.imbalance);
  w.Key("communication_imbalance").Double(c.communication.imbalance);
  if (c.straggler_rank >= 0) {
    w.Key("straggler_rank").Int(c.straggler_rank);
  } else {
    w.Key("straggler_rank").Null();
  }
  w.Key("straggler_excess_compute_ns").Int(c.straggler_excess_compute_ns);
  w.EndObject();

  // `analyze --views` only; null otherwise (every key always appears).
  w.Key("views");
  if (a.views.empty())
    w.Null();
  else
    WriteViewsJson(w, a);

  if (extra_keys) extra_keys(w);
  w.EndObject();
  return w.str();
}

bool ParseReportFormat(std::string_view name, ReportFormat* format) {
  if (name == "text") {
    *format = ReportFormat::kText;
  } else if (name == "markdown" || name == "md") {
    *format = ReportFormat::kMarkdown;
  } else if (name == "json") {
    *format = ReportFormat::kJson;
  } else {
    return false;
  }
  return true;
}

std::string Render(const Analysis& analysis, ReportFormat format) {
  return Render(analysis, format, ReportExtras{});
}

std::string Render(const Analysis& analysis, ReportFormat format, const ReportExtras& extras) {
  // Without host telemetry (a trace) the telemetry keys are still there, null: one schema.
  if (format == ReportFormat::kJson) {
    if (!extras.json && extras.data.empty()) return RenderJson(analysis);
    return RenderJson(analysis, [&extras](JsonWriter& w) {
      if (extras.json) extras.json(w);
      for (const ReportExtras::DataSection& d : extras.data) {
        w.Key(d.key);
        if (d.present && d.write_json)
          d.write_json(w);
        else
          w.Null();
      }
    });
  }
  constexpr int kWidth = 100;
  Document doc = BuildDocument(analysis, kWidth);
  if (!extras.input_lines.empty()) {
    // The per-input lines lead the header: replace them.
    std::erase_if(doc.header_lines, [](const std::string& line) {
      return line.rfind("input: ", 0) == 0 || line.rfind("... and ", 0) == 0;
    });
    doc.header_lines.insert(doc.header_lines.begin(), extras.input_lines.begin(),
                            extras.input_lines.end());
  }
  for (const ReportExtras::Section& extra : extras.sections) {
    Section& s = doc.sections.emplace_back();
    s.title = extra.title;
    Block& b = s.blocks.emplace_back();
    b.kind = Block::Kind::kPreformatted;
    b.lines = extra.lines;
  }
  for (const ReportExtras::DataSection& d : extras.data) {
    if (!d.present || !d.render_text) continue;
    std::string text;
    d.render_text(&text);
    Section& s = doc.sections.emplace_back();
    s.title = d.title;
    Block& b = s.blocks.emplace_back();
    b.kind = Block::Kind::kPreformatted;
    b.lines = SplitLines(text);
  }
  return format == ReportFormat::kText ? RenderDocumentText(doc, kWidth)
                                       : RenderDocumentMarkdown(doc);
}

}  // namespace inferscope::report
