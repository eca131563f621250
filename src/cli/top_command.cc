// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/top_command.h"

#include <fmt/format.h>
#include <poll.h>
#include <simdjson.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>

#include "src/base/duration.h"
#include "src/base/file.h"
#include "src/base/human_format.h"
#include "src/base/state_dir.h"
#include "src/base/time_point.h"
#include "src/cli/cli_voice.h"
#include "src/cli/exit_codes.h"
#include "src/model/taxonomy.h"
#include "src/net/agent_endpoints.h"
#include "src/report/format.h"
#include "src/store/sqlite_store.h"
#include "src/telemetry/otlp/span_window.h"
#include "src/telemetry/scrape/engine_window.h"

namespace inferscope::cli {
namespace {

constexpr int64_t kSec = base::kNsPerSec;
constexpr size_t kMinWidth = 60;
constexpr size_t kDefaultWidth = 100;

// One letter per category for the bars (a legend under the table names them).
char CategoryLetter(std::string_view category) {
  static constexpr std::pair<std::string_view, char> kLetters[] = {
      {"attention", 'A'},  {"matmul", 'M'},       {"moe", 'E'},           {"communication", 'C'},
      {"kv_cache", 'K'},   {"quantization", 'Q'}, {"normalization", 'N'}, {"activation", 'T'},
      {"positional", 'P'}, {"sampling", 'S'},     {"memory", 'Y'},        {"elementwise", 'W'},
      {"embedding", 'B'},  {"other", 'O'}};
  for (const auto& [name, letter] : kLetters)
    if (name == category) return letter;
  return 'O';
}

// A bar of `width` cells: its filled length is the busy share, its letters split the filled
// cells by each category's share of kernel time (largest remainders), '.' is idle.
std::string CategoryBar(const TopFrame::Gpu& g, size_t width) {
  const double busy = std::clamp(g.busy_pct, 0.0, 100.0);
  auto filled = static_cast<size_t>(busy * static_cast<double>(width) / 100.0 + 0.5);
  if (filled == 0 && busy > 0) filled = 1;
  double total_pct = 0;
  for (const auto& [name, pct] : g.categories) total_pct += pct;
  std::string bar;
  if (total_pct <= 0) {
    bar.assign(filled, '#');  // busy with copies or memsets only
  } else {
    std::vector<std::pair<size_t, double>> cells;  // whole cells, remainder
    size_t used = 0;
    for (const auto& [name, pct] : g.categories) {
      const double exact = pct / total_pct * static_cast<double>(filled);
      cells.push_back({static_cast<size_t>(exact), exact - static_cast<double>(size_t(exact))});
      used += cells.back().first;
    }
    std::vector<size_t> order(cells.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return cells[a].second > cells[b].second; });
    for (size_t i = 0; used < filled && i < order.size(); ++i, ++used) ++cells[order[i]].first;
    for (size_t i = 0; i < cells.size(); ++i)
      bar.append(cells[i].first, CategoryLetter(g.categories[i].first));
  }
  bar.resize(width, '.');
  return bar;
}

std::string Pad(std::string s, size_t width, bool right) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

std::string Clip(std::string line, size_t width) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (line.size() > width) line.resize(width);  // never reached by the layouts below
  return line + "\n";
}

}  // namespace

