// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// One shape for every kind of host telemetry (GPU metrics, engine metrics, request spans, ...):
// a TelemetryKind names the kind (its store record kind, its report JSON key and section title)
// and parses its stored windows; a TelemetryData is one window of it that merges, writes its
// JSON and renders its report text. The store, the range query, the report and `diff` work on
// these and iterate the registry (TelemetryRegistry), so a new collector brings its own folder
// and one registration line (AGENTS.md, "Adding a collector").

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/base/json_writer.h"
#include "src/base/status.h"

namespace inferscope::telemetry {

class TelemetryKind;
class Collector;

using MetricLabels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// Where a kind writes its Prometheus families (/metrics, Prometheus text format 0.0.4).
class MetricsSink {
 public:
  virtual ~MetricsSink() = default;
  // Starts a family; its HELP/TYPE header is written with its first sample.
  virtual void Family(std::string_view name, std::string_view type, std::string_view help) = 0;
  // `suffix` extends the family name (summaries: "_sum", "_count").
  virtual void Sample(MetricLabels labels, double value, std::string_view suffix = {}) = 0;
};

// One window (or a merged range) of one kind's telemetry.
class TelemetryData {
 public:
  virtual ~TelemetryData() = default;
  virtual const TelemetryKind& kind() const = 0;
  // Adds `other`, which must be of the same kind (anything else is ignored).
  virtual void Merge(const TelemetryData& other) = 0;
  // The JSON object the store keeps and the report shows under kind().report_key().
  virtual void WriteJson(base::JsonWriter& w) const = 0;
  // The report's text section body, newline-terminated lines of at most 100 columns.
  virtual void RenderText(std::string* out) const = 0;
  virtual std::unique_ptr<TelemetryData> Clone() const = 0;
  // The latest window's series on /metrics (gauges; `inferscope_<kind>_...`). None by default.
  virtual void WriteMetrics(MetricsSink& /*sink*/) const {}

  std::string ToJson() const;
};

// What a kind of telemetry is called where it is stored and reported. Instances are immutable
// singletons that live for the whole program.
class TelemetryKind {
 public:
  TelemetryKind(std::string record_kind_name, std::string json_key, std::string section_title)
      : record_kind_(std::move(record_kind_name)),
        report_key_(std::move(json_key)),
        title_(std::move(section_title)) {}
  virtual ~TelemetryKind() = default;
  TelemetryKind(const TelemetryKind&) = delete;
  TelemetryKind& operator=(const TelemetryKind&) = delete;

  // The store's TelemetryRecord::kind ("gpu"); never changes once released (stores keep it).
  const std::string& record_kind() const { return record_kind_; }
  // The top-level key of the JSON report ("gpu_metrics"; docs/report-schema.md).
  const std::string& report_key() const { return report_key_; }
  // The text and markdown section title.
  const std::string& title() const { return title_; }

  // Parses what TelemetryData::WriteJson wrote; an error for anything else.
  virtual base::StatusOr<std::unique_ptr<TelemetryData>> FromJson(std::string_view json) const = 0;

  // The agent's collector of this kind, started with the agent's telemetry (Telemetry polls it on
  // its own thread and takes a window whenever the others close one). Null (the default) when
  // the kind has no generic collector: the built-in three are driven by Telemetry itself, since
  // each keeps its own clock (NVML sampling, scrape intervals, the span grace period).
  virtual std::unique_ptr<Collector> NewCollector() const { return nullptr; }

 private:
  const std::string record_kind_, report_key_, title_;
};

// Collects one kind on the agent. Poll runs on the collector thread, TakeWindow on the thread that
// closes windows: an implementation guards what both touch.
class Collector {
 public:
  virtual ~Collector() = default;
  // How often Poll runs.
  virtual int64_t poll_interval_ns() const { return 1'000'000'000; }
  // Samples whatever the collector watches; `now_ns` is Unix time.
  virtual void Poll(int64_t now_ns) = 0;
  // What was collected in [start_ns, end_ns), or null when there is nothing worth storing.
  virtual std::unique_ptr<TelemetryData> TakeWindow(int64_t start_ns, int64_t end_ns) = 0;
};

// Adapts a window type with `void Merge(const W&)`, `void WriteJson(base::JsonWriter&) const`
// and `static base::StatusOr<W> FromJson(std::string_view)`, plus a text renderer, to the
// interface: a kind is then one object, `WindowKind<W> kGpu{"gpu", "gpu_metrics", ..., &Render}`.
template <typename W>
class WindowKind;

template <typename W>
class WindowData final : public TelemetryData {
 public:
  WindowData(const WindowKind<W>& kind, W window) : kind_(kind), window_(std::move(window)) {}
  const TelemetryKind& kind() const override { return kind_; }
  void Merge(const TelemetryData& other) override {
    if (const auto* o = dynamic_cast<const WindowData<W>*>(&other)) window_.Merge(o->window_);
  }
  void WriteJson(base::JsonWriter& w) const override { window_.WriteJson(w); }
  void RenderText(std::string* out) const override { kind_.render()(window_, out); }
  void WriteMetrics(MetricsSink& sink) const override {
    if (kind_.metrics()) kind_.metrics()(window_, sink);
  }
  std::unique_ptr<TelemetryData> Clone() const override {
    return std::make_unique<WindowData<W>>(kind_, window_);
  }
  const W& window() const { return window_; }
  W& window() { return window_; }

