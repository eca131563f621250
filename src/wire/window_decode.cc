// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// DecodeWindow: the strictly bounds-checked reader of the window format (see window_codec.h).

#include <array>
#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "src/wire/window_codec.h"
#include "src/wire/window_fields.h"
#include "src/wire/wire_buffer.h"

namespace inferscope::wire {

namespace {

using model::DeviceProfile;
using model::DurationStats;
using model::KernelStats;
using model::ProcessProfile;
using model::ProfileWindow;

// Decodes one message at a time. Every Decode* returns false on malformed input after recording
// where; unknown fields are skipped, a known field with the wrong wire type is corruption.
class Decoder {
 public:
  // Decoded memory is bounded by a budget proportional to the input: list elements and timeline
  // bins are charged by their in-memory size, so a small payload cannot claim a huge window.
  explicit Decoder(size_t input_bytes) : budget_(64 * input_bytes + (size_t{16} << 20)) {}

  const std::string& error() const { return error_; }

  bool Window(std::string_view bytes, ProfileWindow* out) {
    WireReader r(bytes);
    uint32_t field;
    WireType type;
    while (r.Next(&field, &type)) {
      bool ok = true;
      switch (field) {
        case fields::kWindowStart:
          ok = S(r, type, &out->start_ns);
          break;
        case fields::kWindowEnd:
          ok = S(r, type, &out->end_ns);
          break;
        case fields::kWindowProcess: {
          std::string_view body;
          ok = Msg(r, type, &body) && Charge(sizeof(ProcessProfile)) &&
               Process(body, &out->processes.emplace_back());
          break;
        }
        default:
          r.Skip(type);
      }
      if (!ok) return Fail("window");
    }
    return r.ok() || Fail("window");
  }

 private:
  bool Fail(const char* where) {
    if (error_.empty()) error_ = where;
    return false;
  }
  bool Charge(size_t bytes) {
    if (bytes > budget_) return Fail("payload (decoded size exceeds the memory budget)");
    budget_ -= bytes;
    return true;
  }

  // Typed field readers: check the wire type, then read.
  static bool U(WireReader& r, WireType type, uint64_t* v) {
    if (type != WireType::kVarint) return false;
    *v = r.Varint();
    return r.ok();
  }
  static bool U32(WireReader& r, WireType type, uint32_t* v) {
    uint64_t x = 0;
    if (!U(r, type, &x) || x > UINT32_MAX) return false;
    *v = static_cast<uint32_t>(x);
    return true;
  }
  static bool S(WireReader& r, WireType type, int64_t* v) {
    uint64_t x = 0;
    if (!U(r, type, &x)) return false;
    *v = UnZigZag(x);
    return true;
  }
  static bool S32(WireReader& r, WireType type, int32_t* v) {
    int64_t x = 0;
    if (!S(r, type, &x) || x < INT32_MIN || x > INT32_MAX) return false;
    *v = static_cast<int32_t>(x);
    return true;
  }
  static bool Msg(WireReader& r, WireType type, std::string_view* body) {
    if (type != WireType::kBytes) return false;
    *body = r.Bytes();
    return r.ok();
  }
  bool Str(WireReader& r, WireType type, std::string* s) {
    std::string_view body;
    if (!Msg(r, type, &body) || !Charge(body.size())) return false;
    s->assign(body);
    return true;
  }

  // Runs `fn(reader, field, type) -> bool` over every field of a message; unknown fields are the
  // callback's to skip (it returns true after r.Skip).
  template <typename Fn>
  bool Fields(std::string_view bytes, const char* where, Fn&& fn) {
    WireReader r(bytes);
    uint32_t field;
    WireType type;
    while (r.Next(&field, &type)) {
      if (!fn(r, field, type)) return Fail(where);
    }
    return r.ok() || Fail(where);
  }

