// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Fuzzes ParseThresholds (a user's thresholds file) and runs a diagnosis with whatever it accepts:
// no input may crash, and every diagnosis must name a primary finding with a score in [0, 1].
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "src/analyze/analysis.h"
#include "src/analyze/diagnose.h"
#include "src/analyze/test_profiles.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace inferscope::analyze;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = ParseThresholds(text);
  if (!parsed.ok()) return 0;
  static const inferscope::model::ProfileWindow window = testing::MakeWindow(1, 0, 600, 450);
  static const Analysis analysis = Analyze({{"fuzz", "kineto_json", &window}}, AnalysisOptions{});
  HostSignals host;
  host.queue_share_of_e2e = 0.5;
  host.prefill_mean_s = 0.2;
  host.decode_mean_s = 0.1;
  host.gpm_dram_bw_util_pct = 90;
  const Diagnosis d = Diagnose(analysis, host, *parsed);
  if (d.findings.empty() || d.primary != d.findings.front().id) abort();
  for (const Finding& f : d.findings)
    if (!(f.score >= 0 && f.score <= 1) || !(f.confidence >= 0 && f.confidence <= 1)) abort();
  return 0;
}
