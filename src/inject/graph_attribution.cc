// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/graph_attribution.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace inferscope::inject {

namespace {

int64_t FloorMod(int64_t a, int64_t b) {
  const int64_t m = a % b;
  return m < 0 ? m + b : m;
}

// Graphs whose sample saw fewer launches are learned, but not used to check older shares (one
// launch says little about a graph that varies).
constexpr uint64_t kMinLaunchesToCheck = 2;

// A duration's mean follows what the kernel takes now: past this many observations, the sum and
// count are halved, so older ones weigh less.
constexpr int64_t kDurationHalfLife = 4096;

}  // namespace

GraphAttribution::GraphAttribution(uint32_t pid, int64_t window_ns, const model::NameTable* names,
                                   const model::KernelClassifier* classifier)
    : pid_(pid), window_ns_(window_ns), classify_(classifier, names) {}

model::CudaGraphStats& GraphAttribution::StatsFor(int64_t start_ns, uint32_t device) {
  const int64_t window = window_ns_ > 0 ? start_ns - FloorMod(start_ns, window_ns_) : 0;
  return windows_[{window, device}];
}

void GraphAttribution::Duration::Add(int64_t d) {
  sum_ns += d;
  if (++count >= kDurationHalfLife) {
    sum_ns /= 2;
    count /= 2;
  }
}

void GraphAttribution::LearnDuration(const model::KernelEvent& k) {
  const int64_t d = k.end_ns - k.start_ns;
  if (k.name == model::kNoName || d <= 0) return;
  if (k.name >= kMaxDurations) {
    ++durations_dropped_;
    return;
  }
  // Grows only when a new name appears (the table allocates as names are interned, not per launch).
  if (k.name >= durations_.size()) durations_.resize(k.name + 1);
  NameDurations& n = durations_[k.name];
  if (n.any.count == 0) ++names_known_;
  n.any.Add(d);
  auto same = [&](const NameDurations::Config& c) {
    for (int i = 0; i < 3; ++i)
      if (c.grid[i] != k.grid[i] || c.block[i] != k.block[i]) return false;
    return true;
  };
  for (uint32_t i = 0; i < n.config_count; ++i)
    if (same(n.configs[i])) {
      n.configs[i].d.Add(d);
      return;
    }
  // A new configuration: a free place, else the one seen least takes it.
  uint32_t at = n.config_count;
  if (at == kConfigsPerName) {
    at = 0;
    for (uint32_t i = 1; i < kConfigsPerName; ++i)
      if (n.configs[i].d.count < n.configs[at].d.count) at = i;
  } else {
    ++n.config_count;
  }
  NameDurations::Config& c = n.configs[at];
  for (int i = 0; i < 3; ++i) {
    c.grid[i] = k.grid[i];
    c.block[i] = k.block[i];
  }
  c.d = Duration{};
  c.d.Add(d);
}

double GraphAttribution::KnownDuration(const CapturedKernel& c) const {
  if (c.name >= durations_.size()) return 0;
  const NameDurations& n = durations_[c.name];
  const Duration* best = &n.any;
  if (c.grid[0] != 0) {
    for (uint32_t i = 0; i < n.config_count; ++i) {
      const NameDurations::Config& x = n.configs[i];
      bool same = true;
      for (int j = 0; j < 3; ++j) same = same && x.grid[j] == c.grid[j] && x.block[j] == c.block[j];
      if (same) best = &x.d;  // else the capture's configuration was not seen: the name's mean
    }
  }
  if (best->count <= 0) return 0;
  return static_cast<double>(best->sum_ns) / static_cast<double>(best->count);
}

void GraphAttribution::CountUnsampled() {
  unsampled_graphs_ = 0;
  for (const auto& [id, nodes] : composition_)
    if (!nodes.empty() && !shares_.count(id) && !unstable_.count(id)) ++unsampled_graphs_;
}

void GraphAttribution::BeginSample(int64_t now_ns) {
  sampling_ = true;
  sample_begin_ns_ = now_ns;
  sample_.clear();
  sampled_correlations_.clear();
}

