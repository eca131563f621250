// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Fuzzes the user rule-file parser and the classifier: the input's first line is used as a rule
// file, every line (rules included) as a kernel name, and as a step range name (the engines'
// request counts read from it, model/step_phase.h). None may crash, hang or leak on any input.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/model/kernel_names.h"
#include "src/model/step_phase.h"
#include "src/model/taxonomy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  inferscope::model::KernelClassifier classifier;
  // Regex rules can be made arbitrarily slow by a hostile pattern; the fuzzer exercises the
  // parser and the fast built-in path, so regex lines are left to the unit tests.
  if (input.find("regex") == std::string_view::npos) {
    (void)classifier.LoadRuleText(input, "fuzz");
  }
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    (void)classifier.Classify(input.substr(start, end - start));
    (void)inferscope::model::DemangleKernelName(input.substr(start, end - start));
    (void)inferscope::model::PhaseOfStep(input.substr(start, end - start), 0);
    start = end + 1;
  }
  return 0;
}
