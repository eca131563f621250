// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/aggregate/aggregator.h"

#include <algorithm>
#include <array>
#include <climits>
#include <deque>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <type_traits>
#include <variant>

#include "src/aggregate/chunked_queue.h"
#include "src/aggregate/device_state.h"
#include "src/aggregate/profile_builder.h"
#include "src/aggregate/radix_sort.h"
#include "src/aggregate/range_tracker.h"

namespace inferscope::aggregate {

namespace {

using model::ApiKind;
using model::Category;
using model::DataQuality;
using model::SyncType;

constexpr int64_t kDefaultWindowedLatenessNs = 2'000'000'000;
constexpr size_t kDrainBatch = 8192;
constexpr int kMaxWindowsPerAdvance = 64;
// API calls that GPU work or sync records refer to (launches, copies, syncs, queries) are
// remembered in a direct-mapped table keyed by correlation id: O(1), no allocation, and old entries
// are overwritten instead of accumulating when the matching record never shows up.
constexpr size_t kLaunchTableSize = 1 << 16;

// The order of alternatives is the tie-break at equal start times: a range opens before a launch
// call at its first instant (start <= launch, as the offline views count it), a launch call is
// processed before the kernel it launched, and a sync before GPU work that starts at the same
// instant.
using AnyEvent = std::variant<model::NvtxEvent, model::ApiCallEvent, model::SyncEvent,
                              model::MemcpyEvent, model::MemsetEvent, model::KernelEvent>;

template <typename T, typename V>
struct VariantIndex;
template <typename T, typename... Ts>
struct VariantIndex<T, std::variant<Ts...>> {
  static constexpr uint32_t value = [] {
    uint32_t i = 0;
    ((std::is_same_v<T, Ts> ? false : (++i, true)) && ...);
    return i;
  }();
};
template <typename T>
constexpr uint32_t kEventOrder = VariantIndex<T, AnyEvent>::value;
static_assert(kEventOrder<model::NvtxEvent> == 0 && kEventOrder<model::ApiCallEvent> == 1 &&
              kEventOrder<model::KernelEvent> == 5);

struct Pending {
  int64_t start_ns = 0;
  AnyEvent event;
};

// With launch configurations on, a kernel waits in the queue with its resources (the
// Impl::InternResources id current for its name when it ARRIVED: a KernelResourcesEvent describes
// the kernels delivered after it, not those processed after it). The id travels in graph_id, of
// which the Aggregator needs only "launched by a graph" (the top bit): a field in Pending would
// make every queued event 8 bytes larger (80 -> 88), ~10% of the Aggregator's time.
constexpr uint32_t kFromGraphBit = 0x80000000u;

struct SortKey {
  int64_t start_ns;
  uint32_t type;
  uint32_t index;
  bool operator<(const SortKey& o) const {
    return start_ns != o.start_ns ? start_ns < o.start_ns : type < o.type;
  }
};

struct LaunchSlot {
  uint32_t correlation_id = 0;
  bool valid = false;
  bool counted = false;  // cpu_launch already counted (graph launches match many kernels)
  ApiKind kind = ApiKind::kOther;
  SyncType sync_type = SyncType::kUnknown;
  uint32_t tid = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t range_context = 0;  // the NVTX ranges open at the call (RangeTracker::ContextAt)
  uint32_t step = 0;           // the step range the call started in (RangeStep::seq); 0 none
};

// A step range of a process (AggregatorOptions::step_ranges) whose work is still arriving: its
// operations accumulate here until it is settled into the window of its home device (the device
// of its first operation).
struct RangeStep {
  uint32_t seq = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  model::NameId name = model::kNoName;
  bool has_device = false;
  uint32_t device = 0;
  uint8_t attention = 0;  // KernelAccum::attention_kind bits of its kernels
  uint64_t ops = 0;
  std::array<int64_t, model::kCategoryCount> category_ns{};
  IntervalUnion busy;  // its operations arrive in start order
};

using model::IdleCause;
// Running totals of a thread's time per host cause (the first kHostIdleCauses of IdleCause).
using CauseTimes = std::array<int64_t, model::kHostIdleCauses>;
static_assert(static_cast<size_t>(IdleCause::kAllocation) < model::kHostIdleCauses &&
              static_cast<size_t>(IdleCause::kSync) < model::kHostIdleCauses &&
              static_cast<size_t>(IdleCause::kLaunch) < model::kHostIdleCauses &&
              static_cast<size_t>(IdleCause::kHostIdle) < model::kHostIdleCauses);

// Where a host thread's time went, as running totals per cause: the thread's timeline up to
// `cursor_ns` is cut into its CUDA calls (by kind) and the pauses between them (by length and the
// call before). The time a device idle interval [g0, g1) gets from the thread is the difference of
// the totals at g1 and g0, so a snapshot at g0 (taken by the thread's first call inside the
// interval) is all that is kept per interval: O(1) per call, nothing per event stored.
struct GapSnapshot {
  uint32_t device = 0;
  int64_t gap_start_ns = -1;
  CauseTimes cum{};
};

struct HostThread {
  uint32_t tid = 0;
  bool active = false;  // a call was seen: cursor_ns and the last call are meaningful
  int64_t cursor_ns = 0;
  IdleCause last_call_cause = IdleCause::kHostIdle;
  bool last_was_sync = false;
  CauseTimes cum{};
  std::vector<GapSnapshot> snapshots;  // one per device of the process (few)
};

// Step ranges of a process waiting to be settled (AggregatorOptions::step_settle_ns), at most.
constexpr size_t kMaxPendingSteps = 4096;

// Threads followed per process; a process with more CUDA-calling threads recycles the one that
// has been quiet longest (its snapshots are then lost and its intervals stay unattributed).
constexpr size_t kMaxHostThreads = 64;

// A host sync being watched: GPU work that ends inside it is a candidate for "waited on".
struct OpenSync {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t device;
  uint32_t stream;
  SyncType type;
  bool from_record;  // SyncEvent (true) or blocking API call (false)
  OpRef best;
  int64_t best_end_ns;
  uint32_t best_device;
};

struct ProcessState {
  model::ProcessInfo info;
  bool has_sync_records = false;
  bool has_launch_calls = false;
  std::map<uint32_t, DeviceState> devices;
  std::map<uint32_t, std::string> device_names;
  std::map<uint32_t, std::string> device_uuids;
  std::vector<LaunchSlot> launches = std::vector<LaunchSlot>(kLaunchTableSize);
  std::vector<OpenSync> open_syncs;
  std::vector<HostThread> threads;
  size_t last_thread = 0;
  // Host-side statistics whose device is not known (allocations, syncs that waited on nothing);
  // folded into the process's first device when the window closes.
  model::AllocationStats unattributed_allocations;
  std::array<SyncAccum, kSyncTypes> unattributed_records{};
  std::array<SyncAccum, kSyncTypes> unattributed_calls{};
  std::array<uint64_t, static_cast<size_t>(DataQuality::kCount)> data_quality{};
  std::unique_ptr<RangeTracker> ranges;  // AggregatorOptions::ranges, once a range arrived
  // Step ranges (AggregatorOptions::step_ranges), once one arrived: the latest started (launch
  // calls look it up) and those not settled yet, in seq order (the steps of the last
  // step_settle_ns and the one running).
  bool steps_by_range = false;
  uint32_t next_step_seq = 1;
  uint32_t last_step_seq = 0;
  int64_t last_step_end_ns = 0;
  std::vector<RangeStep> pending_steps;
};

}  // namespace

class Aggregator::Impl {
 public:
  Impl(const AggregatorOptions& options, const model::NameTable* names,
       const model::KernelClassifier* classifier, WindowCallback on_window)
      : options_(options),
        names_(names),
        classifier_(classifier, names),
        on_window_(std::move(on_window)) {
    if (options_.lateness_ns < 0)
      options_.lateness_ns = options_.window_ns > 0 ? kDefaultWindowedLatenessNs : -1;
    if (options_.bin_ns <= 0) options_.bin_ns = 100'000'000;
  }

