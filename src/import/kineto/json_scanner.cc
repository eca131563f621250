// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/kineto/json_scanner.h"

#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace inferscope::import::kineto {
namespace {

inline bool IsWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline const char* SkipWs(const char* p, const char* end) {
  while (p < end && IsWs(*p)) ++p;
  return p;
}

// Bit i is set when p[i] is one of  " \ { } [ ]  (the only bytes that matter for nesting).
inline uint32_t StructuralMask16(const char* p) {
#if defined(__SSE2__)
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  __m128i m = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
  m = _mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
  // '[' (0x5b) and '{' (0x7b), ']' (0x5d) and '}' (0x7d) differ only in bit 5; no other byte maps
  // onto 0x7b or 0x7d when that bit is set.
  const __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
  m = _mm_or_si128(m, _mm_cmpeq_epi8(folded, _mm_set1_epi8('{')));
  m = _mm_or_si128(m, _mm_cmpeq_epi8(folded, _mm_set1_epi8('}')));
  return static_cast<uint32_t>(_mm_movemask_epi8(m));
#else
  uint32_t mask = 0;
  for (int i = 0; i < 16; ++i) {
    const char c = p[i];
    if (c == '"' || c == '\\' || c == '{' || c == '}' || c == '[' || c == ']') mask |= 1u << i;
  }
  return mask;
#endif
}

// Returns the position of the closing quote of a string whose body starts at `p`, or nullptr.
const char* FindStringEnd(const char* p, const char* end) {
  while (p < end) {
    if (*p == '\\') {
      p += 2;
      continue;
    }
    if (*p == '"') return p;
    ++p;
  }
  return nullptr;
}

enum class ValueEnd { kFound, kNeedMore, kBad };

// Finds the end of any JSON value starting at `p` (not whitespace).
ValueEnd FindValueEnd(const char* p, const char* end, bool at_end, const char** out) {
  if (*p == '{' || *p == '[') {
    *out = FindCompositeEnd(p, end, nullptr);
    return *out ? ValueEnd::kFound : ValueEnd::kNeedMore;
  }
  if (*p == '"') {
    const char* q = FindStringEnd(p + 1, end);
    if (!q) return ValueEnd::kNeedMore;
    *out = q + 1;
    return ValueEnd::kFound;
  }
  const char* q = p;
  while (q < end && !IsWs(*q) && *q != ',' && *q != '}' && *q != ']' && *q != ':') ++q;
  if (q == p) return ValueEnd::kBad;
  if (q == end && !at_end) return ValueEnd::kNeedMore;
  *out = q;
  return ValueEnd::kFound;
}

// Reads the string value after a verified `"cat"` key: `: "value"`. Empty if escaped or odd.
bool ReadCatValue(const char* key_end, const char* end, std::string_view* cat) {
  const char* p = SkipWs(key_end, end);
  if (p == end || *p != ':') return false;
  p = SkipWs(p + 1, end);
  if (p == end || *p != '"') return false;
  const char* begin = ++p;
  while (p < end && *p != '"' && *p != '\\') ++p;
  if (p == end || *p != '"') return false;
  *cat = std::string_view(begin, static_cast<size_t>(p - begin));
  return true;
}

}  // namespace

namespace {

// FindCompositeEnd's walk; kRecord adds the depth-1 strings (a store per string, no extra pass).
template <bool kRecord>
const char* CompositeEnd(const char* p, const char* end, const char** cat_key_end,
                         EventStrings* strings) {
  int depth = 0;
  bool in_string = false;
  bool skip_first = false;  // the previous block ended with a backslash inside a string
  const char* str_begin = nullptr;
  for (const char* block = p; block < end; block += 16) {
    uint32_t mask = StructuralMask16(block);
    const size_t avail = static_cast<size_t>(end - block);
    if (avail < 16) mask &= (1u << avail) - 1;
    if (skip_first) {
      mask &= ~1u;
      skip_first = false;
    }
    while (mask) {
      const int i = __builtin_ctz(mask);
      mask &= mask - 1;
      const char c = block[i];
      if (in_string) {
        if (c == '\\') {
          if constexpr (kRecord) strings->backslash = true;
          if (i == 15) {
            skip_first = true;
          } else {
            mask &= ~(1u << (i + 1));
          }
        } else if (c == '"') {
          in_string = false;
          const char* close = block + i;
          if constexpr (kRecord) {
            // Without a branch (keys at depth 1 alternate with "args" strings at depth 2): every
            // string is written to the next free slot, which only a depth-1 string then takes.
            const int k = strings->count < EventStrings::kMax ? strings->count : EventStrings::kMax;
            strings->open[k] = static_cast<uint32_t>(str_begin - 1 - p);
            strings->close[k] = static_cast<uint32_t>(close - p);
            strings->count += depth == 1 ? 1 : 0;
          }
          if (depth == 1 && cat_key_end && close - str_begin == 3 &&
              std::memcmp(str_begin, "cat", 3) == 0 && *cat_key_end == nullptr) {
            // A key is followed by ':'; a value "cat" is not. The ':' precedes the closing '}', so
            // reaching `end` here means the object is incomplete anyway.
            const char* q = SkipWs(close + 1, end);
            if (q == end) return nullptr;
            if (*q == ':') *cat_key_end = close + 1;
          }
        }
        continue;
      }
      switch (c) {
        case '"':
          in_string = true;
          str_begin = block + i + 1;
          break;
        case '{':
        case '[':
          ++depth;
          break;
        case '}':
        case ']':
          if (--depth == 0) return block + i + 1;
          break;
        default:  // a backslash outside a string: invalid JSON that simdjson rejects later
          if constexpr (kRecord) strings->backslash = true;
          break;
      }
    }
  }
  return nullptr;
}

}  // namespace

