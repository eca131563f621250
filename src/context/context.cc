// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/context/context.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "src/base/human_format.h"

namespace inferscope::context {
namespace {

// Room kept for the closing line that names omitted sections, so it always fits.
constexpr size_t kFooterReserveBytes = 360;
constexpr size_t kMaxNameChars = 72;

std::string Cut(const std::string& s, size_t max_chars) {
  if (s.size() <= max_chars) return s;
  size_t n = max_chars - 3;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // UTF-8 boundary
  return s.substr(0, n) + "...";
}

// Fills the text section by section in priority order. A section that does not fit whole keeps
// as many table rows as fit plus a line saying what the cut left out; one whose head does not fit
// is named in the footer.
class Builder {
 public:
  explicit Builder(size_t budget_bytes) : budget_(budget_bytes) {}

  // `cut_line(n)`: the line replacing the last n rows of the table ("… n more kernels, 4.1% of
  // GPU time"). Rows keep their order; only the tail is cut.
  void Section(const std::string& title, const std::vector<std::string>& head,
               const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right,
               const std::function<std::string(size_t)>& cut_line = nullptr,
               const std::string& trailer = "") {
    std::string base = "\n## " + title + "\n";
    for (const std::string& line : head) base += line + "\n";
    auto render = [&](size_t kept) {
      std::string s = base;
      if (kept > 0) {
        std::vector<std::vector<std::string>> shown(rows.begin(), rows.begin() + kept);
        s += AlignedTable(shown, right);
      }
      if (kept < rows.size() && cut_line) s += cut_line(rows.size() - kept) + "\n";
      if (!trailer.empty()) s += trailer + "\n";
      return s;
    };
    std::string full = render(rows.size());
    if (Fits(full)) {
      text_ += full;
      return;
    }
    truncated_ = true;
    for (size_t kept = rows.size(); kept-- > 0;) {
      std::string part = render(kept);
      if (Fits(part) && (kept > 0 || rows.empty() || cut_line)) {
        text_ += part;
        return;
      }
    }
    omitted_.push_back(title.substr(0, title.find(" (")));  // short name, for the footer
  }

  void Line(const std::string& line) {
    if (Fits(line + "\n"))
      text_ += line + "\n";
    else
      truncated_ = true;
  }

  ContextResult Finish(const std::string& narrow_hint) {
    ContextResult out;
    if (!omitted_.empty() || truncated_) {
      std::string footer = "\n";
      if (!omitted_.empty()) {
        footer += "… omitted for the budget:";
        for (size_t i = 0; i < omitted_.size(); ++i) footer += (i ? ", " : " ") + omitted_[i];
        footer += ". ";
      } else {
        footer += "… cut for the budget. ";
      }
      footer += narrow_hint + "\n";
      if (text_.size() + footer.size() <= budget_) text_ += footer;
    }
    out.text = std::move(text_);
    out.truncated = truncated_ || !omitted_.empty();
    out.omitted = std::move(omitted_);
    return out;
  }

 private:
  bool Fits(const std::string& s) const {
    const size_t limit = budget_ > kFooterReserveBytes ? budget_ - kFooterReserveBytes : 0;
    return text_.size() + s.size() <= limit;
  }