  ProcessState& Process(uint32_t pid) {
    if (last_process_ && last_pid_ == pid) return *last_process_;
    auto [it, inserted] = processes_.try_emplace(pid);
    if (inserted) it->second.info.pid = pid;
    last_pid_ = pid;
    last_process_ = &it->second;
    return it->second;
  }

  void OnProcess(const model::ProcessInfo& info) {
    ProcessState& p = Process(info.pid);
    p.info = info;
  }

  void OnDevice(const model::DeviceInfo& info) {
    if (info.name != model::kNoName)
      Process(info.pid).device_names[info.device] = std::string(names_->Get(info.name));
    if (info.uuid != model::kNoName)
      Process(info.pid).device_uuids[info.device] = std::string(names_->Get(info.uuid));
  }

  // ---- Launch configurations (AggregatorOptions::launch_configs) ----

  // The resources a source announced for a kernel name apply to its kernels delivered from now on.
  void OnKernelResources(const model::KernelResourcesEvent& e) {
    if (!options_.launch_configs || e.name == model::kNoName) return;
    if (e.name >= resources_of_name_.size())
      resources_of_name_.resize(static_cast<size_t>(e.name) + 1, 0);
    resources_of_name_[e.name] = InternResources(e.resources);
  }

  // A small id per distinct set of resources (0: not recorded). Sources announce them only on a
  // change (a few per kernel name), so a map lookup here costs nothing per kernel. Bounded: past
  // kMaxResourceSets distinct sets (a corrupt or adversarial stream), new ones read as not
  // recorded.
  uint32_t InternResources(const model::KernelResources& r) {
    if (r == model::KernelResources{}) return 0;
    const std::array<int32_t, 4> key = {r.registers_per_thread, r.static_shared_bytes,
                                        r.dynamic_shared_bytes, r.shared_bytes};
    auto it = resource_ids_.find(key);
    if (it != resource_ids_.end()) return it->second;
    if (resource_sets_.size() >= kMaxResourceSets) return 0;
    const auto id = static_cast<uint32_t>(resource_sets_.size());
    resource_sets_.push_back(r);
    resource_ids_.emplace(key, id);
    return id;
  }

  // The event as it waits in the queue: a kernel's graph_id becomes kFromGraphBit | its resources
  // id when launch configurations are on (see kFromGraphBit).
  // Patched in place, after the copy into the queue (no second copy of the event).
  void MarkQueued(model::KernelEvent* e) const {
    if (!options_.launch_configs) return;
    e->graph_id = (e->graph_id != 0 ? kFromGraphBit : 0) |
                  (e->name < resources_of_name_.size() ? resources_of_name_[e->name] : 0);
  }
  template <typename E>
  static void MarkQueued(E*) {}
  bool FromGraph(const model::KernelEvent& e) const {
    return options_.launch_configs ? (e.graph_id & kFromGraphBit) != 0 : e.graph_id != 0;
  }

  void CountQuality(uint32_t pid, DataQuality counter, uint64_t n = 1) {
    Process(pid).data_quality[static_cast<size_t>(counter)] += n;
  }

  // Rejects events with unusable timestamps (CUPTI produces zero timestamps when it runs short of
  // device memory; reversed ones appear in long runs). Instantaneous API calls are fine.
  bool Valid(uint32_t pid, int64_t start_ns, int64_t end_ns) {
    if (start_ns <= 0 || end_ns <= 0) {
      CountQuality(pid, DataQuality::kZeroTimestamp);
      return false;
    }
    if (end_ns < start_ns) {
      CountQuality(pid, DataQuality::kReversedTimestamp);
      return false;
    }
    return true;
  }

  // Events that change nothing but the window's end (NVTX ranges today, API calls of no interest)
  // are not buffered: in whole-trace mode the buffer holds every event until the end, and those
  // are most of a trace's host-side records.
  static bool NeedsProcessing(const model::ApiCallEvent& e) { return e.kind != ApiKind::kOther; }
  bool NeedsProcessing(const model::NvtxEvent& e) { return options_.ranges || IsStep(e.name); }
  template <typename E>
  static bool NeedsProcessing(const E&) {
    return true;
  }

  template <typename E>
  void Enqueue(const E& e) {
    if (!Valid(e.pid, e.start_ns, e.end_ns)) return;
    if (!NeedsProcessing(e)) {
      if (e.end_ns > unbuffered_end_ns_) unbuffered_end_ns_ = e.end_ns;
      return;
    }
    if constexpr (std::is_same_v<E, model::NvtxEvent>) {
      // Ranges arrive when they END, so each starts long before the events around it: in the
      // main queue every one would unsort it (a full sort per drain). They wait in their own
      // queue by start instead and are merged in as the main queue is processed
      // (MergeRangesUpTo). Inserted from the back: a range that ends next mostly started after
      // the ranges before it ended, or encloses a few of the last ones (nesting).
      if (!processed_any_ || e.start_ns >= processed_until_ns_) {
        auto at = ranges_pending_.end();
        while (at != ranges_pending_.begin() && std::prev(at)->start_ns > e.start_ns) --at;
        ranges_pending_.insert(at, e);
        return;
      }
    }
    if (processed_any_ && e.start_ns < processed_until_ns_) {
      if constexpr (std::is_same_v<E, model::NvtxEvent>) {
        // A range longer than the horizon: expected, not a data-quality problem. It counts in the
        // window open now, projected onto nothing processed before it arrived. A step range this
        // late is no step: the work launched inside it was processed without it (outside).
        if (options_.ranges) RangesOf(Process(e.pid)).OnRange(e, /*late=*/true);
        return;
      }
      // Arrived after its time was processed: fold it in now (approximately) and say so.
      CountQuality(e.pid, DataQuality::kLateRecord);
      AnyEvent late(e);
      MarkQueued(&std::get<E>(late));
      ProcessEvent(e.start_ns, late);
      return;
    }
    const SortKey key{e.start_ns, kEventOrder<E>, 0};
    if (!pending_.empty() && key < last_key_) sorted_ = false;
    last_key_ = key;
    Pending& slot = pending_.AppendSlot();  // filled in place: no temporary event copy
    slot.start_ns = e.start_ns;
    MarkQueued(&slot.event.template emplace<E>(e));
    if (e.start_ns > max_start_ns_) max_start_ns_ = e.start_ns;
    if (options_.lateness_ns >= 0 && ++since_drain_ >= kDrainBatch) {
      since_drain_ = 0;
      Drain(max_start_ns_ - options_.lateness_ns);
    }
  }

