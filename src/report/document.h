// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The human report as a format-neutral document: sections of paragraphs, tables and preformatted
// lines. BuildDocument() decides the content once; the text and markdown renderers only lay it out,
// so both formats always say the same thing.

#include <string>
#include <vector>

#include "src/analyze/analysis.h"

namespace inferscope::report {

// Joins a number to its unit in paragraph text ("6.62 µs"): the text renderer never breaks a line
// there and prints a plain space; markdown keeps it (HTML renders it as a space).
inline constexpr const char* kNoBreakSpace = "\xC2\xA0";

struct Column {
  std::string header;
  bool right = false;     // right-aligned (numbers)
  bool flexible = false;  // may be shortened with "..." to fit the width (kernel names)
  bool code = false;      // markdown: render cells as `code`
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;
};

struct Block {
  enum class Kind { kParagraph, kTable, kPreformatted };
  Kind kind = Kind::kParagraph;
  std::vector<std::string> lines;  // paragraph text (one entry per line) or preformatted lines
  Table table;
};

struct Section {
  std::string title;
  std::vector<Block> blocks;
};

struct Document {
  std::string title;
  std::vector<std::string> header_lines;  // "key: value" lines under the title
  std::vector<Section> sections;
};

// `width` is the text width preformatted blocks (sparklines) are laid out for.
Document BuildDocument(const analyze::Analysis& analysis, int width);

std::string RenderDocumentText(const Document& doc, int width);
// One section as the text report lays it out: its title underlined, then its blocks.
std::string RenderSectionText(const Section& section, int width);

// The report's "Forward phases" and NVTX range sections for other documents that show them per
// group rather than per rank (the fleet view, `report --source clickhouse://...`): the same
// columns and notes, the first column naming the group (`key_header`: "host", "model", ...).
struct GroupPhases {
  std::string key;
  analyze::PhaseSummary phases;
};
Section GroupPhasesSection(const std::string& key_header, const std::vector<GroupPhases>& groups);
struct GroupRanges {
  std::string key;
  std::vector<model::RangeRow> rows;  // live-window rows (analyze::RangeRowOf)
  model::RangeRow tail;
  uint64_t tail_names = 0;
};
Section GroupRangesSection(const std::string& key_header, const std::vector<GroupRanges>& groups);
std::string RenderDocumentMarkdown(const Document& doc);

}  // namespace inferscope::report
