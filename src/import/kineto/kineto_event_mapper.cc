// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/kineto/kineto_event_mapper.h"

#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "src/model/cuda_api.h"

namespace inferscope::import::kineto {
namespace {

namespace od = simdjson::ondemand;
using model::ApiKind;
using model::DataQuality;
using model::SyncType;

static_assert(simdjson::SIMDJSON_PADDING <= kScanPadding,
              "the importer's buffer padding is too small");

inline std::string_view TrimWs(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  while (!s.empty() && (s[0] == ' ' || s[0] == '\n' || s[0] == '\r' || s[0] == '\t'))
    s.remove_prefix(1);
  return s;
}

bool ReadInt(od::value value, int64_t* out) { return ParseIntToken(value.raw_json_token(), out); }

bool ReadDim3(od::value value, int32_t* out) {
  od::array array;
  if (value.get_array().get(array)) return false;
  int i = 0;
  for (auto element : array) {
    od::value v;
    if (std::move(element).get(v)) return false;
    int64_t x = 0;
    if (i < 3 && ReadInt(v, &x)) out[i] = static_cast<int32_t>(x);
    ++i;
  }
  return true;
}

// The key text as written in the file (escapes left alone: no Kineto key needs them).
inline std::string_view RawKey(od::field& field, const char* buffer_end) {
  const char* begin = field.key().raw();
  const void* quote = std::memchr(begin, '"', static_cast<size_t>(buffer_end - begin));
  if (!quote) return {};
  return std::string_view(begin, static_cast<size_t>(static_cast<const char*>(quote) - begin));
}

inline uint32_t ToU32(int64_t v, uint32_t fallback) {
  return v < 0 || v > std::numeric_limits<uint32_t>::max() ? fallback : static_cast<uint32_t>(v);
}

SyncType ClassifySyncKind(std::string_view kind) {
  if (kind == "Stream Sync") return SyncType::kStream;
  if (kind == "Event Sync") return SyncType::kEvent;
  if (kind == "Context Sync" || kind == "Device Sync") return SyncType::kDevice;
  if (kind == "Stream Wait Event") return SyncType::kStreamWaitEvent;
  return SyncType::kUnknown;
}

}  // namespace

bool ParseMicrosToNs(std::string_view s, int64_t* ns) {
  {
    // Kineto's usual form, "1669783687464200" or "12.345": at most 16 integer digits and a
    // fraction, no sign, exponent, quote or space. Exact in 64 bits, and the same rounding as the
    // general path below (the first dropped digit, half away from zero); anything else goes there.
    size_t i = 0;
    uint64_t whole = 0;
    for (; i < s.size() && i < 17 && s[i] >= '0' && s[i] <= '9'; ++i)
      whole = whole * 10 + static_cast<unsigned>(s[i] - '0');
    constexpr uint64_t kMaxWhole = (std::numeric_limits<int64_t>::max() - 1000) / 1000;
    if (i > 0 && i <= 16 && whole <= kMaxWhole) {
      uint64_t frac = 0;
      int frac_digits = 0;
      bool round_up = false;
      bool plain = true;
      if (i < s.size() && s[i] == '.') {
        for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++frac_digits) {
          if (frac_digits < 3) {
            frac = frac * 10 + static_cast<unsigned>(s[i] - '0');
          } else if (frac_digits == 3) {
            round_up = s[i] >= '5';
          }
        }
        plain = frac_digits > 0;
      }
      if (plain && i == s.size()) {
        for (int k = frac_digits; k < 3; ++k) frac *= 10;
        *ns = static_cast<int64_t>(whole * 1000 + frac + (round_up ? 1 : 0));
        return true;
      }
    }
  }
  s = TrimWs(s);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = TrimWs(s.substr(1, s.size() - 2));
  using u128 = unsigned __int128;
  constexpr u128 kMantissaLimit = static_cast<u128>(1000000000000000000ull) * 1000000000000ull;
  size_t i = 0;
  const bool negative = i < s.size() && s[i] == '-';
  if (negative) ++i;
  u128 mantissa = 0;
  int64_t exp10 = 0;
  bool any_digit = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    any_digit = true;
    if (mantissa < kMantissaLimit) {
      mantissa = mantissa * 10 + static_cast<unsigned>(s[i] - '0');
    } else {
      ++exp10;  // far beyond int64 ns anyway; keep the magnitude
    }
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      any_digit = true;
      if (mantissa < kMantissaLimit) {
        mantissa = mantissa * 10 + static_cast<unsigned>(s[i] - '0');
        --exp10;
      }
    }
  }
  if (!any_digit) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) exp_negative = s[i++] == '-';
    int64_t e = 0;
    bool exp_digit = false;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      exp_digit = true;
      if (e < 100000) e = e * 10 + (s[i] - '0');
    }
    if (!exp_digit) return false;
    exp10 += exp_negative ? -e : e;
  }
  if (i != s.size()) return false;
  int64_t shift = exp10 + 3;  // microseconds -> nanoseconds
  const u128 kMax = static_cast<u128>(std::numeric_limits<int64_t>::max());
  if (mantissa == 0) {
    *ns = 0;
    return true;
  }
  if (shift >= 0) {
    for (; shift > 0; --shift) {
      mantissa *= 10;
      if (mantissa > kMax) return false;
    }
  } else if (shift < -40) {
    mantissa = 0;  // less than 1e-9 ns
  } else {
    for (int64_t k = -shift; k > 1; --k) mantissa /= 10;
    const bool round_up = mantissa % 10 >= 5;
    mantissa = mantissa / 10 + (round_up ? 1 : 0);
  }
  if (mantissa > kMax) return false;
  *ns = negative ? -static_cast<int64_t>(mantissa) : static_cast<int64_t>(mantissa);
  return true;
}

