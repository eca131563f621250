// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// store_query_benchmark: fills a store with N GPUs x D days of 10 s windows through the store's
// write path (the calls the agent's writer thread makes: UpsertProcess, then AppendWindow in
// transactions of 256, which compresses, inserts and folds the rollup tiers), then times the range
// query `inferscope report` and /api/v1/profile run (query::QueryRangeProfile +
// query::RenderRangeReport), each range in a fresh process so its peak RSS is its own, as a
// `report` run's would be.
//
//   store_query_benchmark --gpus 8 --days 1 --dir /tmp/sqb [--ranges 5m,1h,24h,7d] [--no-fill]
//                         [--no-rollups] [--raw] [--pass-decoded] [--through-agent [--burst]]
//
// --through-agent fills through a real agentd::Agent instead (unix socket, event loop, decode,
// queue, writer thread) and reports the agent's CPU per window: with and without --no-rollups, what
// the rollups add to the agent's CPU. Each period's windows are sent once the agent has stored the
// previous period's, as in steady state (windows 10 s apart, a writer that keeps up); --burst
// sends as soon as it has read them, so the writer's queue backs up as after an outage.
//
// Windows are the Aggregator's 10 s windows of the bundled example trace
// (examples/vllm_tp2_decode, real vLLM TP=2 decode kernels), timelines tiled to 100 bins (a GPU
// busy for the whole window), one process per GPU, re-stamped to the last D days.
// Prints one line per phase/range: `range=7d seconds=0.84 peak_rss_mb=97 windows=483840 ...`.

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "src/agentd/agent.h"
#include "src/base/time_point.h"
#include "src/model/taxonomy.h"
#include "src/query/range_query.h"
#include "src/store/sqlite_store.h"
#include "src/store/test_window_templates.h"
#include "src/wire/framing.h"
#include "src/wire/window_codec.h"

