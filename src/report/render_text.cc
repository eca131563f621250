// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Lays a Document out as terminal text (fixed width) or GitHub markdown.

#include <algorithm>
#include <string>

#include "src/report/document.h"
#include "src/report/format.h"
#include "src/report/report.h"

namespace inferscope::report {
namespace {

constexpr size_t kMinFlexibleWidth = 12;
constexpr size_t kMarkdownMaxCell = 80;
constexpr size_t kGap = 2;  // spaces between text columns

// How far continuation lines of a list item indent: under the text after "- " or "12. ", so a
// wrapped finding or evidence line reads as one item (0 for plain text).
size_t HangingIndent(const std::string& text) {
  size_t lead = 0;
  while (lead < text.size() && text[lead] == ' ') ++lead;
  if (text.compare(lead, 2, "- ") == 0) return lead + 2;
  size_t digits = lead;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits > lead && text.compare(digits, 2, ". ") == 0) return digits + 2;
  return 0;
}

// Greedy word wrap with a hanging indent for list items; a word longer than the width is cut
// with an ellipsis.
void AppendWrappedRaw(const std::string& text, size_t width, std::string* out);

void AppendWrapped(const std::string& text, size_t width, std::string* out) {
  std::string wrapped;
  AppendWrappedRaw(text, width, &wrapped);
  const std::string nbsp = kNoBreakSpace;
  for (size_t pos = 0; (pos = wrapped.find(nbsp, pos)) != std::string::npos;)
    wrapped.replace(pos, nbsp.size(), " ");
  *out += wrapped;
}

void AppendWrappedRaw(const std::string& text, size_t width, std::string* out) {
  const std::string indent(HangingIndent(text), ' ');
  // Leading spaces (a nested item) are kept, not taken for empty words.
  size_t pos = text.find_first_not_of(' ');
  if (pos == std::string::npos) pos = text.size();
  std::string line(pos, ' ');
  const std::string lead = line;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.size() + indent.size() > width) word = Ellipsize(word, width - indent.size());
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      *out += line + "\n";
      line = indent;
    }
    if (line != lead && line != indent) line += ' ';
    line += word;
  }
  *out += line + "\n";
}

// A preformatted line (a table a section renders itself) that is too wide wraps at a space,
// continuation lines indented, rather than losing its end: nothing important is cut to fit.
void AppendPreformatted(const std::string& line, size_t width, std::string* out) {
  if (line.size() <= width) {
    *out += line + "\n";
    return;
  }
  size_t lead = line.find_first_not_of(' ');
  if (lead == std::string::npos) lead = 0;
  const std::string indent(std::min(lead + 4, width / 2), ' ');
  std::string rest = line;
  std::string prefix;
  while (prefix.size() + rest.size() > width) {
    const size_t room = width - prefix.size();
    size_t cut = rest.rfind(' ', room);
    if (cut == std::string::npos || cut <= lead) {
      cut = room;  // one long word: a hard break, at a UTF-8 character boundary
      while (cut > 1 && (static_cast<unsigned char>(rest[cut]) & 0xC0) == 0x80) --cut;
    }
    *out += prefix + rest.substr(0, cut) + "\n";
    rest = rest.substr(rest.find_first_not_of(' ', cut) == std::string::npos
                           ? rest.size()
                           : rest.find_first_not_of(' ', cut));
    prefix = indent;
    lead = 0;
  }
  *out += prefix + rest + "\n";
}

void AppendPadded(const std::string& cell, size_t width, bool right, std::string* out) {
  const size_t pad = cell.size() < width ? width - cell.size() : 0;
  if (right) out->append(pad, ' ');
  *out += cell;
  if (!right) out->append(pad, ' ');
}

void AppendTextTable(const Table& t, size_t width, std::string* out) {
  const size_t n = t.columns.size();
  std::vector<size_t> w(n, 0);
  for (size_t c = 0; c < n; ++c) {
    w[c] = t.columns[c].header.size();
    for (const auto& row : t.rows)
      if (c < row.size()) w[c] = std::max(w[c], row[c].size());
  }
  size_t total = kGap * (n ? n - 1 : 0);
  for (size_t x : w) total += x;
  // Too wide: shrink the flexible columns first, then (as a last resort) anything wide.
  for (size_t c = 0; c < n && total > width; ++c) {
    if (!t.columns[c].flexible) continue;
    const size_t floor = std::max(kMinFlexibleWidth, t.columns[c].header.size());
    const size_t cut = std::min(total - width, w[c] > floor ? w[c] - floor : 0);
    w[c] -= cut;
    total -= cut;
  }
  while (total > width) {
    const size_t widest = static_cast<size_t>(std::max_element(w.begin(), w.end()) - w.begin());
    if (w[widest] <= 4) break;
    --w[widest];
    --total;
  }
  auto emit_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < n; ++c) {
      const std::string& raw = c < cells.size() ? cells[c] : std::string();
      const std::string cell =
          t.columns[c].flexible ? EllipsizeMiddle(raw, w[c]) : Ellipsize(raw, w[c]);
      AppendPadded(cell, w[c], t.columns[c].right, &line);
      if (c + 1 < n) line.append(kGap, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    *out += line + "\n";
  };
  std::vector<std::string> headers;
  for (const Column& col : t.columns) headers.push_back(col.header);
  emit_row(headers);
  std::string rule;
  for (size_t c = 0; c < n; ++c) {
    rule.append(w[c], '-');
    if (c + 1 < n) rule.append(kGap, ' ');
  }
  *out += rule + "\n";
  for (const auto& row : t.rows) emit_row(row);
}

