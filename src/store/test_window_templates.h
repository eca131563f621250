// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Realistic windows for store fixtures and benchmarks: the Aggregator's 10 s windows of a real
// trace (e.g. the bundled examples/vllm_tp2_decode), one device per process, times made relative
// to the window start so a caller can stamp them anywhere (StampTemplate).

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/import/trace_importer.h"
#include "src/model/profile.h"
#include "src/model/taxonomy.h"
#include "src/wire/framing.h"
#include "src/wire/test_frames.h"

namespace inferscope::store::testing {

struct TemplateOptions {
  int64_t window_ns = 10'000'000'000;
  // Tile each timeline to this many bins (a GPU busy for the whole window); 0 = as recorded.
  size_t tile_to_bins = 0;
  // Only the first process with a device of each window (else every one).
  bool first_process_only = false;
};

// Exits with a message when a trace cannot be read (fixtures and benchmarks have no caller to
// report to).
inline std::vector<model::ProcessProfile> WindowTemplates(const std::vector<std::string>& paths,
                                                          const TemplateOptions& options = {}) {
  std::vector<model::ProcessProfile> out;
  for (const std::string& path : paths) {
    model::NameTable names;
    model::KernelClassifier classifier;
    aggregate::AggregatorOptions aggregator_options;
    aggregator_options.window_ns = options.window_ns;
    std::vector<model::ProfileWindow> windows;
    aggregate::Aggregator aggregator(aggregator_options, &names, &classifier,
                                     [&](model::ProfileWindow&& w) { windows.push_back(w); });
    auto stats = import::ImportTrace(path, &names, &aggregator);
    if (!stats.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), stats.status().message().c_str());
      std::exit(1);
    }
    aggregator.Finish();
    for (const model::ProfileWindow& w : windows) {
      for (model::ProcessProfile p : w.processes) {
        if (p.devices.empty()) continue;
        p.devices.resize(1);
        model::DeviceProfile& d = p.devices[0];
        model::Timeline& t = d.timeline;
        const size_t real = t.busy_ns.size();
        for (size_t i = real; real > 0 && i < options.tile_to_bins; ++i) {
          t.busy_ns.push_back(t.busy_ns[i % real]);
          t.category_ns.push_back(t.category_ns[i % real]);
        }
        d.first_start_ns -= w.start_ns;
        d.last_end_ns -= w.start_ns;
        t.origin_ns -= w.start_ns;
        out.push_back(std::move(p));
        if (options.first_process_only) break;
      }
    }
  }
  return out;
}

// The hello of fixture/benchmark process `index` on host `hostname` (pid 10000 + index): the
// wire tests' hello with this fixture's job shape.
inline wire::Hello FixtureHello(int index, int world_size, const std::string& hostname,
                                int64_t process_start_unix_ns) {
  wire::Hello h = wire::testing::MakeHello(10'000 + static_cast<uint32_t>(index), index);
  h.world_size = world_size;
  h.hostname = hostname;
  h.tool_version = "bench";
  h.process_start_unix_ns = process_start_unix_ns;
  return h;
}

}  // namespace inferscope::store::testing
