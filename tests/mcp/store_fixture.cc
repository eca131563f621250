// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// mcp_store_fixture: fills a state dir's store with 10 s windows of the bundled example trace
// (examples/vllm_tp2_decode, real vLLM TP=2 decode kernels) for the last N minutes, two
// processes on two GPUs of host "mcp-node", through the store's write path. With --baseline and
// --candidate (single-rank traces, e.g. tools/make_scenario_traces.py --pair regression) the older
// half of the range holds the baseline's first window and the newer half the candidate's, on
// both GPUs: a regression that starts in the middle. What the MCP client test
// (tests/mcp/mcp_client.mjs) queries.
//
//   mcp_store_fixture --dir DIR [--minutes 30] [--end-unix-s S] [--baseline A --candidate B]

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "src/base/time_point.h"
#include "src/model/taxonomy.h"
#include "src/store/sqlite_store.h"
#include "src/store/test_window_templates.h"
#include "src/wire/framing.h"
#include "src/wire/window_codec.h"

namespace inferscope {
namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kWindowNs = 10 * kSec;

int Main(int argc, char** argv) {
  std::string dir;
  int minutes = 30;
  int64_t end_ns = base::UnixNowNs();
  std::string baseline, candidate;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--baseline")
      baseline = argv[i + 1];
    else if (flag == "--candidate")
      candidate = argv[i + 1];
    else if (flag == "--dir")
      dir = argv[i + 1];
    else if (flag == "--minutes")
      minutes = std::atoi(argv[i + 1]);
    else if (flag == "--end-unix-s")
      end_ns = std::atoll(argv[i + 1]) * kSec;
  }
  if (dir.empty() || minutes <= 0) {
    std::fprintf(stderr, "usage: mcp_store_fixture --dir DIR [--minutes N] [--end-unix-s S]\n");
    return 2;
  }
  const std::string example = std::string(INFERSCOPE_SOURCE_DIR) + "/examples/vllm_tp2_decode/";
  const bool regression = !baseline.empty() && !candidate.empty();
  // GPU g uses template g; with a regression pair, templates 0/1 are the baseline and the
  // candidate, for both GPUs.
  store::testing::TemplateOptions first_only;
  first_only.first_process_only = true;
  const std::vector<model::ProcessProfile> templates = store::testing::WindowTemplates(
      regression ? std::vector<std::string>{baseline, candidate}
                 : std::vector<std::string>{example + "rank0.json.gz", example + "rank1.json.gz"},
      first_only);
  if (templates.size() < 2) {
    std::fprintf(stderr, "the example trace gave no windows\n");
    return 1;
  }
  auto store = store::SqliteStore::Open(dir, store::SqliteStore::Mode::kReadWrite);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().message().c_str());
    return 1;
  }
  end_ns -= end_ns % kWindowNs;  // windows on the agent's grid
  const int64_t start_ns = end_ns - static_cast<int64_t>(minutes) * 60 * kSec;
  std::vector<int64_t> ids;
  for (uint32_t g = 0; g < 2; ++g) {
    wire::Hello h;
    h.pid = 4100 + g;
    h.rank = static_cast<int32_t>(g);
    h.local_rank = static_cast<int32_t>(g);
    h.world_size = 2;
    h.hostname = "mcp-node";
    h.tool_version = "fixture";
    h.process_start_unix_ns = start_ns - kSec;
    auto id = (*store)->UpsertProcess(h, h.process_start_unix_ns);
    if (!id.ok()) return 1;
    ids.push_back(*id);
  }
  base::Status status = (*store)->Begin();
  size_t n = 0;
  for (int64_t t = start_ns; status.ok() && t < end_ns; t += kWindowNs) {
    for (uint32_t g = 0; g < 2 && status.ok(); ++g) {
      model::ProfileWindow w;
      w.start_ns = t;
      w.end_ns = t + kWindowNs;
      const size_t which = regression ? (t - start_ns >= (end_ns - start_ns) / 2 ? 1 : 0) : g;
      model::ProcessProfile& p = w.processes.emplace_back(templates[which]);
      p.pid = 4100 + g;
      p.rank = static_cast<int32_t>(g);
      p.hostname = "mcp-node";
      model::DeviceProfile& d = p.devices[0];
      d.device = g;
      d.first_start_ns += t;
      d.last_end_ns += t;
      d.timeline.origin_ns += t;
      store::PendingWindow pending;
      pending.process_id = ids[g];
      pending.start_ns = w.start_ns;
      pending.end_ns = w.end_ns;
      pending.received_ns = w.end_ns + kSec;
      wire::EncodeWindow(w, &pending.encoded);
      status = (*store)->AppendWindow(pending, nullptr);
      ++n;
    }
  }
  if (status.ok()) status = (*store)->Commit();
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  std::printf("stored %zu windows from %s to %s\n", n, base::FormatUtcTime(start_ns).c_str(),
              base::FormatUtcTime(end_ns).c_str());
  return 0;
}

}  // namespace
}  // namespace inferscope

int main(int argc, char** argv) { return inferscope::Main(argc, argv); }