  bool Duration(WireReader& r, WireType type, DurationStats* d) {
    std::string_view body;
    if (!Msg(r, type, &body)) return false;
    return Fields(body, "duration stats", [d](WireReader& m, uint32_t field, WireType t) {
      switch (field) {
        case fields::kDurCount:
          return U(m, t, &d->count);
        case fields::kDurTotal:
          return S(m, t, &d->total_ns);
        case fields::kDurMin:
          return S(m, t, &d->min_ns);
        case fields::kDurMax:
          return S(m, t, &d->max_ns);
        default:
          m.Skip(t);
          return m.ok();
      }
    });
  }

  // An entry of a fixed enum-indexed array: `fn(reader, field, type, Entry*)` decodes the fields
  // into a temporary; the entry is kept when its index is known (a newer writer may have more).
  template <typename Entry, size_t N, typename Fn>
  bool Indexed(WireReader& r, WireType type, std::array<Entry, N>* array, const char* where,
               Fn&& fn) {
    std::string_view body;
    if (!Msg(r, type, &body)) return false;
    uint64_t index = 0;
    Entry entry{};
    const bool ok = Fields(body, where, [&](WireReader& m, uint32_t field, WireType t) {
      if (field == fields::kIndex) return U(m, t, &index);
      return fn(m, field, t, &entry);
    });
    if (!ok) return false;
    if (index < N) (*array)[index] = std::move(entry);
    return true;
  }

  static bool CategoryStatsField(WireReader& m, uint32_t field, WireType t,
                                 model::CategoryStats* c) {
    switch (field) {
      case fields::kStatCount:
        return U(m, t, &c->count);
      case fields::kStatTime:
        return S(m, t, &c->time_ns);
      default:
        m.Skip(t);
        return m.ok();
    }
  }

  bool Histogram(WireReader& r, WireType type, model::LogHistogram* h) {
    std::string_view body;
    if (!Msg(r, type, &body)) return false;
    uint64_t first = 0;
    std::string_view packed;
    const bool ok = Fields(body, "histogram", [&](WireReader& m, uint32_t field, WireType t) {
      if (field == fields::kHistFirst) return U(m, t, &first);
      if (field == fields::kHistCounts) return Msg(m, t, &packed);
      m.Skip(t);
      return m.ok();
    });
    if (!ok) return false;
    WireReader p(packed);
    size_t i = first;
    while (!p.done()) {
      const uint64_t v = p.Varint();
      if (!p.ok() || i >= static_cast<size_t>(model::LogHistogram::kBuckets))
        return Fail("histogram");
      h->counts[i++] = v;
    }
    return true;
  }

  // Three packed unsigned 32-bit values (grid or block).
  static bool Dim3(WireReader& r, WireType type, std::array<int32_t, 3>* out) {
    std::string_view packed;
    if (!Msg(r, type, &packed)) return false;
    WireReader p(packed);
    for (int32_t& v : *out) {
      const uint64_t x = p.Varint();
      if (!p.ok() || x > UINT32_MAX) return false;
      v = static_cast<int32_t>(static_cast<uint32_t>(x));
    }
    return p.done();
  }

  // One launch configuration; `prev` holds the previous one of the row (the values of the fields
  // left out).
  bool Config(std::string_view body, const model::LaunchConfig& prev, model::LaunchConfig* c) {
    *c = prev;
    c->count = 0;
    c->total_ns = 0;
    bool shared = false;
    const bool ok = Fields(body, "launch config", [&](WireReader& m, uint32_t field, WireType t) {
      switch (field) {
        case fields::kCfGrid:
          return Dim3(m, t, &c->grid);
        case fields::kCfBlock:
          return Dim3(m, t, &c->block);
        case fields::kCfCount:
          return U(m, t, &c->count);
        case fields::kCfTime:
          return S(m, t, &c->total_ns);
        case fields::kCfRegisters:
          return S32(m, t, &c->registers_per_thread);
        case fields::kCfStaticShared:
          return S32(m, t, &c->static_shared_bytes);
        case fields::kCfDynamicShared:
          return S32(m, t, &c->dynamic_shared_bytes);
        case fields::kCfShared:
          shared = true;
          return S32(m, t, &c->shared_bytes);
        default:
          m.Skip(t);
          return m.ok();
      }
    });
    if (ok && !shared)
      c->shared_bytes = c->static_shared_bytes >= 0 && c->dynamic_shared_bytes >= 0
                            ? model::KernelResourceValue(int64_t{c->static_shared_bytes} +
                                                         c->dynamic_shared_bytes)
                            : -1;
    return ok;
  }