  // Processes, in time order, every pending event that starts at or before `watermark_ns`.
  // Already-ordered input (the common case) is consumed from the front without sorting.
  void Drain(int64_t watermark_ns) {
    if (pending_.empty()) return MergeRangesUpTo(watermark_ns);
    if (!sorted_) {
      // Sort 16-byte keys, not the events, and never copy the whole buffer: events up to the
      // watermark are processed straight from their slots; only the rest is moved.
      // Keys are (start - earliest start) * 8 + event order, so one unsigned sort orders by time,
      // then by event type, then (the sort is stable) by arrival.
      int64_t min_start = pending_[0].start_ns;
      int64_t max_start = min_start;
      for (size_t i = 1; i < pending_.size(); ++i) {
        min_start = std::min(min_start, pending_[i].start_ns);
        max_start = std::max(max_start, pending_[i].start_ns);
      }
      std::vector<KeyIndex> keys;
      keys.reserve(pending_.size());
      const bool fits = static_cast<uint64_t>(max_start - min_start) < (uint64_t{1} << 60);
      for (size_t i = 0; i < pending_.size(); ++i) {
        const auto offset = static_cast<uint64_t>(pending_[i].start_ns - min_start);
        keys.push_back(KeyIndex{fits ? (offset << 3) | pending_[i].event.index() : 0,
                                static_cast<uint32_t>(i)});
      }
      if (fits) {
        RadixSortByKey(&keys);
      } else {  // absurd spans (corrupt timestamps): compare the events themselves
        std::stable_sort(keys.begin(), keys.end(), [this](const KeyIndex& a, const KeyIndex& b) {
          const Pending& x = pending_[a.index];
          const Pending& y = pending_[b.index];
          return x.start_ns != y.start_ns ? x.start_ns < y.start_ns
                                          : x.event.index() < y.event.index();
        });
      }
      ChunkedQueue<Pending> rest;
      for (const KeyIndex& k : keys) {
        Pending& p = pending_[k.index];
        if (p.start_ns <= watermark_ns) {
          MergeRangesUpTo(p.start_ns);
          ProcessEvent(p.start_ns, p.event);
        } else {
          rest.push_back(std::move(p));
        }
      }
      pending_ = std::move(rest);
      sorted_ = true;
    } else {
      size_t n = 0;
      while (n < pending_.size() && pending_[n].start_ns <= watermark_ns) {
        MergeRangesUpTo(pending_[n].start_ns);
        ProcessEvent(pending_[n].start_ns, pending_[n].event);
        ++n;
      }
      pending_.pop_front(n);
    }
    MergeRangesUpTo(watermark_ns);
    if (!pending_.empty()) {
      const Pending& last = pending_.back();
      last_key_ = SortKey{last.start_ns, static_cast<uint32_t>(last.event.index()), 0};
    }
  }

  // Processes the pending ranges that start at or before `t_ns` (before an event starting at the
  // same instant: a range opens before a launch call at its first instant).
  void MergeRangesUpTo(int64_t t_ns) {
    while (!ranges_pending_.empty() && ranges_pending_.front().start_ns <= t_ns) {
      const model::NvtxEvent e = ranges_pending_.front();
      ranges_pending_.pop_front();
      ProcessEvent(e.start_ns, AnyEvent(e));
    }
  }

  void AdvanceTo(int64_t now_ns) {
    if (options_.window_ns <= 0) return;
    const int64_t watermark = now_ns - std::max<int64_t>(options_.lateness_ns, 0);
    Drain(watermark);
    // Emit every window that ended before the watermark, empty ones included (bounded per call so
    // a clock jump cannot flood the consumer).
    for (int emitted = 0; emitted < kMaxWindowsPerAdvance; ++emitted) {
      if (!window_open_) {
        if (!emitted_any_ || processes_.empty()) return;
        AdvanceWindow(emitted_until_ns_);
      }
      if (window_end_ns_ > watermark) return;
      CloseWindow(window_end_ns_);
    }
  }

  void Finish() {
    // In whole-trace mode nothing was processed yet (no lateness horizon): the buffered events'
    // span picks the bin before any device lays out its timeline.
    if (options_.auto_bins > 0 && options_.window_ns <= 0 && !processed_any_ && !pending_.empty()) {
      int64_t min_start = pending_[0].start_ns;
      for (size_t i = 1; i < pending_.size(); ++i)
        min_start = std::min(min_start, pending_[i].start_ns);
      const int64_t end = std::max(max_start_ns_, unbuffered_end_ns_);
      // 10% headroom: the last events end after they start.
      options_.bin_ns = AutoBinNs(end > min_start ? end - min_start : 0,
                                  std::max(1, options_.auto_bins * 9 / 10));
    }
    Drain(std::numeric_limits<int64_t>::max());
    NoteEnd(unbuffered_end_ns_);
    // A step carried out of the last emitted window still counts: in one more window.
    if (!window_open_ && emitted_any_ && AnyOpenStep()) AdvanceWindow(emitted_until_ns_);
    if (window_open_) CloseWindow(window_end_ns_, /*final=*/true);
  }

  bool AnyOpenStep() const {
    for (const auto& [pid, p] : processes_) {
      if (!p.pending_steps.empty()) return true;
      for (const auto& [id, d] : p.devices)
        if (d.step_open) return true;
    }
    return false;
  }

  // ---- Steps from step ranges (AggregatorOptions::step_ranges) ----

  bool IsStep(model::NameId name) {
    if (!options_.step_ranges || name == model::kNoName) return false;
    if (name >= is_step_.size()) is_step_.resize(static_cast<size_t>(name) + 1, -1);
    int8_t& known = is_step_[name];
    if (known < 0) known = model::IsStepName(names_->Get(name), options_.step_prefixes) ? 1 : 0;
    return known == 1;
  }

  // A step range, in start order with the process's calls and GPU work.
  void OnStepRange(ProcessState& p, const model::NvtxEvent& e) {
    if (!p.steps_by_range) {
      // From now on the ranges are the steps: a host-turn step open on a device holds work
      // launched before the first step range, which no step range holds: outside.
      p.steps_by_range = true;
      for (auto& [id, d] : p.devices) {
        d.range_steps = true;
        d.step_whole = false;
        d.EndStep(d.gpu_end_ns);
      }
    }
    RangeStep step;
    step.seq = p.next_step_seq++;
    if (p.next_step_seq == 0) p.next_step_seq = 1;  // 0 is "no step"
    step.start_ns = e.start_ns;
    step.end_ns = e.end_ns;
    step.name = e.name;
    p.last_step_seq = step.seq;
    p.last_step_end_ns = e.end_ns;
    // Memory stays bounded whatever the step rate: past this many pending steps the oldest is
    // settled now (its later work, if any, is outside). Serving steps come at most ~1,000/s.
    if (p.pending_steps.size() >= kMaxPendingSteps) {
      SettleRangeStep(p, p.pending_steps.front());
      p.pending_steps.erase(p.pending_steps.begin());
    }
    p.pending_steps.push_back(step);
  }

  // The step a launching call at `t_ns` started in: the offline steps view's rule (the last step
  // range starting at or before the call holds it if the call is before its end). Step ranges are
  // processed before the calls starting with or after them, so that is the latest one seen.
  static uint32_t StepAt(const ProcessState& p, int64_t t_ns) {
    return p.last_step_seq != 0 && t_ns < p.last_step_end_ns ? p.last_step_seq : 0;
  }

  // The pending step `seq` (binary search: pending steps are in seq order; seqs are compared
  // relative to the oldest, so the wrap of the counter after 2^32 steps keeps the order).
  static RangeStep* PendingStep(ProcessState& p, uint32_t seq) {
    if (p.pending_steps.empty()) return nullptr;
    const uint32_t base = p.pending_steps.front().seq;
    auto it = std::lower_bound(
        p.pending_steps.begin(), p.pending_steps.end(), seq - base,
        [base](const RangeStep& s, uint32_t offset) { return s.seq - base < offset; });
    return it != p.pending_steps.end() && it->seq == seq ? &*it : nullptr;
  }