namespace inferscope::bench {
namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kWindowNs = 10 * kSec;

double PeakRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool ParseDuration(const std::string& s, int64_t* ns) {
  if (s.size() < 2) return false;
  const int64_t n = std::atoll(s.substr(0, s.size() - 1).c_str());
  switch (s.back()) {
    case 's':
      *ns = n * kSec;
      return true;
    case 'm':
      *ns = n * 60 * kSec;
      return true;
    case 'h':
      *ns = n * 3600 * kSec;
      return true;
    case 'd':
      *ns = n * 86400 * kSec;
      return true;
  }
  return false;
}

// One device's worth of profile per template: the example trace's per-process windows, the
// timeline tiled to the 100 bins of a whole busy window (the trace is seconds long).
std::vector<model::ProcessProfile> Templates() {
  const std::string dir = std::string(INFERSCOPE_SOURCE_DIR) + "/examples/vllm_tp2_decode/";
  store::testing::TemplateOptions options;
  options.window_ns = kWindowNs;
  options.tile_to_bins = 100;
  return store::testing::WindowTemplates({dir + "rank0.json.gz", dir + "rank1.json.gz"}, options);
}

model::ProfileWindow StampWindow(const model::ProcessProfile& tmpl, uint32_t gpu, int64_t start_ns,
                                 uint64_t index) {
  model::ProfileWindow w;
  w.start_ns = start_ns;
  w.end_ns = start_ns + kWindowNs;
  model::ProcessProfile& p = w.processes.emplace_back(tmpl);
  p.pid = 10'000 + gpu;
  p.rank = static_cast<int32_t>(gpu);
  p.hostname = "bench-node";
  model::DeviceProfile& d = p.devices[0];
  d.device = gpu;
  d.first_start_ns += start_ns;
  d.last_end_ns += start_ns;
  d.timeline.origin_ns += start_ns;
  // Vary the values a little, window to window (payloads are not all alike).
  d.kernel_count += index % 17;
  d.busy_ns += static_cast<int64_t>(index % 1000);
  if (!d.top_kernels.empty())
    d.top_kernels[index % d.top_kernels.size()].duration.total_ns += static_cast<int64_t>(index);
  return w;
}

int Fill(const std::string& dir, int gpus, int days, int64_t end_ns, bool rollups,
         bool pass_decoded) {
  auto store = store::SqliteStore::Open(dir, store::SqliteStore::Mode::kReadWrite);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().message().c_str());
    return 1;
  }
  if (!rollups) (*store)->set_rollups_enabled(false);
  const std::vector<model::ProcessProfile> templates = Templates();
  if (templates.empty()) {
    std::fprintf(stderr, "no windows from the example trace\n");
    return 1;
  }
  std::vector<int64_t> ids;
  for (int g = 0; g < gpus; ++g) {
    const wire::Hello h =
        store::testing::FixtureHello(g, gpus, "bench-node", end_ns - days * 86400 * kSec - kSec);
    auto id = (*store)->UpsertProcess(h, h.process_start_unix_ns);
    if (!id.ok()) return 1;
    ids.push_back(*id);
  }
  // What making and encoding a window costs (the sender's side, not the store's): subtracted
  // from the fill's CPU to give the writer's cost per window.
  double sender_us = 0;
  {
    const double c0 = CpuSeconds();
    constexpr int kProbe = 4000;
    size_t bytes = 0;
    for (int i = 0; i < kProbe; ++i) {
      std::string encoded;
      wire::EncodeWindow(StampWindow(templates[static_cast<size_t>(i) % templates.size()], 0,
                                     end_ns, static_cast<uint64_t>(i)),
                         &encoded);
      bytes += encoded.size();
    }
    sender_us = (CpuSeconds() - c0) * 1e6 / kProbe;
    if (bytes == 0) sender_us = 0;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  const int64_t start_ns = end_ns - static_cast<int64_t>(days) * 86400 * kSec;
  uint64_t n = 0;
  size_t in_batch = 0;
  base::Status status = (*store)->Begin();
  for (int64_t t = start_ns; status.ok() && t < end_ns; t += kWindowNs) {
    for (int g = 0; g < gpus && status.ok(); ++g) {
      const model::ProfileWindow w =
          StampWindow(templates[(n + static_cast<uint64_t>(g)) % templates.size()],
                      static_cast<uint32_t>(g), t, n);
      store::PendingWindow p;
      p.process_id = ids[static_cast<size_t>(g)];
      p.start_ns = w.start_ns;
      p.end_ns = w.end_ns;
      p.received_ns = w.end_ns + kSec;
      wire::EncodeWindow(w, &p.encoded);  // what arrives on the socket
      // --pass-decoded: what it would cost if the agent queued its decoded window too.
      status = (*store)->AppendWindow(p, pass_decoded ? &w : nullptr);
      ++n;
      if (++in_batch == 256 && status.ok()) {  // the agent's max_batch
        status = (*store)->Commit();
        if (status.ok()) status = (*store)->Begin();
        in_batch = 0;
      }
    }
  }
  if (status.ok()) status = (*store)->Commit();
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  const double seconds = Since(t0), cpu = CpuSeconds() - cpu0;
  auto summary = (*store)->Summary();
  auto rollup_bytes = (*store)->RollupBytes();
  if (!summary.ok() || !rollup_bytes.ok()) return 1;
  store->reset();
  const double file_mb =
      static_cast<double>(std::filesystem::file_size(dir + "/" + store::SqliteStore::kFileName)) /
      1e6;
  std::printf(
      "fill gpus=%d days=%d windows=%llu seconds=%.1f cpu_seconds=%.1f cpu_us_per_window=%.0f "
      "writer_us_per_window=%.0f rollups=%s payload_mb=%.1f rollup_mb=%.1f rollup_pct=%.1f "
      "file_mb=%.1f\n",
      gpus, days, static_cast<unsigned long long>(n), seconds, cpu, cpu * 1e6 / n,
      cpu * 1e6 / n - sender_us, rollups ? "on" : "off", summary->payload_bytes / 1e6,
      *rollup_bytes / 1e6,
      summary->payload_bytes ? 100.0 * *rollup_bytes / summary->payload_bytes : 0.0, file_mb);
  std::fflush(stdout);
  return 0;
}