model::MemcpyKind ClassifyMemcpyName(std::string_view name, bool* pageable) {
  *pageable = name.find("Pageable") != std::string_view::npos;
  const size_t at = name.find("Memcpy ");
  if (at == std::string_view::npos || name.size() < at + 11) return model::MemcpyKind::kUnknown;
  const std::string_view dir = name.substr(at + 7, 4);
  if (dir == "HtoD") return model::MemcpyKind::kHtoD;
  if (dir == "DtoH") return model::MemcpyKind::kDtoH;
  if (dir == "DtoD") return model::MemcpyKind::kDtoD;
  if (dir == "HtoH") return model::MemcpyKind::kHtoH;
  if (dir == "PtoP") return model::MemcpyKind::kPtoP;
  return model::MemcpyKind::kUnknown;
}

KinetoEventMapper::KinetoEventMapper(model::NameTable* names, model::EventSink* sink,
                                     ImportStats* stats, bool host_ops, bool gpu_annotations)
    : names_(names),
      sink_(sink),
      stats_(stats),
      host_ops_(host_ops),
      gpu_annotations_(gpu_annotations) {}

KinetoEventMapper::Kind KinetoEventMapper::ClassifyCat(std::string_view cat) {
  switch (cat.size()) {
    case 6:
      if (cat == "kernel" || cat == "Kernel") return Kind::kKernel;
      if (cat == "Memcpy") return Kind::kMemcpy;
      if (cat == "Memset") return Kind::kMemset;
      if (cat == "cpu_op") return Kind::kCpuOp;
      break;
    case 7:
      if (cat == "Runtime") return Kind::kApi;
      break;
    case 8:
      if (cat == "Operator") return Kind::kCpuOp;  // the 2021 format's cpu_op
      break;
    case 9:
      if (cat == "cuda_sync") return Kind::kSync;
      break;
    case 10:
      if (cat == "gpu_memcpy") return Kind::kMemcpy;
      if (cat == "gpu_memset") return Kind::kMemset;
      break;
    case 11:
      if (cat == "cuda_driver") return Kind::kApi;
      break;
    case 12:
      if (cat == "cuda_runtime") return Kind::kApi;
      break;
    case 15:
      if (cat == "user_annotation") return Kind::kNvtx;
      if (cat == "python_function") return Kind::kPython;
      break;
    case 17:
      if (cat == "cpu_instant_event") return Kind::kHostSkip;
      break;
    case 19:
      if (cat == "gpu_user_annotation") return Kind::kGpuAnnotation;
      break;
    default:
      break;
  }
  return Kind::kSkip;
}

