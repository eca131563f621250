// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// `--format csv`: one report table as RFC 4180 CSV, for spreadsheets and scripts.

#include <string>

#include "src/report/report.h"
#include "src/report/views.h"

namespace inferscope::report {
namespace {

// Quotes a field that holds a comma, a quote or a line break (kernel names do: templates).
void AppendField(const std::string& field, std::string* out) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) {
    *out += field;
    return;
  }
  *out += '"';
  for (char c : field) {
    if (c == '"') *out += '"';
    *out += c;
  }
  *out += '"';
}

void AppendRow(const std::vector<std::string>& fields, std::string* out) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) *out += ',';
    AppendField(fields[i], out);
  }
  *out += "\r\n";
}

}  // namespace

const std::vector<std::string>& CsvTableNames() { return TableNames(); }

bool RenderCsv(const analyze::Analysis& analysis, const std::string& table, std::string* out) {
  ViewTable t;
  if (!BuildTable(analysis, table, &t)) return false;
  out->clear();
  AppendRow(t.csv_headers, out);
  std::vector<std::string> fields;
  for (const std::vector<ViewCell>& row : t.rows) {
    fields.clear();
    for (const ViewCell& c : row) fields.push_back(c.raw);
    AppendRow(fields, out);
  }
  return true;
}

}  // namespace inferscope::report