// Writes all of `bytes` to a blocking socket.
bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// --through-agent: the same windows through a real agentd::Agent in this process (its event loop
// reads them from the unix socket, decodes them for /metrics and queues them; its writer thread
// stores and folds them), sent by this thread as the injected processes would. The agent's CPU is
// the process's CPU minus this thread's, which makes, encodes and sends the windows.
int FillThroughAgent(const std::string& dir, int gpus, int days, int64_t end_ns, bool rollups,
                     bool burst) {
  const std::vector<model::ProcessProfile> templates = Templates();
  if (templates.empty()) return 1;
  agentd::AgentOptions options;
  options.state_dir = dir;
  options.retention_ns = static_cast<int64_t>(days + 2) * 86400 * kSec;
  options.max_store_bytes = 0;
  options.telemetry_enabled = false;
  options.http_port = -1;
  options.rollups = rollups;
  options.log = [](std::string_view) {};
  agentd::Agent agent(options);
  if (base::Status st = agent.Start(); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  std::vector<int> fds;
  for (int g = 0; g < gpus; ++g) {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", agent.socket_path().c_str());
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      std::fprintf(stderr, "cannot connect to %s\n", agent.socket_path().c_str());
      return 1;
    }
    const wire::Hello h =
        store::testing::FixtureHello(g, gpus, "bench-node", end_ns - days * 86400 * kSec - kSec);
    std::string payload, frame;
    wire::EncodeHello(h, &payload);
    if (!wire::FrameWriter::Append(wire::FrameType::kHello, payload, &frame).ok() ||
        !WriteAll(fd, frame))
      return 1;
    fds.push_back(fd);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds(), sender0 = ThreadCpuSeconds();
  const int64_t start_ns = end_ns - static_cast<int64_t>(days) * 86400 * kSec;
  uint64_t n = 0;
  std::vector<std::string> pending(static_cast<size_t>(gpus));
  std::string encoded;
  for (int64_t t = start_ns; t < end_ns; t += kWindowNs) {
    for (int g = 0; g < gpus; ++g) {
      const model::ProfileWindow w =
          StampWindow(templates[(n + static_cast<uint64_t>(g)) % templates.size()],
                      static_cast<uint32_t>(g), t, n);
      encoded.clear();
      wire::EncodeWindow(w, &encoded);
      std::string& out = pending[static_cast<size_t>(g)];
      if (!wire::FrameWriter::Append(wire::FrameType::kWindow, encoded, &out).ok()) return 1;
      ++n;
      if (!WriteAll(fds[static_cast<size_t>(g)], out)) return 1;
      out.clear();
    }
    // Live, every process's window of a period arrives within seconds of the others'. Sent as
    // fast as possible, the socket buffers (~25 windows each) would let the agent read one
    // process minutes ahead of the rest, and the others' windows would reach rollup buckets
    // already sealed (the late path, a catch-up case). So the sender waits until the agent has
    // read the previous period: at most two periods in flight per process. In steady state (not
    // --burst) it also waits until they are stored: live windows come 10 s apart, and a writer
    // that keeps up gets the window the event loop decoded instead of decoding it again (a
    // queue of kKeepDecodedBelow windows or more keeps only the encoding).
    while (agent.stats().windows_received + static_cast<uint64_t>(gpus) < n) usleep(50);
    if (!burst)
      while (agent.stats().windows_stored + static_cast<uint64_t>(gpus) < n) usleep(50);
  }
  for (size_t g = 0; g < fds.size(); ++g) {
    std::string& out = pending[g];
    if (!wire::FrameWriter::Append(wire::FrameType::kGoodbye, "", &out).ok() ||
        !WriteAll(fds[g], out))
      return 1;
    close(fds[g]);
  }
  const double sender = ThreadCpuSeconds() - sender0;
  while (agent.stats().windows_stored < n) usleep(10'000);
  const double seconds = Since(t0), agent_cpu = CpuSeconds() - cpu0 - sender;
  agent.Stop();
  if (base::Status st = agent.Wait(); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  std::printf(
      "fill through_agent gpus=%d days=%d windows=%llu seconds=%.1f agent_cpu_seconds=%.1f "
      "agent_us_per_window=%.0f sender_us_per_window=%.0f rollups=%s pacing=%s\n",
      gpus, days, static_cast<unsigned long long>(n), seconds, agent_cpu, agent_cpu * 1e6 / n,
      sender * 1e6 / n, rollups ? "on" : "off", burst ? "burst" : "steady");
  std::fflush(stdout);
  return 0;
}

// One range, in this (fresh) process: what `inferscope report --last R --format json` does.
int QueryOne(const std::string& dir, const std::string& range, int64_t now_ns, bool raw) {
  int64_t range_ns = 0;
  if (!ParseDuration(range, &range_ns)) return 2;
  const auto t0 = std::chrono::steady_clock::now();
  auto store = store::SqliteStore::Open(dir, store::SqliteStore::Mode::kReadOnly);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().message().c_str());
    return 1;
  }
  query::RangeQuery q;
  q.from_ns = now_ns - range_ns;
  q.now_ns = now_ns;
  q.use_rollups = !raw;
  auto profile = query::QueryRangeProfile(**store, q, "store:" + dir);
  if (!profile.ok()) {
    std::fprintf(stderr, "%s\n", profile.status().message().c_str());
    return 1;
  }
  const std::string json = query::RenderRangeReport(*profile, report::ReportFormat::kJson);
  std::printf(
      "range=%s seconds=%.3f peak_rss_mb=%.0f windows=%zu rows_read=%zu bin_s=%g "
      "report_bytes=%zu%s\n",
      range.c_str(), Since(t0), PeakRssMb(), profile->windows, profile->rows_read,
      static_cast<double>(profile->timeline_bin_ns) / 1e9, json.size(), raw ? " (raw)" : "");
  return 0;
}

int Main(int argc, char** argv) {
  int gpus = 8, days = 1;
  std::string dir, ranges = "5m,1h,24h,7d", query;
  bool fill = true, rollups = true, raw = false, pass_decoded = false, through_agent = false,
       burst = false;
  int64_t now_ns = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--gpus")
      gpus = std::atoi(next().c_str());
    else if (a == "--days")
      days = std::atoi(next().c_str());
    else if (a == "--dir")
      dir = next();
    else if (a == "--ranges")
      ranges = next();
    else if (a == "--no-fill")
      fill = false;
    else if (a == "--no-rollups")
      rollups = false;
    else if (a == "--raw")
      raw = true;
    else if (a == "--pass-decoded")
      pass_decoded = true;
    else if (a == "--through-agent")
      through_agent = true;
    else if (a == "--burst")
      burst = true;
    else if (a == "--query")
      query = next();  // internal: one range in a child process
    else if (a == "--now")
      now_ns = std::atoll(next().c_str());
    else {
      std::fprintf(stderr,
                   "usage: store_query_benchmark --gpus N --days D --dir DIR [--ranges 5m,1h,"
                   "24h,7d] [--no-fill] [--no-rollups] [--raw] [--pass-decoded] [--through-agent "
                   "[--burst]]\n");
      return 2;
    }
  }
  if (dir.empty() || gpus <= 0 || days <= 0) {
    std::fprintf(stderr, "store_query_benchmark: --dir, --gpus N > 0 and --days D > 0 needed\n");
    return 2;
  }
  if (!query.empty()) return QueryOne(dir, query, now_ns, raw);

  // The store's data ends at the last whole window before now; reused with --no-fill.
  const std::string end_file = dir + "/bench_end_ns";
  if (fill) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    std::filesystem::create_directories(dir, ec);
    now_ns = base::UnixNowNs() / kWindowNs * kWindowNs;
    const int rc = through_agent ? FillThroughAgent(dir, gpus, days, now_ns, rollups, burst)
                                 : Fill(dir, gpus, days, now_ns, rollups, pass_decoded);
    if (rc != 0) return rc;
    if (FILE* f = std::fopen(end_file.c_str(), "w")) {
      std::fprintf(f, "%lld\n", static_cast<long long>(now_ns));
      std::fclose(f);
    }
  } else if (FILE* f = std::fopen(end_file.c_str(), "r")) {
    long long v = 0;
    if (std::fscanf(f, "%lld", &v) == 1) now_ns = v;
    std::fclose(f);
  }
  if (now_ns == 0) {
    std::fprintf(stderr, "store_query_benchmark: %s has no benchmark store\n", dir.c_str());
    return 1;
  }
  size_t pos = 0;
  while (pos <= ranges.size()) {
    size_t comma = ranges.find(',', pos);
    if (comma == std::string::npos) comma = ranges.size();
    const std::string range = ranges.substr(pos, comma - pos);
    pos = comma + 1;
    if (range.empty()) continue;
    std::fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {
      std::vector<std::string> args = {
          "/proc/self/exe",     "--dir",   dir,   "--gpus", std::to_string(gpus),  "--days",
          std::to_string(days), "--query", range, "--now",  std::to_string(now_ns)};
      if (raw) args.push_back("--raw");
      std::vector<char*> av;
      for (std::string& s : args) av.push_back(s.data());
      av.push_back(nullptr);
      execv("/proc/self/exe", av.data());
      _exit(127);
    }
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
      std::fprintf(stderr, "range=%s failed\n", range.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace inferscope::bench

int main(int argc, char** argv) { return inferscope::bench::Main(argc, argv); }