  bool Kernel(std::string_view body, KernelStats* k) {
    bool distinct_configs = false;
    const bool ok = Fields(body, "kernel stats", [&](WireReader& m, uint32_t field, WireType t) {
      switch (field) {
        case fields::kKConfig: {
          std::string_view inner;
          if (!Msg(m, t, &inner) || !Charge(sizeof(model::LaunchConfig))) return false;
          const model::LaunchConfig prev =
              k->configs.empty() ? model::LaunchConfig{} : k->configs.back();
          return Config(inner, prev, &k->configs.emplace_back());
        }
        case fields::kKDistinctConfigs:
          distinct_configs = true;
          return U(m, t, &k->distinct_configs);
        case fields::kKName:
          return Str(m, t, &k->name);
        case fields::kKCategory: {
          uint64_t c = 0;
          if (!U(m, t, &c)) return false;
          // A category this reader does not know (newer writer) reads as "other".
          k->category = c < static_cast<uint64_t>(model::kCategoryCount)
                            ? static_cast<model::Category>(c)
                            : model::Category::kOther;
          return true;
        }
        case fields::kKSubcategory:
          return Str(m, t, &k->subcategory);
        case fields::kKDuration:
          return Duration(m, t, &k->duration);
        case fields::kKHistogram:
          return Histogram(m, t, &k->histogram);
        case fields::kKDistinct:
          return U(m, t, &k->distinct_names);
        default:
          m.Skip(t);
          return m.ok();
      }
    });
    if (!ok) return false;
    if (!distinct_configs) k->distinct_configs = k->configs.size();  // all were listed
    // A last configuration without a count holds the launches and time the others do not
    // (unsigned arithmetic: a corrupt payload wraps, defined, and is caught by the check).
    if (!k->configs.empty() && k->configs.back().count == 0) {
      uint64_t count = 0, total_ns = 0;
      for (size_t i = 0; i + 1 < k->configs.size(); ++i) {
        count += k->configs[i].count;
        total_ns += static_cast<uint64_t>(k->configs[i].total_ns);
      }
      if (count >= k->duration.count) return Fail("launch config (count beyond the kernel's)");
      k->configs.back().count = k->duration.count - count;
      k->configs.back().total_ns =
          static_cast<int64_t>(static_cast<uint64_t>(k->duration.total_ns) - total_ns);
    }
    return true;
  }

  // A packed list of zigzag varints into `out` (resized to `size`, at most the list's length).
  bool Packed(std::string_view packed, size_t size,
              const std::function<void(size_t, int64_t)>& put) {
    WireReader p(packed);
    size_t i = 0;
    while (!p.done()) {
      const uint64_t v = p.Varint();
      if (!p.ok() || i >= size) return false;
      put(i++, UnZigZag(v));
    }
    return true;
  }

  // A packed per-category list; values of categories this reader does not know are dropped.
  static bool CategoryValues(WireReader& r, WireType type,
                             std::array<int64_t, model::kCategoryCount>* ns) {
    if (type != WireType::kBytes) return false;
    WireReader p(r.Bytes());
    if (!r.ok()) return false;
    for (size_t i = 0; !p.done(); ++i) {
      const uint64_t v = p.Varint();
      if (!p.ok()) return false;
      if (i < ns->size()) (*ns)[i] = UnZigZag(v);
    }
    return true;
  }