  size_t budget_;
  std::string text_;
  bool truncated_ = false;
  std::vector<std::string> omitted_;
};

std::string RangeLine(const ReportView& view, const ContextOptions& options) {
  if (!view.from_utc.empty())
    return fmt::format("range: {} to {}{} ({}; {} profile windows)", view.from_utc, view.to_utc,
                       view.open_ended ? " (open-ended)" : "", options.range_text, view.windows);
  std::string files;
  for (size_t i = 0; i < view.inputs.size() && i < 4; ++i)
    files += (i ? ", " : "") + view.inputs[i];
  if (view.inputs.size() > 4) files += fmt::format(" … {} more", view.inputs.size() - 4);
  return "range: whole trace (" + files + "; a time range does not apply to trace files)";
}

void Profiled(const ReportView& view, const ContextOptions& options, Builder* b) {
  std::set<std::string> hosts, gpus;
  std::set<int64_t> pids;
  for (const RankView& r : view.ranks) {
    hosts.insert(r.hostname.empty() ? "(unknown)" : r.hostname);
    pids.insert(r.pid);
    if (!r.device_name.empty()) gpus.insert(r.device_name);
  }
  auto join = [](const auto& set, size_t max) {
    std::string out;
    size_t i = 0;
    for (const auto& v : set) {
      if (i == max) return out + fmt::format(" … {} more", set.size() - max);
      out += (i++ ? ", " : "") + fmt::format("{}", v);
    }
    return out.empty() ? std::string("-") : out;
  };
  std::vector<std::string> head = {
      "source: " + options.source,
      RangeLine(view, options),
      "filters: " + (options.filters_text.empty() ? std::string("none") : options.filters_text),
      fmt::format("profiled: {} host(s) [{}], {} process(es), {} GPU rank(s) [{}]", hosts.size(),
                  join(hosts, 8), pids.size(), view.ranks.size(), join(gpus, 4)),
  };
  // Before anything is read as one job's ranks: what was left out, and why.
  if (!view.job_warning.empty()) head.push_back("warning: " + view.job_warning);
  if (view.has_engine || !view.models.empty())
    head.push_back("engine: " + (view.engine.empty() ? std::string("-") : view.engine) +
                   (view.backend.empty() ? "" : " (" + view.backend + ")") + "; models: " +
                   join(std::set<std::string>(view.models.begin(), view.models.end()), 4));
  head.push_back(fmt::format(
      "GPU time: span {}, busy {} ({}), idle {} ({}), compute {} ({}) "
      "(sums over ranks; shares of the summed spans)",
      FormatNs(view.span_ns()), FormatNs(view.busy_ns()),
      Share(view.busy_ns(), view.busy_ns() + view.idle_ns()), FormatNs(view.idle_ns()),
      Share(view.idle_ns(), view.busy_ns() + view.idle_ns()), FormatNs(view.compute_ns()),
      Share(view.compute_ns(), view.busy_ns() + view.idle_ns())));
  b->Section("What was profiled", head, {}, {});
}

void Diagnosis(const ReportView& view, Builder* b) {
  std::vector<std::string> head;
  for (const FindingView& f : view.findings) {
    head.push_back(fmt::format("- [{}] {} (stake {:.1f}% of GPU time, confidence {:.2f}{}): {}",
                               f.severity, f.id, f.score * 100, f.confidence,
                               f.rank >= 0 ? fmt::format(", rank {}", f.rank) : "", f.summary));
    if (!f.evidence.empty()) {
      std::string ev = "  evidence:";
      for (size_t i = 0; i < f.evidence.size() && i < 8; ++i)
        ev += (i ? ", " : " ") + f.evidence[i];
      head.push_back(ev);
    }
    if (!f.fixes.empty()) head.push_back("  fix: " + f.fixes.front());
  }
  if (head.empty()) head.push_back("(no diagnosis in the report)");
  // Findings are most important first: cut from the end, one finding at a time.
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : head) rows.push_back({line});
  b->Section("Diagnosis (most important first)", {}, rows, {false},
             [](size_t n) { return fmt::format("… {} more diagnosis lines cut", n); });
}

void Categories(const ReportView& view, Builder* b) {
  const int64_t total = view.kernel_time_ns();
  std::vector<std::vector<std::string>> rows = {{"category", "time", "share"}};
  for (const auto& [cat, ns] : view.Sum(&RankView::categories))
    rows.push_back({cat, FormatNs(ns), Share(ns, total)});
  b->Section("GPU time by category (of kernel time " + FormatNs(total) + ")", {}, rows,
             {false, true, true});
}

// The forward-phase split summed over the ranks, as one line: steps, mean step and share of the
// phased GPU time per phase, then what was outside every counted step.
void Phases(const ReportView& view, Builder* b) {
  struct Sum {
    int64_t steps = 0, step_ns = 0, gpu_ns = 0;
  };
  std::vector<std::pair<std::string, Sum>> phases;  // first-seen order: the schema's
  int64_t outside = 0;
  for (const RankView& r : view.ranks) {
    outside += r.phase_outside_ns;
    for (const RankView::Phase& p : r.phases) {
      auto it = std::find_if(phases.begin(), phases.end(),
                             [&p](const auto& x) { return x.first == p.phase; });
      if (it == phases.end()) it = phases.insert(phases.end(), {p.phase, Sum{}});
      it->second.steps += p.steps;
      it->second.step_ns += p.step_total_ns;
      it->second.gpu_ns += p.gpu_time_ns;
    }
  }
  if (phases.empty()) return;
  int64_t total = outside;
  for (const auto& [name, sum] : phases) total += sum.gpu_ns;
  std::string line;
  for (const auto& [name, sum] : phases)
    line +=
        fmt::format("{}{} {} steps (mean {}) {}", line.empty() ? "" : "; ", name, sum.steps,
                    FormatNs(sum.steps ? sum.step_ns / sum.steps : 0), Share(sum.gpu_ns, total));
  line += fmt::format("; outside {}", Share(outside, total));
  b->Section(
      "Forward phases (prefill vs decode; shares of the steps' GPU time " + FormatNs(total) + ")",
      {line}, {}, {});
}

void TopKernels(const ReportView& view, const ContextOptions& options, Builder* b) {
  const int64_t total = view.kernel_time_ns();
  std::vector<KernelRow> kernels = view.MergedKernels();
  int64_t listed = 0;
  for (const KernelRow& k : kernels) listed += k.total_ns;
  const int64_t tail = std::max<int64_t>(0, total - listed);
  std::vector<std::vector<std::string>> rows = {
      {"#", "share", "time", "count", "mean", "category", "kernel"}};
  std::vector<int64_t> row_ns = {0};
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelRow& k = kernels[i];
    rows.push_back({std::to_string(i + 1), Share(k.total_ns, total), FormatNs(k.total_ns),
                    std::to_string(k.count), FormatNs(k.count ? k.total_ns / k.count : 0),
                    k.category,
                    Cut(k.display_name.empty() ? k.name : k.display_name, kMaxNameChars)});
    row_ns.push_back(k.total_ns);
  }
  const std::string trailer =
      tail > 0 ? fmt::format("(kernels outside the per-rank top lists: {}, {} of GPU time)",
                             FormatNs(tail), Share(tail, total))
               : "";
  b->Section(
      "Top kernels (merged across ranks)", {}, rows, {true, true, true, true, true, false, false},
      [&, total](size_t n) {
        int64_t cut = 0;
        for (size_t i = row_ns.size() - n; i < row_ns.size(); ++i) cut += row_ns[i];
        return fmt::format(
            "… {} more kernels, {} of GPU time ({} {} --pid/--rank or "
            "get_breakdown group_by=kernel for more)",
            n, Share(cut, total), "narrow with", options.command);
      },
      trailer);
}

