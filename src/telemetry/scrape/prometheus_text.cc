// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/scrape/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

namespace inferscope::telemetry::scrape {
namespace {

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
bool IsLabelStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsLabelChar(char c) { return IsLabelStart(c) || (c >= '0' && c <= '9'); }
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

bool IsMetricName(std::string_view s) {
  if (s.empty() || !IsNameStart(s[0])) return false;
  for (char c : s)
    if (!IsNameChar(c)) return false;
  return true;
}

// A cursor over one line.
struct Cursor {
  std::string_view s;
  size_t i = 0;

  bool done() const { return i >= s.size(); }
  char peek() const { return s[i]; }
  void SkipBlanks() {
    while (i < s.size() && IsBlank(s[i])) ++i;
  }
  std::string_view Token() {  // up to the next blank
    const size_t start = i;
    while (i < s.size() && !IsBlank(s[i])) ++i;
    return s.substr(start, i - start);
  }
};

// HELP text escapes: `\\` and `\n` (OpenMetrics adds `\"`). Unknown escapes are kept verbatim.
std::string UnescapeHelp(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char n = s[i + 1];
      if (n == '\\' || n == '"') {
        out += n;
        ++i;
        continue;
      }
      if (n == 'n') {
        out += '\n';
        ++i;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool ParseType(std::string_view word, MetricType* type) {
  if (word == "counter") {
    *type = MetricType::kCounter;
  } else if (word == "gauge") {
    *type = MetricType::kGauge;
  } else if (word == "histogram") {
    *type = MetricType::kHistogram;
  } else if (word == "summary") {
    *type = MetricType::kSummary;
  } else if (word == "untyped" || word == "unknown") {
    *type = MetricType::kUntyped;
  } else if (word == "gaugehistogram") {
    *type = MetricType::kGaugeHistogram;
  } else if (word == "stateset") {
    *type = MetricType::kStateSet;
  } else if (word == "info") {
    *type = MetricType::kInfo;
  } else {
    return false;
  }
  return true;
}

// Whether a family of `type` has samples named <family><suffix of role>.
bool TypeAccepts(MetricType type, SampleRole role) {
  switch (type) {
    case MetricType::kCounter:
      return role == SampleRole::kTotal || role == SampleRole::kCreated;
    case MetricType::kHistogram:
      return role == SampleRole::kBucket || role == SampleRole::kSum ||
             role == SampleRole::kCount || role == SampleRole::kCreated;
    case MetricType::kSummary:
      return role == SampleRole::kSum || role == SampleRole::kCount || role == SampleRole::kCreated;
    case MetricType::kGaugeHistogram:
      return role == SampleRole::kBucket || role == SampleRole::kGSum ||
             role == SampleRole::kGCount;
    case MetricType::kInfo:
      return role == SampleRole::kInfo;
    case MetricType::kUntyped:
    case MetricType::kGauge:
    case MetricType::kStateSet:
      return false;
  }
  return false;
}

struct Suffix {
  std::string_view text;
  SampleRole role;
};
constexpr Suffix kSuffixes[] = {
    {"_bucket", SampleRole::kBucket}, {"_sum", SampleRole::kSum},
    {"_count", SampleRole::kCount},   {"_created", SampleRole::kCreated},
    {"_total", SampleRole::kTotal},   {"_gsum", SampleRole::kGSum},
    {"_gcount", SampleRole::kGCount}, {"_info", SampleRole::kInfo},
};

class Parser {
 public:
  Parser(const ParseOptions& options, Exposition* out) : options_(options), out_(out) {}

  void Run(std::string_view body) {
    if (body.size() > options_.max_body_bytes) {
      // Cut at the last complete line inside the bound; a half line would parse as a wrong value.
      size_t cut = body.rfind('\n', options_.max_body_bytes);
      cut = cut == std::string_view::npos ? 0 : cut + 1;
      out_->stats.truncated_bytes = body.size() - cut;
      body = body.substr(0, cut);
    }
    size_t pos = 0;
    while (pos < body.size()) {
      size_t end = body.find('\n', pos);
      if (end == std::string_view::npos) end = body.size();
      std::string_view line = body.substr(pos, end - pos);
      pos = end + 1;
      ++line_number_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      size_t first = 0;
      while (first < line.size() && IsBlank(line[first])) ++first;
      if (first == line.size()) continue;
      ++out_->stats.lines;
      line.remove_prefix(first);
      if (line[0] == '#') {
        if (!ParseComment(line)) break;  // # EOF
      } else {
        ParseSample(line);
      }
    }
  }

 private:
  void Bad(std::string_view why) {
    ++out_->stats.bad_lines;
    if (out_->stats.first_error.empty())
      out_->stats.first_error = "line " + std::to_string(line_number_) + ": " + std::string(why);
  }

  size_t FamilyIndex(std::string_view name) {
    auto it = out_->index.find(name);
    if (it != out_->index.end()) return it->second;
    const size_t index = out_->families.size();
    out_->families.emplace_back();
    out_->families.back().name = std::string(name);
    out_->index.emplace(std::string(name), index);
    last_name_.clear();  // the sample-name cache may now resolve differently
    return index;
  }

  // Returns false at `# EOF` (stop parsing).
  bool ParseComment(std::string_view line) {
    Cursor c{line, 1};
    c.SkipBlanks();
    const std::string_view keyword = c.Token();
    if (keyword == "EOF") {
      out_->stats.saw_eof = true;
      return false;
    }
    if (keyword != "HELP" && keyword != "TYPE" && keyword != "UNIT") return true;  // a comment
    c.SkipBlanks();
    const std::string_view name = c.Token();
    if (!IsMetricName(name)) {
      Bad("bad metric name in # " + std::string(keyword));
      return true;
    }
    c.SkipBlanks();
    std::string_view rest = line.substr(c.i);
    if (keyword == "HELP") {
      out_->families[FamilyIndex(name)].help = UnescapeHelp(rest);
      return true;
    }
    while (!rest.empty() && IsBlank(rest.back())) rest.remove_suffix(1);
    if (keyword == "UNIT") {
      out_->families[FamilyIndex(name)].unit = std::string(rest);
      return true;
    }
    MetricType type;
    if (!ParseType(rest, &type)) {
      Bad("unknown metric type '" + std::string(rest.substr(0, 32)) + "'");
      return true;
    }
    MetricFamily& family = out_->families[FamilyIndex(name)];
    if (family.declared && family.type != type) {
      Bad("second # TYPE for " + family.name + " with a different type");
      return true;
    }
    if (!family.declared && !family.samples.empty() && type != MetricType::kUntyped) {
      // Samples came before their # TYPE: the format forbids it and their roles would be wrong.
      Bad("# TYPE for " + family.name + " after its samples");
      return true;
    }
    family.type = type;
    family.declared = true;
    last_name_.clear();
    return true;
  }

  // Which family (and role) a sample name belongs to.
  std::pair<size_t, SampleRole> Resolve(std::string_view name) {
    if (name == last_name_) return {last_family_, last_role_};
    std::pair<size_t, SampleRole> result;
    auto it = out_->index.find(name);
    if (it != out_->index.end()) {
      result = {it->second, SampleRole::kValue};
    } else {
      bool found = false;
      for (const Suffix& suffix : kSuffixes) {
        if (name.size() <= suffix.text.size() || !name.ends_with(suffix.text)) continue;
        auto base = out_->index.find(name.substr(0, name.size() - suffix.text.size()));
        if (base == out_->index.end()) continue;
        const MetricFamily& family = out_->families[base->second];
        if (!family.declared || !TypeAccepts(family.type, suffix.role)) continue;
        result = {base->second, suffix.role};
        found = true;
        break;
      }
      if (!found) result = {FamilyIndex(name), SampleRole::kValue};
    }
    last_name_.assign(name);
    last_family_ = result.first;
    last_role_ = result.second;
    return result;
  }

  // Parses `{a="x",b="y"}` starting at c.i (which is '{'). Fills labels; false on a syntax error.
  bool ParseLabels(Cursor& c, std::vector<Label>* labels) {
    ++c.i;  // '{'
    while (true) {
      c.SkipBlanks();
      if (c.done()) return Fail("unterminated label set");
      if (c.peek() == '}') {
        ++c.i;
        return true;
      }
      const size_t name_start = c.i;
      if (!IsLabelStart(c.peek())) return Fail("bad label name");
      while (!c.done() && IsLabelChar(c.peek())) ++c.i;
      Label label;
      label.name.assign(c.s.substr(name_start, c.i - name_start));
      c.SkipBlanks();
      if (c.done() || c.peek() != '=') return Fail("expected '=' after label name");
      ++c.i;
      c.SkipBlanks();
      if (c.done() || c.peek() != '"') return Fail("expected '\"' to open a label value");
      ++c.i;
      bool closed = false;
      // Fast path: values without escapes (nearly all) are copied in one piece.
      const size_t end = c.s.find_first_of("\"\\", c.i);
      if (end != std::string_view::npos && c.s[end] == '"') {
        label.value.assign(c.s.substr(c.i, end - c.i));
        c.i = end + 1;
        closed = true;
      }
      while (!closed && !c.done()) {
        const char ch = c.s[c.i++];
        if (ch == '"') {
          closed = true;
          break;
        }
        if (ch == '\\' && !c.done()) {
          const char n = c.s[c.i++];
          if (n == 'n') {
            label.value += '\n';
          } else if (n == '\\' || n == '"') {
            label.value += n;
          } else {
            label.value += '\\';
            label.value += n;
          }
          continue;
        }
        label.value += ch;
      }
      if (!closed) return Fail("unterminated label value");
      for (const Label& other : *labels)
        if (other.name == label.name) return Fail("duplicate label " + label.name);
      labels->push_back(std::move(label));
      c.SkipBlanks();
      if (c.done()) return Fail("unterminated label set");
      if (c.peek() == ',') {
        ++c.i;
        continue;
      }
      if (c.peek() != '}') return Fail("expected ',' or '}' in label set");
    }
  }

  bool Fail(std::string why) {
    pending_error_ = std::move(why);
    return false;
  }

  void ParseSample(std::string_view line) {
    Cursor c{line, 0};
    const size_t name_start = c.i;
    if (!IsNameStart(c.peek())) return Bad("bad metric name");
    while (!c.done() && IsNameChar(c.peek())) ++c.i;
    const std::string_view name = line.substr(name_start, c.i - name_start);
    c.SkipBlanks();
    if (c.done()) return Bad("sample without a value");
    if (out_->stats.samples >= options_.max_series) {
      ++out_->stats.dropped_series;
      return;
    }
    Sample sample;
    if (c.peek() == '{') {
      sample.labels.reserve(4);
      if (!ParseLabels(c, &sample.labels)) return Bad(pending_error_);
      c.SkipBlanks();
    }
    const std::string_view value = c.Token();
    if (value.empty()) return Bad("sample without a value");
    if (!ParsePrometheusFloat(value, &sample.value)) return Bad("bad sample value");
    c.SkipBlanks();
    if (!c.done() && c.peek() != '#') {
      const std::string_view ts = c.Token();
      if (!ParseTimestamp(ts, &sample.timestamp_ms)) return Bad("bad timestamp");
      sample.has_timestamp = true;
      c.SkipBlanks();
    }
    // OpenMetrics exemplars (`# {trace_id="..."} 1.0`) follow a '#'; we do not use them.
    if (!c.done() && c.peek() != '#') return Bad("unexpected text after the sample");
    const auto [family_index, role] = Resolve(name);
    sample.role = role;
    out_->families[family_index].samples.push_back(std::move(sample));
    ++out_->stats.samples;
  }

  // Milliseconds (text format) or float seconds (OpenMetrics).
  static bool ParseTimestamp(std::string_view text, int64_t* ms) {
    if (text.find_first_of(".eE") == std::string_view::npos) {
      const char* begin = text.data();
      if (!text.empty() && text[0] == '+') ++begin;
      const auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), *ms);
      return ec == std::errc() && ptr == text.data() + text.size();
    }
    double seconds;
    if (!ParsePrometheusFloat(text, &seconds) || !std::isfinite(seconds)) return false;
    const double value = seconds * 1000.0;
    if (std::fabs(value) > 9.0e18) return false;
    *ms = static_cast<int64_t>(std::llround(value));
    return true;
  }

  const ParseOptions& options_;
  Exposition* out_;
  uint64_t line_number_ = 0;
  std::string pending_error_;
  // The last sample name resolved: consecutive samples nearly always share it (histogram buckets).
  std::string last_name_;
  size_t last_family_ = 0;
  SampleRole last_role_ = SampleRole::kValue;
};

}  // namespace

std::string_view MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kUntyped:
      return "untyped";
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kSummary:
      return "summary";
    case MetricType::kGaugeHistogram:
      return "gaugehistogram";
    case MetricType::kStateSet:
      return "stateset";
    case MetricType::kInfo:
      return "info";
  }
  return "untyped";
}