  bool Phases(std::string_view body, model::PhaseSplit* s) {
    return Fields(body, "phases", [&](WireReader& m, uint32_t field, WireType t) {
      if (field == fields::kPhase)
        return Indexed(m, t, &s->phases, "phase",
                       [](WireReader& e, uint32_t ef, WireType et, model::PhaseStats* p) {
                         switch (ef) {
                           case fields::kPhSteps:
                             return U(e, et, &p->steps);
                           case fields::kPhStepTime:
                             return S(e, et, &p->step_ns);
                           case fields::kPhBusy:
                             return S(e, et, &p->busy_ns);
                           case fields::kPhOps:
                             return U(e, et, &p->ops);
                           case fields::kPhCategories:
                             return CategoryValues(e, et, &p->category_ns);
                           default:
                             e.Skip(et);
                             return e.ok();
                         }
                       });
      if (field == fields::kPhaseOutsideOps) return U(m, t, &s->outside_ops);
      if (field == fields::kPhaseOutside) return CategoryValues(m, t, &s->outside_ns);
      m.Skip(t);
      return m.ok();
    });
  }

  bool Timeline(std::string_view body, model::Timeline* tl) {
    uint64_t bins = 0;
    uint64_t busy_size = UINT64_MAX, category_size = UINT64_MAX;
    std::string_view busy;
    std::vector<std::pair<uint64_t, std::string_view>> categories;
    uint64_t truncated = 0;
    const bool ok = Fields(body, "timeline", [&](WireReader& m, uint32_t field, WireType t) {
      switch (field) {
        case fields::kTlBin:
          return S(m, t, &tl->bin_ns);
        case fields::kTlOrigin:
          return S(m, t, &tl->origin_ns);
        case fields::kTlBinCount:
          return U(m, t, &bins);
        case fields::kTlBusy:
          return Msg(m, t, &busy);
        case fields::kTlBusySize:
          return U(m, t, &busy_size);
        case fields::kTlCategorySize:
          return U(m, t, &category_size);
        case fields::kTlTruncated:
          return U(m, t, &truncated);
        case fields::kTlCategory: {
          std::string_view entry;
          if (!Msg(m, t, &entry)) return false;
          uint64_t index = 0;
          std::string_view values;
          if (!Fields(entry, "timeline category", [&](WireReader& e, uint32_t ef, WireType et) {
                if (ef == fields::kIndex) return U(e, et, &index);
                if (ef == fields::kTlValues) return Msg(e, et, &values);
                e.Skip(et);
                return e.ok();
              }))
            return false;
          if (categories.size() >= static_cast<size_t>(body.size())) return false;
          categories.emplace_back(index, values);
          return true;
        }
        default:
          m.Skip(t);
          return m.ok();
      }
    });
    if (!ok) return false;
    if (busy_size == UINT64_MAX) busy_size = bins;
    if (category_size == UINT64_MAX) category_size = bins;
    // Every bin costs at least one byte of the (padded) busy list: a count beyond the message size
    // is corrupt, and memory stays proportional to the input.
    if (bins > kMaxTimelineBins || bins > body.size() || busy_size > bins || category_size > bins)
      return Fail("timeline bin count");
    if (!Charge(busy_size * sizeof(int64_t) + category_size * sizeof(tl->category_ns[0])))
      return false;
    tl->truncated = truncated != 0;
    tl->busy_ns.assign(busy_size, 0);
    tl->category_ns.assign(category_size, {});
    if (!Packed(busy, bins, [&](size_t i, int64_t v) {
          if (i < busy_size) tl->busy_ns[i] = v;
        }))
      return Fail("timeline busy");
    for (const auto& entry : categories) {
      const uint64_t index = entry.first;
      if (index >= static_cast<uint64_t>(model::kCategoryCount)) continue;  // newer category
      if (!Packed(entry.second, category_size,
                  [&](size_t i, int64_t v) { tl->category_ns[i][index] = v; }))
        return Fail("timeline category");
    }
    return true;
  }