bool KinetoEventMapper::ParseArgs(od::value args, Fields* f) {
  od::object object;
  if (args.get_object().get(object)) return true;  // odd "args": ignore, the event may still do
  for (auto field_result : object) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    const std::string_view key = RawKey(field, buffer_end_);
    od::value v = field.value();
    switch (key.size()) {
      case 4:
        if (key == "grid") ReadDim3(v, f->grid);
        break;
      case 5:
        if (key == "block") ReadDim3(v, f->block);
        if (key == "bytes") ReadInt(v, &f->bytes);
        break;
      case 6:
        if (key == "device") ReadInt(v, &f->device);
        if (key == "stream") ReadInt(v, &f->stream);
        break;
      case 7:
        if (key == "graphId") ReadInt(v, &f->graph_id);
        break;
      case 8:
        if (key == "graph id" || key == "graph_id") ReadInt(v, &f->graph_id);
        break;
      case 11:
        if (key == "correlation") ReadInt(v, &f->correlation);
        break;
      case 13:
        if (key == "shared memory") ReadInt(v, &f->shared_bytes);
        break;
      case 14:
        if (key == "cuda_sync_kind" && v.get_string().get(f->sync_kind)) return false;
        break;
      case 20:
        if (key == "registers per thread") ReadInt(v, &f->registers);
        break;
      default:
        break;
    }
  }
  return true;
}

bool KinetoEventMapper::ParseFields(const char* begin, size_t size, Fields* f, bool host_range) {
  if (host_range && host_range_scanner_) {
    // Most operator events: read in place, no simdjson document (host_range_scanner.h says why).
    if (ScanHostRangeEvent(begin, size, f)) {
      ++stats_->host_ranges_scanned;
      return true;
    }
    *f = Fields();  // not sure: simdjson decides
  }
  od::document doc;
  const size_t capacity = static_cast<size_t>(buffer_end_ - begin);
  if (parser_.iterate(begin, size, capacity).get(doc)) return false;
  od::object object;
  if (doc.get_object().get(object)) return false;
  for (auto field_result : object) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    const std::string_view key = RawKey(field, buffer_end_);
    od::value v = field.value();
    switch (key.size()) {
      case 2:
        if (key == "ts") {
          f->ts = v.raw_json_token();
        } else if (key == "ph") {
          if (v.get_string().get(f->ph)) return false;
        }
        break;
      case 3:
        if (key == "cat") {
          if (v.get_string().get(f->cat)) return false;
          f->has_cat = true;
        } else if (key == "dur") {
          f->dur = v.raw_json_token();
        } else if (key == "pid") {
          f->has_pid = ReadInt(v, &f->pid);
        } else if (key == "tid") {
          f->has_tid = ReadInt(v, &f->tid);
        }
        break;
      case 4:
        if (key == "name") {
          if (v.get_string().get(f->name)) return false;
          f->has_name = true;
        } else if (key == "args") {
          if (!host_range && !ParseArgs(v, f)) return false;
        }
        break;
      default:
        break;
    }
    if (host_range && f->Complete()) break;
  }
  return true;
}

KinetoEventMapper::Kind KinetoEventMapper::Demote(Kind kind, const char* begin, size_t size) const {
  switch (kind) {
    case Kind::kCpuOp:
      return host_ops_ ? kind : Kind::kHostSkip;
    case Kind::kPython: {
      // Only modules matter (`with_modules` / `with_stack` name them "nn.Module: Linear_0"): a
      // byte search of the raw event keeps the other python_function events (most of a
      // `with_stack` trace) unparsed.
      constexpr std::string_view kModule = "\"nn.Module: ";
      if (!host_ops_ || std::string_view(begin, size).find(kModule) == std::string_view::npos)
        return Kind::kHostSkip;
      return kind;
    }
    case Kind::kGpuAnnotation:
      return gpu_annotations_ ? kind : Kind::kSkip;
    default:
      return kind;
  }
}