TopFrame BuildTopFrame(const query::RangeProfile& profile, int top) {
  TopFrame f;
  f.from_ns = profile.from_ns;
  f.to_ns = profile.to_ns;
  f.processes = profile.processes;
  const analyze::Analysis& a = profile.analysis;
  std::map<std::string, TopFrame::Sync> syncs;
  for (const analyze::RankAnalysis& r : a.ranks) {
    TopFrame::Gpu g;
    g.rank = r.rank;
    g.pid = r.pid;
    g.device = r.device;
    g.busy_pct = r.temporal.busy_pct;
    for (const analyze::CategoryRow& c : r.categories)
      if (c.time_ns > 0) g.categories.emplace_back(c.name, c.pct);
    std::stable_sort(g.categories.begin(), g.categories.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    f.gpus.push_back(std::move(g));
    for (const analyze::SyncRow& s : r.syncs) {
      if (s.count == 0) continue;
      TopFrame::Sync& t = syncs[s.type];
      t.type = s.type;
      t.count += s.count;
      t.total_ns += s.total_ns;
      t.max_ns = std::max(t.max_ns, s.max_ns);
    }
  }
  for (const std::string_view type : model::kSyncTypeNames)
    if (auto it = syncs.find(std::string(type)); it != syncs.end()) f.syncs.push_back(it->second);
  for (const analyze::KernelRow& k : a.summary.top_kernels) {
    if (static_cast<int>(f.kernels.size()) >= top) break;
    f.kernels.push_back(
        {k.display_name.empty() ? k.name : k.display_name, k.count, k.total_ns, k.pct});
  }
  f.requests_per_s = query::HostSignalsOf(profile).requests_per_s;
  // Latency percentiles: the request spans' when the agent has them (exact per request), else the
  // engine's histograms.
  if (const auto* spans = profile.telemetry.Get<telemetry::otlp::SpanWindow>();
      spans && spans->requests > 0) {
    f.latency_source = "spans";
    for (auto [stage, name] : {std::pair{telemetry::otlp::Stage::kE2e, "e2e"},
                               std::pair{telemetry::otlp::Stage::kTtft, "ttft"}}) {
      const telemetry::otlp::LatencyHistogram& h = spans->stage(stage);
      if (h.count() == 0) continue;
      f.latencies.push_back(
          {name, {h.PercentileNs(0.5), h.PercentileNs(0.9), h.PercentileNs(0.99)}});
    }
    if (!f.requests_per_s && profile.to_ns > profile.from_ns)
      f.requests_per_s = static_cast<double>(spans->requests) /
                         (static_cast<double>(profile.to_ns - profile.from_ns) / kSec);
  } else if (const auto* engine = profile.telemetry.Get<telemetry::scrape::EngineMetricsWindow>()) {
    for (auto [stage, name] : {std::pair{telemetry::scrape::Stage::kE2e, "e2e"},
                               std::pair{telemetry::scrape::Stage::kTtft, "ttft"}}) {
      if (!engine->has_stage(stage)) continue;
      const auto& h = engine->stage(stage);
      const auto p50 = h.Quantile(0.5), p90 = h.Quantile(0.9), p99 = h.Quantile(0.99);
      if (!p50 || !p90 || !p99) continue;
      auto ns = [](double s) { return static_cast<int64_t>(s * 1e9); };
      f.latencies.push_back({name, {ns(*p50), ns(*p90), ns(*p99)}});
      f.latency_source = "engine";
    }
  }
  if (a.ranks.empty()) f.note = "no GPU activity in this range";
  return f;
}

std::string RenderTopFrame(const TopFrame& f, size_t width) {
  width = std::max(width, kMinWidth);
  std::string out;
  // Header: the range, what it holds, the request load.
  std::string head = fmt::format(
      "inferscope top  {} to {} UTC ({})", base::FormatUtcTime(f.from_ns),
      base::FormatUtcTime(f.to_ns).substr(11), base::FormatDuration(f.to_ns - f.from_ns));
  const std::string holds = fmt::format("{} processes, {} GPUs{}", f.processes, f.gpus.size(),
                                        f.filters.empty() ? "" : " (" + f.filters + ")");
  if (head.size() + 2 + holds.size() <= width)
    out += Clip(head + "  " + holds, width);
  else
    out += Clip(head, width) + Clip("  " + holds, width);
  std::string load = "requests " + (f.requests_per_s ? fmt::format("{:.1f}/s", *f.requests_per_s)
                                                     : std::string("-"));
  if (f.latencies.empty()) {
    load += "  latency -";
    out += Clip(load, width);
  } else {
    std::vector<std::string> parts;
    for (const auto& [stage, p] : f.latencies)
      parts.push_back(fmt::format("{} p50 {} p90 {} p99 {}", stage, base::FormatDuration(p[0]),
                                  base::FormatDuration(p[1]), base::FormatDuration(p[2])));
    std::string line = load;
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string sep = i == 0 ? "  latency (" + f.latency_source + ") " : "  ";
      if (line.size() + sep.size() + parts[i].size() > width) {
        out += Clip(line, width);
        line = "  ";
      }
      line += (line == "  " ? "" : sep) + parts[i];
    }
    out += Clip(line, width);
  }
  if (!f.note.empty()) {
    out += "\n" + Clip(f.note, width);
    return out;
  }

  // Per GPU: busy share and its category bar, then as many category names as fit (whole).
  out += "\n";
  constexpr size_t kFixed = 5 + 1 + 5 + 1 + 8 + 1 + 6 + 2;  // GPU RANK PID BUSY and gaps
  const size_t bar_width = std::clamp<size_t>((width - kFixed) / 2, 10, 50);
  out += Clip(fmt::format("{} {} {} {}  {}", Pad("GPU", 5, true), Pad("RANK", 5, true),
                          Pad("PID", 8, true), Pad("BUSY", 6, true), "GPU TIME BY CATEGORY"),
              width);
  std::map<char, std::string> legend;
  for (const TopFrame::Gpu& g : f.gpus) {
    std::string line =
        fmt::format("{} {} {} {}  {}", Pad(std::to_string(g.device), 5, true),
                    Pad(std::to_string(g.rank), 5, true), Pad(std::to_string(g.pid), 8, true),
                    Pad(report::FormatPct(g.busy_pct), 6, true), CategoryBar(g, bar_width));
    for (const auto& [name, pct] : g.categories) legend[CategoryLetter(name)] = name;
    for (const auto& [name, pct] : g.categories) {
      const std::string item = fmt::format(" {} {:.0f}%", name, pct);
      if (line.size() + item.size() > width) break;
      line += item;
    }
    out += Clip(line, width);
  }
  if (!legend.empty()) {
    std::string line = "  bar: busy share of the range; ";
    for (const auto& [letter, name] : legend) {
      const std::string item = fmt::format("{}={} ", letter, name);
      if (line.size() + item.size() > width) {
        out += Clip(line, width);
        line = "       ";
      }
      line += item;
    }
    out += Clip(line + ". idle", width);
  }

  // Top kernels over all GPUs: the name takes what the numbers leave.
  out += "\n";
  constexpr size_t kNumbers = 1 + 9 + 1 + 7 + 1 + 11;  // TIME SHARE CALLS
  const size_t name_width = width - kNumbers;
  out += Clip(fmt::format("{} {} {} {}", Pad("TOP KERNELS", name_width, false),
                          Pad("TIME", 9, true), Pad("SHARE", 7, true), Pad("CALLS", 11, true)),
              width);
  if (f.kernels.empty()) out += Clip("  (no kernels)", width);
  for (const TopFrame::Kernel& k : f.kernels)
    out +=
        Clip(fmt::format(
                 "{} {} {} {}", Pad(report::EllipsizeMiddle(k.name, name_width), name_width, false),
                 Pad(base::FormatDuration(k.total_ns), 9, true),
                 Pad(report::FormatPct(k.pct), 7, true), Pad(base::FormatCount(k.count), 11, true)),
             width);

  // Sync waits (host blocked on the GPU), summed over GPUs.
  out += "\n";
  if (f.syncs.empty()) {
    out += Clip("SYNC WAITS  none", width);
  } else {
    out += Clip(fmt::format("{} {} {} {}", Pad("SYNC WAITS", 18, false), Pad("COUNT", 11, true),
                            Pad("TOTAL", 9, true), Pad("MAX", 9, true)),
                width);
    for (const TopFrame::Sync& s : f.syncs)
      out += Clip(fmt::format("{} {} {} {}", Pad(s.type, 18, false),
                              Pad(base::FormatCount(s.count), 11, true),
                              Pad(base::FormatDuration(s.total_ns), 9, true),
                              Pad(base::FormatDuration(s.max_ns), 9, true)),
                  width);
  }
  return out;
}