  // Counts the step whole in the current window, on its home device (or the process's first
  // device for a step that ran no GPU work; a process without devices has nowhere to count it).
  void SettleRangeStep(ProcessState& p, RangeStep& s) {
    DeviceState* d = nullptr;
    if (s.has_device)
      d = &Device(p, s.device);
    else if (!p.devices.empty())
      d = &p.devices.begin()->second;
    if (d == nullptr) return;
    s.busy.Close();
    const std::string_view name = s.name == model::kNoName ? "" : names_->Get(s.name);
    d->AddRangeStep(model::PhaseOfStep(name, s.attention), s.end_ns - s.start_ns, s.busy.total_ns(),
                    s.ops, s.category_ns);
  }

  // Settles the pending steps that ended at or before `before_ns` (all when `final`). Settling
  // on time rather than on the first operation launched after a step's end: with several streams
  // (NCCL, copies) a step's work still runs after the next step's first kernel started, and a
  // step must hold all of it, as the offline steps view does.
  void SettleRangeSteps(ProcessState& p, int64_t before_ns, bool final) {
    std::erase_if(p.pending_steps, [&](RangeStep& s) {
      if (!final && s.end_ns > before_ns) return false;
      SettleRangeStep(p, s);
      return true;
    });
  }

  // A GPU operation to the step its launching call started in (outside when none holds it).
  void AddStepOp(ProcessState& p, DeviceState& d, uint32_t correlation_id, size_t category,
                 int64_t start_ns, int64_t end_ns, uint8_t attention) {
    if (!d.range_steps) {
      d.AddStepOp(category, end_ns - start_ns, attention);
      return;
    }
    const LaunchSlot* launch = FindLaunch(p, correlation_id);
    RangeStep* step =
        launch != nullptr && launch->step != 0 ? PendingStep(p, launch->step) : nullptr;
    if (step == nullptr) {
      d.AddOutsideOp(category, end_ns - start_ns);
      return;
    }
    if (!step->has_device) {
      step->has_device = true;
      step->device = d.device;
    }
    ++step->ops;
    step->category_ns[category] += end_ns - start_ns;
    step->attention |= attention;
    step->busy.Add(start_ns, end_ns);
  }

  // ---- Processing in time order ----

  void ProcessEvent(int64_t start_ns, const AnyEvent& event) {
    if (!processed_any_ || start_ns > processed_until_ns_) processed_until_ns_ = start_ns;
    processed_any_ = true;
    AdvanceWindow(start_ns);
    std::visit([this](const auto& e) { Handle(e); }, event);
  }

  void AdvanceWindow(int64_t t) {
    if (!window_open_) {
      // A late record must not reopen a window that was already emitted: it joins the next one.
      if (options_.window_ns > 0 && emitted_any_ && t < emitted_until_ns_) t = emitted_until_ns_;
      window_open_ = true;
      window_start_ns_ = options_.window_ns > 0 ? t - Mod(t, options_.window_ns) : t;
      window_end_ns_ = options_.window_ns > 0 ? window_start_ns_ + options_.window_ns : t;
      for (auto& [pid, p] : processes_)
        for (auto& [id, d] : p.devices) d.ResetWindow(window_start_ns_, options_.bin_ns);
      return;
    }
    if (options_.window_ns > 0) {
      if (t >= window_end_ns_) {
        CloseWindow(window_end_ns_);
        AdvanceWindow(t);
      }
    }
  }

  static int64_t Mod(int64_t a, int64_t b) {
    const int64_t m = a % b;
    return m < 0 ? m + b : m;
  }

  void NoteEnd(int64_t end_ns) {
    if (options_.window_ns == 0 && end_ns > window_end_ns_) window_end_ns_ = end_ns;
  }

  DeviceState& Device(ProcessState& p, uint32_t device) {
    // Consecutive events nearly always hit the same device; map nodes never move, so the pointer
    // stays valid until the process state goes away (never, within an Aggregator's life).
    if (last_device_ && last_device_process_ == &p && last_device_->device == device)
      return *last_device_;
    auto [it, inserted] = p.devices.try_emplace(device);
    last_device_process_ = &p;
    last_device_ = &it->second;
    if (inserted) {
      it->second.device = device;
      it->second.range_steps = p.steps_by_range;
      it->second.ResetWindow(window_start_ns_, options_.bin_ns);
    }
    return it->second;
  }

  // Bookkeeping shared by kernels, copies and memsets: span, busy union, idle gap on the stream,
  // and candidates for open syncs.
  void OnGpuOp(ProcessState& p, DeviceState& d, uint32_t stream, int64_t start_ns, int64_t end_ns,
               OpRef op, uint32_t correlation_id) {
    NoteEnd(end_ns);
    // The device is idle from the latest end of any operation: the window's busy union starts
    // over at each edge, so an operation begun in an earlier window and still running is not in
    // it (its end would make a gap of busy time, and a host turn analyze never sees).
    if (d.has_gpu_activity && start_ns > d.gpu_end_ns) {
      AttributeIdle(p, d, d.gpu_end_ns, start_ns, correlation_id);
    } else if (!d.has_gpu_activity && d.gpu_seen && start_ns > d.gpu_end_ns) {
      // The window's first operation after an idle interval that began before the window: the
      // same host-turn test as inside a window (the interval's idle time itself is not this
      // window's to attribute), so a step carried across the edge ends where it would in one
      // window, and the step after a cut one (SettleStep) is whole again after a host turn.
      if (SplitIdle(p, d, d.gpu_end_ns, start_ns, correlation_id).host_turn)
        EndStep(d, d.gpu_end_ns);
    }
    // What this operation adds to the busy union, across window edges (operations come in start
    // order): the step's busy time, exact however windows cut it.
    const int64_t busy_from = d.gpu_seen ? std::max(start_ns, d.gpu_end_ns) : start_ns;
    if (!d.gpu_seen || end_ns > d.gpu_end_ns) d.gpu_end_ns = end_ns;
    d.gpu_seen = true;
    if (!d.step_open && !d.range_steps) {
      d.step_open = true;
      d.step_start_ns = start_ns;
    }
    d.step_busy_ns += std::max<int64_t>(0, end_ns - busy_from);
    if (!d.has_gpu_activity) {
      d.has_gpu_activity = true;
      d.first_start_ns = start_ns;
      d.last_end_ns = end_ns;
    } else if (end_ns > d.last_end_ns) {
      d.last_end_ns = end_ns;
    }
    d.busy.Add(start_ns, end_ns, [&d](int64_t s, int64_t e) {
      d.ForEachBin(s, e, [&d](size_t bin, int64_t ns) { d.timeline.busy_ns[bin] += ns; });
    });

    StreamState* s = d.Stream(stream);
    if (s->last_op.kind != OpRef::Kind::kNone && start_ns > s->last_end_ns) {
      const int64_t gap = start_ns - s->last_end_ns;
      if (gap < options_.kernel_wait_threshold_ns) {
        d.idle_gaps.kernel_wait.Add(gap);
      } else {
        const LaunchSlot* launch = FindLaunch(p, correlation_id);
        if (launch && launch->start_ns >= s->last_end_ns)
          d.idle_gaps.host_wait.Add(gap);
        else
          d.idle_gaps.other.Add(gap);
      }
    }
    if (end_ns >= s->last_end_ns || s->last_op.kind == OpRef::Kind::kNone) {
      s->last_end_ns = end_ns;
      s->last_op = op;
    }

    for (OpenSync& sync : p.open_syncs) {
      if ((sync.device == model::kUnknownDevice || sync.device == d.device) &&
          (sync.stream == model::kUnknownStream || sync.stream == stream) &&
          end_ns <= sync.end_ns && end_ns > sync.best_end_ns) {
        sync.best = op;
        sync.best_end_ns = end_ns;
        sync.best_device = d.device;
      }
    }
  }

