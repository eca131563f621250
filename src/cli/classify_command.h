// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope classify [NAME...] [-] [--rules FILE]`: prints how kernel names are classified.

#include <iosfwd>
#include <string>
#include <vector>

namespace inferscope::cli {

// Classifies `names` (and, when `read_stdin`, one name per line of `in`), printing
// "category<TAB>subcategory<TAB>name" per name to `out`. `rules_file`, when not empty, is a user
// rule file (docs/taxonomy.md) loaded before classifying. Returns a process exit code: 0 on
// success, 2 on a bad rule file or no input (the message goes to `err`). Never throws.
int RunClassifyCommand(const std::vector<std::string>& names, bool read_stdin,
                       const std::string& rules_file, std::istream& in, std::ostream& out,
                       std::ostream& err);

}  // namespace inferscope::cli
