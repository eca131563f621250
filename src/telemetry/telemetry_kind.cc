// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/telemetry_kind.h"

#include <algorithm>

namespace inferscope::telemetry {

std::string TelemetryData::ToJson() const {
  base::JsonWriter w;
  WriteJson(w);
  return w.str();
}

TelemetrySet::TelemetrySet(const TelemetrySet& other) { *this = other; }

TelemetrySet& TelemetrySet::operator=(const TelemetrySet& other) {
  if (this == &other) return *this;
  entries_.clear();
  for (const auto& e : other.entries_) entries_.push_back(e->Clone());
  return *this;
}

void TelemetrySet::Merge(std::unique_ptr<TelemetryData> data) {
  if (!data) return;
  for (auto& e : entries_) {
    if (&e->kind() == &data->kind()) {
      e->Merge(*data);
      return;
    }
  }
  entries_.push_back(std::move(data));
}

void TelemetrySet::Erase(const TelemetryKind& kind) {
  std::erase_if(entries_,
                [&](const std::unique_ptr<TelemetryData>& e) { return &e->kind() == &kind; });
}

const TelemetryData* TelemetrySet::Find(const TelemetryKind& kind) const {
  for (const auto& e : entries_)
    if (&e->kind() == &kind) return e.get();
  return nullptr;
}

base::Status TelemetryRegistry::Add(const TelemetryKind* kind) {
  for (const TelemetryKind* k : kinds_) {
    if (k == kind) return base::OkStatus();
    if (k->record_kind() == kind->record_kind() || k->report_key() == kind->report_key())
      return base::InvalidArgumentError("telemetry kind \"" + kind->record_kind() +
                                        "\": its record kind or report key is taken");
  }
  kinds_.push_back(kind);
  return base::OkStatus();
}

void TelemetryRegistry::Remove(const TelemetryKind* kind) { std::erase(kinds_, kind); }

const TelemetryKind* TelemetryRegistry::FindByRecordKind(std::string_view record_kind) const {
  for (const TelemetryKind* k : kinds_)
    if (k->record_kind() == record_kind) return k;
  return nullptr;
}

}  // namespace inferscope::telemetry