  // ---- Causal idle attribution (docs/diagnosis.md, "Why the GPU was idle") ----

  static IdleCause CallCause(const model::ApiCallEvent& e) {
    switch (e.kind) {
      case ApiKind::kMalloc:
      case ApiKind::kFree:
        return IdleCause::kAllocation;
      case ApiKind::kSync:
        // cudaStreamWaitEvent only enqueues a GPU-side wait: the host goes on issuing.
        return e.sync_type == SyncType::kStreamWaitEvent ? IdleCause::kLaunch : IdleCause::kSync;
      case ApiKind::kQuery:  // polling an event or stream is waiting for the GPU
        return IdleCause::kSync;
      default:
        return IdleCause::kLaunch;
    }
  }

  // A pause between two CUDA calls of a thread: short pauses are the host's pace of issuing work
  // (Python between launches) or, right after a sync returned, its handling of what the sync
  // waited for; a long pause is a host that issued nothing.
  IdleCause PauseCause(int64_t pause_ns, bool after_sync) const {
    if (pause_ns >= options_.host_pause_threshold_ns) return IdleCause::kHostIdle;
    return after_sync ? IdleCause::kSync : IdleCause::kLaunch;
  }

  HostThread& Thread(ProcessState& p, uint32_t tid) {
    if (p.last_thread < p.threads.size() && p.threads[p.last_thread].tid == tid)
      return p.threads[p.last_thread];
    for (size_t i = 0; i < p.threads.size(); ++i) {
      if (p.threads[i].tid == tid) {
        p.last_thread = i;
        return p.threads[i];
      }
    }
    if (p.threads.size() < kMaxHostThreads) {
      p.threads.push_back(HostThread{});
      p.last_thread = p.threads.size() - 1;
    } else {
      size_t quietest = 0;
      for (size_t i = 1; i < p.threads.size(); ++i)
        if (p.threads[i].cursor_ns < p.threads[quietest].cursor_ns) quietest = i;
      p.threads[quietest] = HostThread{};
      p.last_thread = quietest;
    }
    p.threads[p.last_thread].tid = tid;
    return p.threads[p.last_thread];
  }

  // The thread's running totals at `at_ns`, which lies in the pause before the call starting at
  // `next_start_ns` or inside the thread's last call (the only cases an interval start can be in:
  // the first call of the thread after the device went idle takes the snapshot).
  CauseTimes CumAt(const HostThread& t, int64_t at_ns, int64_t next_start_ns) const {
    CauseTimes cum = t.cum;
    if (!t.active) {  // before the thread's first call: it issued nothing
      cum[static_cast<size_t>(IdleCause::kHostIdle)] -= next_start_ns - at_ns;
    } else if (at_ns >= t.cursor_ns) {
      cum[static_cast<size_t>(PauseCause(next_start_ns - t.cursor_ns, t.last_was_sync))] +=
          at_ns - t.cursor_ns;
    } else {
      cum[static_cast<size_t>(t.last_call_cause)] -= t.cursor_ns - at_ns;
    }
    return cum;
  }

  // Advances the calling thread's totals over the pause before this call and the call itself, and
  // snapshots them at the start of every device idle interval the call falls in.
  void FollowHostCall(ProcessState& p, const model::ApiCallEvent& e) {
    HostThread& t = Thread(p, e.tid);
    const int64_t start = t.active ? std::max(e.start_ns, t.cursor_ns) : e.start_ns;
    for (auto& [id, d] : p.devices) {
      // Everything that starts before this call has been processed, so a device whose activity
      // ended before it is idle from that end until at least here.
      // From the latest end of any operation (see OnGpuOp), also one begun in an earlier window.
      if (!d.gpu_seen) continue;
      const int64_t gap_start = d.gpu_end_ns;
      if (e.start_ns < gap_start) continue;
      GapSnapshot* snap = nullptr;
      for (GapSnapshot& g : t.snapshots)
        if (g.device == id) snap = &g;
      if (!snap) snap = &t.snapshots.emplace_back(GapSnapshot{id, -1, {}});
      if (snap->gap_start_ns == gap_start) continue;
      snap->gap_start_ns = gap_start;
      snap->cum = CumAt(t, gap_start, start);
    }
    if (t.active && start > t.cursor_ns)
      t.cum[static_cast<size_t>(PauseCause(start - t.cursor_ns, t.last_was_sync))] +=
          start - t.cursor_ns;
    const IdleCause cause = CallCause(e);
    if (e.end_ns > start) t.cum[static_cast<size_t>(cause)] += e.end_ns - start;
    if (!t.active || e.end_ns >= t.cursor_ns) {
      t.cursor_ns = std::max(e.end_ns, start);
      t.last_call_cause = cause;
      t.last_was_sync = cause == IdleCause::kSync;
    }
    t.active = true;
  }

  // How a device idle interval divides among the causes, and whether it was the host's turn
  // between two steps.
  struct IdleSplitResult {
    std::array<int64_t, model::kIdleCauseCount> ns{};
    bool host_turn = false;
  };

  // The device was idle over [gap_start, gap_end): attribute it by what the thread that launched
  // the work ending it was doing meanwhile.
  void AttributeIdle(ProcessState& p, DeviceState& d, int64_t gap_start, int64_t gap_end,
                     uint32_t correlation_id) {
    const IdleSplitResult split = SplitIdle(p, d, gap_start, gap_end, correlation_id);
    ++d.idle_causes.intervals;
    for (size_t c = 0; c < model::kIdleCauseCount; ++c) d.idle_causes.ns[c] += split.ns[c];
    // Mostly the host's turn between steps: the step before it ends here.
    if (split.host_turn) EndStep(d, gap_start);
  }

  IdleSplitResult SplitIdle(ProcessState& p, const DeviceState& d, int64_t gap_start,
                            int64_t gap_end, uint32_t correlation_id) {
    IdleSplitResult out;
    const int64_t gap = gap_end - gap_start;
    auto add = [&out](IdleCause c, int64_t ns) { out.ns[static_cast<size_t>(c)] += ns; };
    const LaunchSlot* launch = FindLaunch(p, correlation_id);
    if (!launch) {
      // Without a launch record a long interval is taken as the host's turn (as HTA would).
      out.host_turn = gap >= options_.host_pause_threshold_ns;
      add(IdleCause::kUnattributed, gap);
      return out;
    }
    if (launch->end_ns <= gap_start) {
      // Issued before the device ran dry: the host was ahead. A queued operation starts within the
      // GPU's own turnaround; one that starts later waited for something (another stream, an
      // event, a peer).
      add(gap < options_.kernel_wait_threshold_ns ? IdleCause::kQueued : IdleCause::kDependency,
          gap);
      return out;
    }
    // The launch call was still submitting when the device ran dry: it waited on the launch path.
    if (launch->start_ns < gap_start) {
      add(IdleCause::kLaunch, gap);
      return out;
    }
    HostThread* t = nullptr;
    if (p.last_thread < p.threads.size() && p.threads[p.last_thread].tid == launch->tid)
      t = &p.threads[p.last_thread];
    else
      for (HostThread& h : p.threads)
        if (h.tid == launch->tid) t = &h;
    const GapSnapshot* snap = nullptr;
    if (t)
      for (const GapSnapshot& g : t->snapshots)
        if (g.device == d.device && g.gap_start_ns == gap_start) snap = &g;
    if (!t || !snap || !t->active) {
      out.host_turn = gap >= options_.host_pause_threshold_ns;
      add(IdleCause::kUnattributed, gap);
      return out;
    }
    // Totals at the interval's end: calls starting up to it are all in; the last one may run past
    // it. If the launch call already returned, the wait until the GPU picks the work up is part of
    // issuing it.
    CauseTimes end = t->cum;
    if (gap_end >= t->cursor_ns)
      end[static_cast<size_t>(IdleCause::kLaunch)] += gap_end - t->cursor_ns;
    else
      end[static_cast<size_t>(t->last_call_cause)] -= t->cursor_ns - gap_end;
    int64_t assigned = 0;
    int64_t host_turn_ns = 0;  // the host stopped issuing: blocked, allocating or idle
    for (size_t c = 0; c < model::kHostIdleCauses; ++c) {
      const int64_t ns = std::clamp<int64_t>(end[c] - snap->cum[c], 0, gap - assigned);
      out.ns[c] += ns;
      assigned += ns;
      if (c == static_cast<size_t>(IdleCause::kSync) ||
          c == static_cast<size_t>(IdleCause::kAllocation) ||
          c == static_cast<size_t>(IdleCause::kHostIdle))
        host_turn_ns += ns;
    }
    if (assigned < gap) add(IdleCause::kUnattributed, gap - assigned);
    out.host_turn = 2 * host_turn_ns > gap;
    return out;
  }