  static bool Transfer(WireReader& m, uint32_t field, WireType t, model::TransferStats* x) {
    switch (field) {
      case fields::kXCount:
        return U(m, t, &x->count);
      case fields::kXBytes:
        return U(m, t, &x->bytes);
      case fields::kXTime:
        return S(m, t, &x->time_ns);
      case fields::kXPageable:
        return U(m, t, &x->pageable_count);
      default:
        m.Skip(t);
        return m.ok();
    }
  }

  bool Sync(WireReader& m, uint32_t field, WireType t, model::SyncStats* s) {
    if (field == fields::kSyncWait) return Duration(m, t, &s->wait);
    if (field != fields::kSyncTarget) {
      m.Skip(t);
      return m.ok();
    }
    std::string_view body;
    if (!Msg(m, t, &body)) return false;
    if (!Charge(sizeof(model::SyncTarget))) return false;
    model::SyncTarget& target = s->waited_on.emplace_back();
    return Fields(body, "sync target", [&](WireReader& x, uint32_t tf, WireType tt) {
      switch (tf) {
        case fields::kTName:
          return Str(x, tt, &target.kernel_name);
        case fields::kTCount:
          return U(x, tt, &target.count);
        case fields::kTWait:
          return S(x, tt, &target.wait_ns);
        default:
          x.Skip(tt);
          return x.ok();
      }
    });
  }

