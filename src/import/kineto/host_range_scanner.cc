// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/kineto/host_range_scanner.h"

#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace inferscope::import::kineto {
namespace {

// Nesting this deep before the last field a range needs: declined (Kineto's "args" are two deep).
constexpr int kMaxSkipDepth = 32;

inline bool IsWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline const char* SkipWs(const char* p, const char* end) {
  while (p < end && IsWs(*p)) ++p;
  return p;
}

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

inline bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Bit i is set when p[i] is '"', '\\', a control character or a byte >= 0x80: where a string body
// stops being plain. Reads 16 bytes.
inline uint32_t StringStopMask16(const char* p) {
#if defined(__SSE2__)
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  __m128i m = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
  m = _mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
  // Signed: bytes >= 0x80 are negative, so below 0x20 too.
  m = _mm_or_si128(m, _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
  return static_cast<uint32_t>(_mm_movemask_epi8(m));
#else
  uint32_t mask = 0;
  for (int i = 0; i < 16; ++i) {
    const unsigned char c = static_cast<unsigned char>(p[i]);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) mask |= 1u << i;
  }
  return mask;
#endif
}

// The first byte of [p, end) at which a string body stops being plain (see above), or end.
inline const char* FindStringStop(const char* p, const char* end) {
  for (; p < end; p += 16) {
    const uint32_t mask = StringStopMask16(p);
    if (mask) {
      const char* q = p + __builtin_ctz(mask);
      return q < end ? q : end;
    }
  }
  return end;
}

// A string without escapes at p (the opening quote): its body, and one past the closing quote.
// nullptr for anything else (escapes, control characters, non-ASCII bytes, no closing quote).
inline const char* ReadPlainString(const char* p, const char* end, std::string_view* body) {
  const char* q = FindStringStop(p + 1, end);
  if (q == end || *q != '"') return nullptr;
  *body = std::string_view(p + 1, static_cast<size_t>(q - p - 1));
  return q + 1;
}

// Any valid ASCII JSON string at p (escapes checked as JSON defines them); one past its end.
const char* SkipString(const char* p, const char* end) {
  ++p;
  while (true) {
    const char* q = FindStringStop(p, end);
    if (q == end) return nullptr;
    if (*q == '"') return q + 1;
    if (*q != '\\' || end - q < 2) return nullptr;  // a control character or non-ASCII byte
    switch (q[1]) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        p = q + 2;
        break;
      case 'u':
        if (end - q < 6 || !IsHex(q[2]) || !IsHex(q[3]) || !IsHex(q[4]) || !IsHex(q[5]))
          return nullptr;
        p = q + 6;
        break;
      default:
        return nullptr;
    }
  }
}

// A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; one past its end.
const char* SkipNumber(const char* p, const char* end) {
  if (p < end && *p == '-') ++p;
  if (p == end || !IsDigit(*p)) return nullptr;
  if (*p == '0') {
    ++p;
  } else {
    while (p < end && IsDigit(*p)) ++p;
  }
  if (p < end && *p == '.') {
    ++p;
    if (p == end || !IsDigit(*p)) return nullptr;
    while (p < end && IsDigit(*p)) ++p;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (p == end || !IsDigit(*p)) return nullptr;
    while (p < end && IsDigit(*p)) ++p;
  }
  return p;
}

inline const char* SkipLiteral(const char* p, const char* end, std::string_view literal) {
  if (static_cast<size_t>(end - p) < literal.size() ||
      std::string_view(p, literal.size()) != literal)
    return nullptr;
  return p + literal.size();
}

