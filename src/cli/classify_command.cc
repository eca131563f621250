// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/cli/classify_command.h"

#include <istream>
#include <ostream>

#include "src/model/taxonomy.h"

namespace inferscope::cli {
namespace {

void PrintOne(const model::KernelClassifier& classifier, const std::string& name,
              std::ostream& out) {
  const model::Classification c = classifier.Classify(name);
  out << model::CategoryName(c.category) << '\t' << c.subcategory << '\t' << name << '\n';
}

}  // namespace

int RunClassifyCommand(const std::vector<std::string>& names, bool read_stdin,
                       const std::string& rules_file, std::istream& in, std::ostream& out,
                       std::ostream& err) {
  model::KernelClassifier classifier;
  if (!rules_file.empty()) {
    const base::Status status = classifier.LoadRuleFile(rules_file);
    if (!status.ok()) {
      err << "inferscope classify: " << status.message() << '\n';
      return 2;
    }
  }
  if (names.empty() && !read_stdin) {
    err << "inferscope: error: classify needs kernel names as arguments, or '-' to read them from "
           "stdin\n"
        << "Run 'inferscope classify --help' for usage.\n";
    return 2;
  }
  for (const std::string& name : names) PrintOne(classifier, name, out);
  if (read_stdin) {
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      PrintOne(classifier, line, out);
    }
  }
  out.flush();
  return 0;
}

}  // namespace inferscope::cli