  bool Device(std::string_view body, DeviceProfile* d) {
    return Fields(body, "device", [&](WireReader& m, uint32_t field, WireType t) {
      std::string_view inner;
      switch (field) {
        case fields::kDeviceId:
          return U32(m, t, &d->device);
        case fields::kDeviceName:
          return Str(m, t, &d->device_name);
        case fields::kDeviceUuid:
          return Str(m, t, &d->device_uuid);
        case fields::kFirstStart:
          return S(m, t, &d->first_start_ns);
        case fields::kLastEnd:
          return S(m, t, &d->last_end_ns);
        case fields::kBusy:
          return S(m, t, &d->busy_ns);
        case fields::kCompute:
          return S(m, t, &d->compute_ns);
        case fields::kCommunication:
          return S(m, t, &d->communication_ns);
        case fields::kOverlap:
          return S(m, t, &d->communication_overlap_ns);
        case fields::kKernelCount:
          return U(m, t, &d->kernel_count);
        case fields::kCategory:
          return Indexed(m, t, &d->categories, "category", CategoryStatsField);
        case fields::kSubcategory: {
          if (!Msg(m, t, &inner)) return false;
          std::string name;
          model::CategoryStats stats;
          if (!Charge(sizeof(std::string) + sizeof(stats) + 32)) return false;
          if (!Fields(inner, "subcategory", [&](WireReader& e, uint32_t ef, WireType et) {
                if (ef == fields::kStatName) return Str(e, et, &name);
                return CategoryStatsField(e, ef, et, &stats);
              }))
            return false;
          d->subcategories[std::move(name)] = stats;
          return true;
        }
        case fields::kTopKernel:
          return Msg(m, t, &inner) && Charge(sizeof(KernelStats)) &&
                 Kernel(inner, &d->top_kernels.emplace_back());
        case fields::kTail:
          return Msg(m, t, &inner) && Kernel(inner, &d->tail);
        case fields::kTimeline:
          return Msg(m, t, &inner) && Timeline(inner, &d->timeline);
        case fields::kIdleGaps:
          return Msg(m, t, &inner) &&
                 Fields(inner, "idle gaps", [&](WireReader& g, uint32_t gf, WireType gt) {
                   if (gf == fields::kGapHost) return Duration(g, gt, &d->idle_gaps.host_wait);
                   if (gf == fields::kGapKernel) return Duration(g, gt, &d->idle_gaps.kernel_wait);
                   if (gf == fields::kGapOther) return Duration(g, gt, &d->idle_gaps.other);
                   g.Skip(gt);
                   return g.ok();
                 });
        case fields::kIdleCauses:
          return Msg(m, t, &inner) &&
                 Fields(inner, "idle causes", [&](WireReader& c, uint32_t cf, WireType ct) {
                   if (cf == fields::kCauseIntervals) return U(c, ct, &d->idle_causes.intervals);
                   if (cf == fields::kCause)
                     return Indexed(c, ct, &d->idle_causes.ns, "idle cause",
                                    [](WireReader& e, uint32_t ef, WireType et, int64_t* v) {
                                      if (ef == fields::kStatTime) return S(e, et, v);
                                      e.Skip(et);
                                      return e.ok();
                                    });
                   c.Skip(ct);
                   return c.ok();
                 });
        case fields::kSteps:
          return Msg(m, t, &inner) &&
                 Fields(inner, "steps", [&](WireReader& st, uint32_t sf, WireType stt) {
                   if (sf == fields::kStepPlain) return Duration(st, stt, &d->steps.plain);
                   if (sf == fields::kStepPrefill) return Duration(st, stt, &d->steps.prefill);
                   st.Skip(stt);
                   return st.ok();
                 });
        case fields::kPhases:
          return Msg(m, t, &inner) && Phases(inner, &d->phases);
        case fields::kLaunch:
          return Msg(m, t, &inner) &&
                 Fields(inner, "launch", [&](WireReader& l, uint32_t lf, WireType lt) {
                   model::LaunchStats& x = d->launch;
                   if (lf == fields::kLCpu) return Duration(l, lt, &x.cpu_launch);
                   if (lf == fields::kLDelay) return Duration(l, lt, &x.launch_delay);
                   if (lf == fields::kLShort) return U(l, lt, &x.short_kernels);
                   if (lf == fields::kLGraph) return U(l, lt, &x.graph_launches);
                   if (lf == fields::kLFromGraphs) return U(l, lt, &x.kernels_from_graphs);
                   l.Skip(lt);
                   return l.ok();
                 });
        case fields::kSync:
          return Indexed(m, t, &d->syncs, "sync",
                         [this](WireReader& e, uint32_t ef, WireType et, model::SyncStats* s) {
                           return Sync(e, ef, et, s);
                         });
        case fields::kMemcpy:
          return Indexed(m, t, &d->memcpy, "memcpy", Transfer);
        case fields::kMemset:
          return Msg(m, t, &inner) &&
                 Fields(inner, "memset", [&](WireReader& e, uint32_t ef, WireType et) {
                   return Transfer(e, ef, et, &d->memset);
                 });
        case fields::kAllocations:
          return Msg(m, t, &inner) &&
                 Fields(inner, "allocations", [&](WireReader& a, uint32_t af, WireType at) {
                   model::AllocationStats& x = d->allocations;
                   if (af == fields::kAMalloc) return Duration(a, at, &x.malloc_calls);
                   if (af == fields::kAFree) return Duration(a, at, &x.free_calls);
                   if (af == fields::kABytes) return U(a, at, &x.malloc_bytes);
                   if (af == fields::kASlow) return U(a, at, &x.slow_calls);
                   if (af == fields::kASlowTotal) return S(a, at, &x.slow_total_ns);
                   a.Skip(at);
                   return a.ok();
                 });
        case fields::kCudaGraphs:
          return Msg(m, t, &inner) &&
                 Fields(inner, "cuda graphs", [&](WireReader& a, uint32_t gf, WireType at) {
                   model::CudaGraphStats& x = d->graphs;
                   switch (gf) {
                     case fields::kGLaunches:
                       return U(a, at, &x.launches);
                     case fields::kGLaunchTime:
                       return S(a, at, &x.launch_ns);
                     case fields::kGMeasured:
                       return S(a, at, &x.measured_ns);
                     case fields::kGEstimated:
                       return S(a, at, &x.estimated_ns);
                     case fields::kGUnattributed:
                       return S(a, at, &x.unattributed_ns);
                     case fields::kGDeduplicated:
                       return S(a, at, &x.deduplicated_ns);
                     case fields::kGMaxAge:
                       return S(a, at, &x.max_share_age_ns);
                     case fields::kGChecks:
                       return U(a, at, &x.checks);
                     case fields::kGMaxErrorBp:
                       return U32(a, at, &x.max_error_bp);
                     case fields::kGComposition:
                       return S(a, at, &x.composition_ns);
                     case fields::kGCompositionTimed:
                       return S(a, at, &x.composition_timed_ns);
                     default:
                       a.Skip(at);
                       return a.ok();
                   }
                 });
        default:
          m.Skip(t);
          return m.ok();
      }
    });
  }