void KinetoEventMapper::OnEvent(const char* begin, size_t size, std::string_view cat,
                                bool cat_known, const EventStrings* strings) {
  ++stats_->events_read;
  Kind kind = Kind::kSkip;
  if (cat_known) {
    kind = Demote(ClassifyCat(cat), begin, size);
    // Events the model does not carry are counted, not parsed (most of a trace's bytes).
    if (kind == Kind::kSkip || (kind == Kind::kHostSkip && pid_known_)) {
      ++stats_->events_skipped;
      return;
    }
    if (strings != nullptr && host_range_scanner_ &&
        (kind == Kind::kCpuOp || kind == Kind::kPython) &&
        MapKinetoOperator(kind, begin, size, *strings))
      return;
  }
  Fields f;
  if (!ParseFields(begin, size, &f, kind == Kind::kCpuOp || kind == Kind::kPython)) {
    Quality(DataQuality::kMalformedEvent);
    return;
  }
  if (!cat_known) {
    if (!f.has_cat) {  // metadata ("ph": "M") and similar
      ++stats_->events_skipped;
      return;
    }
    kind = Demote(ClassifyCat(f.cat), begin, size);
  }
  const bool host_side = kind == Kind::kApi || kind == Kind::kNvtx || kind == Kind::kCpuOp ||
                         kind == Kind::kPython || kind == Kind::kHostSkip;
  if (!pid_known_ && host_side && f.has_pid && f.pid >= 0) {
    DecidePid(ToU32(f.pid, 0));
  }
  if (kind == Kind::kSkip || kind == Kind::kHostSkip || (!f.ph.empty() && f.ph != "X")) {
    ++stats_->events_skipped;
    return;
  }
  MapEvent(kind, f);
}

bool KinetoEventMapper::Times(const Fields& f, int64_t* start_ns, int64_t* end_ns) {
  int64_t dur_ns = 0;
  if (f.ts.empty() || f.dur.empty() || !ParseMicrosToNs(f.ts, start_ns) ||
      !ParseMicrosToNs(f.dur, &dur_ns) || *start_ns < 0) {
    Quality(DataQuality::kMalformedEvent);
    return false;
  }
  if (*start_ns == 0) {
    Quality(DataQuality::kZeroTimestamp);
    return false;
  }
  if (dur_ns < 0) {
    Quality(DataQuality::kReversedTimestamp);
    return false;
  }
  if (__builtin_add_overflow(*start_ns, dur_ns, end_ns)) {
    Quality(DataQuality::kMalformedEvent);
    return false;
  }
  return true;
}