  static void EndStep(DeviceState& d, int64_t end_ns) {
    d.EndStep(end_ns);
    d.step_whole = true;  // the next step begins after this host turn
  }

  const LaunchSlot* FindLaunch(const ProcessState& p, uint32_t correlation_id) const {
    if (correlation_id == 0) return nullptr;
    const LaunchSlot& slot = p.launches[correlation_id & (kLaunchTableSize - 1)];
    return slot.valid && slot.correlation_id == correlation_id ? &slot : nullptr;
  }

  void Handle(const model::KernelEvent& e) {
    ProcessState& p = Process(e.pid);
    CloseFinishedSyncs(p, e.start_ns);
    DeviceState& d = Device(p, e.device);
    const int64_t dur = e.end_ns - e.start_ns;
    ++d.kernel_count;

    // Per-name statistics; the name's classification is looked up once per device.
    if (e.name >= d.slot_of_name.size()) d.slot_of_name.resize(static_cast<size_t>(e.name) + 1, 0);
    uint32_t& slot = d.slot_of_name[e.name];
    if (slot == 0) {
      const model::Classification& c = classifier_.Classify(e.name);
      KernelAccum& k = d.kernels.emplace_back();
      k.name = e.name;
      k.category = c.category;
      k.compute = model::IsComputeKernel(c.category, c.subcategory);
      k.subcategory = c.subcategory;
      k.attention_kind = static_cast<uint8_t>(c.subcategory == "attention.prefill"  ? 1
                                              : c.subcategory == "attention.decode" ? 2
                                                                                    : 0);
      slot = static_cast<uint32_t>(d.kernels.size());
    }
    KernelAccum& k = d.kernels[slot - 1];
    k.duration.Add(dur);
    k.histogram.Add(dur);
    // A grid of 0 is no launch CUPTI recorded: the graph attribution's estimate of a graph
    // launch's kernels (src/inject/graph_attribution.h) has no configuration to count.
    if (options_.launch_configs && e.grid[0] != 0)
      k.AddConfig(ConfigKey{{e.grid[0], e.grid[1], e.grid[2]},
                            {e.block[0], e.block[1], e.block[2]},
                            e.graph_id & ~kFromGraphBit},
                  dur);
    const auto cat = static_cast<size_t>(k.category);
    d.ForEachBin(e.start_ns, e.end_ns,
                 [&d, cat](size_t bin, int64_t ns) { d.timeline.category_ns[bin][cat] += ns; });

    const bool is_comm = k.category == Category::kCommunication;
    const bool is_compute = k.compute;
    if (is_comm) d.communication.Add(e.start_ns, e.end_ns);
    if (is_compute) d.compute.Add(e.start_ns, e.end_ns);
    if (is_comm || is_compute) d.compute_or_communication.Add(e.start_ns, e.end_ns);

    if (dur < options_.short_kernel_threshold_ns) ++d.launch.short_kernels;
    const bool from_graph = FromGraph(e);
    if (from_graph) ++d.launch.kernels_from_graphs;
    LaunchSlot* launch = MutableLaunch(p, e.correlation_id);
    if (launch && launch->kind != ApiKind::kKernelLaunch && launch->kind != ApiKind::kGraphLaunch)
      launch = nullptr;  // e.g. a copy implemented as a kernel: not a launch to measure
    if (launch) {
      d.launch.launch_delay.Add(e.start_ns - launch->start_ns);
      if (!launch->counted) {
        launch->counted = true;
        d.launch.cpu_launch.Add(launch->end_ns - launch->start_ns);
        if (launch->kind == ApiKind::kGraphLaunch) ++d.launch.graph_launches;
      }
      if (launch->kind == ApiKind::kGraphLaunch && !from_graph) ++d.launch.kernels_from_graphs;
    } else if (e.correlation_id != 0 && p.has_launch_calls) {
      ++p.data_quality[static_cast<size_t>(DataQuality::kUnmatchedCorrelation)];
    }

    ProjectOnRanges(p, e.correlation_id, dur);
    const uint8_t attention = k.attention_kind;
    OnGpuOp(p, d, e.stream, e.start_ns, e.end_ns, OpRef{OpRef::Kind::kKernel, e.name},
            e.correlation_id);
    // After OnGpuOp: the idle interval before this kernel may have ended the previous step.
    AddStepOp(p, d, e.correlation_id, cat, e.start_ns, e.end_ns, attention);
  }

  LaunchSlot* MutableLaunch(ProcessState& p, uint32_t correlation_id) {
    return const_cast<LaunchSlot*>(FindLaunch(p, correlation_id));
  }

  void Handle(const model::MemcpyEvent& e) {
    ProcessState& p = Process(e.pid);
    CloseFinishedSyncs(p, e.start_ns);
    DeviceState& d = Device(p, e.device);
    model::TransferStats& t = d.memcpy[static_cast<size_t>(e.kind)];
    ++t.count;
    t.bytes += e.bytes;
    t.time_ns += e.end_ns - e.start_ns;
    if (e.pageable) ++t.pageable_count;
    constexpr auto kMemory = static_cast<size_t>(Category::kMemory);
    d.ForEachBin(e.start_ns, e.end_ns,
                 [&d](size_t bin, int64_t ns) { d.timeline.category_ns[bin][kMemory] += ns; });
    OnGpuOp(p, d, e.stream, e.start_ns, e.end_ns,
            OpRef{OpRef::Kind::kMemcpy, static_cast<uint32_t>(e.kind)}, e.correlation_id);
    ProjectOnRanges(p, e.correlation_id, e.end_ns - e.start_ns);
    AddStepOp(p, d, e.correlation_id, kMemory, e.start_ns, e.end_ns, 0);
  }

  void Handle(const model::MemsetEvent& e) {
    ProcessState& p = Process(e.pid);
    CloseFinishedSyncs(p, e.start_ns);
    DeviceState& d = Device(p, e.device);
    ++d.memset.count;
    d.memset.bytes += e.bytes;
    d.memset.time_ns += e.end_ns - e.start_ns;
    constexpr auto kMemory = static_cast<size_t>(Category::kMemory);
    d.ForEachBin(e.start_ns, e.end_ns,
                 [&d](size_t bin, int64_t ns) { d.timeline.category_ns[bin][kMemory] += ns; });
    OnGpuOp(p, d, e.stream, e.start_ns, e.end_ns, OpRef{OpRef::Kind::kMemset, 0}, e.correlation_id);
    ProjectOnRanges(p, e.correlation_id, e.end_ns - e.start_ns);
    AddStepOp(p, d, e.correlation_id, kMemory, e.start_ns, e.end_ns, 0);
  }