  bool RangeRow(std::string_view body, model::RangeStats* r) {
    return Fields(body, "range", [&](WireReader& m, uint32_t field, WireType t) {
      switch (field) {
        case fields::kRsName:
          return Str(m, t, &r->name);
        case fields::kRsDuration:
          return Duration(m, t, &r->duration);
        case fields::kRsGpuOps:
          return U(m, t, &r->gpu_ops);
        case fields::kRsGpuTime:
          return S(m, t, &r->gpu_time_ns);
        default:
          m.Skip(t);
          return m.ok();
      }
    });
  }

  bool Ranges(std::string_view body, model::RangeTable* table) {
    return Fields(body, "ranges", [&](WireReader& m, uint32_t field, WireType t) {
      std::string_view inner;
      switch (field) {
        case fields::kRgRow:
          return Msg(m, t, &inner) && Charge(sizeof(model::RangeStats)) &&
                 RangeRow(inner, &table->rows.emplace_back());
        case fields::kRgTail:
          return Msg(m, t, &inner) && RangeRow(inner, &table->tail);
        case fields::kRgTailNames:
          return U(m, t, &table->tail_names);
        case fields::kRgLate:
          return U(m, t, &table->late);
        default:
          m.Skip(t);
          return m.ok();
      }
    });
  }

  bool Process(std::string_view body, ProcessProfile* p) {
    return Fields(body, "process", [&](WireReader& m, uint32_t field, WireType t) {
      std::string_view inner;
      switch (field) {
        case fields::kPid:
          return U32(m, t, &p->pid);
        case fields::kRank:
          return S32(m, t, &p->rank);
        case fields::kWorldSize:
          return S32(m, t, &p->world_size);
        case fields::kHostname:
          return Str(m, t, &p->hostname);
        case fields::kProfilerCpu:
          return S(m, t, &p->profiler_cpu_ns);
        case fields::kDevice:
          return Msg(m, t, &inner) && Charge(sizeof(DeviceProfile)) &&
                 Device(inner, &p->devices.emplace_back());
        case fields::kRanges:
          return Msg(m, t, &inner) && Ranges(inner, &p->ranges);
        case fields::kDataQuality:
          return Indexed(m, t, &p->data_quality, "data quality",
                         [](WireReader& e, uint32_t ef, WireType et, uint64_t* v) {
                           if (ef == fields::kStatCount) return U(e, et, v);
                           e.Skip(et);
                           return e.ok();
                         });
        default:
          m.Skip(t);
          return m.ok();
      }
    });
  }

  size_t budget_;
  std::string error_;
};

}  // namespace

base::StatusOr<ProfileWindow> DecodeWindow(std::string_view payload) {
  WireReader r(payload);
  const uint64_t major = r.Varint();
  const uint64_t minor = r.Varint();
  if (!r.ok()) return base::DataLossError("window payload: truncated version header");
  if (major != kWindowFormatMajor) {
    return base::UnsupportedError(
        "window payload: format version " + std::to_string(major) + "." + std::to_string(minor) +
        " is not readable by this inferscope (reads " + std::to_string(kWindowFormatMajor) +
        ".x); " + (major > kWindowFormatMajor ? "upgrade inferscope" : "the writer is too old"));
  }
  ProfileWindow window;
  Decoder decoder(payload.size());
  const size_t header = payload.size() - r.remaining();
  if (!decoder.Window(payload.substr(header), &window))
    return base::DataLossError("window payload: corrupt " + decoder.error());
  return window;
}

}  // namespace inferscope::wire