// Any strictly valid JSON value at p (not whitespace); one past its end. Containers are walked
// whole (the simdjson path skips them by their brackets, which strict JSON also satisfies).
const char* SkipValue(const char* p, const char* end, int depth) {
  if (p == end) return nullptr;
  switch (*p) {
    case '"':
      return SkipString(p, end);
    case '{':
    case '[': {
      if (depth >= kMaxSkipDepth) return nullptr;
      const bool object = *p == '{';
      const char close = object ? '}' : ']';
      p = SkipWs(p + 1, end);
      if (p < end && *p == close) return p + 1;
      while (true) {
        if (object) {
          if (p == end || *p != '"') return nullptr;
          p = SkipString(p, end);
          if (!p) return nullptr;
          p = SkipWs(p, end);
          if (p == end || *p != ':') return nullptr;
          p = SkipWs(p + 1, end);
        }
        p = SkipValue(p, end, depth + 1);
        if (!p) return nullptr;
        p = SkipWs(p, end);
        if (p == end) return nullptr;
        if (*p == close) return p + 1;
        if (*p != ',') return nullptr;
        p = SkipWs(p + 1, end);
      }
    }
    case 't':
      return SkipLiteral(p, end, "true");
    case 'f':
      return SkipLiteral(p, end, "false");
    case 'n':
      return SkipLiteral(p, end, "null");
    default:
      return SkipNumber(p, end);
  }
}

// Bit i is set when p[i] is one of  " \ { } [ ]  or a byte below 0x20 or >= 0x80. Reads 16 bytes.
inline uint32_t SuffixMask16(const char* p) {
#if defined(__SSE2__)
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  __m128i m = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
  m = _mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
  m = _mm_or_si128(m, _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));  // and >= 0x80 (signed)
  // '[' / '{' and ']' / '}' differ only in bit 5 (as in json_scanner.cc).
  const __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
  m = _mm_or_si128(m, _mm_cmpeq_epi8(folded, _mm_set1_epi8('{')));
  m = _mm_or_si128(m, _mm_cmpeq_epi8(folded, _mm_set1_epi8('}')));
  return static_cast<uint32_t>(_mm_movemask_epi8(m));
#else
  uint32_t mask = 0;
  for (int i = 0; i < 16; ++i) {
    const unsigned char c = static_cast<unsigned char>(p[i]);
    if (c == '"' || c == '\\' || c == '{' || c == '}' || c == '[' || c == ']' || c < 0x20 ||
        c >= 0x80)
      mask |= 1u << i;
  }
  return mask;
#endif
}

// The rest of the event, from p (just after a top-level value, outside any string) to end, which
// the simdjson path never walks but whose stage 1 still checks it: true when that check passes and
// the brackets close the object exactly at end - 1. Stricter where it costs nothing: no non-ASCII
// byte at all, no backslash or control character other than whitespace outside strings.
bool SuffixIsClean(const char* p, const char* end) {
  int depth = 1;
  bool in_string = false;
  bool skip_first = false;  // the previous block ended with a backslash inside a string
  for (const char* block = p; block < end; block += 16) {
    uint32_t mask = SuffixMask16(block);
    const size_t avail = static_cast<size_t>(end - block);
    if (avail < 16) mask &= (1u << avail) - 1;
    if (skip_first) {
      mask &= ~1u;
      skip_first = false;
    }
    while (mask) {
      const int i = __builtin_ctz(mask);
      mask &= mask - 1;
      const char* at = block + i;
      const unsigned char c = static_cast<unsigned char>(*at);
      if (c >= 0x80) return false;
      if (in_string) {
        if (c == '"') {
          in_string = false;
        } else if (c == '\\') {
          // The escaped byte is still inside the string: stage 1 rejects it if it is a control
          // character. It cannot be past end: the object's closing brace follows.
          if (at + 1 >= end || static_cast<unsigned char>(at[1]) < 0x20) return false;
          if (i == 15) {
            skip_first = true;
          } else {
            mask &= ~(1u << (i + 1));
          }
        } else if (c < 0x20) {
          return false;
        }
        continue;
      }
      switch (c) {
        case '"':
          in_string = true;
          break;
        case '{':
        case '[':
          ++depth;
          break;
        case '}':
        case ']':
          if (--depth == 0) return at + 1 == end;
          break;
        case '\n':
        case '\r':
        case '\t':
          break;
        default:  // a backslash or another control character outside a string
          return false;
      }
    }
  }
  return false;
}

enum class FieldKey : uint8_t { kTs, kDur, kPid, kTid, kPh, kCat, kName, kOther };