void KinetoEventMapper::MapEvent(Kind kind, const Fields& f) {
  int64_t start_ns = 0, end_ns = 0;
  const bool needs_name = kind == Kind::kKernel || kind == Kind::kApi || kind == Kind::kNvtx ||
                          kind == Kind::kCpuOp || kind == Kind::kPython ||
                          kind == Kind::kGpuAnnotation;
  if (needs_name && !f.has_name) {
    Quality(DataQuality::kMalformedEvent);
    return;
  }
  if (!Times(f, &start_ns, &end_ns)) return;
  const uint32_t correlation = ToU32(f.correlation, 0);
  switch (kind) {
    case Kind::kKernel: {
      model::KernelEvent e;
      e.start_ns = start_ns;
      e.end_ns = end_ns;
      e.device = ToU32(f.device >= 0 ? f.device : (f.has_pid ? f.pid : 0), 0);
      e.stream = ToU32(f.stream >= 0 ? f.stream : (f.has_tid ? f.tid : -1), model::kUnknownStream);
      e.name = names_->Intern(f.name);
      e.correlation_id = correlation;
      e.graph_id = ToU32(f.graph_id, 0);
      std::memcpy(e.grid, f.grid, sizeof(e.grid));
      std::memcpy(e.block, f.block, sizeof(e.block));
      ++stats_->kernels;
      if (kernel_resources_) {
        model::KernelResourcesEvent r;
        r.name = e.name;
        r.resources.registers_per_thread =
            model::KernelResourceValue(f.registers, model::kMaxRegistersPerThread);
        r.resources.shared_bytes = model::KernelResourceValue(f.shared_bytes);
        if (resources_.Changed(r.name, r.resources)) Emit(r);  // before the kernel it describes
      }
      Emit(e);
      break;
    }
    case Kind::kMemcpy: {
      model::MemcpyEvent e;
      e.start_ns = start_ns;
      e.end_ns = end_ns;
      e.device = ToU32(f.device >= 0 ? f.device : (f.has_pid ? f.pid : 0), 0);
      e.stream = ToU32(f.stream >= 0 ? f.stream : (f.has_tid ? f.tid : -1), model::kUnknownStream);
      e.correlation_id = correlation;
      e.bytes = f.bytes > 0 ? static_cast<uint64_t>(f.bytes) : 0;
      e.kind = ClassifyMemcpyName(f.name, &e.pageable);
      Emit(e);
      break;
    }
    case Kind::kMemset: {
      model::MemsetEvent e;
      e.start_ns = start_ns;
      e.end_ns = end_ns;
      e.device = ToU32(f.device >= 0 ? f.device : (f.has_pid ? f.pid : 0), 0);
      e.stream = ToU32(f.stream >= 0 ? f.stream : (f.has_tid ? f.tid : -1), model::kUnknownStream);
      e.correlation_id = correlation;
      e.bytes = f.bytes > 0 ? static_cast<uint64_t>(f.bytes) : 0;
      Emit(e);
      break;
    }
    case Kind::kSync: {
      model::SyncEvent e;
      e.start_ns = start_ns;
      e.end_ns = end_ns;
      e.tid = 0;  // Kineto puts cuda_sync on the stream's row; the waiting host thread is unknown
      e.device = ToU32(f.device, model::kUnknownDevice);
      e.stream = ToU32(f.stream, model::kUnknownStream);
      e.correlation_id = correlation;
      e.type = ClassifySyncKind(f.sync_kind.empty() ? f.name : f.sync_kind);
      Emit(e);
      break;
    }
    case Kind::kApi: {
      model::ApiCallEvent e;
      e.start_ns = start_ns;
      e.end_ns = end_ns;
      e.tid = ToU32(f.has_tid ? f.tid : 0, 0);
      e.correlation_id = correlation;
      e.name = names_->Intern(f.name);
      if (e.name >= api_kind_cache_.size()) api_kind_cache_.resize(e.name + 1, 0xff);
      uint8_t& cached = api_kind_cache_[e.name];
      if (cached == 0xff) {
        const model::CudaApiClass api = model::ClassifyCudaApi(f.name);
        cached = static_cast<uint8_t>(static_cast<uint8_t>(api.kind) |
                                      (static_cast<uint8_t>(api.sync) << 4));
      }
      e.kind = static_cast<ApiKind>(cached & 0xf);
      e.sync_type = static_cast<SyncType>(cached >> 4);
      e.device = ToU32(f.device, model::kUnknownDevice);
      if (e.kind == ApiKind::kMalloc && f.bytes > 0) e.bytes = static_cast<uint64_t>(f.bytes);
      Emit(e);
      break;
    }
    case Kind::kNvtx: {
      model::NvtxEvent e;
      e.start_ns = start_ns;
      e.end_ns = end_ns;
      e.tid = ToU32(f.has_tid ? f.tid : 0, 0);
      e.name = names_->Intern(f.name);
      Emit(e);
      break;
    }
    case Kind::kCpuOp:
    case Kind::kPython: {
      if (kind == Kind::kPython && !f.name.starts_with("nn.Module: ")) break;
      model::ViewRangeEvent e;
      e.start_ns = start_ns;
      e.end_ns = end_ns;
      e.tid = ToU32(f.has_tid ? f.tid : 0, 0);
      e.name = InternHostRangeName(f.name);
      e.kind = kind == Kind::kCpuOp ? model::ViewRangeKind::kCpuOp : model::ViewRangeKind::kModule;
      Emit(e);
      break;
    }
    case Kind::kGpuAnnotation: {
      // On the GPU's row: "pid" is the device and "tid" the stream, as for kernels.
      model::ViewRangeEvent e;
      e.start_ns = start_ns;
      e.end_ns = end_ns;
      e.device = ToU32(f.device >= 0 ? f.device : (f.has_pid ? f.pid : 0), 0);
      e.tid = ToU32(f.stream >= 0 ? f.stream : (f.has_tid ? f.tid : -1), model::kUnknownStream);
      e.name = names_->Intern(f.name);
      e.kind = model::ViewRangeKind::kGpuAnnotation;
      Emit(e);
      break;
    }
    case Kind::kHostSkip:
    case Kind::kSkip:
      break;
  }
}