namespace {

volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_resized = 0;

// The agent's window length from agent.json (0 when unknown).
int64_t AgentWindowNs(const std::string& state_dir) {
  auto text = base::ReadSmallFile(state_dir + "/agent.json", "agent.json");
  if (!text.ok()) return 0;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  int64_t window_ns = 0;
  if (parser.parse(*text).get(doc) != simdjson::SUCCESS ||
      doc["window_ns"].get_int64().get(window_ns) != simdjson::SUCCESS)
    return 0;
  return window_ns > 0 ? window_ns : 0;
}

size_t TerminalColumns() {
  struct winsize ws {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return std::clamp<size_t>(ws.ws_col, kMinWidth, 300);
  return kDefaultWidth;
}

// The terminal in "read keys without Enter, no echo" mode while it lives; restored on exit.
class RawTerminal {
 public:
  RawTerminal() {
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;
  bool active() const { return active_; }

 private:
  termios saved_{};
  bool active_ = false;
};

// Waits up to `ns` for the interval to pass; false when the user asked to quit (q, Ctrl-C).
bool WaitOrQuit(int64_t ns, bool read_keys) {
  const int64_t deadline = base::UnixNowNs() + ns;
  while (!g_stop) {
    const int64_t left = deadline - base::UnixNowNs();
    if (left <= 0) return true;
    pollfd p{STDIN_FILENO, POLLIN, 0};
    const int timeout_ms = static_cast<int>(std::min<int64_t>(left / 1'000'000 + 1, 200));
    const int r = poll(read_keys ? &p : nullptr, read_keys ? 1 : 0, timeout_ms);
    if (r > 0 && (p.revents & POLLIN)) {
      char c = 0;
      if (read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q' || c == 3)) return false;
    }
    if (g_resized) return true;  // redraw at the new width now
  }
  return false;
}

int Run(const TopOptions& options, std::ostream& out, std::ostream& err) {
  // No agent, no live view: say how to start one (the store alone is `report`'s business).
  auto endpoints = net::ReadAgentEndpoints(options.state_dir);
  if (!endpoints.ok()) {
    err << "inferscope: error: no agent runs for " << options.state_dir
        << (endpoints.status().code() == base::StatusCode::kNotFound
                ? std::string(" (no agent.json)")
                : " (" + endpoints.status().message() + ")")
        << "\n"
        << "  start one with 'inferscope agent', or run the server under 'inferscope run -- CMD'; "
           "'inferscope report' reads a stopped agent's store\n";
    return kExitNotFound;
  }
  if (endpoints->pid > 0 && kill(static_cast<pid_t>(endpoints->pid), 0) != 0 && errno == ESRCH) {
    err << "inferscope: error: the agent of " << options.state_dir << " (pid " << endpoints->pid
        << ") is not running\n"
        << "  start one with 'inferscope agent', or run the server under 'inferscope run -- CMD'; "
           "'inferscope report' reads its store\n";
    return kExitNotFound;
  }
  const int64_t window_ns = AgentWindowNs(options.state_dir);
  const int64_t interval_ns =
      options.interval_ns > 0 ? options.interval_ns : (window_ns > 0 ? window_ns : 10 * kSec);

  std::unique_ptr<RawTerminal> raw;
  if (options.tty) {
    raw = std::make_unique<RawTerminal>();
    out << "\x1b[?1049h\x1b[?25l";  // the alternate screen, no cursor
  }
  struct Restore {
    bool tty;
    std::ostream& out;
    ~Restore() {
      if (tty) out << "\x1b[?25h\x1b[?1049l" << std::flush;
    }
  } restore{options.tty, out};

  std::unique_ptr<store::SqliteStore> store;
  for (uint64_t frame = 0; options.frames == 0 || frame < options.frames; ++frame) {
    if (frame > 0 && !WaitOrQuit(interval_ns, raw && raw->active())) break;
    g_resized = 0;
    const size_t width =
        options.width > 0 ? options.width : (options.tty ? TerminalColumns() : kDefaultWidth);
    TopFrame f;
    if (!store) {
      auto opened =
          store::SqliteStore::Open(options.state_dir, store::SqliteStore::Mode::kReadOnly);
      if (opened.ok()) store = std::move(*opened);
    }
    auto summary =
        store ? store->Summary() : base::StatusOr<store::StoreSummary>(store::StoreSummary{});
    if (!summary.ok()) {
      err << "inferscope: error: " << summary.status().message() << "\n";
      return ExitCodeFor(summary.status());
    }
    if (summary->windows == 0) {
      f.note = fmt::format(
          "waiting for the first window (window {}): a process sends its first "
          "window one window after its first CUDA work",
          base::FormatDuration(window_ns > 0 ? window_ns : interval_ns));
      const int64_t now = options.now_unix_ns ? options.now_unix_ns : base::UnixNowNs();
      f.to_ns = now / kSec * kSec;
      f.from_ns = f.to_ns - interval_ns;
    } else {
      // The last interval of stored data, in whole seconds (the API's from/to take seconds), so a
      // frame names a range anyone can ask `report` or the API for.
      query::RangeQuery query;
      query.to_ns = (summary->last_end_ns + kSec - 1) / kSec * kSec;
      query.from_ns = query.to_ns - std::max<int64_t>(kSec, (interval_ns + kSec - 1) / kSec * kSec);
      query.now_ns = options.now_unix_ns ? options.now_unix_ns : base::UnixNowNs();
      query.pid = options.pid;
      query.rank = options.rank;
      query.device = options.device;
      query.top = std::max(options.top, 15);
      auto profile = query::QueryRangeProfile(*store, query, "store:" + options.state_dir);
      if (!profile.ok()) {
        err << "inferscope: error: " << profile.status().message() << "\n";
        return ExitCodeFor(profile.status());
      }
      f = BuildTopFrame(*profile, options.top);
      f.from_ns = query.from_ns;
      f.to_ns = query.to_ns;
      f.filters = query::FilterText(query);
      if (!f.filters.empty() && f.gpus.empty())
        f.note = "no GPU activity matched " + f.filters + " in this range";
    }
    std::string text = RenderTopFrame(f, width);
    if (options.tty) {
      // Home, each line cleared to its end, the rest of the screen cleared: no flicker.
      std::string screen = "\x1b[H";
      for (size_t start = 0; start < text.size();) {
        const size_t end = text.find('\n', start);
        screen += text.substr(start, end - start) + "\x1b[K\r\n";
        start = end == std::string::npos ? text.size() : end + 1;
      }
      screen += "\x1b[K\r\n  q or Ctrl-C to quit; refreshing every " +
                base::FormatDuration(interval_ns) + "\x1b[J";
      out << screen << std::flush;
    } else {
      out << "range: --from " << f.from_ns / kSec << " --to " << f.to_ns / kSec << "\n"
          << text << "\n";
    }
    if (!FlushOutput(out, err)) return kExitError;
  }
  return kExitOk;
}

}  // namespace

int RunTop(const TopOptions& options, std::ostream& out, std::ostream& err) {
  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop = 1; };
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {
  }, old_term{}, old_winch{};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  struct sigaction winch {};
  winch.sa_handler = [](int) { g_resized = 1; };
  sigemptyset(&winch.sa_mask);
  sigaction(SIGWINCH, &winch, &old_winch);
  const int code = RunGuarded([&] { return Run(options, out, err); }, err);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGWINCH, &old_winch, nullptr);
  return code;
}

TopCommand::TopCommand(CLI::App* app) {
  cmd_ = app->add_subcommand("top", "Live view of the agent: GPUs, kernels, syncs, requests");
  cmd_->footer(
      "\nEvery interval (default: the agent's window) shows the last interval of what the agent\n"
      "stored: per GPU the busy share and a bar of GPU time by category, the top kernels over\n"
      "all GPUs, the sync waits, requests/s and latency percentiles (request spans, else the\n"
      "engine's histograms). On a terminal it redraws in place at the terminal's width (q or\n"
      "Ctrl-C quits); otherwise it prints one plain 100-column frame per refresh, each after a\n"
      "'range: --from S --to S' line that `inferscope report` and the HTTP API take as is.\n\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 no agent runs for the state dir.\n\n"
      "Examples:\n"
      "  inferscope top\n"
      "  inferscope top --rank 0 --interval 2s\n"
      "  inferscope top --once | tee snapshot.txt\n");
  cmd_->add_option("--state-dir", state_dir_,
                   "Agent socket and store directory (default: $INFERSCOPE_STATE_DIR, else\n"
                   "$XDG_STATE_HOME/inferscope, else ~/.local/state/inferscope)")
      ->type_name("DIR");
  cmd_->add_option("--interval", interval_, "Refresh every DURATION (default: the agent's window)")
      ->type_name("DURATION");
  cmd_->add_option("--pid", pid_, "Only this process id")->type_name("PID");
  cmd_->add_option("--rank", rank_, "Only this rank")->type_name("N");
  cmd_->add_option("--device", device_, "Only this GPU (CUDA device ordinal, as in report)")
      ->type_name("N");
  cmd_->add_option("--top", top_, "Kernels listed")
      ->capture_default_str()
      ->type_name("N")
      ->check(IntIn(1, 100));
  cmd_->add_flag("--once", once_, "Print one frame and exit (plain text)");
}

std::optional<int> TopCommand::RunIfParsed() {
  if (!cmd_->parsed()) return std::nullopt;
  TopOptions options;
  options.state_dir =
      state_dir_.empty()
          ? base::DefaultStateDir([](const char* n) -> const char* { return std::getenv(n); })
          : state_dir_;
  if (!interval_.empty()) {
    auto ns = base::ParseDuration(interval_, base::DurationUnits::kWithLongUnits);
    if (!ns.ok() || *ns < 100'000'000) {
      std::cerr << "inferscope: error: --interval: "
                << (ns.ok() ? "at least 100ms, got " + interval_ : ns.status().message()) << "\n"
                << "Run 'inferscope top --help' for usage.\n";
      return kExitUsage;
    }
    options.interval_ns = *ns;
  }
  options.pid = pid_;
  options.rank = rank_;
  options.device = device_;
  options.top = top_;
  options.tty = !once_ && isatty(STDOUT_FILENO) != 0;
  options.frames = once_ ? 1 : 0;
  return RunTop(options, std::cout, std::cerr);
}

}  // namespace inferscope::cli