 private:
  const WindowKind<W>& kind_;
  W window_;
};

template <typename W>
class WindowKind final : public TelemetryKind {
 public:
  using RenderFn = void (*)(const W&, std::string*);
  using CollectorFn = std::unique_ptr<Collector> (*)();
  using MetricsFn = void (*)(const W&, MetricsSink&);
  // `collector_fn`: the kind's generic collector (NewCollector); `metrics_fn`: its /metrics
  // series (TelemetryData::WriteMetrics). Either may be null.
  WindowKind(std::string record_kind_name, std::string json_key, std::string section_title,
             RenderFn render_fn, CollectorFn collector_fn = nullptr, MetricsFn metrics_fn = nullptr)
      : TelemetryKind(std::move(record_kind_name), std::move(json_key), std::move(section_title)),
        render_(render_fn),
        collector_(collector_fn),
        metrics_(metrics_fn) {}

  base::StatusOr<std::unique_ptr<TelemetryData>> FromJson(std::string_view json) const override {
    base::StatusOr<W> w = W::FromJson(json);
    if (!w.ok()) return w.status();
    return Wrap(std::move(w).value());
  }
  std::unique_ptr<TelemetryData> Wrap(W window) const {
    return std::make_unique<WindowData<W>>(*this, std::move(window));
  }
  RenderFn render() const { return render_; }
  MetricsFn metrics() const { return metrics_; }
  std::unique_ptr<Collector> NewCollector() const override {
    return collector_ ? collector_() : nullptr;
  }

 private:
  RenderFn render_;
  CollectorFn collector_;
  MetricsFn metrics_;
};

// Telemetry of several kinds for one window or range: at most one TelemetryData per kind.
// Copyable (deep copy).
class TelemetrySet {
 public:
  TelemetrySet() = default;
  TelemetrySet(const TelemetrySet& other);
  TelemetrySet& operator=(const TelemetrySet& other);
  TelemetrySet(TelemetrySet&&) = default;
  TelemetrySet& operator=(TelemetrySet&&) = default;

  // Merges `data` into what is held of its kind (or keeps it as the first).
  void Merge(std::unique_ptr<TelemetryData> data);
  void Erase(const TelemetryKind& kind);
  const TelemetryData* Find(const TelemetryKind& kind) const;
  bool empty() const { return entries_.empty(); }

  // The window of type W, when a kind holding one is present; null otherwise.
  template <typename W>
  const W* Get() const {
    for (const auto& e : entries_)
      if (const auto* d = dynamic_cast<const WindowData<W>*>(e.get())) return &d->window();
    return nullptr;
  }
  template <typename W>
  W* GetMutable() {
    for (auto& e : entries_)
      if (auto* d = dynamic_cast<WindowData<W>*>(e.get())) return &d->window();
    return nullptr;
  }
  template <typename W>
  void Erase() {
    std::erase_if(entries_, [](const std::unique_ptr<TelemetryData>& e) {
      return dynamic_cast<const WindowData<W>*>(e.get()) != nullptr;
    });
  }

 private:
  std::vector<std::unique_ptr<TelemetryData>> entries_;  // in the order first merged
};

// The kinds of telemetry this build knows, in report order. Built-in kinds are listed once, in
// src/telemetry/registry/telemetry_kinds.cc (BuiltinTelemetryKinds); tests may Add a kind before
// they use it (Add is not synchronized with readers: call it before any telemetry flows).
class TelemetryRegistry {
 public:
  explicit TelemetryRegistry(std::vector<const TelemetryKind*> kinds) : kinds_(std::move(kinds)) {}
  // Adds a kind after the others; a kind whose record kind or report key is taken is refused.
  base::Status Add(const TelemetryKind* kind);
  // Takes out a kind Add added (tests clean up after themselves).
  void Remove(const TelemetryKind* kind);
  const std::vector<const TelemetryKind*>& kinds() const { return kinds_; }
  // By record kind ("gpu"); null when unknown.
  const TelemetryKind* FindByRecordKind(std::string_view record_kind) const;

 private:
  std::vector<const TelemetryKind*> kinds_;
};

}  // namespace inferscope::telemetry