void Ranks(const ReportView& view, Builder* b) {
  if (view.ranks.size() < 2) return;
  std::vector<std::vector<std::string>> rows = {
      {"rank", "host", "pid", "gpu", "busy", "idle", "compute", "kernels"}};
  for (const RankView& r : view.ranks)
    rows.push_back({std::to_string(r.rank), r.hostname.empty() ? "-" : r.hostname,
                    std::to_string(r.pid), std::to_string(r.device), Share(r.busy_ns, r.span_ns),
                    Share(r.idle_ns, r.span_ns), Share(r.compute_ns, r.span_ns),
                    std::to_string(r.kernel_count)});
  b->Section("Per rank (shares of the rank's span)", {}, rows,
             {true, false, true, true, true, true, true, true},
             [](size_t n) { return fmt::format("… {} more ranks (filter with --rank)", n); });
}

void Idle(const ReportView& view, Builder* b) {
  const int64_t idle = view.idle_ns();
  std::vector<std::vector<std::string>> rows = {{"cause", "time", "of idle"}};
  for (const auto& [cause, ns] : view.Sum(&RankView::idle_causes))
    rows.push_back({cause, FormatNs(ns), Share(ns, idle)});
  if (rows.size() == 1) return;
  b->Section("Why the GPU was idle (idle " + FormatNs(idle) + ")", {}, rows, {false, true, true});
}

