// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/aggregate/view_collector.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "src/aggregate/range_tracker.h"
#include "src/model/step_phase.h"

namespace inferscope::aggregate {
namespace {

using model::NameId;

enum class OpKind : uint8_t { kKernel, kMemcpy, kMemset };

// A GPU operation as the stream, step and range views need it.
struct Op {
  int64_t start_ns = 0, end_ns = 0;
  uint32_t pid = 0, device = 0, stream = 0, correlation_id = 0;
  NameId name = model::kNoName;
  OpKind kind = OpKind::kKernel;
};

// A call that launched GPU work (kernel, graph, copy, memset), by (pid, correlation id) packed in
// one integer: the sort and the lookups compare one word, not a tuple.
struct Launch {
  uint64_t key = 0;  // pid << 32 | correlation id
  int64_t start_ns = 0;
  uint32_t tid = 0;
  uint32_t pid() const { return static_cast<uint32_t>(key >> 32); }
};
inline uint64_t LaunchKey(uint32_t pid, uint32_t correlation_id) {
  return (uint64_t{pid} << 32) | correlation_id;
}

// The launching call of a GPU op by (pid, correlation id). CUPTI numbers a process's calls from a
// counter, so the ids of its launches fill a range a few times their count: a direct table per
// process then (no sort; a binary search per op was a cache miss a step), else the launches sorted
// and searched. Of two calls with one id (not seen in practice) the earlier wins.
class LaunchIndex {
 public:
  explicit LaunchIndex(std::vector<Launch>* launches) : launches_(launches) {
    for (const Launch& l : *launches) {
      Table& t = TableOf(l.pid());
      const uint32_t id = static_cast<uint32_t>(l.key);
      t.min = std::min(t.min, id);
      t.max = std::max(t.max, id);
      ++t.count;
    }
    for (auto& [pid, t] : tables_)
      if (uint64_t{t.max} - t.min + 1 > 16 * t.count + 65536) dense_ = false;
    if (!dense_) {
      std::sort(launches->begin(), launches->end(), [](const Launch& a, const Launch& b) {
        return a.key != b.key ? a.key < b.key : a.start_ns < b.start_ns;
      });
      return;
    }
    for (auto& [pid, t] : tables_) t.slot.assign(static_cast<size_t>(t.max - t.min) + 1, kNone);
    for (size_t i = 0; i < launches->size(); ++i) {
      const Launch& l = (*launches)[i];
      Table& t = TableOf(l.pid());
      uint32_t& slot = t.slot[static_cast<uint32_t>(l.key) - t.min];
      if (slot == kNone || l.start_ns < (*launches)[slot].start_ns) slot = static_cast<uint32_t>(i);
    }
  }

  const Launch* Find(uint32_t pid, uint32_t correlation_id) const {
    if (!dense_) {
      const uint64_t key = LaunchKey(pid, correlation_id);
      auto it = std::lower_bound(launches_->begin(), launches_->end(), key,
                                 [](const Launch& l, uint64_t k) { return l.key < k; });
      return it == launches_->end() || it->key != key ? nullptr : &*it;
    }
    if (last_ == nullptr || last_pid_ != pid) {
      auto it = std::lower_bound(tables_.begin(), tables_.end(), pid,
                                 [](const auto& e, uint32_t p) { return e.first < p; });
      if (it == tables_.end() || it->first != pid) return nullptr;
      last_pid_ = pid;
      last_ = &it->second;
    }
    if (correlation_id < last_->min || correlation_id > last_->max) return nullptr;
    const uint32_t slot = last_->slot[correlation_id - last_->min];
    return slot == kNone ? nullptr : &(*launches_)[slot];
  }

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  struct Table {
    uint32_t min = ~uint32_t{0}, max = 0;
    uint64_t count = 0;
    std::vector<uint32_t> slot;  // launch index by id - min
  };
  Table& TableOf(uint32_t pid) {
    auto it = std::lower_bound(tables_.begin(), tables_.end(), pid,
                               [](const auto& e, uint32_t p) { return e.first < p; });
    if (it == tables_.end() || it->first != pid) it = tables_.insert(it, {pid, Table{}});
    return it->second;
  }

  std::vector<Launch>* launches_;
  std::vector<std::pair<uint32_t, Table>> tables_;  // by pid (few)
  bool dense_ = true;
  mutable uint32_t last_pid_ = 0;
  mutable const Table* last_ = nullptr;
};

// Range-table groups by name text: open addressing over FNV-1a hashes. The range table looks up
// one group per distinct raw range name, and PyTorch's emit_nvtx makes every op instance's name
// distinct (~10^4 per Nsight export): std::unordered_map's node walk and byte hash were a sixth of
// the table's cost.
class GroupIndex {
 public:
  // The group of `text`, added as `next` when new (`*added` says which).
  uint32_t Find(std::string_view text, uint32_t next, bool* added) {
    if ((used_ + 1) * 2 > slots_.size()) Grow();
    const uint64_t h = Hash(text);
    for (size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& slot = slots_[i];
      if (slot.group == kEmpty) {
        slot = {h, next, text};
        ++used_;
        *added = true;
        return next;
      }
      if (slot.hash == h && slot.text == text) {
        *added = false;
        return slot.group;
      }
    }
  }