inline FieldKey Classify(std::string_view key) {
  switch (key.size()) {
    case 2:
      if (key == "ts") return FieldKey::kTs;
      if (key == "ph") return FieldKey::kPh;
      break;
    case 3:
      if (key == "cat") return FieldKey::kCat;
      if (key == "dur") return FieldKey::kDur;
      if (key == "pid") return FieldKey::kPid;
      if (key == "tid") return FieldKey::kTid;
      break;
    case 4:
      if (key == "name") return FieldKey::kName;
      break;
    default:
      break;
  }
  return FieldKey::kOther;
}

}  // namespace

bool ParseIntToken(std::string_view raw, int64_t* out) {
  while (!raw.empty() && IsWs(raw.back())) raw.remove_suffix(1);
  while (!raw.empty() && IsWs(raw[0])) raw.remove_prefix(1);
  size_t i = 0;
  if (!raw.empty() && raw[0] == '"') {
    while (i < raw.size() && !(raw[i] >= '0' && raw[i] <= '9') && raw[i] != '-') ++i;
  }
  bool negative = false;
  if (i < raw.size() && raw[i] == '-') {
    negative = true;
    ++i;
  }
  uint64_t value = 0;
  size_t digits = 0;
  for (; i < raw.size() && raw[i] >= '0' && raw[i] <= '9'; ++i, ++digits) {
    if (value > (std::numeric_limits<uint64_t>::max() - 9) / 10) return false;
    value = value * 10 + static_cast<uint64_t>(raw[i] - '0');
  }
  if (digits == 0 || value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return false;
  }
  *out = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  return true;
}

bool ScanHostRangeEvent(const char* data, size_t size, HostRangeFields* f) {
  const char* const end = data + size;
  if (size < 2 || data[0] != '{' || end[-1] != '}') return false;
  const char* p = SkipWs(data + 1, end);
  if (p == end) return false;
  if (*p == '}') return p + 1 == end;  // {}: no fields, as simdjson reads it
  while (true) {
    if (p == end || *p != '"') return false;
    std::string_view key;
    p = ReadPlainString(p, end, &key);  // an escaped key: declined
    if (!p) return false;
    p = SkipWs(p, end);
    if (p == end || *p != ':') return false;
    p = SkipWs(p + 1, end);
    if (p == end) return false;
    const char* const value = p;
    const FieldKey field = Classify(key);
    std::string_view text;  // a string field's value
    switch (field) {
      case FieldKey::kTs:
      case FieldKey::kDur:
      case FieldKey::kPid:
      case FieldKey::kTid:  // read as raw tokens: a number or a plain string
        p = *p == '"' ? ReadPlainString(p, end, &text) : SkipNumber(p, end);
        break;
      case FieldKey::kPh:
      case FieldKey::kCat:
      case FieldKey::kName:  // strings, unescaped by simdjson: plain ones read in place
        p = *p == '"' ? ReadPlainString(p, end, &text) : nullptr;
        break;
      case FieldKey::kOther:
        p = SkipValue(p, end, 0);
        break;
    }
    if (!p) return false;
    const char* const after = SkipWs(p, end);
    if (after == end || (*after != ',' && *after != '}')) return false;
    // simdjson's raw token of a scalar runs to the next structural character: here `after`.
    const std::string_view raw(value, static_cast<size_t>(after - value));
    switch (field) {
      case FieldKey::kTs:
        f->ts = raw;
        break;
      case FieldKey::kDur:
        f->dur = raw;
        break;
      case FieldKey::kPid:
        f->has_pid = ParseIntToken(raw, &f->pid);
        break;
      case FieldKey::kTid:
        f->has_tid = ParseIntToken(raw, &f->tid);
        break;
      case FieldKey::kPh:
        f->ph = text;
        break;
      case FieldKey::kCat:
        f->cat = text;
        f->has_cat = true;
        break;
      case FieldKey::kName:
        f->name = text;
        f->has_name = true;
        break;
      case FieldKey::kOther:
        break;
    }
    // Where the simdjson path stops reading; the rest only has to pass its stage 1.
    if (f->Complete()) return SuffixIsClean(p, end);
    if (*after == '}') return after + 1 == end;
    p = SkipWs(after + 1, end);
  }
}

}  // namespace inferscope::import::kineto