void GraphAttribution::OnNodeKernel(const model::KernelEvent& k) {
  // Every node-level launch is measured time, in or out of a sample (INFERSCOPE_GRAPH_NODES=1).
  // A launch's span is known once all its nodes are in: it is charged at EndSample.
  SampledLaunch& l = sample_[k.correlation_id];
  if (l.kernels.empty()) {
    l.graph_id = k.graph_id;
    l.device = k.device;
  }
  l.start_ns = std::min(l.start_ns, k.start_ns);
  l.end_ns = std::max(l.end_ns, k.end_ns);
  l.kernels.emplace_back(k.start_ns, k.name);
  l.durations.push_back(std::max<int64_t>(k.end_ns - k.start_ns, 0));
  sampled_correlations_.insert(k.correlation_id);
  LearnDuration(k);
}

void GraphAttribution::EndSample(int64_t now_ns) {
  sampling_ = false;
  // Per graph: summed spans, per kernel name time (in first-seen order), per category time.
  struct Learned {
    int64_t span_ns = 0;
    uint64_t launches = 0;
    std::vector<std::pair<int64_t, model::NameId>> order;  // (position, name) of the first launch
    std::unordered_map<model::NameId, int64_t> time_ns;
    std::array<int64_t, model::kCategoryCount> category_ns{};
  };
  std::unordered_map<uint32_t, Learned> learned;
  for (auto& [correlation, l] : sample_) {
    (void)correlation;
    if (l.kernels.empty() || l.end_ns <= l.start_ns) continue;
    Learned& g = learned[l.graph_id];
    g.span_ns += l.end_ns - l.start_ns;
    ++g.launches;
    // Kernels in the order they ran in this launch.
    std::vector<size_t> idx(l.kernels.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(),
              [&](size_t a, size_t b) { return l.kernels[a].first < l.kernels[b].first; });
    for (size_t rank = 0; rank < idx.size(); ++rank) {
      const auto& [start, name] = l.kernels[idx[rank]];
      const int64_t d = l.durations[idx[rank]];
      // One entry per kernel name, where it first runs: a name that recurs (a norm per layer)
      // gets all its time as one estimated kernel.
      if (!g.time_ns.count(name)) g.order.emplace_back(static_cast<int64_t>(g.order.size()), name);
      g.time_ns[name] += d;
      g.category_ns[static_cast<size_t>(classify_.Classify(name).category)] += d;
    }
    // Measured graph time, charged to the window and device of the launch.
    model::CudaGraphStats& s = StatsFor(l.start_ns, l.device);
    ++s.launches;
    s.launch_ns += l.end_ns - l.start_ns;
    s.measured_ns += l.end_ns - l.start_ns;
  }
  for (auto& [graph_id, g] : learned) {
    if (g.span_ns <= 0) continue;
    const double span = static_cast<double>(g.span_ns);
    // Check the shares learned before against what this sample measured.
    auto old = shares_.find(graph_id);
    if (old != shares_.end() && g.launches >= kMinLaunchesToCheck) {
      double worst = 0;
      for (int c = 0; c < model::kCategoryCount; ++c)
        worst = std::max(worst, std::abs(old->second.categories[c] -
                                         static_cast<double>(g.category_ns[c]) / span));
      // Charged to the windows this sample's launches are in: the first one's.
      model::CudaGraphStats& s = StatsFor(now_ns, model::kUnknownDevice);
      ++s.checks;
      s.max_error_bp = std::max<uint32_t>(s.max_error_bp, static_cast<uint32_t>(worst * 1e4 + 0.5));
    }
    Shares fresh;
    fresh.learned_ns = now_ns;
    fresh.launches = g.launches;
    for (const auto& [pos, name] : g.order)
      fresh.kernels.push_back({name, static_cast<double>(g.time_ns[name]) / span});
    for (int c = 0; c < model::kCategoryCount; ++c)
      fresh.categories[c] = static_cast<double>(g.category_ns[c]) / span;
    shares_[graph_id] = std::move(fresh);
  }
  sample_.clear();
  CountUnsampled();
}

