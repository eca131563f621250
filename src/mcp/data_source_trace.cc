// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Adapter: trace files as a DataSource, through the offline pipeline (pipeline::ImportTraces, as
// `inferscope analyze`) and analyze::Analyze; nothing else in src/mcp knows about importers.

#include <algorithm>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "src/analyze/analysis.h"
#include "src/mcp/data_source.h"
#include "src/model/taxonomy.h"
#include "src/pipeline/trace_pipeline.h"
#include "src/report/report.h"

namespace inferscope::mcp {
namespace {

// Kernels kept per rank at import: the most any request asks for.
constexpr int kTopPerWindow = 100;

class TraceSource : public DataSource {
 public:
  explicit TraceSource(std::vector<std::string> paths) : paths_(std::move(paths)) {}

  std::string Describe() const override {
    std::string out = "traces:";
    for (size_t i = 0; i < paths_.size(); ++i) out += (i ? "," : "") + paths_[i];
    return out;
  }
  bool HasTimeRanges() const override { return false; }

  base::StatusOr<std::string> ProfileJson(const ProfileRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    RETURN_IF_ERROR(LoadLocked());
    // Filters on the trace's ranks: the windows are re-analyzed without the other processes and
    // devices, so every total is the filtered one.
    std::vector<model::ProfileWindow> kept(windows_.size());
    std::vector<analyze::AnalysisInput> inputs;
    bool any = false;
    for (size_t i = 0; i < windows_.size(); ++i) {
      kept[i] = windows_[i];
      auto& processes = kept[i].processes;
      const Filters& f = request.filters;
      processes.erase(std::remove_if(processes.begin(), processes.end(),
                                     [&](const model::ProcessProfile& p) {
                                       return (f.pid && p.pid != *f.pid) ||
                                              (f.rank && p.rank != *f.rank);
                                     }),
                      processes.end());
      if (f.device) {
        for (model::ProcessProfile& p : processes)
          p.devices.erase(
              std::remove_if(p.devices.begin(), p.devices.end(),
                             [&](const model::DeviceProfile& d) { return d.device != *f.device; }),
              p.devices.end());
      }
      for (const model::ProcessProfile& p : processes) any = any || !p.devices.empty();
      inputs.push_back({paths_in_order_[i], formats_[i], &kept[i]});
    }
    if (!any)
      return base::NotFoundError("no GPU activity matched the filters in " + Describe() +
                                 " (list_targets shows its pids, ranks and devices)");
    analyze::AnalysisOptions options;
    options.top = std::min(request.top, kTopPerWindow);
    options.bin_ns = bin_ns_;
    analyze::Analysis analysis = analyze::Analyze(inputs, options);
    return report::RenderJson(analysis);
  }

 private:
  base::Status LoadLocked() {
    if (loaded_) return load_status_;
    loaded_ = true;
    std::ostringstream err;
    pipeline::TraceOptions options;
    // One bin for every file, so the ranks' timelines line up: 10 ms holds a 1,000 s trace.
    options.bin_ns = bin_ns_;
    options.top = kTopPerWindow;
    model::KernelClassifier classifier;
    std::string failed;
    auto set = pipeline::ImportTraces(paths_, options, classifier, &failed, err);
    if (!set.ok()) {
      load_status_ = failed.empty() ? set.status()
                                    : base::Status(set.status().code(),
                                                   failed + ": " + set.status().message());
      return load_status_;
    }
    // Unrelated runs among the files: only the main job is served, as `analyze` does, and said
    // on stderr (the MCP server's log; `context` prints it before its text).
    if (!set->job_warning.empty()) std::cerr << "inferscope: warning: " << set->job_warning << "\n";
    for (pipeline::ImportedTrace& t : set->traces) {
      windows_.push_back(std::move(t.window));
      formats_.push_back(t.format);
      paths_in_order_.push_back(t.path);
    }
    bin_ns_ = set->bin_ns;
    return load_status_;
  }

  std::vector<std::string> paths_;
  std::mutex mu_;
  bool loaded_ = false;
  base::Status load_status_;
  std::vector<model::ProfileWindow> windows_;
  std::vector<std::string> formats_, paths_in_order_;
  int64_t bin_ns_ = 10'000'000;
};

}  // namespace

std::unique_ptr<DataSource> MakeTraceSource(const std::vector<std::string>& paths) {
  return std::make_unique<TraceSource>(paths);
}

}  // namespace inferscope::mcp
