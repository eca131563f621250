// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/kineto/host_range_scanner.h"

#include <bit>
#include <cstring>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace inferscope::import::kineto {
namespace {

// Nesting this deep before the last field a range needs: declined (Kineto's "args" are two deep).
constexpr int kMaxSkipDepth = 32;

inline bool IsWs(char c) {
  constexpr uint64_t kWs = 1ull << ' ' | 1ull << '\n' | 1ull << '\r' | 1ull << '\t';
  const auto u = static_cast<unsigned char>(c);
  return u <= ' ' && ((kWs >> u) & 1) != 0;
}

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The scans below run over whole 16-byte blocks: one mask and one count of trailing zeros instead
// of a loop per byte, whose variable trip counts (16-digit timestamps, Kineto's indentation) cost
// a branch misprediction each. They read up to 15 bytes past `end`.
#if defined(__SSE2__)
inline __m128i Load16(const char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
#endif

// Bit i is set when p[i] is not JSON whitespace.
inline uint32_t NonWsMask16(const char* p) {
#if defined(__SSE2__)
  const __m128i v = Load16(p);
  __m128i ws = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
  ws = _mm_or_si128(ws, _mm_cmpeq_epi8(v, _mm_set1_epi8('\n')));
  ws = _mm_or_si128(ws, _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')));
  ws = _mm_or_si128(ws, _mm_cmpeq_epi8(v, _mm_set1_epi8('\t')));
  return ~static_cast<uint32_t>(_mm_movemask_epi8(ws)) & 0xffff;
#else
  uint32_t mask = 0;
  for (int i = 0; i < 16; ++i) mask |= IsWs(p[i]) ? 0 : 1u << i;
  return mask;
#endif
}

// Bit i is set when p[i] is not a decimal digit.
inline uint32_t NonDigitMask16(const char* p) {
#if defined(__SSE2__)
  const __m128i v = Load16(p);  // signed: bytes >= 0x80 are below '0'
  const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                      _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
  return ~static_cast<uint32_t>(_mm_movemask_epi8(digit)) & 0xffff;
#else
  uint32_t mask = 0;
  for (int i = 0; i < 16; ++i) mask |= IsDigit(p[i]) ? 0 : 1u << i;
  return mask;
#endif
}

// The first byte of [p, end) whose bit `mask16(block)` sets, or end.
template <uint32_t (*kMask16)(const char*)>
inline const char* FindFirst(const char* p, const char* end) {
  for (; p < end; p += 16) {
    const uint32_t mask = kMask16(p);
    if (mask) {
      const char* q = p + __builtin_ctz(mask);
      return q < end ? q : end;
    }
  }
  return end;
}

// Parsing is a chain of dependent steps (each starts where the previous ended), so its cost is
// their latency: the usual cases (no whitespace, or the one space after Kineto's ':' and ',') are
// settled by a byte test before any block scan.
inline const char* SkipWs(const char* p, const char* end) {
  if (p + 1 < end) {
    if (!IsWs(p[0])) return p;
    if (!IsWs(p[1])) return p + 1;
  }
  return FindFirst<NonWsMask16>(p, end);
}

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
  return FindFirst<StringStopMask16>(p, end);
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
  p = *p == '0' ? p + 1 : FindFirst<NonDigitMask16>(p, end);
  if (p < end && *p == '.') {
    ++p;
    if (p == end || !IsDigit(*p)) return nullptr;
    p = FindFirst<NonDigitMask16>(p, end);
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (p == end || !IsDigit(*p)) return nullptr;
    p = FindFirst<NonDigitMask16>(p, end);
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
// byte at all, no backslash or control character other than whitespace outside strings. This is
// the byte-by-byte walk, for a rest with backslashes (SuffixIsClean below handles the others).
bool SuffixIsCleanSlow(const char* p, const char* end) {
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

// Bits set in a 16-bit mask, inline (without -mpopcnt the builtin is a library call).
inline int Popcount16(uint32_t x) {
  x = x - ((x >> 1) & 0x5555);
  x = (x & 0x3333) + ((x >> 2) & 0x3333);
  x = (x + (x >> 4)) & 0x0f0f;
  return static_cast<int>((x + (x >> 8)) & 0x1f);
}

// SuffixIsCleanSlow's verdict without a branch per byte, for a rest without backslashes (Kineto's
// "args" of operators have none): which bytes lie inside strings is the running parity of the
// quotes (a prefix XOR of the quote mask); then control characters inside strings and control
// characters other than whitespace outside them are mask operations. The brackets are counted
// only when the byte after the event is '}': the one case where simdjson counts them (its check
// that a document whose next byte is '}' is balanced); it never walks the rest
// otherwise, and the importer's spans end where their brackets balance anyway.
bool SuffixIsClean(const char* p, const char* end) {
#if defined(__SSE2__)
  const bool count_brackets = *end == '}';  // within the padding
  uint32_t in_string = 0;                   // 0xffff when the previous block ended inside a string
  int balance = 0;
  for (const char* block = p; block < end; block += 16) {
    const size_t avail = static_cast<size_t>(end - block);
    const uint32_t valid = avail < 16 ? (1u << avail) - 1 : 0xffff;
    const __m128i v = Load16(block);
    auto mask = [&](__m128i m) { return static_cast<uint32_t>(_mm_movemask_epi8(m)) & valid; };
    const uint32_t quote = mask(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
    // Signed: bytes >= 0x80 are negative, below 0x20 too; a backslash, not handled here, too.
    const uint32_t odd = mask(_mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                           _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
    // Bit i: byte i is inside a string (its opening quote counted in, its closing quote out).
    uint32_t inside = quote;
    inside ^= inside << 1;
    inside ^= inside << 2;
    inside ^= inside << 4;
    inside ^= inside << 8;
    inside = (inside ^ in_string) & 0xffff;
    in_string = (inside >> 15) & 1 ? 0xffff : 0;  // past `end` the parity no longer changes
    if (count_brackets) {
      const __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));  // '[' -> '{', ']' -> '}'
      const uint32_t open = mask(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{')));
      const uint32_t close = mask(_mm_cmpeq_epi8(folded, _mm_set1_epi8('}')));
      balance += Popcount16(open & ~inside) - Popcount16(close & ~inside);
    }
    if (odd == 0) continue;          // the usual block: printable ASCII only
    if (mask(v) != 0) return false;  // a byte >= 0x80
    if (mask(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))) != 0) return SuffixIsCleanSlow(p, end);
    const uint32_t ws = mask(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')),
                                                       _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))),
                                          _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
    // Control characters: none inside strings, only whitespace outside them.
    if ((odd & inside) != 0 || (odd & ~inside & ~ws) != 0) return false;
  }
  return in_string == 0 && (!count_brackets || balance == -1);
#else
  return SuffixIsCleanSlow(p, end);
#endif
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

// A key's bytes, quotes included, as a native-endian integer: what an 8-byte load of them reads.
constexpr uint64_t Pack(std::string_view quoted) {
  uint64_t v = 0;
  for (size_t i = 0; i < quoted.size(); ++i) {
    const size_t shift = std::endian::native == std::endian::little ? i : 7 - i;
    v |= static_cast<uint64_t>(static_cast<unsigned char>(quoted[i])) << (8 * shift);
  }
  return v;
}

constexpr uint64_t kPh = Pack("\"ph\""), kPid = Pack("\"pid\""), kTs = Pack("\"ts\""),
                   kTid = Pack("\"tid\""), kCat = Pack("\"cat\""), kDur = Pack("\"dur\""),
                   kName = Pack("\"name\""), kArgs = Pack("\"args\"");

// Kineto's own keys, quotes included, matched without a string scan (most events have only
// these): one past the closing quote, or nullptr for any other key. One 8-byte load (it may read
// into the padding past `end`), masked to the key's length and compared with a constant: the
// constants must not go through memory (an 8-byte load of a 4-byte store stalls).
inline const char* KnownKeyEnd(const char* p, const char* end, FieldKey* field) {
  if (end - p < 8) return nullptr;
  uint64_t have = 0;
  std::memcpy(&have, p, 8);
  auto is = [have](uint64_t want, size_t size) {
    const uint64_t keep = std::endian::native == std::endian::little ? ~0ull >> (64 - 8 * size)
                                                                     : ~0ull << (64 - 8 * size);
    return (have & keep) == want;
  };
  const char* key_end = nullptr;
  switch (p[1]) {
    case 'p':
      if (is(kPh, 4)) *field = FieldKey::kPh, key_end = p + 4;
      if (is(kPid, 5)) *field = FieldKey::kPid, key_end = p + 5;
      break;
    case 't':
      if (is(kTs, 4)) *field = FieldKey::kTs, key_end = p + 4;
      if (is(kTid, 5)) *field = FieldKey::kTid, key_end = p + 5;
      break;
    case 'c':
      if (is(kCat, 5)) *field = FieldKey::kCat, key_end = p + 5;
      break;
    case 'd':
      if (is(kDur, 5)) *field = FieldKey::kDur, key_end = p + 5;
      break;
    case 'n':
      if (is(kName, 6)) *field = FieldKey::kName, key_end = p + 6;
      break;
    case 'a':
      if (is(kArgs, 6)) *field = FieldKey::kOther, key_end = p + 6;
      break;
    default:
      break;
  }
  return key_end;
}

// `"key"` at p (an 8-byte load compared with its constant), then ':' and whitespace: the value's
// first byte, or nullptr.
inline const char* ExpectKey(const char* p, const char* end, uint64_t want, size_t size) {
  if (end - p < 8) return nullptr;
  uint64_t have = 0;
  std::memcpy(&have, p, 8);
  const uint64_t keep = std::endian::native == std::endian::little ? ~0ull >> (64 - 8 * size)
                                                                   : ~0ull << (64 - 8 * size);
  if ((have & keep) != want) return nullptr;
  p = SkipWs(p + size, end);
  if (p == end || *p != ':') return nullptr;
  p = SkipWs(p + 1, end);
  return p == end ? nullptr : p;
}

// After a value ending at p: whitespace and ',' (*after: the ',' or whatever stands there), then
// whitespace: the next key's first byte, or nullptr.
inline const char* ExpectComma(const char* p, const char* end, const char** after) {
  *after = SkipWs(p, end);
  if (*after == end || **after != ',') return nullptr;
  return SkipWs(*after + 1, end);
}

enum class Layout { kRead, kDeclined, kOther };

// Kineto's own layout of an operator, in its order: "ph", "cat", "name" (strings), "pid", "tid",
// "ts", "dur" (numbers), then anything. Straight-line code whose branches all go one way on such
// traces: the general loop below costs a data-dependent dispatch per field, which made it slower
// than simdjson. Every step is the general loop's own (the same helpers, the same raw tokens), so
// kRead gives the fields it would give; kOther: not this layout, ask the general loop.
Layout ScanKinetoLayout(const char* data, const char* end, HostRangeFields* f) {
  const char* after = nullptr;
  const char* p = SkipWs(data + 1, end);
  auto string_field = [&](uint64_t key, size_t size, std::string_view* out) {
    const char* v = ExpectKey(p, end, key, size);
    if (!v || *v != '"') return false;
    v = ReadPlainString(v, end, out);
    return v && (p = ExpectComma(v, end, &after)) != nullptr;
  };
  auto number = [&](uint64_t key, size_t size, std::string_view* raw, bool last) {
    const char* v = ExpectKey(p, end, key, size);
    if (!v || !(IsDigit(*v) || *v == '-')) return false;
    const char* e = SkipNumber(v, end);
    if (!e) return false;
    if (last) {
      after = SkipWs(e, end);
      if (after == end || (*after != ',' && *after != '}')) return false;
      p = e;
    } else if ((p = ExpectComma(e, end, &after)) == nullptr) {
      return false;
    }
    *raw = std::string_view(v, static_cast<size_t>(after - v));
    return true;
  };
  std::string_view pid, tid;
  if (!string_field(kPh, 4, &f->ph) || !string_field(kCat, 5, &f->cat) ||
      !string_field(kName, 6, &f->name) || !number(kPid, 5, &pid, false) ||
      !number(kTid, 5, &tid, false) || !number(kTs, 4, &f->ts, false) ||
      !number(kDur, 5, &f->dur, true))
    return Layout::kOther;
  f->has_cat = f->has_name = true;
  f->has_pid = ParseIntToken(pid, &f->pid);
  f->has_tid = ParseIntToken(tid, &f->tid);
  if (!f->Complete()) return Layout::kOther;  // e.g. "ph": "": the general loop reads on
  return SuffixIsClean(p, end) ? Layout::kRead : Layout::kDeclined;
}

// Up to eight ASCII digits at p (n in 1..8) as their value, without a loop: SWAR, the digits
// right-aligned in one word (the bytes past them shifted out, zeros in as leading digits).
inline uint64_t Digits8(const char* p, int n) {
  if constexpr (std::endian::native != std::endian::little) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = v * 10 + static_cast<uint64_t>(p[i] - '0');
    return v;
  } else {
    uint64_t v = 0;
    std::memcpy(&v, p, 8);
    v <<= 8 * (8 - n);
    v = ((v & 0x0F0F0F0F0F0F0F0Full) * 2561) >> 8;
    v = ((v & 0x00FF00FF00FF00FFull) * 6553601) >> 16;
    return ((v & 0x0000FFFF0000FFFFull) * 42949672960001ull) >> 32;
  }
}

// Up to sixteen digits (n in 1..16).
inline uint64_t Digits16(const char* p, int n) {
  return n <= 8 ? Digits8(p, n) : Digits8(p, n - 8) * 100000000ull + Digits8(p + n - 8, 8);
}

// The run of digits at p, up to 17 (more: 17).
inline int DigitRun(const char* p) {
  const uint32_t mask = NonDigitMask16(p);
  return mask != 0 ? __builtin_ctz(mask) : IsDigit(p[16]) ? 17 : 16;
}

// [p, q) is whitespace around exactly one `sep` (Kineto writes ": ", ", " and ",\n    ").
inline bool SeparatorOnly(const char* p, const char* q, char sep) {
  const ptrdiff_t n = q - p;
  if (n == 2 && p[0] == sep && p[1] == ' ') return true;  // the usual ": " and ", "
  if (n <= 0 || n > 16) return false;
  const uint32_t m = NonWsMask16(p) & ((1u << n) - 1);
  return m != 0 && (m & (m - 1)) == 0 && p[__builtin_ctz(m)] == sep;
}

// A number field's value after its key (p: one past the key's closing quote): whitespace, ':',
// whitespace, then an unsigned JSON number of at most 16 integer digits, a fraction only if
// `fraction` and no exponent. Its integer digits start at *whole (*whole_digits of them), its
// fraction's at *frac (*frac_digits, 0 without one); returns one past the number, or nullptr.
inline const char* NumberAfterKey(const char* p, bool fraction, const char** whole,
                                  int* whole_digits, const char** frac, int* frac_digits) {
  if (p[0] == ':' && p[1] == ' ' && !IsWs(p[2])) {  // Kineto's ": "
    p += 2;
  } else {
    uint32_t m = NonWsMask16(p);
    if (m == 0) return nullptr;
    p += __builtin_ctz(m);
    if (*p != ':') return nullptr;
    ++p;
    m = NonWsMask16(p);
    if (m == 0) return nullptr;
    p += __builtin_ctz(m);
  }
  const int n = DigitRun(p);
  if (n == 0 || n > 16 || (n > 1 && *p == '0')) return nullptr;  // none, too long, leading 0
  *whole = p;
  *whole_digits = n;
  p += n;
  *frac = p;
  *frac_digits = 0;
  if (*p == '.') {
    if (!fraction) return nullptr;
    ++p;
    const int f = DigitRun(p);
    if (f == 0 || f > 16) return nullptr;
    *frac = p;
    *frac_digits = f;
    p += f;
  }
  if (*p == 'e' || *p == 'E') return nullptr;
  return p;
}

// Microseconds to nanoseconds as ParseMicrosToNs's fast path (the first three fraction digits,
// the fourth rounding half up); false where that path would not take the number.
inline bool MicrosToNs(const char* whole, int whole_digits, const char* frac, int frac_digits,
                       int64_t* ns) {
  constexpr uint64_t kMaxWhole = (std::numeric_limits<int64_t>::max() - 1000) / 1000;
  const uint64_t w = Digits16(whole, whole_digits);
  if (w > kMaxWhole) return false;
  uint64_t f = 0;
  if (frac_digits > 0) {
    static constexpr uint64_t kScale[] = {1, 100, 10, 1};
    const int taken = frac_digits < 3 ? frac_digits : 3;
    f = Digits8(frac, taken) * kScale[taken];
    if (frac_digits > 3 && frac[3] >= '5') ++f;
  }
  *ns = static_cast<int64_t>(w * 1000 + f);
  return true;
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
  switch (ScanKinetoLayout(data, end, f)) {
    case Layout::kRead:
      return true;
    case Layout::kDeclined:
      return false;
    case Layout::kOther:
      *f = HostRangeFields();
      break;
  }
  while (true) {
    if (p == end || *p != '"') return false;
    FieldKey field;
    const char* const key_end = KnownKeyEnd(p, end, &field);
    if (key_end) {
      p = key_end;
    } else {
      std::string_view key;
      p = ReadPlainString(p, end, &key);  // an escaped key: declined
      if (!p) return false;
      field = Classify(key);
    }
    p = SkipWs(p, end);
    if (p == end || *p != ':') return false;
    p = SkipWs(p + 1, end);
    if (p == end) return false;
    const char* const value = p;
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

bool ScanKinetoOperator(const char* data, size_t size, const EventStrings& strings,
                        KinetoOperator* op) {
  // Kineto's layout: the strings "ph" "X" "cat" <cat> "name" <name> "pid" "tid" "ts" "dur" first.
  if (strings.count < 10 || strings.backslash || size < 2 || data[size - 1] != '}') return false;
  const uint32_t* open = strings.open;
  const uint32_t* close = strings.close;
  auto key = [data, open](int k, uint64_t want, size_t bytes) {
    uint64_t have = 0;
    std::memcpy(&have, data + open[k], 8);
    const uint64_t keep = std::endian::native == std::endian::little ? ~0ull >> (64 - 8 * bytes)
                                                                     : ~0ull << (64 - 8 * bytes);
    return (have & keep) == want;
  };
  // One check per field, none depending on another's result: they overlap.
  const bool keys = key(0, kPh, 4) && key(2, kCat, 5) && key(4, kName, 6) && key(6, kPid, 5) &&
                    key(7, kTid, 5) && key(8, kTs, 4) && key(9, kDur, 5);
  const bool head = open[0] >= 1 && open[0] - 1 <= 16 &&
                    (NonWsMask16(data + 1) & ((1u << (open[0] - 1)) - 1)) == 0;
  const bool separators = SeparatorOnly(data + close[0] + 1, data + open[1], ':') &&
                          SeparatorOnly(data + close[1] + 1, data + open[2], ',') &&
                          SeparatorOnly(data + close[2] + 1, data + open[3], ':') &&
                          SeparatorOnly(data + close[3] + 1, data + open[4], ',') &&
                          SeparatorOnly(data + close[4] + 1, data + open[5], ':') &&
                          SeparatorOnly(data + close[5] + 1, data + open[6], ',');
  const bool ph = close[1] == open[1] + 2 && data[open[1] + 1] == 'X';
  // Strings stage 1 checks: no control character (and, stricter, no non-ASCII byte) inside.
  const bool plain = FindStringStop(data + open[3] + 1, data + close[3]) == data + close[3] &&
                     FindStringStop(data + open[5] + 1, data + close[5]) == data + close[5];
  if (!(keys && head && separators && ph && plain)) return false;
  const char *pid, *tid, *ts, *dur, *pid_f, *tid_f, *ts_f, *dur_f;
  int pid_n, tid_n, ts_n, dur_n, pid_fn, tid_fn, ts_fn, dur_fn;
  const char* pid_end = NumberAfterKey(data + close[6] + 1, false, &pid, &pid_n, &pid_f, &pid_fn);
  const char* tid_end = NumberAfterKey(data + close[7] + 1, false, &tid, &tid_n, &tid_f, &tid_fn);
  const char* ts_end = NumberAfterKey(data + close[8] + 1, true, &ts, &ts_n, &ts_f, &ts_fn);
  const char* dur_end = NumberAfterKey(data + close[9] + 1, true, &dur, &dur_n, &dur_f, &dur_fn);
  if (!pid_end || !tid_end || !ts_end || !dur_end || !SeparatorOnly(pid_end, data + open[7], ',') ||
      !SeparatorOnly(tid_end, data + open[8], ',') || !SeparatorOnly(ts_end, data + open[9], ','))
    return false;
  // After "dur"'s value, as after any value the reader takes: whitespace, then ',' or '}'.
  const uint32_t after_dur = NonWsMask16(dur_end);
  if (after_dur == 0 ||
      (dur_end[__builtin_ctz(after_dur)] != ',' && dur_end[__builtin_ctz(after_dur)] != '}'))
    return false;
  if (!MicrosToNs(ts, ts_n, ts_f, ts_fn, &op->start_ns) ||
      !MicrosToNs(dur, dur_n, dur_f, dur_fn, &op->dur_ns))
    return false;
  op->pid = static_cast<int64_t>(Digits16(pid, pid_n));
  op->tid = static_cast<int64_t>(Digits16(tid, tid_n));
  op->name = std::string_view(data + open[5] + 1, close[5] - open[5] - 1);
  // The rest, from "dur"'s value on, as ScanHostRangeEvent checks it.
  return SuffixIsClean(dur_end, data + size);
}

}  // namespace inferscope::import::kineto