  void Handle(const model::SyncEvent& e) {
    ProcessState& p = Process(e.pid);
    CloseFinishedSyncs(p, e.start_ns);
    p.has_sync_records = true;
    SyncType type = e.type;
    // The API call behind the record is the better witness of what the host did: CUPTI records
    // cudaEventQuery (which never blocks) as an event sync, and some Nsight versions record
    // cudaDeviceSynchronize as an event sync too.
    if (const LaunchSlot* call = FindLaunch(p, e.correlation_id)) {
      if (call->kind == ApiKind::kQuery) return;
      if (call->kind == ApiKind::kSync && call->sync_type != SyncType::kUnknown)
        type = call->sync_type;
    }
    // A device the process never ran work on is a mislabelled record (seen in multi-process
    // Nsight exports, where every record says device 0): fall back to "the process's devices".
    uint32_t device = e.device;
    if (device != model::kUnknownDevice && !p.devices.empty() && !p.devices.count(device))
      device = model::kUnknownDevice;
    OpenSyncWait(p, e.start_ns, e.end_ns, device, e.stream, type, /*from_record=*/true);
  }

  void Handle(const model::ApiCallEvent& e) {
    ProcessState& p = Process(e.pid);
    CloseFinishedSyncs(p, e.start_ns);
    if (e.correlation_id != 0) {
      // One call recorded twice, the versioned entry point nested in the public one (old Nsight
      // exports have both cudaMalloc and cudaMalloc_v3020 with one correlation id): count it once.
      const LaunchSlot* seen = FindLaunch(p, e.correlation_id);
      if (seen && seen->kind == e.kind && seen->start_ns <= e.start_ns && e.end_ns <= seen->end_ns)
        return;
      Remember(p, e);
    }
    FollowHostCall(p, e);
    switch (e.kind) {
      case ApiKind::kKernelLaunch:
      case ApiKind::kGraphLaunch:
        p.has_launch_calls = true;
        break;
      case ApiKind::kMemcpy:
      case ApiKind::kMemset:
      case ApiKind::kQuery:
        break;
      case ApiKind::kMalloc:
      case ApiKind::kFree: {
        model::AllocationStats& a = e.device != model::kUnknownDevice
                                        ? Device(p, e.device).allocations
                                        : p.unattributed_allocations;
        const int64_t dur = e.end_ns - e.start_ns;
        if (e.kind == ApiKind::kMalloc) {
          a.malloc_calls.Add(dur);
          a.malloc_bytes += e.bytes;
        } else {
          a.free_calls.Add(dur);
        }
        if (dur > options_.slow_allocation_threshold_ns) {
          ++a.slow_calls;
          a.slow_total_ns += dur;
        }
        break;
      }
      case ApiKind::kSync:
        // cudaStreamWaitEvent does not block the host; only the record form is reported.
        if (e.sync_type != SyncType::kStreamWaitEvent)
          OpenSyncWait(p, e.start_ns, e.end_ns, e.device, model::kUnknownStream, e.sync_type,
                       /*from_record=*/false);
        break;
      case ApiKind::kOther:
      case ApiKind::kCount:
        break;
    }
    NoteEnd(e.end_ns);
  }

  void Handle(const model::NvtxEvent& e) {
    NoteEnd(e.end_ns);
    if (options_.ranges) RangesOf(Process(e.pid)).OnRange(e, /*late=*/false);
    if (IsStep(e.name)) OnStepRange(Process(e.pid), e);
  }

  RangeTracker& RangesOf(ProcessState& p) {
    if (!p.ranges) p.ranges = std::make_unique<RangeTracker>(names_);
    return *p.ranges;
  }

  static void Remember(ProcessState& p, const model::ApiCallEvent& e) {
    if (e.correlation_id == 0) return;
    uint32_t context = 0;
    uint32_t step = 0;
    if (e.kind == ApiKind::kKernelLaunch || e.kind == ApiKind::kGraphLaunch ||
        e.kind == ApiKind::kMemcpy || e.kind == ApiKind::kMemset) {
      if (p.ranges) context = p.ranges->ContextAt(e.tid, e.start_ns);
      step = StepAt(p, e.start_ns);
    }
    p.launches[e.correlation_id & (kLaunchTableSize - 1)] =
        LaunchSlot{e.correlation_id, true,     false,   e.kind, e.sync_type, e.tid,
                   e.start_ns,       e.end_ns, context, step};
  }

  // The GPU op joins the ranges its launching call was in (live range table only).
  void ProjectOnRanges(ProcessState& p, uint32_t correlation_id, int64_t duration_ns) {
    if (!p.ranges) return;
    if (const LaunchSlot* launch = FindLaunch(p, correlation_id))
      p.ranges->OnGpuOp(launch->range_context, duration_ns);
  }

  void OpenSyncWait(ProcessState& p, int64_t start_ns, int64_t end_ns, uint32_t device,
                    uint32_t stream, SyncType type, bool from_record) {
    NoteEnd(end_ns);
    OpenSync sync{start_ns, end_ns, device, stream, type, from_record, {}, start_ns, device};
    // Work already running when the wait began is the usual culprit: the last operation on each
    // matching stream that ends inside the wait.
    for (auto& [id, d] : p.devices) {
      if (device != model::kUnknownDevice && device != id) continue;
      for (const StreamState& s : d.streams) {
        if (stream != model::kUnknownStream && stream != s.stream) continue;
        if (s.last_op.kind != OpRef::Kind::kNone && s.last_end_ns >= start_ns &&
            s.last_end_ns <= end_ns && s.last_end_ns > sync.best_end_ns) {
          sync.best = s.last_op;
          sync.best_end_ns = s.last_end_ns;
          sync.best_device = id;
        }
      }
    }
    p.open_syncs.push_back(sync);
  }

  // Syncs whose wait ended before `now_ns` cannot gain candidates any more: attribute them.
  void CloseFinishedSyncs(ProcessState& p, int64_t now_ns) {
    if (p.open_syncs.empty()) return;
    auto it = std::remove_if(p.open_syncs.begin(), p.open_syncs.end(), [&](const OpenSync& s) {
      if (s.end_ns >= now_ns) return false;
      Attribute(p, s);
      return true;
    });
    p.open_syncs.erase(it, p.open_syncs.end());
  }

  void Attribute(ProcessState& p, const OpenSync& s) {
    const auto type = static_cast<size_t>(s.type);
    const int64_t wait = s.end_ns - s.start_ns;
    const uint32_t device = s.best.kind != OpRef::Kind::kNone ? s.best_device : s.device;
    if (device != model::kUnknownDevice) {
      DeviceState& d = Device(p, device);
      (s.from_record ? d.sync_records : d.sync_calls)[type].Add(wait, s.best);
    } else {
      (s.from_record ? p.unattributed_records : p.unattributed_calls)[type].Add(wait, s.best);
    }
  }

