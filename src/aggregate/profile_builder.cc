// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/aggregate/profile_builder.h"

#include <algorithm>

namespace inferscope::aggregate {

namespace {

std::string OpName(const OpRef& op, const model::NameTable& names) {
  switch (op.kind) {
    case OpRef::Kind::kKernel:
      return std::string(names.Get(op.id));
    case OpRef::Kind::kMemcpy:
      return std::string("[memcpy ") + model::kMemcpyKindNames[op.id] + "]";
    case OpRef::Kind::kMemset:
      return "[memset]";
    case OpRef::Kind::kNone:
      break;
  }
  return "[no GPU work finished during the wait]";
}

model::SyncStats BuildSync(const SyncAccum& accum, const model::NameTable& names, int max_targets) {
  model::SyncStats out;
  out.wait = accum.wait;
  std::vector<SyncTargetAccum> targets = accum.targets;
  std::sort(targets.begin(), targets.end(), [](const SyncTargetAccum& a, const SyncTargetAccum& b) {
    return a.wait_ns != b.wait_ns ? a.wait_ns > b.wait_ns : a.count > b.count;
  });
  for (const SyncTargetAccum& t : targets) {
    if (static_cast<int>(out.waited_on.size()) >= max_targets) break;
    out.waited_on.push_back(model::SyncTarget{OpName(t.op, names), t.count, t.wait_ns});
  }
  return out;
}

// The kernel's most frequent configurations, in the order every writer lists them.
void FillConfigs(const KernelAccum& k, const std::vector<model::KernelResources>& resource_sets,
                 model::KernelStats* row) {
  row->distinct_configs = k.distinct_configs;
  row->configs.reserve(k.configs.size());
  for (const ConfigSlot& slot : k.configs) {
    model::LaunchConfig& c = row->configs.emplace_back();
    c.grid = slot.key.grid;
    c.block = slot.key.block;
    c.count = slot.count;
    c.total_ns = slot.total_ns;
    const model::KernelResources& r = slot.key.resources < resource_sets.size()
                                          ? resource_sets[slot.key.resources]
                                          : resource_sets.front();
    c.registers_per_thread = r.registers_per_thread;
    c.static_shared_bytes = r.static_shared_bytes;
    c.dynamic_shared_bytes = r.dynamic_shared_bytes;
    c.shared_bytes = r.shared_bytes;
  }
  std::sort(row->configs.begin(), row->configs.end(), model::MoreFrequentConfig);
  if (row->configs.size() > model::kMaxLaunchConfigs) row->configs.resize(model::kMaxLaunchConfigs);
}

void AddTo(model::CategoryStats* stats, uint64_t count, int64_t time_ns) {
  stats->count += count;
  stats->time_ns += time_ns;
}

}  // namespace

model::DeviceProfile BuildDeviceProfile(DeviceState* state, const std::string& device_name,
                                        const model::NameTable& names,
                                        const AggregatorOptions& options, bool use_sync_records,
                                        const std::vector<model::KernelResources>& resource_sets) {
  DeviceState& d = *state;
  model::DeviceProfile out;
  out.device = d.device;
  out.device_name = device_name;

  d.busy.Close([&d](int64_t s, int64_t e) {
    d.ForEachBin(s, e, [&d](size_t bin, int64_t ns) { d.timeline.busy_ns[bin] += ns; });
  });
  d.compute.Close();
  d.communication.Close();
  d.compute_or_communication.Close();
  out.first_start_ns = d.first_start_ns;
  out.last_end_ns = d.last_end_ns;
  out.busy_ns = d.busy.total_ns();
  out.compute_ns = d.compute.total_ns();
  out.communication_ns = d.communication.total_ns();
  // |compute ∩ comm| = |compute| + |comm| - |compute ∪ comm|, all three unions built in one pass.
  out.communication_overlap_ns =
      d.compute.total_ns() + d.communication.total_ns() - d.compute_or_communication.total_ns();

  out.kernel_count = d.kernel_count;
  for (const KernelAccum& k : d.kernels) {
    AddTo(&out.categories[static_cast<size_t>(k.category)], k.duration.count, k.duration.total_ns);
    AddTo(&out.subcategories[std::string(k.subcategory)], k.duration.count, k.duration.total_ns);
  }
  constexpr auto kMemory = static_cast<size_t>(model::Category::kMemory);
  for (size_t kind = 0; kind < d.memcpy.size(); ++kind) {
    const model::TransferStats& t = d.memcpy[kind];
    if (t.count == 0) continue;
    AddTo(&out.categories[kMemory], t.count, t.time_ns);
    const std::string sub = kind == static_cast<size_t>(model::MemcpyKind::kUnknown)
                                ? std::string("memory.memcpy")
                                : std::string("memory.memcpy_") + model::kMemcpyKindNames[kind];
    AddTo(&out.subcategories[sub], t.count, t.time_ns);
  }
  if (d.memset.count > 0) {
    AddTo(&out.categories[kMemory], d.memset.count, d.memset.time_ns);
    AddTo(&out.subcategories["memory.memset"], d.memset.count, d.memset.time_ns);
  }

  // Top-K by total time (ties: more calls first, then name for determinism); the rest is one row.
  std::vector<const KernelAccum*> order;
  order.reserve(d.kernels.size());
  for (KernelAccum& k : d.kernels) {
    k.FlushConfigRun();
    order.push_back(&k);
  }
  std::sort(order.begin(), order.end(), [&names](const KernelAccum* a, const KernelAccum* b) {
    if (a->duration.total_ns != b->duration.total_ns)
      return a->duration.total_ns > b->duration.total_ns;
    if (a->duration.count != b->duration.count) return a->duration.count > b->duration.count;
    return names.Get(a->name) < names.Get(b->name);
  });
  out.tail.name = "other";
  out.tail.subcategory = "other";
  out.tail.distinct_names = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const KernelAccum& k = *order[i];
    if (static_cast<int>(i) < options.top_k) {
      model::KernelStats row;
      row.name = std::string(names.Get(k.name));
      row.category = k.category;
      row.subcategory = std::string(k.subcategory);
      row.duration = k.duration;
      row.histogram = k.histogram;
      if (!k.configs.empty()) FillConfigs(k, resource_sets, &row);
      out.top_kernels.push_back(std::move(row));
    } else {
      out.tail.duration.Merge(k.duration);
      out.tail.histogram.Merge(k.histogram);
      ++out.tail.distinct_names;
    }
  }

  out.timeline = std::move(d.timeline);
  out.idle_gaps = d.idle_gaps;
  out.idle_causes = d.idle_causes;
  out.steps = d.steps;
  // The open step was settled before (DeviceState::SettleStep): carried, ended or cut.
  if (!d.phases.empty()) out.phases = d.phases;
  out.launch = d.launch;
  const auto& syncs = use_sync_records ? d.sync_records : d.sync_calls;
  for (size_t t = 0; t < syncs.size(); ++t)
    out.syncs[t] = BuildSync(syncs[t], names, options.max_sync_targets);
  out.memcpy = d.memcpy;
  out.memset = d.memset;
  out.allocations = d.allocations;
  return out;
}

}  // namespace inferscope::aggregate
