// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/wire/window_codec.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "src/wire/window_fields.h"
#include "src/wire/wire_buffer.h"

namespace inferscope::wire {

namespace {

using model::DeviceProfile;
using model::DurationStats;
using model::KernelStats;
using model::ProcessProfile;
using model::ProfileWindow;

constexpr int64_t kNoMin = std::numeric_limits<int64_t>::max();

// ---- Encoding ----

// Signed field written unless it equals the reader's default.
void SDefault(WireWriter& w, uint32_t field, int64_t v, int64_t default_value) {
  if (v == default_value) return;
  w.Tag(field, WireType::kVarint);
  w.Varint(ZigZag(v));
}
void UDefault(WireWriter& w, uint32_t field, uint64_t v, uint64_t default_value) {
  if (v == default_value) return;
  w.Tag(field, WireType::kVarint);
  w.Varint(v);
}

void PutDuration(WireWriter& w, uint32_t field, const DurationStats& d) {
  w.Message(field, [&](WireWriter& m) {
    m.U(fields::kDurCount, d.count);
    m.S(fields::kDurTotal, d.total_ns);
    SDefault(m, fields::kDurMin, d.min_ns, kNoMin);
    m.S(fields::kDurMax, d.max_ns);
  });
}

// An entry of a fixed array indexed by an enum: written only when it holds something.
template <typename Fn>
void PutIndexed(WireWriter& w, uint32_t field, size_t index, Fn&& fn) {
  std::string body;
  WireWriter inner(&body);
  fn(inner);
  if (body.empty()) return;
  w.Message(field, [&](WireWriter& m) {
    m.Tag(fields::kIndex, WireType::kVarint);
    m.Varint(index);
    m.out()->append(body);
  });
}

// A packed list of zigzag varints: value(i) for i in [0, n).
template <typename Value>
void PutPackedSigned(WireWriter& w, uint32_t field, size_t n, Value&& value) {
  std::string body;
  WireWriter inner(&body);
  for (size_t i = 0; i < n; ++i) inner.Varint(ZigZag(value(i)));
  w.Tag(field, WireType::kBytes);
  w.Varint(body.size());
  w.out()->append(body);
}

// Per-category values as a packed list up to the last non-zero one; nothing when all are zero.
void PutCategoryValues(WireWriter& w, uint32_t field,
                       const std::array<int64_t, model::kCategoryCount>& ns) {
  size_t n = ns.size();
  while (n > 0 && ns[n - 1] == 0) --n;
  if (n > 0) PutPackedSigned(w, field, n, [&](size_t i) { return ns[i]; });
}

void PutPhases(WireWriter& w, const model::PhaseSplit& s) {
  // Windows without steps or work outside them carry no phase data. Tested against the default
  // (not empty(), which looks at steps and operations only) so that every decoded window
  // re-encodes to itself (window_codec_fuzzer); the Aggregator's are the same either way.
  if (s == model::PhaseSplit{}) return;
  w.Message(fields::kPhases, [&](WireWriter& m) {
    for (size_t i = 0; i < s.phases.size(); ++i) {
      const model::PhaseStats& p = s.phases[i];
      if (p == model::PhaseStats{}) continue;
      PutIndexed(m, fields::kPhase, i, [&](WireWriter& e) {
        e.U(fields::kPhSteps, p.steps);
        e.S(fields::kPhStepTime, p.step_ns);
        e.S(fields::kPhBusy, p.busy_ns);
        e.U(fields::kPhOps, p.ops);
        PutCategoryValues(e, fields::kPhCategories, p.category_ns);
      });
    }
    m.U(fields::kPhaseOutsideOps, s.outside_ops);
    PutCategoryValues(m, fields::kPhaseOutside, s.outside_ns);
  });
}

// The shared-memory sum a reader assumes when the field is absent.
int32_t DerivedShared(int32_t static_shared, int32_t dynamic_shared) {
  return static_shared >= 0 && dynamic_shared >= 0
             ? model::KernelResourceValue(int64_t{static_shared} + dynamic_shared)
             : -1;
}

// Grid or block: x, y, z packed as unsigned 32-bit varints (CUDA's dimensions are positive; a
// corrupt negative one still round-trips, in 5 bytes).
void PutDim3(WireWriter& w, uint32_t field, const std::array<int32_t, 3>& v) {
  std::string body;
  WireWriter inner(&body);
  for (int32_t x : v) inner.Varint(static_cast<uint32_t>(x));
  w.Tag(field, WireType::kBytes);
  w.Varint(body.size());
  w.out()->append(body);
}

// A kernel's launch configurations: each field the previous configuration of the row shares is
// left out (a kernel's registers and static shared memory rarely change, its block seldom), so a
// configuration after the first costs its grid, count and time: 10-15 bytes.
void PutConfigs(WireWriter& w, const std::vector<model::LaunchConfig>& configs, uint64_t distinct,
                const DurationStats& duration) {
  // When the listed configurations hold every launch of the row (the usual window: all listed,
  // exact), the last one's count and time are the row's minus the others': left out. The test is
  // the decoder's computation itself (unsigned, wrapping: defined), so what is left out always
  // reads back as it was.
  bool derive_last = false;
  if (!configs.empty()) {
    uint64_t others = 0, others_ns = 0;
    for (size_t i = 0; i + 1 < configs.size(); ++i) {
      others += configs[i].count;
      others_ns += static_cast<uint64_t>(configs[i].total_ns);
    }
    const model::LaunchConfig& last = configs.back();
    derive_last = others < duration.count && duration.count - others == last.count &&
                  static_cast<uint64_t>(duration.total_ns) - others_ns ==
                      static_cast<uint64_t>(last.total_ns);
  }
  model::LaunchConfig prev;  // grid and block 0, resources -1
  for (size_t i = 0; i < configs.size(); ++i) {
    const model::LaunchConfig& c = configs[i];
    const bool derived = derive_last && i + 1 == configs.size();
    w.Message(
        fields::kKConfig,
        [&](WireWriter& m) {
          if (c.grid != prev.grid) PutDim3(m, fields::kCfGrid, c.grid);
          if (c.block != prev.block) PutDim3(m, fields::kCfBlock, c.block);
          if (!derived) {
            m.U(fields::kCfCount, c.count);
            m.S(fields::kCfTime, c.total_ns);
          }
          SDefault(m, fields::kCfRegisters, c.registers_per_thread, prev.registers_per_thread);
          SDefault(m, fields::kCfStaticShared, c.static_shared_bytes, prev.static_shared_bytes);
          SDefault(m, fields::kCfDynamicShared, c.dynamic_shared_bytes, prev.dynamic_shared_bytes);
          SDefault(m, fields::kCfShared, c.shared_bytes,
                   DerivedShared(c.static_shared_bytes, c.dynamic_shared_bytes));
        },
        /*always=*/true);
    prev = c;
  }
  // Absent: every configuration seen is listed (the usual case).
  UDefault(w, fields::kKDistinctConfigs, distinct, configs.size());
}

void PutKernel(WireWriter& w, uint32_t field, const KernelStats& k, bool always) {
  w.Message(
      field,
      [&](WireWriter& m) {
        m.Str(fields::kKName, k.name);
        UDefault(m, fields::kKCategory, static_cast<uint64_t>(k.category),
                 static_cast<uint64_t>(model::Category::kOther));
        m.Str(fields::kKSubcategory, k.subcategory);
        PutDuration(m, fields::kKDuration, k.duration);
        size_t first = 0, last = model::LogHistogram::kBuckets;
        while (first < last && k.histogram.counts[first] == 0) ++first;
        while (last > first && k.histogram.counts[last - 1] == 0) --last;
        if (first < last) {
          m.Message(fields::kKHistogram, [&](WireWriter& h) {
            h.U(fields::kHistFirst, first);
            std::string packed;
            WireWriter p(&packed);
            for (size_t i = first; i < last; ++i) p.Varint(k.histogram.counts[i]);
            h.Tag(fields::kHistCounts, WireType::kBytes);
            h.Varint(packed.size());
            h.out()->append(packed);
          });
        }
        UDefault(m, fields::kKDistinct, k.distinct_names, 1);
        PutConfigs(m, k.configs, k.distinct_configs, k.duration);
      },
      always);
}

void PutTimeline(WireWriter& w, const model::Timeline& t) {
  w.Message(fields::kTimeline, [&](WireWriter& m) {
    m.S(fields::kTlBin, t.bin_ns);
    m.S(fields::kTlOrigin, t.origin_ns);
    // The Aggregator grows category_ns and busy_ns together. The busy list is written padded to
    // the longer of the two, so every bin costs at least one input byte (the decoder relies on
    // that to bound memory); the true sizes follow only when they differ.
    const size_t bins = std::max(t.busy_ns.size(), t.category_ns.size());
    m.U(fields::kTlBinCount, bins);
    if (bins > 0) {
      PutPackedSigned(m, fields::kTlBusy, bins,
                      [&](size_t i) { return i < t.busy_ns.size() ? t.busy_ns[i] : 0; });
    }
    UDefault(m, fields::kTlBusySize, t.busy_ns.size(), bins);
    UDefault(m, fields::kTlCategorySize, t.category_ns.size(), bins);
    for (size_t c = 0; c < static_cast<size_t>(model::kCategoryCount); ++c) {
      bool any = false;
      for (const auto& bin : t.category_ns) any = any || bin[c] != 0;
      if (!any) continue;
      m.Message(fields::kTlCategory, [&](WireWriter& e) {
        e.Tag(fields::kIndex, WireType::kVarint);
        e.Varint(c);
        PutPackedSigned(e, fields::kTlValues, t.category_ns.size(),
                        [&](size_t i) { return t.category_ns[i][c]; });
      });
    }
    m.U(fields::kTlTruncated, t.truncated ? 1 : 0);
  });
}

void PutTransfer(WireWriter& m, const model::TransferStats& t) {
  m.U(fields::kXCount, t.count);
  m.U(fields::kXBytes, t.bytes);
  m.S(fields::kXTime, t.time_ns);
  m.U(fields::kXPageable, t.pageable_count);
}

void PutDevice(WireWriter& w, const DeviceProfile& d) {
  w.Message(
      fields::kDevice,
      [&](WireWriter& m) {
        m.U(fields::kDeviceId, d.device);
        m.Str(fields::kDeviceName, d.device_name);
        m.Str(fields::kDeviceUuid, d.device_uuid);
        m.S(fields::kFirstStart, d.first_start_ns);
        m.S(fields::kLastEnd, d.last_end_ns);
        m.S(fields::kBusy, d.busy_ns);
        m.S(fields::kCompute, d.compute_ns);
        m.S(fields::kCommunication, d.communication_ns);
        m.S(fields::kOverlap, d.communication_overlap_ns);
        m.U(fields::kKernelCount, d.kernel_count);
        for (size_t c = 0; c < d.categories.size(); ++c) {
          PutIndexed(m, fields::kCategory, c, [&](WireWriter& e) {
            e.U(fields::kStatCount, d.categories[c].count);
            e.S(fields::kStatTime, d.categories[c].time_ns);
          });
        }
        for (const auto& entry : d.subcategories) {
          m.Message(
              fields::kSubcategory,
              [&](WireWriter& e) {
                e.Str(fields::kStatName, entry.first);
                e.U(fields::kStatCount, entry.second.count);
                e.S(fields::kStatTime, entry.second.time_ns);
              },
              /*always=*/true);
        }
        for (const KernelStats& k : d.top_kernels) PutKernel(m, fields::kTopKernel, k, true);
        PutKernel(m, fields::kTail, d.tail, false);
        PutTimeline(m, d.timeline);
        m.Message(fields::kIdleGaps, [&](WireWriter& g) {
          PutDuration(g, fields::kGapHost, d.idle_gaps.host_wait);
          PutDuration(g, fields::kGapKernel, d.idle_gaps.kernel_wait);
          PutDuration(g, fields::kGapOther, d.idle_gaps.other);
        });
        m.Message(fields::kIdleCauses, [&](WireWriter& c) {
          UDefault(c, fields::kCauseIntervals, d.idle_causes.intervals, 0);
          for (size_t i = 0; i < d.idle_causes.ns.size(); ++i)
            PutIndexed(c, fields::kCause, i, [&](WireWriter& e) {
              SDefault(e, fields::kStatTime, d.idle_causes.ns[i], 0);
            });
        });
        m.Message(fields::kSteps, [&](WireWriter& st) {
          // Written unless default (not: unless count is 0), so that every decoded window
          // re-encodes to itself (window_codec_fuzzer).
          if (d.steps.plain != DurationStats{}) PutDuration(st, fields::kStepPlain, d.steps.plain);
          if (d.steps.prefill != DurationStats{})
            PutDuration(st, fields::kStepPrefill, d.steps.prefill);
        });
        PutPhases(m, d.phases);
        m.Message(fields::kLaunch, [&](WireWriter& l) {
          PutDuration(l, fields::kLCpu, d.launch.cpu_launch);
          PutDuration(l, fields::kLDelay, d.launch.launch_delay);
          l.U(fields::kLShort, d.launch.short_kernels);
          l.U(fields::kLGraph, d.launch.graph_launches);
          l.U(fields::kLFromGraphs, d.launch.kernels_from_graphs);
        });
        for (size_t s = 0; s < d.syncs.size(); ++s) {
          PutIndexed(m, fields::kSync, s, [&](WireWriter& e) {
            PutDuration(e, fields::kSyncWait, d.syncs[s].wait);
            for (const model::SyncTarget& t : d.syncs[s].waited_on) {
              e.Message(
                  fields::kSyncTarget,
                  [&](WireWriter& x) {
                    x.Str(fields::kTName, t.kernel_name);
                    x.U(fields::kTCount, t.count);
                    x.S(fields::kTWait, t.wait_ns);
                  },
                  /*always=*/true);
            }
          });
        }
        for (size_t k = 0; k < d.memcpy.size(); ++k)
          PutIndexed(m, fields::kMemcpy, k, [&](WireWriter& e) { PutTransfer(e, d.memcpy[k]); });
        m.Message(fields::kMemset, [&](WireWriter& e) { PutTransfer(e, d.memset); });
        m.Message(fields::kAllocations, [&](WireWriter& a) {
          PutDuration(a, fields::kAMalloc, d.allocations.malloc_calls);
          PutDuration(a, fields::kAFree, d.allocations.free_calls);
          a.U(fields::kABytes, d.allocations.malloc_bytes);
          a.U(fields::kASlow, d.allocations.slow_calls);
          a.S(fields::kASlowTotal, d.allocations.slow_total_ns);
        });
        if (d.graphs != model::CudaGraphStats{}) {
          m.Message(fields::kCudaGraphs, [&](WireWriter& g) {
            g.U(fields::kGLaunches, d.graphs.launches);
            g.S(fields::kGLaunchTime, d.graphs.launch_ns);
            g.S(fields::kGMeasured, d.graphs.measured_ns);
            g.S(fields::kGEstimated, d.graphs.estimated_ns);
            g.S(fields::kGUnattributed, d.graphs.unattributed_ns);
            g.S(fields::kGDeduplicated, d.graphs.deduplicated_ns);
            g.S(fields::kGMaxAge, d.graphs.max_share_age_ns);
            g.U(fields::kGChecks, d.graphs.checks);
            g.U(fields::kGMaxErrorBp, d.graphs.max_error_bp);
            g.S(fields::kGComposition, d.graphs.composition_ns);
            g.S(fields::kGCompositionTimed, d.graphs.composition_timed_ns);
          });
        }
      },
      /*always=*/true);
}

void PutRangeStats(WireWriter& w, uint32_t field, const model::RangeStats& r, bool always) {
  w.Message(
      field,
      [&](WireWriter& m) {
        m.Str(fields::kRsName, r.name);
        PutDuration(m, fields::kRsDuration, r.duration);
        m.U(fields::kRsGpuOps, r.gpu_ops);
        m.S(fields::kRsGpuTime, r.gpu_time_ns);
      },
      always);
}

void PutRanges(WireWriter& w, const model::RangeTable& t) {
  if (t.empty()) return;  // no ranges recorded (the default: --nvtx off)
  w.Message(fields::kRanges, [&](WireWriter& m) {
    for (const model::RangeStats& r : t.rows) PutRangeStats(m, fields::kRgRow, r, true);
    PutRangeStats(m, fields::kRgTail, t.tail, false);
    m.U(fields::kRgTailNames, t.tail_names);
    m.U(fields::kRgLate, t.late);
  });
}

void PutProcess(WireWriter& w, const ProcessProfile& p) {
  w.Message(
      fields::kWindowProcess,
      [&](WireWriter& m) {
        m.U(fields::kPid, p.pid);
        SDefault(m, fields::kRank, p.rank, -1);
        SDefault(m, fields::kWorldSize, p.world_size, -1);
        m.Str(fields::kHostname, p.hostname);
        SDefault(m, fields::kProfilerCpu, p.profiler_cpu_ns, 0);
        for (const DeviceProfile& d : p.devices) PutDevice(m, d);
        for (size_t q = 0; q < p.data_quality.size(); ++q) {
          PutIndexed(m, fields::kDataQuality, q,
                     [&](WireWriter& e) { e.U(fields::kStatCount, p.data_quality[q]); });
        }
        PutRanges(m, p.ranges);
      },
      /*always=*/true);
}

}  // namespace

void EncodeWindow(const ProfileWindow& window, std::string* out) {
  WireWriter w(out);
  w.Varint(kWindowFormatMajor);
  w.Varint(kWindowFormatMinor);
  w.S(fields::kWindowStart, window.start_ns);
  w.S(fields::kWindowEnd, window.end_ns);
  for (const ProcessProfile& p : window.processes) PutProcess(w, p);
}

// Decoding lives in window_decode.cc.

}  // namespace inferscope::wire