bool GraphAttribution::OnGraphLaunch(const model::KernelEvent& launch,
                                     std::vector<model::KernelEvent>* kernels) {
  kernels->clear();
  const int64_t span = launch.end_ns - launch.start_ns;
  model::CudaGraphStats& s = StatsFor(launch.start_ns, launch.device);
  if (sampled_correlations_.count(launch.correlation_id)) {
    s.deduplicated_ns += std::max<int64_t>(span, 0);
    return false;  // its nodes were recorded: counting the launch again would count it twice
  }
  ++s.launches;
  s.launch_ns += std::max<int64_t>(span, 0);
  if (unstable_.count(launch.graph_id)) {  // conditional nodes: last sample's split may not hold
    s.unattributed_ns += std::max<int64_t>(span, 0);
    return true;
  }
  auto it = shares_.find(launch.graph_id);
  if (it == shares_.end() || span <= 0) {
    auto c = composition_.find(launch.graph_id);
    if (c == composition_.end() || c->second.empty() || span <= 0) {
      s.unattributed_ns += std::max<int64_t>(span, 0);
      return true;
    }
    // Only the capture is known: each kernel node gets a part of the launch in proportion to what
    // it is known to take, laid out in order; a node not known weighs as the known ones' mean.
    const std::vector<CapturedKernel>& nodes = c->second;
    weights_.clear();
    double known_sum = 0;
    size_t known = 0;
    for (const CapturedKernel& k : nodes) {
      const double d = KnownDuration(k);
      weights_.push_back(d);
      if (d > 0) {
        known_sum += d;
        ++known;
      }
    }
    const double unknown = known > 0 ? known_sum / static_cast<double>(known) : 1.0;
    double total = 0;
    for (double& w : weights_) {
      if (w <= 0) w = unknown;
      total += w;
    }
    s.composition_ns += span;
    if (known > 0) {
      const double timed = static_cast<double>(span) * (known_sum / total);
      s.composition_timed_ns += static_cast<int64_t>(std::llround(timed));
    }
    double cumulative = 0;
    const double scale = static_cast<double>(span) / total;
    for (size_t i = 0; i < nodes.size(); ++i) {
      model::KernelEvent e = launch;
      e.name = nodes[i].name;
      e.start_ns = launch.start_ns + static_cast<int64_t>(std::llround(cumulative * scale));
      cumulative += weights_[i];
      e.end_ns = i + 1 == nodes.size()
                     ? launch.end_ns
                     : launch.start_ns + static_cast<int64_t>(std::llround(cumulative * scale));
      if (e.end_ns > e.start_ns) kernels->push_back(e);
    }
    return true;
  }
  const Shares& shares = it->second;
  s.estimated_ns += span;
  s.max_share_age_ns = std::max(s.max_share_age_ns, launch.start_ns - shares.learned_ns);
  // Laid out in order from the launch's start; a kernel that would run past the end starts over
  // from the start (parallel branches: shares add up to more than the span). Every estimated
  // kernel lies inside the launch, so busy time is the launch's at most.
  int64_t cursor = launch.start_ns;
  for (const KernelShare& k : shares.kernels) {
    const int64_t d = std::min<int64_t>(
        span, static_cast<int64_t>(std::llround(k.share * static_cast<double>(span))));
    if (d <= 0) continue;
    if (cursor + d > launch.end_ns) cursor = launch.start_ns;
    model::KernelEvent e = launch;
    e.name = k.name;
    e.start_ns = cursor;
    e.end_ns = cursor + d;
    kernels->push_back(e);
    cursor += d;
  }
  return true;
}

void GraphAttribution::SetComposition(uint32_t graph_id, const std::vector<model::NameId>& kernels,
                                      bool unstable) {
  std::vector<CapturedKernel> nodes(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) nodes[i].name = kernels[i];
  SetCapturedKernels(graph_id, std::move(nodes), unstable);
}

void GraphAttribution::SetCapturedKernels(uint32_t graph_id, std::vector<CapturedKernel> kernels,
                                          bool unstable) {
  composition_[graph_id] = std::move(kernels);
  if (unstable)
    unstable_.insert(graph_id);
  else
    unstable_.erase(graph_id);
  CountUnsampled();
}

void GraphAttribution::Forget(uint32_t graph_id) {
  shares_.erase(graph_id);
  composition_.erase(graph_id);
  unstable_.erase(graph_id);
  CountUnsampled();
}

void GraphAttribution::FillWindow(model::ProfileWindow* window) {
  for (auto it = windows_.begin(); it != windows_.end();) {
    const auto& [key, stats] = *it;
    if (key.first > window->start_ns) break;
    model::ProcessProfile* process = nullptr;
    for (model::ProcessProfile& p : window->processes)
      if (p.pid == pid_) process = &p;
    if (process != nullptr && !process->devices.empty()) {
      model::DeviceProfile* device = &process->devices.front();  // checks belong to the process
      for (model::DeviceProfile& d : process->devices)
        if (d.device == key.second) device = &d;
      device->graphs.Merge(stats);
    }
    it = windows_.erase(it);
  }
}

}  // namespace inferscope::inject