std::string MarkdownCell(const std::string& cell, const Column& col) {
  std::string text = col.flexible ? EllipsizeMiddle(cell, kMarkdownMaxCell) : cell;
  std::string escaped;
  for (char ch : text) {
    if (ch == '|') escaped += '\\';
    if (ch == '\n' || ch == '\r') ch = ' ';
    escaped += ch;
  }
  if (escaped.empty()) return escaped;
  if (col.code) {
    // A backtick inside code needs a longer fence; kernel names practically never have one.
    const bool tick = escaped.find('`') != std::string::npos;
    return tick ? "`` " + escaped + " ``" : "`" + escaped + "`";
  }
  if (!col.right) {
    // Keep markdown from reading names as emphasis.
    std::string out;
    for (char ch : escaped) {
      if (ch == '*' || ch == '_') out += '\\';
      out += ch;
    }
    return out;
  }
  return escaped;
}

void AppendMarkdownTable(const Table& t, std::string* out) {
  std::string line = "|";
  for (const Column& col : t.columns) line += " " + MarkdownCell(col.header, Column{}) + " |";
  *out += line + "\n|";
  for (const Column& col : t.columns) *out += col.right ? " ---: |" : " --- |";
  *out += "\n";
  for (const auto& row : t.rows) {
    line = "|";
    for (size_t c = 0; c < t.columns.size(); ++c)
      line += " " + MarkdownCell(c < row.size() ? row[c] : "", t.columns[c]) + " |";
    while (line.find("  |") != std::string::npos) line.replace(line.find("  |"), 3, " |");
    *out += line + "\n";
  }
}

}  // namespace

std::string RenderSectionText(const Section& s, int width_in) {
  const size_t width = static_cast<size_t>(std::max(width_in, 40));
  std::string out = Ellipsize(s.title, width) + "\n";
  out += std::string(std::min(s.title.size(), width), '-') + "\n";
  for (const Block& b : s.blocks) {
    switch (b.kind) {
      case Block::Kind::kParagraph:
        for (const std::string& line : b.lines) AppendWrapped(line, width, &out);
        break;
      case Block::Kind::kPreformatted:
        for (const std::string& line : b.lines) AppendPreformatted(line, width, &out);
        break;
      case Block::Kind::kTable:
        AppendTextTable(b.table, width, &out);
        break;
    }
  }
  return out;
}

std::string RenderDocumentText(const Document& doc, int width_in) {
  const size_t width = static_cast<size_t>(std::max(width_in, 40));
  std::string out;
  out += Ellipsize(doc.title, width) + "\n";
  out += std::string(std::min(doc.title.size(), width), '=') + "\n";
  for (const std::string& line : doc.header_lines) AppendWrapped(line, width, &out);
  for (const Section& s : doc.sections) out += "\n" + RenderSectionText(s, width_in);
  return out;
}

std::string RenderDocumentMarkdown(const Document& doc) {
  std::string out = "# " + doc.title + "\n\n";
  for (const std::string& line : doc.header_lines) out += "- " + line + "\n";
  for (const Section& s : doc.sections) {
    out += "\n## " + s.title + "\n";
    for (const Block& b : s.blocks) {
      out += "\n";
      switch (b.kind) {
        case Block::Kind::kParagraph:
          for (size_t i = 0; i < b.lines.size(); ++i)
            out += b.lines[i] + (i + 1 < b.lines.size() ? "\n" : "\n");
          break;
        case Block::Kind::kPreformatted:
          out += "```\n";
          for (const std::string& line : b.lines) out += line + "\n";
          out += "```\n";
          break;
        case Block::Kind::kTable:
          AppendMarkdownTable(b.table, &out);
          break;
      }
    }
  }
  return out;
}

std::string RenderText(const analyze::Analysis& analysis, int width) {
  return RenderDocumentText(BuildDocument(analysis, width), width);
}

std::string RenderMarkdown(const analyze::Analysis& analysis) {
  return RenderDocumentMarkdown(BuildDocument(analysis, 100));
}

}  // namespace inferscope::report
