// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
//
// Kernel classification cost: the first sight of a name (demangle + rule walk) and the cached
// per-NameId lookup the Aggregator does for every event. Names: the taxonomy dev corpus, or the
// file named by INFERSCOPE_TAXONOMY_CORPUS (same TSV format) so two versions can be compared on the
// same names.

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "src/model/name_table.h"
#include "src/model/taxonomy.h"

namespace inferscope::model {
namespace {

std::vector<std::string> CorpusNames() {
  const char* env = std::getenv("INFERSCOPE_TAXONOMY_CORPUS");
  const std::string path =
      env != nullptr ? std::string(env)
                     : std::string(INFERSCOPE_SOURCE_DIR) + "/tests/data/taxonomy/dev_kernels.tsv";
  std::vector<std::string> names;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.rfind('\t');
    if (tab != std::string::npos) names.push_back(line.substr(tab + 1));
  }
  return names;
}

// A first classification of every corpus name (what a new kernel name costs once).
void BM_ClassifyUncached(benchmark::State& state) {
  const std::vector<std::string> names = CorpusNames();
  if (names.empty()) {
    state.SkipWithError("no taxonomy corpus");
    return;
  }
  KernelClassifier classifier;
  size_t sum = 0;
  for (auto _ : state) {
    for (const std::string& name : names) {
      sum += static_cast<size_t>(classifier.Classify(name).category);
    }
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(names.size()));
}
BENCHMARK(BM_ClassifyUncached)->Unit(benchmark::kMillisecond);

// The per-event path: a cached lookup by NameId.
void BM_ClassifyCached(benchmark::State& state) {
  const std::vector<std::string> names = CorpusNames();
  if (names.empty()) {
    state.SkipWithError("no taxonomy corpus");
    return;
  }
  KernelClassifier classifier;
  NameTable table;
  std::vector<NameId> ids;
  for (const std::string& name : names) ids.push_back(table.Intern(name));
  CachedClassifier cached(&classifier, &table);
  size_t sum = 0;
  for (auto _ : state) {
    for (NameId id : ids) sum += static_cast<size_t>(cached.Classify(id).category);
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(ids.size()));
}
BENCHMARK(BM_ClassifyCached);

}  // namespace
}  // namespace inferscope::model

BENCHMARK_MAIN();