 private:
  static constexpr uint32_t kEmpty = ~uint32_t{0};
  struct Slot {
    uint64_t hash = 0;
    uint32_t group = kEmpty;
    std::string_view text;
  };
  // Eight bytes a step (a byte-wise FNV-1a, a multiply per byte, is most of a lookup's cost on
  // long names): multiply-xorshift mixing.
  static uint64_t Hash(std::string_view text) {
    uint64_t h = 14695981039346656037ull ^ text.size();
    size_t i = 0;
    for (; i + 8 <= text.size(); i += 8) {
      uint64_t word;
      std::memcpy(&word, text.data() + i, 8);
      h = (h ^ word) * 0x9e3779b97f4a7c15ull;
      h ^= h >> 29;
    }
    uint64_t tail = 0;  // byte by byte: a short memcpy into a word stalls its load
    for (size_t k = 0; i + k < text.size(); ++k)
      tail |= uint64_t{static_cast<unsigned char>(text[i + k])} << (8 * k);
    h = (h ^ tail) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(64, old.size() * 2), Slot{});
    for (const Slot& s : old) {
      if (s.group == kEmpty) continue;
      size_t i = s.hash & (slots_.size() - 1);
      while (slots_[i].group != kEmpty) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

struct HostRange {
  int64_t start_ns = 0, end_ns = 0;
  uint32_t pid = 0, tid = 0;
  NameId name = model::kNoName;
  uint32_t group = 0;  // its range-table name (RangeGroup), set when the views are computed
  uint64_t thread() const { return (uint64_t{pid} << 32) | tid; }
};

// A launch configuration as KernelAcc keys it (model::LaunchConfig's fields in order).
using ConfigKey = std::array<int32_t, 10>;

// One kernel name on one (pid, device): every duration and its launch configurations.
struct KernelAcc {
  uint32_t pid = 0, device = 0;
  NameId name = model::kNoName;
  std::vector<int64_t> durations;
  // grid, block, registers, static, dynamic and total shared memory -> count, total time
  std::map<ConfigKey, std::pair<uint64_t, int64_t>> configs;
};

struct RangeAcc {
  uint32_t group = 0;
  std::vector<int64_t> durations;
  model::ProjectedGpu gpu;
  size_t last_op = static_cast<size_t>(-1);  // the op last added: a nested same name counts once
};

// One operator or module name of one process (the ops view).
struct OpAcc {
  uint32_t group = 0;
  model::OpRow row;
  size_t last_op = static_cast<size_t>(-1);  // the GPU op last added to gpu_total_ns
};

// The range-table accumulators of one process, found by group id in one load.
template <typename Acc>
struct ProcessAccs {
  std::vector<int32_t> slot;  // by group: index into accs, -1 none
  std::vector<Acc> accs;

  Acc& Of(uint32_t group) {
    if (group >= slot.size()) slot.resize(static_cast<size_t>(group) + 1, -1);
    if (slot[group] < 0) {
      slot[group] = static_cast<int32_t>(accs.size());
      accs.emplace_back().group = group;
    }
    return accs[static_cast<size_t>(slot[group])];
  }
};
using ProcessRanges = ProcessAccs<RangeAcc>;
using ProcessOps = ProcessAccs<OpAcc>;

void AddToProjection(const Op& op, model::Category category, model::ProjectedGpu* gpu) {
  const int64_t d = op.end_ns - op.start_ns;
  if (gpu->ops == 0 || op.start_ns < gpu->first_start_ns) gpu->first_start_ns = op.start_ns;
  if (gpu->ops == 0 || op.end_ns > gpu->last_end_ns) gpu->last_end_ns = op.end_ns;
  ++gpu->ops;
  gpu->time_ns += d;
  gpu->category_ns[static_cast<size_t>(category)] += d;
}

// Union length of [start, end) intervals (reordered in place).
int64_t UnionNs(std::vector<std::pair<int64_t, int64_t>>* intervals) {
  std::sort(intervals->begin(), intervals->end());
  int64_t total = 0, cur_start = 0, cur_end = 0;
  bool open = false;
  for (const auto& [s, e] : *intervals) {
    if (!open || s > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
      open = true;
    } else if (e > cur_end) {
      cur_end = e;
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

// Sorts [begin, end) by `less`, which must be a total order (then any sort gives one result), in
// time linear in its length when it has a few ascending runs (a thread's launches go back once
// where Kineto starts a profiler step): merges of the runs; else a sort.
template <typename It, typename Less>
void SortFewRuns(It begin, It end, Less less) {
  constexpr size_t kMaxRuns = 8;
  std::vector<It> runs = {begin};
  for (It i = begin + 1; i < end; ++i) {
    if (!less(*i, *(i - 1))) continue;
    runs.push_back(i);
    if (runs.size() > kMaxRuns) {
      std::sort(begin, end, less);
      return;
    }
  }
  for (size_t k = 1; k < runs.size(); ++k)
    std::inplace_merge(begin, runs[k], k + 1 < runs.size() ? runs[k + 1] : end, less);
}

// Orders `items` by (key(item), then `less`) in linear time when each key's items arrive in
// `less` order (Nsight rows by start, correlation ids growing with time): a stable scatter into
// per-key buckets (few keys: threads or processes), then a sort only of a bucket out of order. A
// comparison sort of ~10^4 ranges, launches and GPU ops was a third of the range table's cost.
// `less` must be a total order within a key (a bucket out of order is merged, SortFewRuns).
template <typename T, typename Key, typename Less>
void BucketSort(std::vector<T>* items, Key key, Less less) {
  auto by_key = [&](const T& a, const T& b) {
    return key(a) != key(b) ? key(a) < key(b) : less(a, b);
  };
  if (std::is_sorted(items->begin(), items->end(), by_key)) return;  // nothing to move
  // Key -> its bucket's next index in the result, by key (a sorted vector: few keys).
  std::vector<std::pair<uint64_t, size_t>> buckets;
  auto slot = [&buckets](uint64_t k) -> size_t& {
    return std::lower_bound(buckets.begin(), buckets.end(), std::make_pair(k, size_t{0}))->second;
  };
  uint64_t last = 0;
  size_t* count = nullptr;
  for (const T& item : *items) {
    const uint64_t k = key(item);
    if (count == nullptr || k != last) {
      auto at = std::lower_bound(buckets.begin(), buckets.end(), std::make_pair(k, size_t{0}));
      if (at == buckets.end() || at->first != k) at = buckets.insert(at, {k, 0});
      count = &at->second;
      last = k;
    }
    ++*count;
  }
  size_t at = 0;
  for (auto& [k, n] : buckets) {
    const size_t here = n;
    n = at;
    at += here;
  }
  std::vector<T> sorted(items->size());
  size_t* next = nullptr;
  for (const T& item : *items) {
    const uint64_t k = key(item);
    if (next == nullptr || k != last) {
      next = &slot(k);
      last = k;
    }
    sorted[(*next)++] = item;
  }
  size_t begin = 0;
  for (const auto& [k, end] : buckets) {
    const auto b = sorted.begin() + static_cast<std::ptrdiff_t>(begin);
    const auto e = sorted.begin() + static_cast<std::ptrdiff_t>(end);
    if (!std::is_sorted(b, e, less)) SortFewRuns(b, e, less);
    begin = end;
  }
  *items = std::move(sorted);
}

// The ops view's host ranges, kept per thread as they arrive (Kineto writes each thread's
// operators in start order, one thread's after another's): Sorted() orders them by (thread, start)
// with a sort only of a thread out of order. That is the order BucketSort gives the same ranges
// (a stable scatter by thread, then the same sort of a bucket out of order) without its key pass
// and its copy into a fresh vector, which were a tenth of the ops view's own work.
class ThreadRanges {
 public:
  void Add(const HostRange& r) {
    const uint64_t thread = r.thread();
    if (current_ == kNone || thread != thread_) {
      thread_ = thread;
      current_ = 0;
      while (current_ < threads_.size() && threads_[current_].first != thread) ++current_;
      if (current_ == threads_.size()) threads_.emplace_back(thread, std::vector<HostRange>());
    }
    threads_[current_].second.push_back(r);
  }
  bool empty() const { return threads_.empty(); }

  // Orders the threads by key and each thread's ranges by start; of two ranges starting together
  // the longer (enclosing) first, as the nesting needs. Call once, after the last Add.
  std::vector<std::pair<uint64_t, std::vector<HostRange>>>& Sorted() {
    std::sort(threads_.begin(), threads_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    auto less = [](const HostRange& a, const HostRange& b) {
      if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
      return a.end_ns > b.end_ns;
    };
    for (auto& [thread, list] : threads_)
      if (!std::is_sorted(list.begin(), list.end(), less))
        std::sort(list.begin(), list.end(), less);
    current_ = kNone;
    return threads_;
  }

 private:
  static constexpr size_t kNone = ~size_t{0};
  std::vector<std::pair<uint64_t, std::vector<HostRange>>> threads_;  // a few threads
  uint64_t thread_ = 0;
  size_t current_ = kNone;  // index of thread_'s list
};

// The range table of one process's accumulators (`names` by group): by total time, the first
// `top` as rows, the others summed into `tail`.
void RangeRows(ProcessRanges* accs, const std::vector<std::string_view>& names, size_t top,
               std::vector<model::RangeRow>* out, model::RangeRow* tail, uint64_t* tail_names) {
  // Ranked by total time first: order statistics (two selections over every duration) only for
  // the rows shown. The tail's were a tenth of the table's cost on an emit_nvtx export.
  struct Ranked {
    int64_t total_ns;
    std::string_view name;
    RangeAcc* acc;
  };
  std::vector<Ranked> ranked;
  ranked.reserve(accs->accs.size());
  for (RangeAcc& acc : accs->accs) {
    int64_t total = 0;
    for (int64_t d : acc.durations) total += d;
    ranked.push_back({total, names[acc.group], &acc});
  }
  auto before = [](const Ranked& a, const Ranked& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  };
  const size_t shown = std::min(top, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(shown),
                    ranked.end(), before);
  std::vector<model::RangeRow> rows;
  rows.reserve(shown);
  for (size_t i = 0; i < shown; ++i) {
    model::RangeRow row;
    row.name = std::string(ranked[i].name);
    row.duration = SummarizeDurations(&ranked[i].acc->durations);
    row.gpu = ranked[i].acc->gpu;
    row.gpu.category_ns = {};  // the table shows GPU time, not its split
    rows.push_back(std::move(row));
  }
  if (ranked.size() > shown) {
    // Host durations of the tail are summed as counts and totals; their order statistics would
    // need every instance again, and the tail is the part nobody reads instance by instance.
    for (size_t i = shown; i < ranked.size(); ++i) {
      tail->duration.count += ranked[i].acc->durations.size();
      tail->duration.total_ns += ranked[i].total_ns;
      tail->gpu.ops += ranked[i].acc->gpu.ops;
      tail->gpu.time_ns += ranked[i].acc->gpu.time_ns;
    }
    if (tail->duration.count > 0)
      tail->duration.mean_ns = tail->duration.total_ns / static_cast<int64_t>(tail->duration.count);
    *tail_names = ranked.size() - shown;
  }
  *out = std::move(rows);
}

}  // namespace

model::DurationSummary SummarizeDurations(std::vector<int64_t>* values) {
  model::DurationSummary s;
  if (values->empty()) return s;
  std::vector<int64_t>& v = *values;
  const size_t n = v.size();
  s.count = n;
  double sum = 0;
  for (int64_t x : v) {
    s.total_ns += x;
    sum += static_cast<double>(x);
  }
  s.mean_ns = s.total_ns / static_cast<int64_t>(n);
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  s.min_ns = *lo;
  s.max_ns = *hi;
  // Selection, not a sort: two order statistics in linear time.
  const size_t median = (n - 1) / 2;
  // Nearest rank: the ceil(0.99 n)-th smallest value (1-based).
  const size_t p99 = std::clamp<size_t>((n * 99 + 99) / 100, 1, n) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(median), v.end());
  s.median_ns = v[median];
  std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(median),
                   v.begin() + static_cast<std::ptrdiff_t>(p99), v.end());
  s.p99_ns = v[p99];
  if (n > 1) {
    const double mean = sum / static_cast<double>(n);
    double sq = 0;
    for (int64_t x : v) {
      const double d = static_cast<double>(x) - mean;
      sq += d * d;
    }
    s.stddev_ns = std::sqrt(sq / static_cast<double>(n - 1));
  }
  return s;
}

class ViewCollector::Impl {
 public:
  Impl(const ViewOptions& options, const model::NameTable* names,
       const model::KernelClassifier* classifier)
      : options_(options), names_(names), classify_(classifier, names) {
    const model::ViewSelection& s = options_.selection;
    keep_ops_ = s.streams || s.steps || s.ranges || s.ops;
    keep_host_ = s.steps || s.ranges || s.ops;
  }

  void Kernel(const model::KernelEvent& e) {
    if (options_.selection.kernels) AddKernelStat(e);
    if (keep_ops_)
      ops_.push_back({e.start_ns, e.end_ns, e.pid, e.device, e.stream, e.correlation_id, e.name,
                      OpKind::kKernel});
  }
  // The resources of the kernels of e.name from now on (the kernel statistics only).
  void KernelResources(const model::KernelResourcesEvent& e) {
    if (!options_.selection.kernels || e.name == model::kNoName) return;
    if (e.name >= resources_.size()) resources_.resize(static_cast<size_t>(e.name) + 1);
    resources_[e.name] = e.resources;
  }
  void Copy(const Op& op) {
    if (keep_ops_) ops_.push_back(op);
  }
  void Api(const model::ApiCallEvent& e) {
    if (!keep_host_ || e.correlation_id == 0) return;
    switch (e.kind) {
      case model::ApiKind::kKernelLaunch:
      case model::ApiKind::kGraphLaunch:
      case model::ApiKind::kMemcpy:
      case model::ApiKind::kMemset:
        launches_.push_back({LaunchKey(e.pid, e.correlation_id), e.start_ns, e.tid});
        break;
      default:
        break;
    }
  }
  void Nvtx(const model::NvtxEvent& e) {
    if (!options_.selection.steps && !options_.selection.ranges) return;
    // Without the range table only step ranges matter (Nsight exports hold ~10^4 op ranges).
    if (options_.selection.ranges || IsStep(e.name)) {
      const uint64_t thread = (uint64_t{e.pid} << 32) | e.tid;
      if (range_bucket_ == kNoBucket || thread != range_thread_) {
        range_thread_ = thread;
        range_bucket_ = 0;
        while (range_bucket_ < ranges_by_thread_.size() &&
               ranges_by_thread_[range_bucket_].first != thread)
          ++range_bucket_;
        if (range_bucket_ == ranges_by_thread_.size()) ranges_by_thread_.emplace_back(thread, 0);
      }
      ranges_by_thread_[range_bucket_].second.push_back(
          {e.start_ns, e.end_ns, e.pid, e.tid, e.name});
    } else {
      ++other_ranges_[e.pid];
    }
  }

  void ViewRange(const model::ViewRangeEvent& e) {
    const HostRange r{e.start_ns, e.end_ns, e.pid, e.tid, e.name};
    switch (e.kind) {
      case model::ViewRangeKind::kCpuOp:
        if (options_.selection.ops) cpu_ops_.Add(r);
        break;
      case model::ViewRangeKind::kModule:
        if (options_.selection.ops) modules_.Add(r);
        break;
      case model::ViewRangeKind::kGpuAnnotation:
        if (options_.selection.ranges)
          gpu_annotations_.push_back({e.start_ns, e.end_ns, e.pid, e.device, e.tid, e.name});
        break;
    }
  }

  model::TraceViews Finish();

 private:
  // A Kineto gpu_user_annotation: a range on one GPU stream.
  struct GpuRange {
    int64_t start_ns = 0, end_ns = 0;
    uint32_t pid = 0, device = 0, stream = 0;
    NameId name = model::kNoName;
  };
  // A GPU op joined to the host thread and time of its launching call.
  struct Point {
    uint64_t thread;  // pid << 32 | tid, as HostRange::thread()
    int64_t t;
    size_t op;
    uint32_t pid() const { return static_cast<uint32_t>(thread >> 32); }
  };

  void AddKernelStat(const model::KernelEvent& e) {
    if (e.name == model::kNoName) return;
    if (e.name >= by_name_.size()) by_name_.resize(static_cast<size_t>(e.name) + 1);
    const uint64_t where = (uint64_t{e.pid} << 32) | e.device;
    std::vector<std::pair<uint64_t, uint32_t>>& slots = by_name_[e.name];
    KernelAcc* acc = nullptr;
    for (const auto& [key, index] : slots)
      if (key == where) acc = &kernels_[index];
    if (acc == nullptr) {
      slots.emplace_back(where, static_cast<uint32_t>(kernels_.size()));
      kernels_.push_back({e.pid, e.device, e.name, {}, {}});
      acc = &kernels_.back();
    }
    const int64_t d = e.end_ns - e.start_ns;
    acc->durations.push_back(d);
    const model::KernelResources& r =
        e.name < resources_.size() ? resources_[e.name] : kNoResources;
    const ConfigKey config = {e.grid[0],
                              e.grid[1],
                              e.grid[2],
                              e.block[0],
                              e.block[1],
                              e.block[2],
                              r.registers_per_thread,
                              r.static_shared_bytes,
                              r.dynamic_shared_bytes,
                              r.shared_bytes};
    auto& [count, total] = acc->configs[config];
    ++count;
    total += d;
  }

  // The range-table group of a range name: PyTorch's emit_nvtx makes every op's name unique
  // ("aten::mm, seq = 12, op_id = 345, sizes = [...]"); the table groups by the op name before
  // those annotations, as torch.profiler's key_averages does.
  uint32_t RangeGroup(NameId name) {
    if (name >= range_group_.size()) range_group_.resize(static_cast<size_t>(name) + 1, -1);
    int64_t& group = range_group_[name];
    if (group < 0) {
      // The live range table (RangeTracker) groups the same way.
      const std::string_view text = RangeGroupText(names_->Get(name));
      // `text` points into the NameTable, whose strings never move: no copy per name.
      bool added = false;
      group = group_index_.Find(text, static_cast<uint32_t>(group_names_.size()), &added);
      if (added) group_names_.push_back(text);
    }
    return static_cast<uint32_t>(group);
  }

  // The ops view's module group of a `nn.Module: Linear_0` name: the class, "Linear" (the suffix
  // numbers the instances of a class).
  uint32_t ModuleGroup(NameId name) {
    if (name >= module_group_.size()) module_group_.resize(static_cast<size_t>(name) + 1, -1);
    int64_t& group = module_group_[name];
    if (group < 0) {
      std::string_view text = names_->Get(name);
      if (text.starts_with("nn.Module: ")) text.remove_prefix(11);
      const size_t underscore = text.rfind('_');
      if (underscore != std::string_view::npos && underscore + 1 < text.size() &&
          std::all_of(text.begin() + static_cast<std::ptrdiff_t>(underscore) + 1, text.end(),
                      [](char c) { return c >= '0' && c <= '9'; }))
        text = text.substr(0, underscore);
      auto [it, added] =
          module_index_.try_emplace(text, static_cast<uint32_t>(module_names_.size()));
      if (added) module_names_.push_back(text);
      group = it->second;
    }
    return static_cast<uint32_t>(group);
  }

  model::ProcessViews& ProcessOf(uint32_t pid) { return processes_[pid]; }
  model::DeviceViews& DeviceOf(uint32_t pid, uint32_t device) {
    model::ProcessViews& p = ProcessOf(pid);
    p.pid = pid;
    for (model::DeviceViews& d : p.devices)
      if (d.device == device) return d;
    p.devices.push_back({});
    p.devices.back().device = device;
    return p.devices.back();
  }
  model::Category CategoryOf(const Op& op) {
    if (op.kind != OpKind::kKernel || op.name == model::kNoName) return model::Category::kMemory;
    return classify_.Classify(op.name).category;
  }
  bool IsStep(NameId name) {
    if (name == model::kNoName) return false;
    if (name >= is_step_.size()) is_step_.resize(static_cast<size_t>(name) + 1, -1);
    int8_t& known = is_step_[name];
    if (known < 0) {
      const std::string_view text = names_->Get(name);
      known = 0;
      for (const std::string& prefix : options_.step_prefixes)
        if (!prefix.empty() && text.substr(0, prefix.size()) == prefix) known = 1;
    }
    return known == 1;
  }

  void FinishKernels();
  void FinishStreams();
  void FinishProjection();
  void FinishGpuAnnotations();
  // The ops view over one hierarchy (operators, or modules) and the launch points.
  void FinishOps(ThreadRanges* ranges, bool modules, const std::vector<Point>& points);

  ViewOptions options_;
  const model::NameTable* names_;
  model::CachedClassifier classify_;
  bool keep_ops_ = false, keep_host_ = false;

  std::vector<KernelAcc> kernels_;
  static constexpr model::KernelResources kNoResources{};
  std::vector<model::KernelResources> resources_;  // by NameId: the last delivered
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> by_name_;  // NameId -> (pid:device, acc)
  std::vector<Op> ops_;
  std::vector<Launch> launches_;
  std::vector<HostRange> ranges_;  // by thread, then start (FinishProjection)
  // Ranges by thread as they arrive: no scatter pass later (Nsight interleaves processes' rows).
  // (A few threads: a list searched on a change of thread, not a map on every range.)
  std::vector<std::pair<uint64_t, std::vector<HostRange>>> ranges_by_thread_;
  static constexpr size_t kNoBucket = ~size_t{0};
  uint64_t range_thread_ = 0;
  size_t range_bucket_ = kNoBucket;
  std::vector<int8_t> is_step_;       // by NameId: -1 unknown, 0 no, 1 yes
  std::vector<int64_t> range_group_;  // by NameId: -1 unknown, else an index into group_names_
  GroupIndex group_index_;
  std::vector<std::string_view> group_names_;
  std::map<uint32_t, uint64_t> other_ranges_;  // by pid: ranges not kept (steps only)
  ThreadRanges cpu_ops_, modules_;             // the ops view's host ranges
  std::vector<int64_t> module_group_;          // by NameId: -1 unknown, else module_names_
  std::unordered_map<std::string_view, uint32_t> module_index_;
  std::vector<std::string_view> module_names_;
  std::vector<GpuRange> gpu_annotations_;

  std::map<uint32_t, model::ProcessViews> processes_;
};

void ViewCollector::Impl::FinishKernels() {
  std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> by_device;
  for (size_t i = 0; i < kernels_.size(); ++i)
    by_device[{kernels_[i].pid, kernels_[i].device}].push_back(i);
  for (auto& [where, indices] : by_device) {
    std::vector<model::KernelStatRow> rows;
    rows.reserve(indices.size());
    for (size_t i : indices) {
      KernelAcc& acc = kernels_[i];
      model::KernelStatRow row;
      row.name = std::string(names_->Get(acc.name));
      row.category = classify_.Classify(acc.name).category;
      row.duration = SummarizeDurations(&acc.durations);
      row.distinct_configs = acc.configs.size();
      for (const auto& [config, stat] : acc.configs) {
        model::LaunchConfig c;
        std::copy(config.begin(), config.begin() + 3, c.grid.begin());
        std::copy(config.begin() + 3, config.begin() + 6, c.block.begin());
        c.registers_per_thread = config[6];
        c.static_shared_bytes = config[7];
        c.dynamic_shared_bytes = config[8];
        c.shared_bytes = config[9];
        c.count = stat.first;
        c.total_ns = stat.second;
        row.configs.push_back(c);
      }
      // The live windows' order (count, time, then the configuration itself): the map already
      // iterated in key order, so this is the order the stable sort by count and time gave.
      std::sort(row.configs.begin(), row.configs.end(), model::MoreFrequentConfig);
      if (row.configs.size() > model::kMaxLaunchConfigs)
        row.configs.resize(model::kMaxLaunchConfigs);
      rows.push_back(std::move(row));
    }
    // Order of the rows by total time, then name; `order[k]` indexes rows and indices alike.
    std::vector<size_t> order(rows.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&rows](size_t a, size_t b) {
      if (rows[a].duration.total_ns != rows[b].duration.total_ns)
        return rows[a].duration.total_ns > rows[b].duration.total_ns;
      return rows[a].name < rows[b].name;
    });
    model::DeviceViews& device = DeviceOf(where.first, where.second);
    const size_t top = std::min(static_cast<size_t>(std::max(options_.top, 1)), order.size());
    if (order.size() > top) {
      // The tail's order statistics are over every duration of every kernel left out.
      std::vector<int64_t> tail;
      for (size_t k = top; k < order.size(); ++k) {
        const std::vector<int64_t>& d = kernels_[indices[order[k]]].durations;
        tail.insert(tail.end(), d.begin(), d.end());
      }
      device.kernel_tail_names = order.size() - top;
      device.kernel_tail.duration = SummarizeDurations(&tail);
    }
    for (size_t k = 0; k < top; ++k) device.kernels.push_back(std::move(rows[order[k]]));
  }
}

void ViewCollector::Impl::FinishStreams() {
  // Per device: a sweep over op boundaries (ends before starts at one instant, so back-to-back
  // operations on two streams do not count as overlap).
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::tuple<int64_t, int, uint32_t>>> points;
  std::map<std::pair<uint32_t, uint32_t>, std::map<uint32_t, model::StreamRow>> rows;
  for (const Op& op : ops_) {
    auto& p = points[{op.pid, op.device}];
    p.emplace_back(op.start_ns, 1, op.stream);
    p.emplace_back(op.end_ns, -1, op.stream);
    model::StreamRow& row = rows[{op.pid, op.device}][op.stream];
    const bool first = row.kernels + row.memcpys + row.memsets == 0;
    row.stream = op.stream;
    if (first || op.start_ns < row.first_start_ns) row.first_start_ns = op.start_ns;
    if (first || op.end_ns > row.last_end_ns) row.last_end_ns = op.end_ns;
    (op.kind == OpKind::kKernel   ? row.kernels
     : op.kind == OpKind::kMemcpy ? row.memcpys
                                  : row.memsets) += 1;
  }
  for (auto& [where, p] : points) {
    std::sort(p.begin(), p.end());
    std::map<uint32_t, model::StreamRow>& streams = rows[where];
    std::vector<model::StreamRow*> by_index;
    std::unordered_map<uint32_t, size_t> index;
    for (auto& [id, row] : streams) {
      index[id] = by_index.size();
      by_index.push_back(&row);
    }
    std::vector<int> active(by_index.size(), 0);
    int active_streams = 0;
    int64_t prev = 0, multi = 0;
    for (const auto& [t, delta, stream] : p) {
      if (active_streams > 0) {
        const int64_t dt = t - prev;
        for (size_t i = 0; i < active.size(); ++i) {
          if (active[i] == 0) continue;
          by_index[i]->busy_ns += dt;
          if (active_streams > 1) by_index[i]->overlap_ns += dt;
        }
        if (active_streams > 1) multi += dt;
      }
      prev = t;
      int& a = active[index[stream]];
      if (delta > 0 && a++ == 0) ++active_streams;
      if (delta < 0 && --a == 0) --active_streams;
    }
    model::DeviceViews& device = DeviceOf(where.first, where.second);
    device.multi_stream_ns = multi;
    for (model::StreamRow* row : by_index) {
      row->idle_ns = row->last_end_ns - row->first_start_ns - row->busy_ns;
      device.streams.push_back(*row);
    }
  }
}

void ViewCollector::Impl::FinishProjection() {
  {
    std::sort(ranges_by_thread_.begin(), ranges_by_thread_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t total = 0;
    for (const auto& [thread, list] : ranges_by_thread_) total += list.size();
    ranges_.reserve(total);
    auto by_start = [](const HostRange& a, const HostRange& b) { return a.start_ns < b.start_ns; };
    for (auto& [thread, list] : ranges_by_thread_) {
      if (!std::is_sorted(list.begin(), list.end(), by_start))
        std::sort(list.begin(), list.end(), by_start);
      ranges_.insert(ranges_.end(), list.begin(), list.end());
      std::vector<HostRange>().swap(list);
    }
  }
  const bool want_steps = options_.selection.steps, want_ranges = options_.selection.ranges;

  // Steps per process, by start; GPU intervals per step for its busy time.
  std::map<uint32_t, std::vector<model::StepRow>> steps;
  std::map<uint32_t, ProcessRanges> range_accs;
  for (const auto& [pid, count] : other_ranges_) {
    ProcessOf(pid).pid = pid;
    ProcessOf(pid).nvtx_ranges += count;
  }
  uint32_t last_pid = 0;
  ProcessRanges* accs_of_pid = nullptr;
  model::ProcessViews* process_of_pid = nullptr;
  for (HostRange& r : ranges_) {
    if (process_of_pid == nullptr || r.pid != last_pid) {
      process_of_pid = &ProcessOf(r.pid);
      process_of_pid->pid = r.pid;
      accs_of_pid = want_ranges ? &range_accs[r.pid] : nullptr;
      last_pid = r.pid;
    }
    ++process_of_pid->nvtx_ranges;
    if (want_ranges) {
      r.group = RangeGroup(r.name);
      accs_of_pid->Of(r.group).durations.push_back(r.end_ns - r.start_ns);
    }
    if (want_steps && IsStep(r.name)) {
      model::StepRow step;
      step.name = std::string(names_->Get(r.name));
      step.tid = r.tid;
      step.start_ns = r.start_ns;
      step.end_ns = r.end_ns;
      steps[r.pid].push_back(std::move(step));
    }
  }
  for (auto& [pid, list] : steps)
    std::stable_sort(
        list.begin(), list.end(),
        [](const model::StepRow& a, const model::StepRow& b) { return a.start_ns < b.start_ns; });
  std::map<uint32_t, std::vector<std::vector<std::pair<int64_t, int64_t>>>> step_intervals;
  std::map<uint32_t, std::vector<uint8_t>> step_attention;  // 1: prefill, 2: decode kernels
  for (auto& [pid, list] : steps) {
    step_intervals[pid].resize(list.size());
    step_attention[pid].resize(list.size());
  }

  // Each op to its launching call: (pid, tid, launch time, op index), sorted for the sweeps.
  const bool want_points = want_ranges || options_.selection.ops;
  std::vector<Point> points;
  const LaunchIndex launch_of(&launches_);
  constexpr uint32_t kUnlaunched = ~uint32_t{0};
  std::vector<uint32_t> launch_of_op(want_points ? ops_.size() : 0, kUnlaunched);
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    const Launch* launch =
        op.correlation_id == 0 ? nullptr : launch_of.Find(op.pid, op.correlation_id);
    if (launch == nullptr) {
      ProcessOf(op.pid).pid = op.pid;
      ++ProcessOf(op.pid).unprojected_ops;
      continue;
    }
    if (want_points) launch_of_op[i] = static_cast<uint32_t>(launch - launches_.data());
    if (!want_steps) continue;
    auto s = steps.find(op.pid);
    if (s == steps.end()) continue;
    std::vector<model::StepRow>& list = s->second;
    // The last step starting at or before the launch; it holds the launch if it has not ended.
    auto after =
        std::upper_bound(list.begin(), list.end(), launch->start_ns,
                         [](int64_t t, const model::StepRow& step) { return t < step.start_ns; });
    if (after == list.begin()) continue;
    const size_t k = static_cast<size_t>(after - list.begin()) - 1;
    if (launch->start_ns >= list[k].end_ns) continue;
    AddToProjection(op, CategoryOf(op), &list[k].gpu);
    step_intervals[op.pid][k].emplace_back(op.start_ns, op.end_ns);
    if (op.kind == OpKind::kKernel && op.name != model::kNoName) {
      const std::string_view sub = classify_.Classify(op.name).subcategory;
      if (sub == "attention.prefill") step_attention[op.pid][k] |= 1;
      if (sub == "attention.decode") step_attention[op.pid][k] |= 2;
    }
  }

  if (want_points) {
    // The points in the order of their launches (a counting sort by launch; a launch's ops by
    // index): the launches of a thread arrive in time order, so the sort below finds each thread
    // in order. In GPU order, a thread's points were out of order wherever streams overlap, and
    // their comparison sort was a quarter of the ops view's own work. The order below is total
    // (thread, time, op), so how the points arrive changes nothing but its cost.
    std::vector<uint32_t> first(launches_.size() + 1, 0);
    for (uint32_t l : launch_of_op)
      if (l != kUnlaunched) ++first[l + 1];
    for (size_t l = 0; l < launches_.size(); ++l) first[l + 1] += first[l];
    std::vector<uint32_t> by_launch(first.back());
    for (size_t i = 0; i < launch_of_op.size(); ++i)
      if (launch_of_op[i] != kUnlaunched)
        by_launch[first[launch_of_op[i]]++] = static_cast<uint32_t>(i);
    points.reserve(by_launch.size());
    for (uint32_t i : by_launch) {
      const Launch& launch = launches_[launch_of_op[i]];
      points.push_back({(uint64_t{ops_[i].pid} << 32) | launch.tid, launch.start_ns, i});
    }
  }
  // One stream's GPU ops run in launch order: per thread, points usually arrive in order.
  BucketSort(
      &points, [](const Point& p) { return p.thread; },
      [](const Point& a, const Point& b) { return a.t != b.t ? a.t < b.t : a.op < b.op; });
  if (options_.selection.ops) {
    FinishOps(&cpu_ops_, /*modules=*/false, points);
    FinishOps(&modules_, /*modules=*/true, points);
  }
  if (want_ranges) {
    // Per thread: walk its launches in time order beside its ranges in start order, keeping the
    // ranges open at the launch (nested or not).
    size_t r = 0;
    std::vector<const HostRange*> open;
    uint64_t thread = 0;
    bool have_thread = false;
    ProcessRanges* accs = nullptr;  // the thread's process's, once it has a range open
    for (const Point& p : points) {
      if (!have_thread || p.thread != thread) {
        open.clear();
        if ((p.thread >> 32) != (thread >> 32)) accs = nullptr;
        thread = p.thread;
        have_thread = true;
        while (r < ranges_.size() && ranges_[r].thread() < thread) ++r;
      }
      while (r < ranges_.size() && ranges_[r].thread() == thread && ranges_[r].start_ns <= p.t)
        open.push_back(&ranges_[r++]);
      open.erase(std::remove_if(open.begin(), open.end(),
                                [&](const HostRange* h) { return h->end_ns <= p.t; }),
                 open.end());
      if (open.empty()) continue;
      const Op& op = ops_[p.op];
      if (accs == nullptr) accs = &range_accs[p.pid()];
      for (const HostRange* h : open) {
        RangeAcc& acc = accs->Of(h->group);
        if (acc.last_op == p.op) continue;
        acc.last_op = p.op;
        // No category: the range table shows GPU time, not its split (no classification here).
        AddToProjection(op, model::Category::kOther, &acc.gpu);
      }
    }
  }

  for (auto& [pid, list] : steps) {
    model::ProcessViews& process = ProcessOf(pid);
    std::vector<int64_t> durations, gpu;
    std::map<std::string, std::vector<int64_t>> phase_durations;
    std::map<std::string, model::PhaseRow> phases;
    for (size_t k = 0; k < list.size(); ++k) {
      model::StepRow& step = list[k];
      step.gpu.busy_ns = UnionNs(&step_intervals[pid][k]);
      durations.push_back(step.end_ns - step.start_ns);
      if (step.gpu.ops > 0) gpu.push_back(step.gpu.last_end_ns - step.gpu.first_start_ns);
      const model::Phase step_phase = model::PhaseOfStep(step.name, step_attention[pid][k]);
      step.phase = step_phase == model::Phase::kUnknown
                       ? ""
                       : model::kPhaseNames[static_cast<size_t>(step_phase)];
      const std::string key = step.phase.empty() ? "unknown" : step.phase;
      model::PhaseRow& phase = phases[key];
      phase.phase = key;
      phase.gpu_time_ns += step.gpu.time_ns;
      phase.gpu_busy_ns += step.gpu.busy_ns;
      for (size_t c = 0; c < model::kCategoryCount; ++c)
        phase.category_ns[c] += step.gpu.category_ns[c];
      phase_durations[key].push_back(step.end_ns - step.start_ns);
    }
    for (const char* key : {"prefill", "decode", "mixed", "unknown"}) {
      auto it = phases.find(key);
      if (it == phases.end()) continue;
      it->second.duration = SummarizeDurations(&phase_durations[key]);
      process.phases.push_back(std::move(it->second));
    }
    process.steps_total = list.size();
    process.step_duration = SummarizeDurations(&durations);
    process.step_gpu_time = SummarizeDurations(&gpu);
    if (list.size() > model::kMaxSteps) list.resize(model::kMaxSteps);
    process.steps = std::move(list);
  }

  for (auto& [pid, accs] : range_accs) {
    model::ProcessViews& process = ProcessOf(pid);
    RangeRows(&accs, group_names_, static_cast<size_t>(std::max(options_.top, 1)), &process.ranges,
              &process.range_tail, &process.range_tail_names);
  }
}

void ViewCollector::Impl::FinishOps(ThreadRanges* ranges, bool modules,
                                    const std::vector<Point>& points) {
  if (modules && ranges->empty()) return;  // no module names: nothing to attribute
  std::vector<std::pair<uint64_t, std::vector<HostRange>>>& threads = ranges->Sorted();
  std::map<uint32_t, ProcessOps> by_pid;
  // Host side, per thread in start order: a stack of the open instances gives each its parent.
  // Each instance's `group` becomes its accumulator's index in its process's `accs` (the GPU side
  // then needs no lookup by group; the accumulators only grow).
  struct Open {
    int64_t end_ns;
    uint32_t acc;
  };
  std::vector<Open> stack;
  ProcessOps* accs = nullptr;
  for (auto& [thread, list] : threads) {
    stack.clear();
    accs = &by_pid[static_cast<uint32_t>(thread >> 32)];
    for (HostRange& r : list) {
      const uint32_t group = modules ? ModuleGroup(r.name) : r.name;
      while (!stack.empty() && stack.back().end_ns <= r.start_ns) stack.pop_back();
      const int64_t d = r.end_ns - r.start_ns;
      if (!stack.empty()) {
        // A child that outlives its parent (clock rounding) takes only the parent's part.
        const Open& parent = stack.back();
        accs->accs[parent.acc].row.cpu_self_ns -= std::min(r.end_ns, parent.end_ns) - r.start_ns;
      }
      OpAcc& acc = accs->Of(group);
      r.group = static_cast<uint32_t>(&acc - accs->accs.data());
      ++acc.row.count;
      if (stack.empty()) ++acc.row.top_level;
      acc.row.cpu_total_ns += d;
      acc.row.cpu_self_ns += d;
      stack.push_back({r.end_ns, r.group});
    }
  }

  // GPU side: each thread's launches in time order beside its instances in start order; the
  // instances open at a launch, by start, end with the innermost.
  std::vector<const HostRange*> open;
  size_t thread_index = 0, next = 0;
  const std::vector<HostRange>* list = nullptr;  // the point's thread's instances, if any
  uint64_t thread = ~uint64_t{0};
  uint32_t pid = 0;
  accs = nullptr;
  model::OpsView* view = nullptr;
  for (const Point& p : points) {
    const uint64_t t = p.thread;
    if (view == nullptr || t != thread) {
      open.clear();
      thread = t;
      while (thread_index < threads.size() && threads[thread_index].first < t) ++thread_index;
      list = thread_index < threads.size() && threads[thread_index].first == t
                 ? &threads[thread_index].second
                 : nullptr;
      next = 0;
      if (view == nullptr || p.pid() != pid) {
        pid = p.pid();
        ProcessOf(pid).pid = pid;
        view = &ProcessOf(pid).ops;
        accs = &by_pid[pid];
      }
    }
    if (list != nullptr)
      while (next < list->size() && (*list)[next].start_ns <= p.t) open.push_back(&(*list)[next++]);
    open.erase(std::remove_if(open.begin(), open.end(),
                              [&](const HostRange* h) { return h->end_ns <= p.t; }),
               open.end());
    const Op& op = ops_[p.op];
    const int64_t d = op.end_ns - op.start_ns;
    if (open.empty()) {
      if (!modules) {
        ++view->outside_gpu_ops;
        view->outside_gpu_ns += d;
      }
      continue;
    }
    // Every accumulator was made in the host pass: no reallocation, the references stay valid.
    OpAcc& inner = accs->accs[open.back()->group];
    ++inner.row.gpu_ops;
    if (op.kind == OpKind::kKernel) ++inner.row.kernels;
    inner.row.gpu_self_ns += d;
    for (const HostRange* h : open) {
      OpAcc& acc = accs->accs[h->group];
      if (acc.last_op == p.op) continue;
      acc.last_op = p.op;
      acc.row.gpu_total_ns += d;
    }
  }

  for (auto& [owner, process_accs] : by_pid) {
    std::vector<model::OpRow> rows;
    rows.reserve(process_accs.accs.size());
    uint64_t instances = 0;
    for (OpAcc& acc : process_accs.accs) {
      acc.row.name = std::string(modules ? module_names_[acc.group] : names_->Get(acc.group));
      instances += acc.row.count;
      rows.push_back(std::move(acc.row));
    }
    // Operators by the GPU time they launched themselves (it sums to the total), modules by all
    // they launched (a module's own launches are few: its ops launch).
    std::sort(rows.begin(), rows.end(), [modules](const model::OpRow& a, const model::OpRow& b) {
      const int64_t ga = modules ? a.gpu_total_ns : a.gpu_self_ns;
      const int64_t gb = modules ? b.gpu_total_ns : b.gpu_self_ns;
      if (ga != gb) return ga > gb;
      if (a.cpu_total_ns != b.cpu_total_ns) return a.cpu_total_ns > b.cpu_total_ns;
      return a.name < b.name;
    });
    model::ProcessViews& process = ProcessOf(owner);
    process.pid = owner;
    model::OpsView& v = process.ops;
    const size_t top = static_cast<size_t>(std::max(options_.top, 1));
    model::OpRow& tail = modules ? v.module_tail : v.op_tail;
    if (rows.size() > top) {
      for (size_t i = top; i < rows.size(); ++i) {
        const model::OpRow& r = rows[i];
        tail.count += r.count;
        tail.top_level += r.top_level;
        tail.cpu_total_ns += r.cpu_total_ns;
        tail.cpu_self_ns += r.cpu_self_ns;
        tail.gpu_ops += r.gpu_ops;
        tail.kernels += r.kernels;
        tail.gpu_self_ns += r.gpu_self_ns;
        tail.gpu_total_ns += r.gpu_total_ns;
      }
      (modules ? v.module_tail_names : v.op_tail_names) = rows.size() - top;
      rows.resize(top);
    }
    (modules ? v.module_instances : v.op_instances) = instances;
    (modules ? v.modules : v.ops) = std::move(rows);
  }
}

void ViewCollector::Impl::FinishGpuAnnotations() {
  if (gpu_annotations_.empty()) return;  // Nsight exports, most Kineto traces
  // Per (pid, device, stream): the annotations by start beside the stream's GPU ops by start.
  auto key = [](uint32_t pid, uint32_t device, uint32_t stream) {
    return std::make_tuple(pid, device, stream);
  };
  std::sort(gpu_annotations_.begin(), gpu_annotations_.end(),
            [&](const GpuRange& a, const GpuRange& b) {
              return std::tie(a.pid, a.device, a.stream, a.start_ns) <
                     std::tie(b.pid, b.device, b.stream, b.start_ns);
            });
  std::map<uint32_t, ProcessRanges> by_pid;
  for (const GpuRange& g : gpu_annotations_) {
    ProcessOf(g.pid).pid = g.pid;
    ++ProcessOf(g.pid).gpu_annotations;
    by_pid[g.pid].Of(RangeGroup(g.name)).durations.push_back(g.end_ns - g.start_ns);
  }
  struct OpStart {
    std::tuple<uint32_t, uint32_t, uint32_t> key;
    int64_t t;
    size_t op;
  };
  std::vector<OpStart> starts;
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    const auto k = key(op.pid, op.device, op.stream);
    const auto at = std::lower_bound(
        gpu_annotations_.begin(), gpu_annotations_.end(), k,
        [&](const GpuRange& g, const auto& want) { return key(g.pid, g.device, g.stream) < want; });
    if (at != gpu_annotations_.end() && key(at->pid, at->device, at->stream) == k)
      starts.push_back({k, op.start_ns, i});
  }
  std::sort(starts.begin(), starts.end(), [](const OpStart& a, const OpStart& b) {
    return std::tie(a.key, a.t, a.op) < std::tie(b.key, b.t, b.op);
  });
  std::vector<const GpuRange*> open;
  size_t next = 0;
  bool have = false;
  std::tuple<uint32_t, uint32_t, uint32_t> current;
  for (const OpStart& s : starts) {
    if (!have || s.key != current) {
      open.clear();
      current = s.key;
      have = true;
      while (next < gpu_annotations_.size() &&
             key(gpu_annotations_[next].pid, gpu_annotations_[next].device,
                 gpu_annotations_[next].stream) < s.key)
        ++next;
    }
    while (next < gpu_annotations_.size() &&
           key(gpu_annotations_[next].pid, gpu_annotations_[next].device,
               gpu_annotations_[next].stream) == s.key &&
           gpu_annotations_[next].start_ns <= s.t)
      open.push_back(&gpu_annotations_[next++]);
    open.erase(std::remove_if(open.begin(), open.end(),
                              [&](const GpuRange* g) { return g->end_ns <= s.t; }),
               open.end());
    const Op& op = ops_[s.op];
    ProcessRanges& accs = by_pid[op.pid];
    for (const GpuRange* g : open) {
      RangeAcc& acc = accs.Of(RangeGroup(g->name));
      if (acc.last_op == s.op) continue;
      acc.last_op = s.op;
      AddToProjection(op, model::Category::kOther, &acc.gpu);
    }
  }
  for (auto& [pid, accs] : by_pid) {
    model::ProcessViews& process = ProcessOf(pid);
    RangeRows(&accs, group_names_, static_cast<size_t>(std::max(options_.top, 1)),
              &process.gpu_ranges, &process.gpu_range_tail, &process.gpu_range_tail_names);
  }
}

model::TraceViews ViewCollector::Impl::Finish() {
  model::TraceViews views;
  views.selection = options_.selection;
  if (options_.selection.kernels) FinishKernels();
  if (options_.selection.streams) FinishStreams();
  if (keep_host_) FinishProjection();
  if (options_.selection.ranges) FinishGpuAnnotations();
  for (auto& [pid, process] : processes_) {
    process.pid = pid;
    std::sort(process.devices.begin(), process.devices.end(),
              [](const model::DeviceViews& a, const model::DeviceViews& b) {
                return a.device < b.device;
              });
    for (model::DeviceViews& d : process.devices)
      std::sort(
          d.streams.begin(), d.streams.end(),
          [](const model::StreamRow& a, const model::StreamRow& b) { return a.stream < b.stream; });
    views.processes.push_back(std::move(process));
  }
  processes_.clear();
  return views;
}

ViewCollector::ViewCollector(const ViewOptions& options, const model::NameTable* names,
                             const model::KernelClassifier* classifier, model::EventSink* next)
    : impl_(std::make_unique<Impl>(options, names, classifier)), next_(next) {}
ViewCollector::~ViewCollector() = default;

void ViewCollector::OnProcess(const model::ProcessInfo& e) {
  if (next_) next_->OnProcess(e);
}
void ViewCollector::OnDevice(const model::DeviceInfo& e) {
  if (next_) next_->OnDevice(e);
}
void ViewCollector::OnKernel(const model::KernelEvent& e) {
  impl_->Kernel(e);
  if (next_) next_->OnKernel(e);
}
void ViewCollector::OnMemcpy(const model::MemcpyEvent& e) {
  impl_->Copy({e.start_ns, e.end_ns, e.pid, e.device, e.stream, e.correlation_id, model::kNoName,
               OpKind::kMemcpy});
  if (next_) next_->OnMemcpy(e);
}
void ViewCollector::OnMemset(const model::MemsetEvent& e) {
  impl_->Copy({e.start_ns, e.end_ns, e.pid, e.device, e.stream, e.correlation_id, model::kNoName,
               OpKind::kMemset});
  if (next_) next_->OnMemset(e);
}
void ViewCollector::OnSync(const model::SyncEvent& e) {
  if (next_) next_->OnSync(e);
}
void ViewCollector::OnApiCall(const model::ApiCallEvent& e) {
  impl_->Api(e);
  if (next_) next_->OnApiCall(e);
}
void ViewCollector::OnNvtx(const model::NvtxEvent& e) {
  impl_->Nvtx(e);
  if (next_) next_->OnNvtx(e);
}
void ViewCollector::OnViewRange(const model::ViewRangeEvent& e) {
  impl_->ViewRange(e);  // for the views only: the windows never see them
}
void ViewCollector::OnViewRanges(const model::ViewRangeEvent* events, size_t count) {
  for (size_t i = 0; i < count; ++i) impl_->ViewRange(events[i]);  // one call per run
}
void ViewCollector::OnKernelResources(const model::KernelResourcesEvent& e) {
  impl_->KernelResources(e);  // for the kernel statistics only
}
void ViewCollector::OnDataQuality(uint32_t pid, model::DataQuality counter, uint64_t count) {
  if (next_) next_->OnDataQuality(pid, counter, count);
}

model::TraceViews ViewCollector::Finish() { return impl_->Finish(); }

}  // namespace inferscope::aggregate