bool KinetoEventMapper::MapKinetoOperator(Kind kind, const char* begin, size_t size,
                                          const EventStrings& strings) {
  KinetoOperator op;
  int64_t end_ns = 0;
  // A zero start or an overflowing end is a data-quality count: the general path's to make.
  if (!ScanKinetoOperator(begin, size, strings, &op) || op.start_ns == 0 ||
      __builtin_add_overflow(op.start_ns, op.dur_ns, &end_ns))
    return false;
  ++stats_->host_ranges_scanned;
  // What OnEvent and MapEvent do with the same fields ("ph" is "X", the numbers are not negative).
  if (!pid_known_) DecidePid(ToU32(op.pid, 0));
  if (kind == Kind::kPython && !op.name.starts_with("nn.Module: ")) return true;
  model::ViewRangeEvent e;
  e.start_ns = op.start_ns;
  e.end_ns = end_ns;
  e.tid = ToU32(op.tid, 0);
  e.name = InternHostRangeName(op.name);
  e.kind = kind == Kind::kCpuOp ? model::ViewRangeKind::kCpuOp : model::ViewRangeKind::kModule;
  Emit(e);
  return true;
}

model::NameId KinetoEventMapper::InternHostRangeName(std::string_view name) {
  if (name.size() < 8) return names_->Intern(name);
  uint64_t head = 0, tail = 0;
  std::memcpy(&head, name.data(), 8);
  std::memcpy(&tail, name.data() + name.size() - 8, 8);
  const uint64_t mix =
      (head * 0x9e3779b97f4a7c15ull) ^ (tail * 0xc2b2ae3d27d4eb4full) ^ name.size();
  model::NameId& slot = host_name_cache_[mix >> (64 - kHostNameCacheBits)];
  // A hit is checked against the table, so the id is always the one Intern would return.
  if (slot != model::kNoName && names_->Get(slot) == name) return slot;
  slot = names_->Intern(name);
  return slot;
}

void KinetoEventMapper::OnTopLevelMember(std::string_view key, const char* begin, size_t size) {
  if (key == "baseTimeNanoseconds") {
    // The epoch time of the trace clock's zero: what puts the traces of several hosts (each on
    // its own monotonic clock) on one wall clock.
    int64_t v = 0;
    if (ParseIntToken(std::string_view(begin, size), &v) && v > 0) stats_->wall_clock_offset_ns = v;
    return;
  }
  if (key != "distributedInfo" && key != "deviceProperties") return;
  od::document doc;
  if (parser_.iterate(begin, size, static_cast<size_t>(buffer_end_ - begin)).get(doc)) return;
  if (key == "distributedInfo") {
    od::object object;
    if (doc.get_object().get(object)) return;
    for (auto field_result : object) {
      od::field field;
      if (std::move(field_result).get(field)) return;
      const std::string_view k = RawKey(field, buffer_end_);
      int64_t v = 0;
      if (k == "rank" && ReadInt(field.value(), &v)) rank_ = static_cast<int32_t>(v);
      if (k == "world_size" && ReadInt(field.value(), &v)) world_size_ = static_cast<int32_t>(v);
    }
    if (pid_known_) AnnounceProcess();
    return;
  }
  od::array array;
  if (doc.get_array().get(array)) return;
  for (auto element : array) {
    od::object object;
    if (element.get_object().get(object)) return;
    model::DeviceInfo device;
    bool has_id = false;
    for (auto field_result : object) {
      od::field field;
      if (std::move(field_result).get(field)) return;
      const std::string_view k = RawKey(field, buffer_end_);
      if (k == "id") {
        int64_t id = 0;
        if (ReadInt(field.value(), &id) && id >= 0) {
          device.device = ToU32(id, 0);
          has_id = true;
        }
      } else if (k == "name") {
        std::string_view name;
        if (!field.value().get_string().get(name)) device.name = names_->Intern(name);
      }
    }
    if (!has_id) continue;
    if (pid_known_) {
      device.pid = pid_;
      Sink()->OnDevice(device);
    } else {
      devices_.push_back(device);
    }
  }
}

