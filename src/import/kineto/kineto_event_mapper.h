// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Turns the Kineto trace events found by TraceJsonScanner into model events. Each event used (GPU
// activity, CUDA API calls, user annotations) is parsed with simdjson On-Demand; host-side events
// the model does not carry (cpu_op, python_function, flows, ...) are counted without being parsed.

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

#include "src/import/import_stats.h"
#include "src/import/kineto/host_range_scanner.h"
#include "src/import/kineto/json_scanner.h"
#include "src/model/events.h"
#include "src/model/name_table.h"

namespace inferscope::import::kineto {

// Parses a JSON number of microseconds ("1695835535123456.789", "12", "1.5e3") into integer
// nanoseconds exactly, from its text: no double rounding. Fractions below 1 ns are rounded half
// away from zero. A quoted number is accepted. False if the text is not a number or overflows
// int64.
bool ParseMicrosToNs(std::string_view text, int64_t* ns);

// Maps a Kineto memcpy activity name ("Memcpy HtoD (Pageable -> Device)") to its direction.
model::MemcpyKind ClassifyMemcpyName(std::string_view name, bool* pageable);

// Receives scanner output and drives the sink. All events of a file belong to one process: the pid
// of the first host-side event (GPU events carry the device index as pid) or 0 if there is none.
// Events seen before that pid is known wait in a small bounded queue.
class KinetoEventMapper final : public ScanHandler {
 public:
  // Also deliver model::ViewRangeEvents, which are otherwise counted without being parsed:
  // `host_ops` cpu_op and `nn.Module: ...` python_function events, `gpu_annotations`
  // gpu_user_annotation events.
  KinetoEventMapper(model::NameTable* names, model::EventSink* sink, ImportStats* stats,
                    bool host_ops = false, bool gpu_annotations = false);

  // Also deliver model::KernelResourcesEvents from the kernels' "registers per thread" and
  // "shared memory" args (Kineto writes static + dynamic shared memory as one sum), one per change
  // of a kernel name's resources.
  void set_kernel_resources(bool on) { kernel_resources_ = on; }

  // End of the readable buffer that holds the spans passed to OnEvent/OnTopLevelMember; simdjson
  // needs SIMDJSON_PADDING readable bytes after a document.
  void set_buffer_end(const char* end) { buffer_end_ = end; }

  // Whether operator and module events go through ScanHostRangeEvent first (the default) or
  // straight to simdjson (the reference that tests and the differential fuzzer compare against).
  // ImportStats::host_ranges_scanned counts the events it took.
  void set_host_range_scanner(bool on) { host_range_scanner_ = on; }

  void OnEvent(const char* begin, size_t size, std::string_view cat, bool cat_known,
               const EventStrings* strings) override;
  void OnTopLevelMember(std::string_view key, const char* begin, size_t size) override;

  // Flushes queued events and announces the process (again) with the final rank information.
  void Finish();

  // Delivers the view ranges held back for one OnViewRanges call (any other event delivers them
  // first, so the sink sees the file's order; Finish too). For an import that stops early.
  void FlushViewRanges();

 private:
  // What the importer reads from one event (and its "args").
  struct Fields : HostRangeFields {
    std::string_view sync_kind;
    int64_t device = -1, stream = -1, correlation = -1, graph_id = -1;
    int64_t bytes = -1;
    int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    int64_t registers = -1, shared_bytes = -1;  // -1: absent or not an integer
  };
  enum class Kind : uint8_t {
    kKernel,
    kMemcpy,
    kMemset,
    kApi,
    kSync,
    kNvtx,
    kCpuOp,          // a view range when asked for, else like kHostSkip
    kPython,         // python_function: a module view range when asked for and so named
    kGpuAnnotation,  // gpu_user_annotation: a view range when asked for, else like kSkip
    kHostSkip,
    kSkip
  };
  struct DataQualityRecord {
    model::DataQuality counter;
  };
  using Pending =
      std::variant<model::KernelEvent, model::MemcpyEvent, model::MemsetEvent, model::SyncEvent,
                   model::ApiCallEvent, model::NvtxEvent, model::ViewRangeEvent,
                   model::KernelResourcesEvent, DataQualityRecord>;
  static constexpr size_t kMaxPending = 1 << 16;

  static Kind ClassifyCat(std::string_view cat);
  // The kinds that are view ranges fall back to skipped ones when those are not asked for.
  Kind Demote(Kind kind, const char* begin, size_t size) const;
  // `host_range`: an operator or module, which needs no "args" (their input shapes are most of a
  // cpu_op's bytes): they are skipped, and parsing stops once the fields it needs are read.
  bool ParseFields(const char* begin, size_t size, Fields* f, bool host_range = false);
  bool ParseArgs(simdjson::ondemand::value args, Fields* f);
  void MapEvent(Kind kind, const Fields& f);
  // An operator or module in Kineto's own layout, read from the scanner's string offsets
  // (ScanKinetoOperator) and delivered; false: not taken, the general path decides.
  bool MapKinetoOperator(Kind kind, const char* begin, size_t size, const EventStrings& strings);
  bool Times(const Fields& f, int64_t* start_ns, int64_t* end_ns);

  // NameTable::Intern for operator and module names, through a small cache: a trace has tens of
  // thousands of operators but a few hundred names, and a hash per operator into the table would
  // be paid on the import's thread (docs/benchmarks.md, "Views").
  model::NameId InternHostRangeName(std::string_view name);

  // The sink, once the view ranges held back are delivered: every delivery but theirs goes here.
  model::EventSink* Sink() {
    if (!view_ranges_.empty()) FlushViewRanges();  // inline: every delivery passes here
    return sink_;
  }
  void DecidePid(uint32_t pid);
  void AnnounceProcess();
  void Quality(model::DataQuality counter);
  template <typename T>
  void Emit(T event);
  template <typename T>
  void Send(const T& event);
  void Deliver(const Pending& pending);

  model::NameTable* names_;
  model::EventSink* sink_;
  ImportStats* stats_;
  const bool host_ops_, gpu_annotations_;
  bool kernel_resources_ = false;
  model::KernelResourcesInterner resources_;
  const char* buffer_end_ = nullptr;
  bool host_range_scanner_ = true;
  simdjson::ondemand::parser parser_;

  bool pid_known_ = false;
  uint32_t pid_ = 0;
  int32_t rank_ = -1;
  int32_t world_size_ = -1;
  std::vector<model::DeviceInfo> devices_;  // announced once the pid is known
  std::vector<Pending> pending_;
  // Operators and modules, delivered as runs (EventSink::OnViewRanges): one call per operator
  // through the pipelined sink and into the views cost more than reading them.
  static constexpr size_t kViewRangeRun = 512;
  std::vector<model::ViewRangeEvent> view_ranges_;
  static constexpr int kHostNameCacheBits = 10;
  std::vector<model::NameId> host_name_cache_ =
      std::vector<model::NameId>(size_t{1} << kHostNameCacheBits, model::kNoName);
  std::vector<uint8_t> api_kind_cache_;  // by NameId: ApiKind | SyncType << 4; 0xff = not yet
};

}  // namespace inferscope::import::kineto
