// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Adapter: trace files as a DataSource, through cli::ImportTraceFile and analyze::Analyze (the
// path of `inferscope analyze`). The lead re-points this file when the import moves to a core
// library; nothing else in src/mcp knows about importers.

#include <algorithm>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "src/analyze/analysis.h"
#include "src/cli/analyze_command.h"
#include "src/mcp/data_source.h"
#include "src/model/taxonomy.h"
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
    std::vector<std::string> files;
    std::string failed;
    load_status_ = cli::ExpandTracePaths(paths_, &files, &failed, err);
    if (!load_status_.ok()) {
      load_status_ = base::Status(load_status_.code(), failed + ": " + load_status_.message());
      return load_status_;
    }
    cli::AnalyzeOptions options;
    // One bin for every file, so the ranks' timelines line up: 10 ms holds a 1,000 s trace.
    options.bin_ns = bin_ns_;
    options.top = kTopPerWindow;
    model::KernelClassifier classifier;
    for (const std::string& file : files) {
      std::string format;
      model::ProfileWindow merged;
      bool first = true;
      base::Status s = cli::ImportTraceFile(
          file, options, classifier, /*window_ns=*/0,
          [&](model::ProfileWindow&& w) {
            if (first) {
              merged = std::move(w);
              first = false;
            } else {
              for (model::ProcessProfile& p : w.processes) merged.processes.push_back(std::move(p));
            }
          },
          &format, err);
      if (!s.ok()) {
        load_status_ = base::Status(s.code(), file + ": " + s.message());
        return load_status_;
      }
      windows_.push_back(std::move(merged));
      formats_.push_back(format);
      paths_in_order_.push_back(file);
    }
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