void KinetoEventMapper::AnnounceProcess() {
  model::ProcessInfo process;
  process.pid = pid_;
  process.rank = rank_;
  process.world_size = world_size_;
  Sink()->OnProcess(process);
}

void KinetoEventMapper::DecidePid(uint32_t pid) {
  pid_known_ = true;
  pid_ = pid;
  AnnounceProcess();
  for (model::DeviceInfo& device : devices_) {
    device.pid = pid_;
    Sink()->OnDevice(device);
  }
  devices_.clear();
  for (const Pending& pending : pending_) Deliver(pending);
  pending_.clear();
  pending_.shrink_to_fit();
}

void KinetoEventMapper::Deliver(const Pending& pending) {
  std::visit(
      [this](auto event) {
        if constexpr (std::is_same_v<decltype(event), DataQualityRecord>) {
          Sink()->OnDataQuality(pid_, event.counter);
        } else {
          event.pid = pid_;
          Send(event);
        }
      },
      pending);
}

template <typename T>
void KinetoEventMapper::Send(const T& event) {
  if constexpr (std::is_same_v<T, model::KernelEvent>) Sink()->OnKernel(event);
  if constexpr (std::is_same_v<T, model::MemcpyEvent>) Sink()->OnMemcpy(event);
  if constexpr (std::is_same_v<T, model::MemsetEvent>) Sink()->OnMemset(event);
  if constexpr (std::is_same_v<T, model::SyncEvent>) Sink()->OnSync(event);
  if constexpr (std::is_same_v<T, model::ApiCallEvent>) Sink()->OnApiCall(event);
  if constexpr (std::is_same_v<T, model::NvtxEvent>) Sink()->OnNvtx(event);
  if constexpr (std::is_same_v<T, model::ViewRangeEvent>) {
    view_ranges_.push_back(event);
    if (view_ranges_.size() >= kViewRangeRun) FlushViewRanges();
  }
  if constexpr (std::is_same_v<T, model::KernelResourcesEvent>) Sink()->OnKernelResources(event);
}

template <typename T>
void KinetoEventMapper::Emit(T event) {
  if (pid_known_) {
    event.pid = pid_;
    Send(event);
    return;
  }
  pending_.emplace_back(event);
  // A trace whose first many events are all GPU-side: give up waiting for a host pid.
  if (pending_.size() >= kMaxPending) DecidePid(0);
}

void KinetoEventMapper::Quality(DataQuality counter) {
  if (pid_known_) {
    Sink()->OnDataQuality(pid_, counter);
  } else {
    pending_.emplace_back(DataQualityRecord{counter});
    if (pending_.size() >= kMaxPending) DecidePid(0);
  }
}

void KinetoEventMapper::FlushViewRanges() {
  if (view_ranges_.empty()) return;
  sink_->OnViewRanges(view_ranges_.data(), view_ranges_.size());
  view_ranges_.clear();
}

void KinetoEventMapper::Finish() {
  if (!pid_known_) {
    DecidePid(0);
  } else {
    AnnounceProcess();  // rank information may have come after the events
  }
  FlushViewRanges();
}

}  // namespace inferscope::import::kineto