const std::string* Sample::FindLabel(std::string_view name) const {
  for (const Label& label : labels)
    if (label.name == name) return &label.value;
  return nullptr;
}

const MetricFamily* Exposition::Find(std::string_view name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &families[it->second];
}

bool ParsePrometheusFloat(std::string_view text, double* out) {
  if (text.empty()) return false;
  bool negative = false;
  std::string_view digits = text;
  if (digits[0] == '+' || digits[0] == '-') {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
    if (digits.empty() || digits[0] == '+' || digits[0] == '-') return false;
  }
  // from_chars also takes "inf"/"infinity"/"nan" in any case, as Go's ParseFloat does.
  double value;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ptr != digits.data() + digits.size()) return false;
  if (ec == std::errc::result_out_of_range) {
    // Go parses 1e400 as +Inf and 1e-400 as 0; so do we.
    const bool tiny =
        digits.find("e-") != std::string_view::npos || digits.find("E-") != std::string_view::npos;
    value = tiny ? 0.0 : std::numeric_limits<double>::infinity();
  } else if (ec != std::errc()) {
    return false;
  }
  *out = negative ? -value : value;
  return true;
}

Exposition ParsePrometheusText(std::string_view body, const ParseOptions& options) {
  Exposition out;
  Parser(options, &out).Run(body);
  return out;
}

}  // namespace inferscope::telemetry::scrape