void Syncs(const ReportView& view, Builder* b) {
  struct Agg {
    int64_t count = 0, total = 0, max = 0;
    std::string on;
  };
  std::map<std::string, Agg> by_type;
  for (const RankView& r : view.ranks)
    for (const RankView::SyncWait& w : r.sync_waits) {
      Agg& a = by_type[w.type];
      a.count += w.count;
      a.total += w.total_ns;
      a.max = std::max(a.max, w.max_ns);
      if (a.on.empty()) a.on = w.waited_on;
    }
  if (by_type.empty()) return;
  std::vector<std::vector<std::string>> rows = {{"type", "count", "total", "max", "waited on"}};
  for (const auto& [type, a] : by_type)
    rows.push_back({type, std::to_string(a.count), FormatNs(a.total), FormatNs(a.max),
                    Cut(a.on.empty() ? "-" : a.on, 48)});
  b->Section("Host sync waits", {}, rows, {false, true, true, true, false});
}

void Gpus(const ReportView& view, Builder* b) {
  if (view.gpus.empty()) {
    if (!view.gpu_unavailable.empty())
      b->Section("GPU metrics (NVML)", {"unavailable: " + view.gpu_unavailable}, {}, {});
    return;
  }
  // The metrics that answer "was the GPU slowed or saturated" (names of src/telemetry/nvml).
  static const char* kShown[] = {
      "gpu_util_pct",          "mem_util_pct",         "gpm_sm_active_pct",
      "gpm_tensor_active_pct", "gpm_dram_bw_util_pct", "power_w",
      "temperature_c",         "sm_clock_mhz",         "mem_used_bytes"};
  std::vector<std::vector<std::string>> rows;
  for (const GpuView& g : view.gpus) {
    std::string line = fmt::format("GPU {} {}:", g.index, g.name);
    for (const auto& [name, value] : g.metrics)
      if (std::find(std::begin(kShown), std::end(kShown), name) != std::end(kShown))
        line += " " + name + " " + value + ";";
    if (!g.throttle.empty()) {
      line += " throttled:";
      for (const std::string& t : g.throttle) line += " " + t;
    }
    if (g.xid_count > 0) line += fmt::format(" XID errors: {}", g.xid_count);
    rows.push_back({line});
  }
  b->Section("GPU metrics (NVML, mean (min..max))", {}, rows, {false},
             [](size_t n) { return fmt::format("… {} more GPUs (filter with --device)", n); });
}

void Engine(const ReportView& view, Builder* b) {
  std::vector<std::vector<std::string>> rows;
  if (view.has_engine) {
    for (const auto& [name, value] : view.engine_gauges)
      rows.push_back({name + " (mean)", fmt::format("{:.4g}", value)});
    // Latencies ("..._s") in the one duration style, like the span percentiles below them.
    for (const auto& [name, value] : view.engine_derived) {
      if (name.size() > 2 && name.ends_with("_s"))
        rows.push_back({name.substr(0, name.size() - 2), base::FormatSeconds(value)});
      else
        rows.push_back({name, fmt::format("{:.4g}", value)});
    }
  }
  if (view.has_requests) {
    rows.push_back({"requests (spans)", std::to_string(view.requests)});
    rows.push_back({"prompt/completion tokens",
                    fmt::format("{}/{}", view.prompt_tokens, view.completion_tokens)});
    for (const StageView& s : view.request_stages)
      rows.push_back({"span " + s.stage + " p50/p90/p99",
                      fmt::format("{} / {} / {} (n={})", base::FormatSeconds(s.p50_ms / 1e3),
                                  base::FormatSeconds(s.p90_ms / 1e3),
                                  base::FormatSeconds(s.p99_ms / 1e3), s.count)});
  }
  if (rows.empty()) return;
  b->Section("Engine load and stage latencies (rates per s)", {}, rows, {false, true},
             [](size_t n) { return fmt::format("… {} more engine values", n); });
}