  // `final`: no event follows (Finish), so open steps end here instead of being carried.
  void CloseWindow(int64_t end_ns, bool final = false) {
    model::ProfileWindow window;
    window.start_ns = window_start_ns_;
    window.end_ns = end_ns;
    for (auto& [pid, p] : processes_) {
      for (const OpenSync& s : p.open_syncs) Attribute(p, s);
      p.open_syncs.clear();
      bool host_activity = p.unattributed_allocations.malloc_calls.count > 0 ||
                           p.unattributed_allocations.free_calls.count > 0;
      for (size_t t = 0; t < kSyncTypes; ++t)
        host_activity = host_activity || p.unattributed_records[t].wait.count > 0 ||
                        p.unattributed_calls[t].wait.count > 0;
      if (p.devices.empty() && host_activity) Device(p, 0);  // host-only activity gets an entry
      if (!p.devices.empty()) {
        DeviceState& first = p.devices.begin()->second;
        MergeAllocations(&first.allocations, p.unattributed_allocations);
        for (size_t t = 0; t < kSyncTypes; ++t) {
          first.sync_records[t].Merge(p.unattributed_records[t]);
          first.sync_calls[t].Merge(p.unattributed_calls[t]);
        }
      }
      p.unattributed_allocations = {};
      p.unattributed_records = {};
      p.unattributed_calls = {};

      model::ProcessProfile profile;
      profile.pid = pid;
      profile.rank = p.info.rank;
      profile.world_size = p.info.world_size;
      if (p.info.hostname != model::kNoName) profile.hostname = names_->Get(p.info.hostname);
      profile.data_quality = p.data_quality;
      p.data_quality = {};
      // Step ranges whose work is complete by now count in this window (see step_settle_ns).
      if (!p.pending_steps.empty()) SettleRangeSteps(p, end_ns - options_.step_settle_ns, final);
      for (auto& [id, d] : p.devices) {
        d.SettleStep(window_start_ns_, end_ns, final, options_.max_step_carry_ns);
        auto name_it = p.device_names.find(id);
        profile.devices.push_back(BuildDeviceProfile(
            &d, name_it != p.device_names.end() ? name_it->second : std::string(), *names_,
            options_, p.has_sync_records, resource_sets_));
        if (auto uuid_it = p.device_uuids.find(id); uuid_it != p.device_uuids.end())
          profile.devices.back().device_uuid = uuid_it->second;
        d.ResetWindow(end_ns, options_.bin_ns);
      }
      if (p.ranges)
        profile.ranges = p.ranges->TakeWindow(static_cast<size_t>(std::max(options_.top_k, 0)));
      if (!profile.devices.empty() || HasAny(profile.data_quality) || !profile.ranges.empty())
        window.processes.push_back(std::move(profile));
    }
    std::stable_sort(window.processes.begin(), window.processes.end(),
                     [](const model::ProcessProfile& a, const model::ProcessProfile& b) {
                       const int32_t ra = a.rank < 0 ? INT32_MAX : a.rank;
                       const int32_t rb = b.rank < 0 ? INT32_MAX : b.rank;
                       return ra != rb ? ra < rb : a.pid < b.pid;
                     });
    window_open_ = false;
    emitted_any_ = true;
    emitted_until_ns_ = std::max(emitted_until_ns_, end_ns);
    on_window_(std::move(window));
  }

  static void MergeAllocations(model::AllocationStats* into, const model::AllocationStats& from) {
    into->malloc_calls.Merge(from.malloc_calls);
    into->free_calls.Merge(from.free_calls);
    into->malloc_bytes += from.malloc_bytes;
    into->slow_calls += from.slow_calls;
    into->slow_total_ns += from.slow_total_ns;
  }

  static bool HasAny(const std::array<uint64_t, static_cast<size_t>(DataQuality::kCount)>& a) {
    for (uint64_t v : a)
      if (v) return true;
    return false;
  }

 private:
  AggregatorOptions options_;
  const model::NameTable* names_;
  model::CachedClassifier classifier_;
  WindowCallback on_window_;

  std::map<uint32_t, ProcessState> processes_;
  uint32_t last_pid_ = 0;
  ProcessState* last_process_ = nullptr;
  ProcessState* last_device_process_ = nullptr;
  DeviceState* last_device_ = nullptr;

  ChunkedQueue<Pending> pending_;
  std::deque<model::NvtxEvent> ranges_pending_;  // by start (ties: arrival)
  // Launch configurations: the resource sets seen (id 0: not recorded) and the current one per
  // kernel name (by NameId).
  static constexpr size_t kMaxResourceSets = 1 << 16;  // ids fit beside kFromGraphBit
  std::vector<model::KernelResources> resource_sets_ = std::vector<model::KernelResources>(1);
  std::map<std::array<int32_t, 4>, uint32_t> resource_ids_;
  std::vector<uint32_t> resources_of_name_;
  std::vector<int8_t> is_step_;  // by NameId: a step range name? -1 not known yet
  size_t since_drain_ = 0;
  int64_t unbuffered_end_ns_ = 0;  // latest end among events not buffered (see NeedsProcessing)
  bool sorted_ = true;
  SortKey last_key_{0, 0, 0};
  int64_t max_start_ns_ = std::numeric_limits<int64_t>::min();
  bool processed_any_ = false;
  int64_t processed_until_ns_ = 0;

  bool window_open_ = false;
  bool emitted_any_ = false;
  int64_t emitted_until_ns_ = 0;  // end of the last emitted window
  int64_t window_start_ns_ = 0;
  int64_t window_end_ns_ = 0;
};

Aggregator::Aggregator(const AggregatorOptions& options, const model::NameTable* names,
                       const model::KernelClassifier* classifier, WindowCallback on_window)
    : impl_(std::make_unique<Impl>(options, names, classifier, std::move(on_window))) {}
Aggregator::~Aggregator() = default;

void Aggregator::OnProcess(const model::ProcessInfo& p) { impl_->OnProcess(p); }
void Aggregator::OnDevice(const model::DeviceInfo& d) { impl_->OnDevice(d); }
void Aggregator::OnKernel(const model::KernelEvent& e) { impl_->Enqueue(e); }
void Aggregator::OnMemcpy(const model::MemcpyEvent& e) { impl_->Enqueue(e); }
void Aggregator::OnMemset(const model::MemsetEvent& e) { impl_->Enqueue(e); }
void Aggregator::OnSync(const model::SyncEvent& e) { impl_->Enqueue(e); }
void Aggregator::OnApiCall(const model::ApiCallEvent& e) { impl_->Enqueue(e); }
void Aggregator::OnNvtx(const model::NvtxEvent& e) { impl_->Enqueue(e); }
void Aggregator::OnKernelResources(const model::KernelResourcesEvent& e) {
  impl_->OnKernelResources(e);
}
void Aggregator::OnDataQuality(uint32_t pid, model::DataQuality counter, uint64_t count) {
  impl_->CountQuality(pid, counter, count);
}
void Aggregator::AdvanceTo(int64_t now_ns) { impl_->AdvanceTo(now_ns); }
void Aggregator::Finish() { impl_->Finish(); }

int64_t AutoBinNs(int64_t span_ns, int64_t bins) {
  if (bins <= 0) bins = 1;
  const int64_t want = span_ns / bins + (span_ns % bins != 0);  // ceil
  int64_t bin = 1'000;                                          // 1 us
  // 1, 2, 10, 20, 100, ...: x2 then x5; stop before overflow (a span of centuries is corrupt).
  for (bool two = false; bin < want && bin < (int64_t{1} << 60); two = !two) bin *= two ? 5 : 2;
  return bin;
}

model::ProfileWindow AggregateWholeTrace(const AggregatorOptions& options,
                                         const model::NameTable* names,
                                         const model::KernelClassifier* classifier,
                                         const std::function<void(model::EventSink*)>& feed) {
  AggregatorOptions whole = options;
  whole.window_ns = 0;
  model::ProfileWindow result;
  Aggregator aggregator(whole, names, classifier,
                        [&result](model::ProfileWindow&& w) { result = std::move(w); });
  feed(&aggregator);
  aggregator.Finish();
  return result;
}

}  // namespace inferscope::aggregate