const char* FindCompositeEnd(const char* p, const char* end, const char** cat_key_end) {
  return CompositeEnd<false>(p, end, cat_key_end, nullptr);
}

const char* FindCompositeEnd(const char* p, const char* end, const char** cat_key_end,
                             EventStrings* strings) {
  strings->count = 0;
  strings->backslash = false;
  return CompositeEnd<true>(p, end, cat_key_end, strings);
}

base::StatusOr<size_t> TraceJsonScanner::Scan(const char* data, size_t size, uint64_t stream_offset,
                                              bool at_end, ScanHandler* handler) {
  const char* const end = data + size;
  const char* p = data;
  size_t consumed = 0;
  auto offset = [&](const char* at) { return std::to_string(stream_offset + (at - data)); };
  auto malformed = [&](const char* at, const char* what) {
    return base::DataLossError("malformed JSON at byte " + offset(at) + ": " + what);
  };
  while (state_ != State::kDone) {
    p = SkipWs(p, end);
    consumed = static_cast<size_t>(p - data);
    if (p == end) break;
    switch (state_) {
      case State::kStart:
        if (static_cast<unsigned char>(*p) == 0xef) {  // UTF-8 byte-order mark
          if (end - p < 3) goto need_more;
          if (std::memcmp(p, "\xef\xbb\xbf", 3) != 0) {
            return base::UnsupportedError("not a Kineto trace: does not start with a JSON object");
          }
          p += 3;
          continue;
        }
        if (*p == '{') {
          state_ = State::kMemberOrEnd;
        } else if (*p == '[') {
          bare_array_ = true;
          saw_trace_events_ = true;
          state_ = State::kElementOrEnd;
        } else {
          return base::UnsupportedError("not a Kineto trace: does not start with a JSON object");
        }
        ++p;
        continue;
      case State::kMemberOrEnd:
        if (*p == '}') {
          state_ = State::kDone;
          ++p;
          continue;
        }
        [[fallthrough]];
      case State::kMember: {
        if (*p != '"') return malformed(p, "expected a key string");
        const char* key_begin = p + 1;
        const char* key_end = FindStringEnd(key_begin, end);
        if (!key_end) goto need_more;
        const char* q = SkipWs(key_end + 1, end);
        if (q == end) goto need_more;
        if (*q != ':') return malformed(q, "expected ':' after a key");
        q = SkipWs(q + 1, end);
        if (q == end) goto need_more;
        const std::string_view key(key_begin, static_cast<size_t>(key_end - key_begin));
        if (key == "traceEvents") {
          if (*q != '[') {
            return base::UnsupportedError("\"traceEvents\" at byte " + offset(q) +
                                          " is not an array");
          }
          saw_trace_events_ = true;
          state_ = State::kElementOrEnd;
          p = q + 1;
          continue;
        }
        const char* value_end = nullptr;
        const ValueEnd r = FindValueEnd(q, end, at_end, &value_end);
        if (r == ValueEnd::kNeedMore) goto need_more;
        if (r == ValueEnd::kBad) return malformed(q, "expected a value");
        handler->OnTopLevelMember(key, q, static_cast<size_t>(value_end - q));
        p = value_end;
        state_ = State::kAfterMember;
        continue;
      }
      case State::kAfterMember:
        if (*p == ',') {
          state_ = State::kMember;
        } else if (*p == '}') {
          state_ = State::kDone;
        } else {
          return malformed(p, "expected ',' or '}' after a top-level member");
        }
        ++p;
        continue;
      case State::kElementOrEnd:
        if (*p == ']') {
          state_ = bare_array_ ? State::kDone : State::kAfterMember;
          ++p;
          continue;
        }
        if (*p == '{') {
          const char* cat_key_end = nullptr;
          const char* e = record_strings_ ? FindCompositeEnd(p, end, &cat_key_end, &strings_)
                                          : FindCompositeEnd(p, end, &cat_key_end);
          if (!e) goto need_more;
          std::string_view cat;
          const bool cat_known = cat_key_end && ReadCatValue(cat_key_end, e, &cat);
          ++events_;
          handler->OnEvent(p, static_cast<size_t>(e - p), cat, cat_known,
                           record_strings_ ? &strings_ : nullptr);
          p = e;
        } else {
          const char* value_end = nullptr;
          const ValueEnd r = FindValueEnd(p, end, at_end, &value_end);
          if (r == ValueEnd::kNeedMore) goto need_more;
          if (r == ValueEnd::kBad) return malformed(p, "expected an event");
          ++events_;
          handler->OnEvent(p, static_cast<size_t>(value_end - p), {}, false, nullptr);
          p = value_end;
        }
        state_ = State::kAfterElement;
        continue;
      case State::kAfterElement:
        if (*p == ',') {
          state_ = State::kElementOrEnd;
        } else if (*p == ']') {
          state_ = bare_array_ ? State::kDone : State::kAfterMember;
        } else {
          return malformed(p, "expected ',' or ']' between events");
        }
        ++p;
        continue;
      case State::kDone:
        break;
    }
  }
  if (state_ == State::kDone) return size;  // bytes after the closing brace are ignored
  if (!at_end) return consumed;
need_more:
  if (!at_end) return consumed;
  if (state_ == State::kStart) return base::UnsupportedError("not a Kineto trace: empty document");
  return base::DataLossError("unexpected end of JSON at byte " + offset(end) +
                             " (truncated file?)");
}

}  // namespace inferscope::import::kineto