void Quality(const ReportView& view, Builder* b) {
  std::vector<std::string> head;
  for (const auto& [name, n] : view.Sum(&RankView::data_quality))
    head.push_back(fmt::format("- {}: {}", name, n));
  for (const auto& [name, n] : view.span_drops) head.push_back(fmt::format("- {}: {}", name, n));
  if (head.empty()) head.push_back("no data-quality counter is set (no drops, no bad records)");
  b->Section("Data quality", head, {}, {});
}

void Tags(const ReportView& view, const ContextOptions& options, Builder* b) {
  std::set<int64_t> ranks, devices, pids;
  for (const RankView& r : view.ranks) {
    ranks.insert(r.rank);
    devices.insert(r.device);
    pids.insert(r.pid);
  }
  auto join = [](const std::set<int64_t>& s) {
    std::string out;
    size_t i = 0;
    for (int64_t v : s) {
      if (i == 32) return out + fmt::format(" … {} more", s.size() - 32);
      out += (i++ ? "," : "") + std::to_string(v);
    }
    return out;
  };
  std::string hosts;
  for (size_t i = 0; i < view.all_hosts.size() && i < 16; ++i)
    hosts += (i ? "," : "") + view.all_hosts[i];
  std::vector<std::string> head = {
      "hosts: " + hosts,
      "pids: " + join(pids),
      "ranks: " + join(ranks),
      "devices: " + join(devices),
      "engines: " + (view.engine.empty() ? std::string("-") : view.engine),
      "narrow with " + options.command + " --host H" +
          (options.narrow_flags.find("--label") != std::string::npos ? " --label K=V" : "") +
          " --pid P --rank R --device D --engine E",
  };
  b->Section("Tags available for narrowing", head, {}, {});
}

}  // namespace

std::string AlignedTable(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right) {
  std::vector<size_t> width;
  auto length = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // code points, not bytes
    return n;
  };
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], length(row[i]));
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const size_t pad = width[i] - length(row[i]);
      const bool last = i + 1 == row.size();
      if (i > 0) line += "  ";
      if (i < right.size() && right[i])
        line += std::string(pad, ' ') + row[i];
      else
        line += row[i] + (last ? "" : std::string(pad, ' '));
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

ContextResult RenderContext(const ReportView& view, const ContextOptions& options) {
  const int budget = std::clamp(options.budget_tokens, kMinBudgetTokens, kMaxBudgetTokens);
  Builder b(static_cast<size_t>(budget) * kBytesPerToken);
  b.Line(
      fmt::format("# inferscope context (budget {} tokens; shares are of GPU time unless "
                  "marked; hashed request ids only)",
                  budget));
  Profiled(view, options, &b);
  Diagnosis(view, &b);
  for (const ExtraSection& x : options.extra_sections) {
    const std::string noun = x.cut_noun;
    // The header row stays; a cut drops rows from the end.
    std::vector<std::vector<std::string>> rows = x.rows;
    b.Section(x.title, x.head, rows, x.right, [noun, n = rows.size()](size_t cut) {
      return fmt::format("… {} more {} cut (of {})", cut, noun, n > 0 ? n - 1 : 0);
    });
  }
  Categories(view, &b);
  Phases(view, &b);
  TopKernels(view, options, &b);
  Ranks(view, &b);
  Idle(view, &b);
  Syncs(view, &b);
  Gpus(view, &b);
  Engine(view, &b);
  Quality(view, &b);
  Tags(view, options, &b);
  return b.Finish("Raise the budget, or narrow with " + options.command + " (" +
                  options.narrow_flags + ").");
}

}  // namespace inferscope::context
