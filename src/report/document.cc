// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/report/document.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "src/report/format.h"
#include "src/report/report.h"
#include "src/report/views.h"

namespace inferscope::report {
namespace {

using analyze::Analysis;
using analyze::CategoryRow;
using analyze::KernelRow;
using analyze::RankAnalysis;

constexpr size_t kMaxInputLines = 8;
constexpr size_t kMaxSubcategories = 10;
constexpr size_t kMaxTimelineRanks = 16;
constexpr size_t kMaxTimelineRows = 12;
constexpr std::string_view kLevels = " .:-=+*#%@";  // busy 0% .. 100%

Block Paragraph(std::vector<std::string> lines) {
  Block b;
  b.kind = Block::Kind::kParagraph;
  b.lines = std::move(lines);
  return b;
}

Block TableBlock(Table table) {
  Block b;
  b.kind = Block::Kind::kTable;
  b.table = std::move(table);
  return b;
}

Column Left(std::string h) { return {std::move(h), false, false, false}; }
Column Right(std::string h) { return {std::move(h), true, false, false}; }
Column Name(std::string h) { return {std::move(h), false, true, true}; }

std::string RankLabel(const RankAnalysis& r) { return std::to_string(r.rank); }

bool Multi(const Analysis& a) { return a.ranks.size() > 1; }

// Evidence as an engineer would write it: "host-wait gap mean 759 µs", not
// "host_wait_gap_mean_us 759 us". The JSON keeps the documented keys; only the text changes: the
// unit suffix goes (the value carries the unit), underscores become spaces, and the usual terms
// get their usual spelling.
std::string EvidenceName(const std::string& key) {
  // Keys whose generic reading (suffix off, underscores to spaces) would be ambiguous or cryptic.
  static const std::map<std::string, std::string> kNames = {
      {"category_pct", "category share of kernel time"},
      {"kernel_pct", "heaviest kernel share of kernel time"},
      {"usual_category_pct", "usual category share"},
      {"recoverable_pct", "recoverable"},
      {"slow_alloc_calls", "allocation calls over 1 ms"},
      {"slow_alloc_ms", "time in slow allocation calls"},
      {"slow_alloc_pct", "slow allocation share"},
      {"alloc_idle_pct", "GPU idle in allocations"},
      {"alloc_max_ms", "slowest allocation call"},
      {"host_copy_gb", "host copies"},
      {"host_copy_pct", "host copy time"},
      {"short_kernel_pct", "kernels under 10 µs"},
      {"idle_pct", "GPU idle"},
      {"busy_pct", "GPU busy"},
      {"sync_wait_pct", "host blocked in syncs"},
      {"sync_idle_pct", "GPU idle for syncs"},
      {"waited_on_top_ms", "wait on the top kernel"},
      {"launch_idle_pct", "GPU idle waiting for launches"},
      {"host_wait_idle_pct", "host-wait share of stream idle"},
      {"long_gap_idle_pct", "GPU idle in gaps over 1 ms"},
      {"host_idle_pct", "GPU idle while the host was idle"},
      {"dependency_idle_pct", "GPU idle on dependencies"},
      {"decode_delay_pct", "decode delayed by prefill"},
      {"straggler_rank", "straggler rank"},
      {"straggler_excess_compute_ms", "straggler extra compute"},
      {"straggler_wait_pct", "others waiting on the straggler"},
      {"kv_cache_usage_max_pct", "KV cache usage max"},
      {"queue_share_pct", "queue share of latency"},
      {"prefill_share_of_request_pct", "prefill share of request time"},
  };
  if (auto it = kNames.find(key); it != kNames.end()) return it->second;
  std::string name = key;
  for (const char* suffix : {"_pct", "_us", "_ms", "_ns", "_s", "_share"}) {
    const size_t n = std::strlen(suffix);
    if (name.size() > n && name.compare(name.size() - n, n, suffix) == 0) {
      name.resize(name.size() - n);
      break;
    }
  }
  std::replace(name.begin(), name.end(), '_', ' ');
  static const std::pair<const char*, const char*> kTerms[] = {{"host wait", "host-wait"},
                                                               {"kernel wait", "kernel-wait"},
                                                               {"cpu ", "CPU "},
                                                               {"gpm ", "GPM "},
                                                               {"dram ", "DRAM "},
                                                               {"kv cache", "KV cache"},
                                                               {"e2e", "end-to-end"},
                                                               {"sm ", "SM "},
                                                               {"gemm", "GEMM"}};
  for (const auto& [from, to] : kTerms) {
    const std::string f = from;
    for (size_t pos = 0; (pos = name.find(f, pos)) != std::string::npos; pos += std::strlen(to))
      if (pos == 0 || name[pos - 1] == ' ') name.replace(pos, f.size(), to);
  }
  return name;
}

// Three significant digits below 100, whole numbers above (no "1.23e+03").
std::string EvidenceNumber(double v) {
  if (std::fabs(v) >= 100 || v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

std::string FormatEvidence(const analyze::Evidence& e) {
  const std::string name = EvidenceName(e.name);
  if (e.unit == "count") return fmt::format("{} {:.0f}", name, e.value);
  if (e.unit == "%") return fmt::format("{} {:.1f}%", name, e.value);
  // A no-break space keeps "6.62 µs" on one line when the text wraps.
  return fmt::format("{} {}{}{}", name, EvidenceNumber(e.value), kNoBreakSpace,
                     e.unit == "us" ? "µs" : e.unit);
}

// The verdicts, most important first: one paragraph per finding (headline, evidence, fixes), so
// the text report reads top-down and markdown renders each as a list item with sub-bullets.
Section DiagnosisSection(const Analysis& a) {
  Section s{"Diagnosis", {}};
  const analyze::Diagnosis& d = a.diagnosis;
  if (d.findings.empty()) {
    s.blocks.push_back(Paragraph({"no diagnosis"}));
    return s;
  }
  s.blocks.push_back(Paragraph({fmt::format("primary verdict: {}", d.primary), ""}));
  for (size_t i = 0; i < d.findings.size(); ++i) {
    const analyze::Finding& f = d.findings[i];
    std::vector<std::string> lines;
    // "healthy" and "insufficient_evidence" put nothing at stake by definition; "0% of time at
    // stake" would only distract.
    const bool no_stake = f.id == "healthy" || f.id == "insufficient_evidence";
    lines.push_back(fmt::format(
        "{}. {} ({}, {}confidence {:.2f}{}): {}", i + 1, f.id, f.severity,
        f.rank >= 0 ? fmt::format("rank {}, ", f.rank) : "", f.confidence,
        no_stake ? "" : fmt::format(", {:.0f}% of time at stake", f.score * 100), f.summary));
    // Evidence and fixes nest under their finding (a sub-list in markdown too).
    const std::string sub(fmt::format("{}. ", i + 1).size(), ' ');
    if (!f.evidence.empty()) {
      std::string ev;
      for (const analyze::Evidence& e : f.evidence)
        ev += (ev.empty() ? "" : ", ") + FormatEvidence(e);
      lines.push_back(sub + "- evidence: " + ev);
    }
    // A finding with next to nothing at stake is a note, not a to-do list: four fixes under
    // "0% of time at stake" would send people after nothing.
    if (f.score * 100 < 0.5 && !f.fixes.empty()) {
      lines.push_back(sub + "- no fix suggested: under 0.5% of the time is at stake");
    } else {
      for (const std::string& fix : f.fixes) lines.push_back(sub + "- fix: " + fix);
    }
    if (i + 1 < d.findings.size()) lines.emplace_back();  // a blank line between findings
    s.blocks.push_back(Paragraph(std::move(lines)));
  }
  return s;
}

Section Temporal(const Analysis& a) {
  Section s{"Temporal breakdown", {}};
  Table t;
  t.columns = {Right("rank"),        Right("gpu"),       Right("span"),    Right("busy %"),
               Right("idle"),        Right("idle %"),    Right("compute"), Right("compute %"),
               Right("non-compute"), Right("non-comp %")};
  auto row = [](std::string rank, std::string gpu, const analyze::TemporalBreakdown& b) {
    return std::vector<std::string>{std::move(rank),
                                    std::move(gpu),
                                    FormatDuration(b.span_ns),
                                    FormatPct(b.busy_pct),
                                    FormatDuration(b.idle_ns),
                                    FormatPct(b.idle_pct),
                                    FormatDuration(b.compute_ns),
                                    FormatPct(b.compute_pct),
                                    FormatDuration(b.non_compute_ns),
                                    FormatPct(b.non_compute_pct)};
  };
  for (const RankAnalysis& r : a.ranks)
    t.rows.push_back(row(RankLabel(r), std::to_string(r.device), r.temporal));
  if (Multi(a)) t.rows.push_back(row("all", "", a.summary.temporal));
  s.blocks.push_back(TableBlock(std::move(t)));
  s.blocks.push_back(Paragraph(
      {"span: first to last GPU activity; busy: union of GPU activity; idle = span - busy;",
       "compute: union of compute kernels (all but communication and copy-engine memory; SM copy",
       "kernels, memory.kernel.*, count); non-compute = busy - compute."}));
  return s;
}

Section Categories(const Analysis& a) {
  Section s{Multi(a) ? "GPU time by category (all ranks)" : "GPU time by category", {}};
  const bool multi = Multi(a);
  const std::vector<CategoryRow>& cats = multi ? a.summary.categories : a.ranks.front().categories;
  const std::vector<CategoryRow>& subs =
      multi ? a.summary.subcategories : a.ranks.front().subcategories;
  const int64_t kernel_ns = multi ? a.summary.kernel_time_ns : a.ranks.front().kernel_time_ns;
  const uint64_t kernels = multi ? a.summary.kernel_count : a.ranks.front().kernel_count;
  std::vector<CategoryRow> sorted;
  for (const CategoryRow& c : cats)
    if (c.count > 0 || c.time_ns > 0) sorted.push_back(c);
  std::stable_sort(sorted.begin(), sorted.end(), [](const CategoryRow& x, const CategoryRow& y) {
    return x.time_ns > y.time_ns;
  });
  if (sorted.empty()) {
    s.blocks.push_back(Paragraph({"no kernels recorded"}));
    return s;
  }
  Table t;
  t.columns = {Left("category"), Right("time"), Right("count"), Right("%"), Left("share")};
  for (const CategoryRow& c : sorted)
    t.rows.push_back({c.name, FormatDuration(c.time_ns), FormatCount(c.count), FormatPct(c.pct),
                      Bar(c.pct, 30)});
  s.blocks.push_back(TableBlock(std::move(t)));
  s.blocks.push_back(Paragraph({fmt::format(
      "kernel time {} over {} kernels (sum of durations: concurrent kernels both count; memory "
      "includes memcpy/memset)",
      FormatDuration(kernel_ns), FormatCount(kernels))}));
  if (!subs.empty()) {
    Table st;
    st.columns = {Left("sub-category"), Right("time"), Right("count"), Right("%")};
    for (size_t i = 0; i < subs.size() && i < kMaxSubcategories; ++i)
      st.rows.push_back({subs[i].name, FormatDuration(subs[i].time_ns), FormatCount(subs[i].count),
                         FormatPct(subs[i].pct)});
    s.blocks.push_back(TableBlock(std::move(st)));
  }
  return s;
}

// Prefill vs decode: the live steps' GPU time by forward phase. Only when some window
// had whole steps.
// The forward-phase rows of one summary, each led by `lead` (rank and GPU, or a fleet group).
void AddPhaseRows(const std::vector<std::string>& lead, const analyze::PhaseSummary& s, Table* t) {
  auto add = [&](const std::string& phase, uint64_t steps, int64_t mean_ns, int64_t gpu_ns,
                 double pct, int64_t busy_ns, const std::vector<analyze::CategoryRow>& cats) {
    std::string top;
    for (size_t i = 0; i < cats.size() && i < 3; ++i)
      top += fmt::format("{}{} {}", i ? ", " : "", cats[i].name, FormatPct(cats[i].pct));
    std::vector<std::string> row = lead;
    for (std::string cell :
         {phase, steps ? std::to_string(steps) : "", steps ? FormatDuration(mean_ns) : "",
          FormatDuration(gpu_ns), FormatPct(pct), steps ? FormatDuration(busy_ns) : "", top})
      row.push_back(std::move(cell));
    t->rows.push_back(std::move(row));
  };
  for (const analyze::PhaseSummaryRow& p : s.phases)
    add(p.phase, p.steps, p.step_mean_ns, p.gpu_time_ns, p.pct, p.busy_ns, p.categories);
  if (s.outside_ns > 0) add("(outside)", 0, 0, s.outside_ns, s.outside_pct, 0, {});
}

std::vector<Column> PhaseColumns() {
  return {Left("phase"), Right("steps"), Right("mean step"),    Right("gpu time"),
          Right("%"),    Right("busy"),  Left("top categories")};
}

Block PhaseNotes() {
  return Paragraph(
      {"steps run between the host's turns; a step that ran attention.prefill kernels is prefill,",
       "attention.decode decode, both mixed (chunked prefill), neither unknown. % = share of the",
       "GPU time of the windows with steps. A step running at a window edge counts in the window",
       "it ends in; (outside): operations of steps not whole (over 60 s without a host turn)."});
}

Section Phases(const Analysis& a) {
  Section s{"Forward phases (prefill vs decode)", {}};
  if (a.summary.phases.empty()) return s;
  Table t;
  t.columns = {Right("rank"), Right("gpu")};
  for (Column& c : PhaseColumns()) t.columns.push_back(std::move(c));
  for (const RankAnalysis& r : a.ranks)
    AddPhaseRows({RankLabel(r), std::to_string(r.device)}, r.phases, &t);
  s.blocks.push_back(TableBlock(std::move(t)));
  s.blocks.push_back(PhaseNotes());
  return s;
}

Section TopKernels(const Analysis& a) {
  const bool multi = Multi(a);
  Section s{multi ? "Top kernels (all ranks)" : "Top kernels", {}};
  const std::vector<KernelRow>& rows = multi ? a.summary.top_kernels : a.ranks.front().top_kernels;
  const analyze::OtherKernels& other =
      multi ? a.summary.other_kernels : a.ranks.front().other_kernels;
  if (rows.empty()) {
    s.blocks.push_back(Paragraph({"no kernels recorded"}));
    return s;
  }
  Table t;
  t.columns = {Right("#"),     Name("kernel"), Left("category"), Right("count"),
               Right("total"), Right("mean"),  Right("max"),     Right("%")};
  // Template instances share a short name; number repeats so rows stay distinguishable.
  std::map<std::string, int> seen;
  for (size_t i = 0; i < rows.size(); ++i) {
    const KernelRow& k = rows[i];
    const int n = ++seen[k.display_name];
    const std::string display = n == 1 ? k.display_name : fmt::format("{} [{}]", k.display_name, n);
    t.rows.push_back({std::to_string(i + 1), display, k.category, FormatCount(k.count),
                      FormatDuration(k.total_ns), FormatDuration(k.mean_ns),
                      FormatDuration(k.max_ns), FormatPct(k.pct)});
  }
  if (other.count > 0) {
    t.rows.push_back(
        {"", fmt::format("other ({} kernels)", FormatCount(other.distinct_names)), "",
         FormatCount(other.count), FormatDuration(other.total_ns),
         FormatDuration(other.count ? other.total_ns / static_cast<int64_t>(other.count) : 0), "",
         FormatPct(other.pct)});
  }
  s.blocks.push_back(TableBlock(std::move(t)));
  return s;
}

Section IdleGaps(const Analysis& a) {
  Section s{"Idle gaps", {}};
  Table t;
  t.columns = {Right("rank"),      Right("gpu"),   Right("stream idle"),
               Right("host wait"), Right("%"),     Right("kernel wait"),
               Right("%"),         Right("other"), Right("%")};
  for (const RankAnalysis& r : a.ranks) {
    std::vector<std::string> row = {RankLabel(r), std::to_string(r.device),
                                    FormatDuration(analyze::StreamIdleNs(r.idle_gaps))};
    for (const analyze::IdleGapRow& g : r.idle_gaps) {
      row.push_back(FormatDuration(g.total_ns));
      row.push_back(FormatPct(g.pct));
    }
    t.rows.push_back(std::move(row));
  }
  s.blocks.push_back(TableBlock(std::move(t)));
  s.blocks.push_back(Paragraph(
      {"stream idle: the gaps between consecutive operations of each stream, summed over the GPU's "
       "streams; each % is of it.",
       "Streams idle at the same moment count once each, so stream idle can exceed the GPU's idle "
       "time (split in \"Why the GPU was idle\").",
       "host wait: the stream ran dry and waited for the host to launch more work;",
       fmt::format("kernel wait: gaps under {} between back-to-back operations; other: the rest "
                   "(cross-stream or event waits).",
                   FormatDuration(a.options.kernel_wait_threshold_ns))}));
  return s;
}

// The causal split (docs/diagnosis.md): what the launching host thread did while the GPU idled.
Section IdleCauses(const Analysis& a) {
  Section s{"Why the GPU was idle", {}};
  Table t;
  // Short headers so the table fits the terminal; the JSON keys are the full cause names.
  t.columns = {Right("rank"),   Right("gpu"),    Right("idle"),   Right("intervals"),
               Right("alloc"),  Right("sync"),   Right("launch"), Right("host_idle"),
               Right("depend"), Right("queued"), Right("unattr")};
  static_assert(model::kIdleCauseCount == 7);
  for (const RankAnalysis& r : a.ranks) {
    std::vector<std::string> row = {RankLabel(r), std::to_string(r.device),
                                    FormatDuration(r.temporal.idle_ns),
                                    FormatCount(r.idle_intervals)};
    for (const analyze::IdleCauseRow& c : r.idle_causes)
      row.push_back(c.total_ns ? FormatPct(c.pct) : "-");
    t.rows.push_back(std::move(row));
  }
  s.blocks.push_back(TableBlock(std::move(t)));
  s.blocks.push_back(Paragraph(
      {"% of the idle time, by what the thread that launched the work ending each idle interval "
       "was doing:",
       "alloc: in cudaMalloc/cudaFree; sync: blocked in a sync or handling its result; launch: "
       "issuing work (launch calls and the short pauses between them);",
       "depend: the work was queued before the GPU ran dry and waited (another stream, an event, "
       "a peer); queued: queued work starting within the GPU's turnaround;",
       "host_idle: no CUDA call for over 1 ms (no work, or host-side work); unattr: no launch "
       "record."}));
  return s;
}

Section Launch(const Analysis& a) {
  Section s{"Kernel launch", {}};
  Table t;
  t.columns = {Right("rank"),       Right("kernels"),    Right("launch mean"),
               Right("launch max"), Right("delay mean"), Right("delay max"),
               Right("short"),      Right("short %"),    Right("graphs")};
  for (const RankAnalysis& r : a.ranks) {
    const analyze::LaunchSummary& l = r.launch;
    t.rows.push_back({RankLabel(r), FormatCount(r.kernel_count),
                      FormatDuration(l.cpu_launch_mean_ns), FormatDuration(l.cpu_launch_max_ns),
                      FormatDuration(l.launch_delay_mean_ns), FormatDuration(l.launch_delay_max_ns),
                      FormatCount(l.short_kernels), FormatPct(l.short_kernel_pct),
                      FormatCount(l.graph_launches)});
  }
  s.blocks.push_back(TableBlock(std::move(t)));
  s.blocks.push_back(Paragraph(
      {"launch: CPU time of the launch API call; delay: launch call start to kernel start;",
       "short: kernels under 10 us (launch overhead dominates them); graphs: CUDA graph "
       "launches."}));
  return s;
}

Section Syncs(const Analysis& a) {
  Section s{"Host synchronization", {}};
  Table t;
  t.columns = {Right("rank"), Left("type"), Right("count"),          Right("total"),
               Right("mean"), Right("max"), Name("waited on (most)")};
  for (const RankAnalysis& r : a.ranks)
    for (const analyze::SyncRow& row : r.syncs)
      if (row.count > 0)
        t.rows.push_back({RankLabel(r), row.type, FormatCount(row.count),
                          FormatDuration(row.total_ns), FormatDuration(row.mean_ns),
                          FormatDuration(row.max_ns),
                          row.waited_on.empty() ? "" : row.waited_on.front().display_name});
  if (t.rows.empty()) {
    s.blocks.push_back(Paragraph({"no host synchronization recorded"}));
  } else {
    s.blocks.push_back(TableBlock(std::move(t)));
    s.blocks.push_back(
        Paragraph({"time the host blocked waiting for the GPU, by sync type "
                   "(stream_wait_event is a GPU-side wait)."}));
  }
  return s;
}

Section Transfers(const Analysis& a) {
  Section s{"Memory transfers", {}};
  Table t;
  t.columns = {Right("rank"), Left("direction"), Right("count"),   Right("bytes"),
               Right("time"), Right("GB/s"),     Right("pageable")};
  for (const RankAnalysis& r : a.ranks)
    for (const analyze::TransferRow& row : r.transfers)
      if (row.count > 0)
        t.rows.push_back({RankLabel(r), row.direction, FormatCount(row.count),
                          FormatBytes(row.bytes), FormatDuration(row.time_ns),
                          FormatGbps(row.bandwidth_gbps),
                          row.direction == "memset" ? "" : FormatCount(row.pageable_count)});
  if (t.rows.empty()) {
    s.blocks.push_back(Paragraph({"no memcpy or memset recorded"}));
  } else {
    s.blocks.push_back(TableBlock(std::move(t)));
  }
  return s;
}

Section Allocations(const Analysis& a) {
  Section s{"Allocations", {}};
  Table t;
  t.columns = {Right("rank"),       Right("mallocs"),    Right("malloc time"),
               Right("malloc max"), Right("bytes"),      Right("frees"),
               Right("free time"),  Right("slow calls"), Right("slow time")};
  for (const RankAnalysis& r : a.ranks) {
    const analyze::AllocationSummary& al = r.allocations;
    if (al.malloc_calls == 0 && al.free_calls == 0) continue;
    t.rows.push_back({RankLabel(r), FormatCount(al.malloc_calls),
                      FormatDuration(al.malloc_total_ns), FormatDuration(al.malloc_max_ns),
                      FormatBytes(al.malloc_bytes), FormatCount(al.free_calls),
                      FormatDuration(al.free_total_ns), FormatCount(al.slow_calls),
                      FormatDuration(al.slow_total_ns)});
  }
  if (t.rows.empty()) {
    s.blocks.push_back(Paragraph({"no allocation calls recorded"}));
  } else {
    s.blocks.push_back(TableBlock(std::move(t)));
    s.blocks.push_back(Paragraph({"slow: malloc/free calls over 1 ms (they stall the host)."}));
  }
  return s;
}

// How CUDA graph time was attributed to kernels (live path): measured node by node in a sample,
// estimated from the shares samples measured, split over the captured kernels by their known
// durations or by count, or not attributed (one pseudo-kernel per launch).
Section CudaGraphs(const Analysis& a) {
  Section s{"CUDA graphs", {}};
  Table t;
  t.columns = {Right("rank"),       Right("launches"), Right("graph time"), Right("measured"),
               Right("estimated"),  Right("by time"),  Right("by count"),   Right("unattrib."),
               Right("shares age"), Right("max error")};
  bool unattributed = false;
  for (const RankAnalysis& r : a.ranks) {
    const model::CudaGraphStats& g = r.graphs;
    if (g.launches == 0) continue;
    const double total = static_cast<double>(std::max<int64_t>(g.launch_ns, 1));
    auto pct = [&](int64_t v) { return FormatPct(100.0 * static_cast<double>(v) / total); };
    unattributed = unattributed || g.unattributed_ns > 0;
    t.rows.push_back({RankLabel(r), FormatCount(g.launches), FormatDuration(g.launch_ns),
                      pct(g.measured_ns), pct(g.estimated_ns), pct(g.composition_timed_ns),
                      pct(g.composition_ns - g.composition_timed_ns), pct(g.unattributed_ns),
                      g.estimated_ns > 0 ? FormatDuration(g.max_share_age_ns) : "-",
                      g.checks > 0 ? fmt::format("{:.1f} pp", g.max_error_bp / 100.0) : "-"});
  }
  if (t.rows.empty()) return s;
  s.blocks.push_back(TableBlock(std::move(t)));
  std::vector<std::string> notes = {
      "measured: traced node by node (a sample); estimated: split by the kernel shares the last "
      "sample of that graph measured (categories and top kernels above include them); max error: "
      "largest category share a sample found off from the estimate, in percentage points; by "
      "time: a graph not sampled yet, split over the kernels its capture recorded by what "
      "each is known to take (the same kernel measured outside graphs or in a sample); by count: "
      "the same, split evenly, nothing known of its kernels."};
  if (unattributed)
    notes.push_back(
        "unattributed: graphs neither sampled nor seen captured, each launch one '[cuda graph N of "
        "pid P]' kernel of "
        "category other; they are split after the next sample (INFERSCOPE_GRAPH_SAMPLE, default "
        "1s every 60s), or trace every node with INFERSCOPE_GRAPH_NODES=1.");
  s.blocks.push_back(Paragraph(std::move(notes)));
  return s;
}

Section Communication(const Analysis& a) {
  Section s{"Communication", {}};
  if (a.summary.communication_ns == 0) {
    s.blocks.push_back(Paragraph({"no communication kernels"}));
    return s;
  }
  Table t;
  t.columns = {Right("rank"),      Right("gpu"),        Right("communication"),
               Right("% of busy"), Right("overlapped"), Right("overlap %")};
  for (const RankAnalysis& r : a.ranks)
    t.rows.push_back({RankLabel(r), std::to_string(r.device), FormatDuration(r.communication_ns),
                      FormatPct(analyze::Pct(static_cast<double>(r.communication_ns),
                                             static_cast<double>(r.temporal.busy_ns))),
                      FormatDuration(r.communication_overlap_ns),
                      FormatPct(r.comm_compute_overlap_pct)});
  s.blocks.push_back(TableBlock(std::move(t)));
  s.blocks.push_back(Paragraph(
      {"communication: union of communication kernels; overlapped: of that, time a compute kernel "
       "ran at the same time."}));
  return s;
}

Section Comparison(const Analysis& a) {
  Section s{"Rank comparison", {}};
  const analyze::RankComparison& c = a.comparison;
  Table t;
  t.columns = {Left("metric"),    Right("min"),  Right("min rank"), Right("max"),
               Right("max rank"), Right("mean"), Right("imbalance")};
  auto row = [&t](const char* name, const analyze::Spread& sp) {
    t.rows.push_back({name, FormatDuration(sp.min_ns), std::to_string(sp.min_rank),
                      FormatDuration(sp.max_ns), std::to_string(sp.max_rank),
                      FormatDuration(static_cast<int64_t>(sp.mean_ns)),
                      FormatPct(sp.imbalance * 100)});
  };
  row("busy", c.busy);
  row("compute", c.compute);
  row("idle", c.idle);
  row("communication", c.communication);
  s.blocks.push_back(TableBlock(std::move(t)));
  std::vector<std::string> lines = {"imbalance = (max - min) / mean."};
  if (c.straggler_rank >= 0)
    lines.push_back(fmt::format(
        "straggler: rank {} ({} more compute than the mean); the other ranks wait for it.",
        c.straggler_rank, FormatDuration(c.straggler_excess_compute_ns)));
  else
    lines.push_back(fmt::format("no straggler: compute differs by less than {:.0f}% across ranks.",
                                analyze::kStragglerMinImbalance * 100));
  s.blocks.push_back(Paragraph(std::move(lines)));
  return s;
}

// Busy share of bins [begin, end) of one rank's timeline.
double GroupBusyPct(const analyze::TimelineSummary& tl, size_t begin, size_t end) {
  int64_t busy = 0;
  for (size_t i = begin; i < end && i < tl.bins.size(); ++i) busy += tl.bins[i].busy_ns;
  return analyze::Pct(static_cast<double>(busy),
                      static_cast<double>(tl.bin_ns) * static_cast<double>(end - begin));
}

Section TimelineSection(const Analysis& a, int width) {
  Section s{"Timeline", {}};
  size_t max_bins = 0;
  for (const RankAnalysis& r : a.ranks) max_bins = std::max(max_bins, r.timeline.bins.size());
  if (max_bins == 0) {
    s.blocks.push_back(Paragraph({"no timeline"}));
    return s;
  }
  const int64_t bin_ns = a.ranks.front().timeline.bin_ns;
  // "rank 12 gpu 3 |" + sparkline + "| 100.0%": leave room for the labels.
  const size_t cells = static_cast<size_t>(std::max(width - 28, 10));
  const size_t group = (max_bins + cells - 1) / cells;
  Block pre;
  pre.kind = Block::Kind::kPreformatted;
  for (size_t i = 0; i < a.ranks.size() && i < kMaxTimelineRanks; ++i) {
    const RankAnalysis& r = a.ranks[i];
    std::string line;
    for (size_t b = 0; b < r.timeline.bins.size(); b += group) {
      const double pct = GroupBusyPct(r.timeline, b, b + group);
      const auto level = static_cast<size_t>(
          std::clamp(pct, 0.0, 100.0) / 100.0 * static_cast<double>(kLevels.size() - 1) + 0.5);
      line += kLevels[std::min(level, kLevels.size() - 1)];
    }
    pre.lines.push_back(fmt::format("rank {:>2} gpu {:>2} |{}| {}", r.rank, r.device, line,
                                    FormatPct(r.temporal.busy_pct)));
  }
  if (a.ranks.size() > kMaxTimelineRanks)
    pre.lines.push_back(fmt::format("... {} more ranks", a.ranks.size() - kMaxTimelineRanks));
  s.blocks.push_back(std::move(pre));
  for (const RankAnalysis& r : a.ranks) {
    if (!r.timeline.truncated) continue;
    s.blocks.push_back(
        Paragraph({"the timeline is cut at its bin limit (activity continues past "
                   "it); pass a wider --bin to see all of it."}));
    break;
  }
  s.blocks.push_back(
      Paragraph({fmt::format("busy share per {} (bin {} x {}); levels \"{}\" = 0..100% busy.",
                             FormatDuration(bin_ns * static_cast<int64_t>(group)),
                             FormatDuration(bin_ns), group, kLevels)}));

  if (!Multi(a)) {
    const analyze::TimelineSummary& tl = a.ranks.front().timeline;
    const size_t rows_group = (tl.bins.size() + kMaxTimelineRows - 1) / kMaxTimelineRows;
    Table t;
    t.columns = {Right("from"), Right("to"), Right("busy %"), Left("busy"), Left("top category")};
    for (size_t b = 0; b < tl.bins.size(); b += rows_group) {
      const size_t end = std::min(b + rows_group, tl.bins.size());
      const double pct = GroupBusyPct(tl, b, b + rows_group);
      std::vector<int64_t> cat(model::kCategoryCount, 0);
      for (size_t i = b; i < end; ++i)
        for (int c = 0; c < model::kCategoryCount; ++c) cat[c] += tl.bins[i].category_ns[c];
      const auto top = std::max_element(cat.begin(), cat.end()) - cat.begin();
      t.rows.push_back({FormatDuration(tl.bins[b].start_ns),
                        FormatDuration(static_cast<int64_t>(b + rows_group) * tl.bin_ns),
                        FormatPct(pct), Bar(pct, 20),
                        cat[top] > 0 ? std::string(model::kCategoryNames[top]) : ""});
    }
    s.blocks.push_back(TableBlock(std::move(t)));
  }
  return s;
}

Section DataQuality(const Analysis& a) {
  Section s{"Data quality", {}};
  Table t;
  t.columns = {Right("rank"), Right("pid"), Left("counter"), Right("count")};
  std::vector<uint32_t> seen_pids;
  for (const RankAnalysis& r : a.ranks) {
    // Counters belong to the process; show them once per process.
    bool seen = false;
    for (size_t i = 0; i < seen_pids.size(); ++i) seen = seen || seen_pids[i] == r.pid;
    if (seen) continue;
    seen_pids.push_back(r.pid);
    for (const auto& [name, count] : r.data_quality)
      if (count > 0)
        t.rows.push_back({RankLabel(r), std::to_string(r.pid), name, FormatCount(count)});
  }
  if (t.rows.empty())  // processes without any GPU activity have no rank entry
    for (const auto& [name, count] : a.summary.data_quality)
      if (count > 0) t.rows.push_back({"all", "", name, FormatCount(count)});
  if (t.rows.empty()) {
    s.blocks.push_back(Paragraph({"no records were rejected or repaired"}));
  } else {
    s.blocks.push_back(TableBlock(std::move(t)));
  }
  int64_t profiler_cpu_ns = 0;
  seen_pids.clear();
  for (const RankAnalysis& r : a.ranks) {
    bool seen = false;
    for (uint32_t pid : seen_pids) seen = seen || pid == r.pid;
    if (!seen) profiler_cpu_ns += r.profiler_cpu_ns;
    seen_pids.push_back(r.pid);
  }
  if (profiler_cpu_ns > 0)
    s.blocks.push_back(Paragraph({"profiler overhead: " + FormatDuration(profiler_cpu_ns) +
                                  " of CPU in the profiled processes (decoding and aggregating)"}));
  return s;
}

}  // namespace

Document BuildDocument(const Analysis& a, int width) {
  Document doc;
  doc.title = fmt::format("inferscope {} report", ToolVersion());
  for (size_t i = 0; i < a.inputs.size() && i < kMaxInputLines; ++i)
    doc.header_lines.push_back(fmt::format("input: {} ({})", a.inputs[i].path, a.inputs[i].format));
  if (a.inputs.size() > kMaxInputLines)
    doc.header_lines.push_back(
        fmt::format("... and {} more inputs", a.inputs.size() - kMaxInputLines));
  doc.header_lines.push_back(
      fmt::format("ranks: {} (processes {})", a.ranks.size(), a.summary.process_count));
  if (!a.job_warning.empty()) doc.header_lines.push_back("warning: " + a.job_warning);
  if (a.ranks.size() == 1) {
    const RankAnalysis& r = a.ranks.front();
    doc.header_lines.push_back(fmt::format("device: {} {} (pid {}{}{})", r.device,
                                           r.device_name.empty() ? "(unnamed)" : r.device_name,
                                           r.pid, r.hostname.empty() ? "" : ", host ", r.hostname));
  }
  doc.header_lines.push_back(fmt::format("span: {}{}", FormatDuration(a.summary.span_ns),
                                         Multi(a) ? " (longest rank)" : ""));
  doc.header_lines.push_back(fmt::format(
      "options: top {}, bin {}, kernel-wait threshold {}{}", a.options.top,
      FormatDuration(a.options.bin_ns), FormatDuration(a.options.kernel_wait_threshold_ns),
      a.options.rules_path.empty() ? "" : ", rules " + a.options.rules_path));
  if (!a.options.slice.empty()) doc.header_lines.push_back("slice: " + a.options.slice);
  doc.sections.push_back(DiagnosisSection(a));
  if (a.ranks.empty()) {
    Section s{"No GPU activity", {Paragraph({"the input holds no kernels, copies or memsets"})}};
    doc.sections.push_back(std::move(s));
    doc.sections.push_back(DataQuality(a));
    return doc;
  }
  doc.sections.push_back(Temporal(a));
  doc.sections.push_back(Categories(a));
  if (Section p = Phases(a); !p.blocks.empty()) doc.sections.push_back(std::move(p));
  if (Section g = CudaGraphs(a); !g.blocks.empty()) doc.sections.push_back(std::move(g));
  doc.sections.push_back(TopKernels(a));
  doc.sections.push_back(IdleGaps(a));
  doc.sections.push_back(IdleCauses(a));
  doc.sections.push_back(Launch(a));
  doc.sections.push_back(Syncs(a));
  doc.sections.push_back(Transfers(a));
  doc.sections.push_back(Allocations(a));
  doc.sections.push_back(Communication(a));
  if (Multi(a)) doc.sections.push_back(Comparison(a));
  doc.sections.push_back(TimelineSection(a, width));
  AppendViewSections(a, &doc);
  doc.sections.push_back(DataQuality(a));
  return doc;
}

Section GroupPhasesSection(const std::string& key_header, const std::vector<GroupPhases>& groups) {
  Section s{"Forward phases (prefill vs decode)", {}};
  Table t;
  t.columns = {Left(key_header)};
  for (Column& c : PhaseColumns()) t.columns.push_back(std::move(c));
  for (const GroupPhases& g : groups) AddPhaseRows({g.key}, g.phases, &t);
  s.blocks.push_back(TableBlock(std::move(t)));
  s.blocks.push_back(PhaseNotes());
  return s;
}

}  // namespace inferscope::report
