// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The hand-written operator/module reader against its simdjson reference: field by field on
// tricky events, and the ops view of a generated and a real trace with the reader on and off.

#include "src/import/kineto/host_range_scanner.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "src/aggregate/view_collector.h"
#include "src/import/kineto/kineto_importer.h"
#include "src/import/kineto/test_host_range_diff.h"
#include "src/model/taxonomy.h"
#include "tests/test_traces.h"

namespace inferscope::import::kineto {
namespace {

using testing::MapOneEvent;

// Reads `event` with the hand-written reader from *buffer (the event and the padding it may read
// past the end), which the fields point into.
bool Scan(const std::string& event, HostRangeFields* f, std::string* buffer, char pad = ' ') {
  *buffer = event + std::string(kScanPadding, pad);
  *f = HostRangeFields();
  return ScanHostRangeEvent(buffer->data(), event.size(), f);
}

TEST(HostRangeScannerTest, ReadsAKinetoOperatorInPlace) {
  const std::string event = R"({
    "ph": "X", "cat": "cpu_op", "name": "aten::expand", "pid": 783658, "tid": 785244,
    "ts": 1669783687464200, "dur": 19,
    "args": {
      "External id": 3075,"Ev Idx": 2, "Input Dims": [[16, 1024], []], "Input type": ["float", ""]
    }
  })";
  HostRangeFields f;
  std::string buffer;
  ASSERT_TRUE(Scan(event, &f, &buffer));
  EXPECT_EQ(f.cat, "cpu_op");
  EXPECT_TRUE(f.has_cat);
  EXPECT_EQ(f.name, "aten::expand");
  EXPECT_EQ(f.ph, "X");
  EXPECT_EQ(f.ts, "1669783687464200");
  EXPECT_EQ(f.dur, "19");
  EXPECT_EQ(f.pid, 783658);
  EXPECT_EQ(f.tid, 785244);
  EXPECT_TRUE(f.has_pid && f.has_tid && f.has_name);

  // Raw tokens keep the whitespace before the separator, as simdjson's raw_json_token does.
  ASSERT_TRUE(Scan(R"({"name": "a", "ts": "1.5" , "dur": 2.25e1 , "pid": "stream 7",)"
                   R"( "tid": -3, "ph": "X"})",
                   &f, &buffer));
  EXPECT_EQ(f.ts, "\"1.5\" ");
  EXPECT_EQ(f.dur, "2.25e1 ");
  EXPECT_EQ(f.pid, 7);
  EXPECT_EQ(f.tid, -3);
  EXPECT_FALSE(f.has_cat);
}

TEST(HostRangeScannerTest, DeclinesWhatItCannotReadExactly) {
  HostRangeFields f;
  std::string buffer;
  const char* declined[] = {
      R"({"ph": "X", "name": "a\"b", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",     // escape
      R"({"ph": "X", "name": "a\u00e9", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",  // \u escape
      "{\"ph\": \"X\", \"name\": \"caf\xc3\xa9\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}",
      "{\"ph\": \"X\", \"name\": \"a\x01\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}",
      R"({"ph": "X", "name": 42, "pid": 1, "tid": 1, "ts": 1, "dur": 1})",        // not a string
      R"({"ph": "X", "na\u006de": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",  // escaped key
      R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": true, "dur": 1})",
      R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1 2})",  // after the last
      R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 01, "dur": 1})",   // not JSON
      // The rest of the event after the last field read: stage 1's checks.
      "{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, "
      "\"args\": {\"s\": \"a\nb\"}}",
      "{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, "
      "\"args\": {\"s\": \"\xff\"}}",
      R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": \"x"})",
      R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1])",
      R"({"ph": "X", "name": "a"} })",
  };
  for (const char* event : declined) EXPECT_FALSE(Scan(event, &f, &buffer)) << event;
  // Unbalanced after the last field read: simdjson objects only when the next byte is '}'.
  for (const char* event :
       {R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"a": [1}})",
        R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {}]})"}) {
    EXPECT_FALSE(Scan(event, &f, &buffer, '}')) << event;
    EXPECT_TRUE(Scan(event, &f, &buffer, ',')) << event;
  }
  // Deeper than it walks before the fields: declined, simdjson decides.
  std::string deep = R"({"args": )" + std::string(40, '[') + std::string(40, ']') +
                     R"(, "ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1})";
  EXPECT_FALSE(Scan(deep, &f, &buffer));
}

// Every event here goes through both readers and must give the same events and counters; the
// ones marked `fast` must be taken by the hand-written reader (else the comparison proves little).
TEST(HostRangeScannerTest, SameResultAsSimdjsonOnTrickyEvents) {
  enum Fast { kNo, kYes, kUnlessBraceAfter };
  struct Case {
    const char* event;
    int fast;  // Fast, or a bool
  };
  const Case cases[] = {
      {R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 8, "ts": 10, "dur": 5,
          "args": {"External id": 3, "Input Dims": [[16, 1024], [1024, 1024]],
                   "Concrete Inputs": ["", "a \"quoted\" \\ \u00e9 \ud83d\ude00 string"]}})",
       true},
      // Field order: args first, nested, with escapes; fields after it.
      {R"({"args": {"a": {"b": [1, -2.5e-3, true, false, null, {"c": "d\"\\\/\b\f\n\r\t\u0041"}]}},
          "dur": 2, "ts": 40, "tid": 8, "pid": 7, "name": "aten::late", "cat": "cpu_op",
          "ph": "X"})",
       true},
      // Numbers as strings and floats, old string tids.
      {R"({"ph": "X", "cat": "cpu_op", "name": "n", "pid": "7", "tid": "stream 8",
          "ts": "10.5", "dur": 2.0625})",
       true},
      {R"({"ph": "X", "cat": "cpu_op", "name": "n", "pid": 7, "tid": 8, "ts": 1.5e1,
          "dur": 25e-1})",
       true},
      {"{\r\n\t\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"n\",\"pid\":7,\"tid\":8,\"ts\":1,"
       "\"dur\":1,\"args\":{\r\n\t\"x\":[]}\r\n}",
       true},
      // Duplicate keys: before and after the point where every field has been seen.
      {R"({"name": "first", "name": "second", "ph": "X", "pid": 1, "tid": 2, "ts": 3, "dur": 4,
          "name": "third"})",
       true},
      {R"({"ph": "B", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4})", true},
      {R"({"ph": "", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4})", true},
      {R"({"name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4})", true},  // no ph: to the end
      {R"({"ph": "X", "pid": 1, "tid": 2, "ts": 3, "dur": 4})", true},    // no name: malformed
      {R"({"ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": -4})", true},
      {R"({"ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": 0, "dur": 4})", true},
      {R"({"ph": "X", "name": "n", "pid": "x", "tid": 2, "ts": 3, "dur": 4})", true},
      {R"({"ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": 99999999999999999999, "dur": 4})",
       true},
      {R"({"ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": 3.00049, "dur": 4.0005})", true},
      {R"({})", true},
      // Kineto's order (the reader's straight-line path) until something else: the general loop.
      {R"({"ph": "", "cat": "cpu_op", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4,
          "ph": "X"})",
       true},
      {R"({"ph": "X", "cat": "cpu_op", "name": "n", "pid": "x", "tid": 2, "ts": 3, "dur": 4,
          "pid": 5})",
       true},
      {R"({"ph": "X", "cat": "cpu_op", "name": "n", "pid": 99999999999999999999, "tid": 2,
          "ts": 3, "dur": 4, "args": {}, "pid": 6})",
       true},
      {R"({"ph": "X", "cat": "cpu_op", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4 })",
       true},
      {R"({"ph": "X", "cat": "cpu_op", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4,)"
       "\n \"args\": {\"s\": \"a\tb\"}}",
       false},
      {R"({"cat": 5, "ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4})", false},
      {R"({"ph": "X", "name": "esc\"aped \\ \u00e9 \ud83d\ude00", "pid": 1, "tid": 2, "ts": 3,
          "dur": 4})",
       false},
      {R"({"ph": "X", "name": "lone \ud83d", "pid": 1, "tid": 2, "ts": 3, "dur": 4})", false},
      {R"({"ph": "X", "name": "bad \x", "pid": 1, "tid": 2, "ts": 3, "dur": 4})", false},
      {"{\"ph\": \"X\", \"name\": \"caf\xc3\xa9\", \"pid\": 1, \"tid\": 2, \"ts\": 3, \"dur\": 4}",
       false},
      {"{\"ph\": \"X\", \"name\": \"n\", \"pid\": 1, \"tid\": 2, \"ts\": 3, \"dur\": 4, "
       "\"args\": {\"s\": \"\xc3\x28\"}}",
       false},
      {"{\"ph\": \"X\", \"name\": \"n\", \"pid\": 1, \"tid\": 2, \"ts\": 3, \"dur\": 4, "
       "\"args\": {\"s\": \"tab\there\"}}",
       false},
      {"{\"ph\": \"X\", \"name\": \"n\x01\", \"pid\": 1, \"tid\": 2, \"ts\": 3, \"dur\": 4}",
       false},
      {R"({"ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4 garbage})", false},
      // Unbalanced after the last field read: an error for simdjson only when '}' follows.
      {R"({"ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4, "args": {"a": [1}})",
       kUnlessBraceAfter},
      // Past the last field read, simdjson counts brackets without matching their kinds: read
      // by both alike.
      {R"({"ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4, "args": {]})", true},
      {R"({"ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4])", false},
      {R"({"ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": true, "dur": 4})", false},
      {R"({"ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": {"a": 1}, "dur": 4})", false},
      {R"({"ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": "1\u0032", "dur": 4})", false},
      {R"({"ph": "X", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4x})", false},
      {R"({"ph": "X", "na\"me": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4})", false},
      {R"({"ph" "X", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4})", false},
  };
  for (const Case& c : cases) {
    for (const char* cat : {"cpu_op", "python_function"}) {
      for (char pad : {' ', '}'}) {
        std::string event = c.event;
        if (std::string_view(cat) == "python_function") {
          // Only modules are parsed: rename so that the event is one.
          const size_t at = event.find("\"name\": \"");
          if (at != std::string::npos) event.insert(at + 9, "nn.Module: ");
        }
        uint64_t scanned = 0;
        const std::string reference = MapOneEvent(event, cat, /*scanner=*/false, pad);
        const std::string fast = MapOneEvent(event, cat, /*scanner=*/true, pad, &scanned);
        EXPECT_EQ(fast, reference) << cat << " " << event;
        if (c.fast && event.find("nn.Module") == std::string::npos &&
            std::string_view(cat) == "python_function") {
          continue;  // not a module: never parsed
        }
        const bool fast_expected = c.fast == kUnlessBraceAfter ? pad != '}' : c.fast != kNo;
        EXPECT_EQ(scanned, fast_expected ? 1u : 0u) << cat << " " << event << " pad " << pad;
      }
    }
  }
}

// ScanKinetoOperator (the fields of Kineto's layout read from the string offsets the structural
// scan records) against the reader's walk and the number parsers, on generated variants of
// Kineto's layout: separators with and without whitespace, numbers of 1 to 18 digits, fractions,
// leading zeros, exponents, and the args; what it takes must be what the reader reads, and it
// must take Kineto's own form.
TEST(HostRangeScannerTest, KinetoLayoutFromTheScannersOffsetsMatchesTheReader) {
  uint64_t seed = 11;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return seed >> 11;
  };
  auto number = [&](bool fraction) {
    std::string t = std::to_string(next() % 10);
    const int digits = static_cast<int>(next() % 18);
    for (int i = 0; i < digits; ++i) t += static_cast<char>('0' + next() % 10);
    if (next() % 4 == 0) t = "0" + t;  // a leading zero: not JSON
    if (fraction && next() % 2 == 0) {
      t += ".";
      const int frac = static_cast<int>(next() % 7);  // 0: "12." (not JSON)
      for (int i = 0; i < frac; ++i) t += static_cast<char>('0' + next() % 10);
    }
    if (next() % 16 == 0) t += "e1";
    return t;
  };
  const char* separators[] = {", ", ",", ",\n    ", " , ", ",\t"};
  const char* colons[] = {": ", ":", " : ", ":\n "};
  const char* names[] = {"aten::mm", "", "a b", "caf\xc3\xa9", "tab\there", "n\\\"x"};
  const char* args[] = {"",
                        R"(, "args": {"External id": 3, "Input Dims": [[1, 2], []]})",
                        R"(, "args": {"s": "a\tb"})",
                        R"(, "args": {"a": [1}})",
                        " garbage",
                        R"(, "args": {"e": "\u0041"})"};
  int taken = 0, kineto_form = 0;
  for (int i = 0; i < 20000; ++i) {
    const bool plain = i % 4 == 0;  // exactly Kineto's form
    auto sep = [&] { return std::string(plain ? ", " : separators[next() % 5]); };
    auto colon = [&] { return std::string(plain ? ": " : colons[next() % 4]); };
    const std::string ts =
        plain ? std::to_string(1669783687464181 + next() % 1000000) : number(true);
    const std::string dur = plain ? std::to_string(next() % 100000) : number(true);
    const std::string pid = plain ? std::to_string(next() % 4000000) : number(false);
    const std::string event =
        std::string("{") + (plain ? "\n    " : "") + "\"ph\"" + colon() + "\"X\"" + sep() +
        "\"cat\"" + colon() + "\"cpu_op\"" + sep() + "\"name\"" + colon() + "\"" +
        (plain ? "aten::mm" : names[next() % 6]) + "\"" + sep() + "\"pid\"" + colon() + pid +
        sep() + "\"tid\"" + colon() + pid + sep() + "\"ts\"" + colon() + ts + sep() + "\"dur\"" +
        colon() + dur + (plain ? args[1] : args[next() % 6]) + (plain ? "\n  }" : "}");
    std::string buffer = event + std::string(kScanPadding, next() % 2 ? ' ' : '}');
    EventStrings strings;
    const char* cat_key_end = nullptr;
    ASSERT_EQ(
        FindCompositeEnd(buffer.data(), buffer.data() + buffer.size(), &cat_key_end, &strings),
        buffer.data() + event.size())
        << event;
    KinetoOperator op;
    const bool fast = ScanKinetoOperator(buffer.data(), event.size(), strings, &op);
    if (plain) {
      EXPECT_TRUE(fast) << event;
      ++kineto_form;
    }
    // The same bytes through the importer's mapper, reader on and off: what it delivers agrees.
    const char pad = buffer[event.size()];
    EXPECT_EQ(MapOneEvent(event, "cpu_op", /*scanner=*/true, pad),
              MapOneEvent(event, "cpu_op", /*scanner=*/false, pad))
        << event;
    if (!fast) continue;
    ++taken;
    HostRangeFields f;
    ASSERT_TRUE(ScanHostRangeEvent(buffer.data(), event.size(), &f)) << event;
    int64_t start_ns = 0, dur_ns = 0;
    ASSERT_TRUE(ParseMicrosToNs(f.ts, &start_ns) && ParseMicrosToNs(f.dur, &dur_ns)) << event;
    EXPECT_EQ(op.start_ns, start_ns) << event;
    EXPECT_EQ(op.dur_ns, dur_ns) << event;
    EXPECT_EQ(op.name, f.name) << event;
    EXPECT_TRUE(f.has_pid && f.has_tid && f.ph == "X" && f.cat == "cpu_op") << event;
    EXPECT_EQ(op.pid, f.pid) << event;
    EXPECT_EQ(op.tid, f.tid) << event;
  }
  EXPECT_EQ(kineto_form, 5000);
  EXPECT_GT(taken, kineto_form);  // and some of the other forms
}

// ParseMicrosToNs reads Kineto's usual "1669783687464200" / "12.345" forms on a 64-bit fast path;
// a leading space sends the same text down the general (128-bit) path, which must agree.
TEST(HostRangeScannerTest, TimestampFastPathMatchesTheGeneralOne) {
  std::vector<std::string> texts = {"0",       "1",      "007",     "1.",
                                    "1.5",     "0.0005", "0.00049", "1.23456789",
                                    "12.9995", "9.9999", "0.000000"};
  uint64_t seed = 7;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return seed >> 11;
  };
  for (int i = 0; i < 20000; ++i) {
    std::string t = std::to_string(next() % (i % 3 == 0 ? 100000 : 10000000000000000ull));
    if (i % 2 == 0) t += "." + std::to_string(next() % 100000000).substr(0, 1 + i % 9);
    texts.push_back(t);
  }
  // Around the 64-bit limit: 16 and 17 integer digits.
  for (const char* t :
       {"9223372036854774", "9223372036854775", "9223372036854775.807", "9223372036854775.808",
        "9999999999999999", "99999999999999999", "9223372036854774.9999"})
    texts.push_back(t);
  for (const std::string& t : texts) {
    int64_t fast = -1, general = -1;
    const bool fast_ok = ParseMicrosToNs(t, &fast);
    const bool general_ok = ParseMicrosToNs(" " + t, &general);
    EXPECT_EQ(fast_ok, general_ok) << t;
    if (fast_ok && general_ok) {
      EXPECT_EQ(fast, general) << t;
    }
  }
  int64_t ns = 0;
  ASSERT_TRUE(ParseMicrosToNs("1669783687464200.5", &ns));
  EXPECT_EQ(ns, 1669783687464200500);
  ASSERT_TRUE(ParseMicrosToNs("0.0005", &ns));
  EXPECT_EQ(ns, 1);
}

// A trace in Kineto's layout with the variations above mixed in: operators nesting on two threads,
// the runtime calls and kernels they launch, modules.
std::string GeneratedTrace(int ops) {
  std::string out = R"({"traceEvents": [)";
  uint64_t seed = 42;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(seed >> 33);
  };
  const char* names[] = {"aten::mm",
                         "aten::add_",
                         "aten::esc\\\"aped",
                         "aten::caf\\u00e9",
                         "nn.Module: Linear_0",
                         "aten::linear",
                         "autograd::engine: MmBackward0"};
  int64_t ts = 1669783687464200;
  int correlation = 1;
  bool first = true;
  auto add = [&](const std::string& e) {
    if (!first) out += ",\n";
    first = false;
    out += e;
  };
  for (int i = 0; i < ops; ++i) {
    const int tid = 100 + static_cast<int>(next() % 2);
    const char* name = names[next() % 7];
    const std::string cat =
        std::string_view(name).starts_with("nn.Module") ? "python_function" : "cpu_op";
    const int64_t dur = 5 + next() % 50;
    const std::string ts_text =
        next() % 5 == 0 ? "\"" + std::to_string(ts) + ".5\"" : std::to_string(ts);
    const std::string args = R"("args": {"External id": )" + std::to_string(i) +
                             R"(, "Input Dims": [[16, 1024], []], "Input type": ["float", ""]})";
    if (next() % 4 == 0) {
      add("{" + args + R"(, "ph": "X", "cat": ")" + cat + R"(", "name": ")" + name +
          R"(", "pid": 7, "tid": )" + std::to_string(tid) + R"(, "ts": )" + ts_text +
          R"(, "dur": )" + std::to_string(dur) + "}");
    } else {
      add("{\n    \"ph\": \"X\", \"cat\": \"" + cat + "\", \"name\": \"" + name +
          "\", \"pid\": 7, \"tid\": " + std::to_string(tid) + ",\n    \"ts\": " + ts_text +
          ", \"dur\": " + std::to_string(dur) + ",\n    " + args + "\n  }");
    }
    // A launch inside the operator and its kernel.
    add(R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": )" +
        std::to_string(tid) + R"(, "ts": )" + std::to_string(ts + 1) +
        R"(, "dur": 2, "args": {"correlation": )" + std::to_string(correlation) + "}}");
    add(R"({"ph": "X", "cat": "kernel", "name": "gemm_)" + std::to_string(next() % 5) +
        R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(ts + 10) + R"(, "dur": )" +
        std::to_string(1 + next() % 20) +
        R"(, "args": {"device": 0, "stream": 7, "correlation": )" + std::to_string(correlation) +
        "}}");
    ++correlation;
    ts += 1 + next() % 30;
  }
  return out + "]}";
}

struct ViewRun {
  model::TraceViews views;
  std::string events;
  uint64_t scanned = 0;
};

// The ops view (and every event) of a trace with the hand-written reader on or off.
ViewRun RunOpsView(const std::string& path, const std::string& json, bool scanner) {
  model::NameTable names;
  model::KernelClassifier classifier;
  aggregate::ViewOptions options;
  options.selection.ops = true;
  options.top = 1000;
  model::EventRecorder recorder;
  aggregate::ViewCollector collector(options, &names, &classifier, &recorder);
  // The collector keeps the ranges: the recorder sees them through this tee.
  struct Tee final : model::EventSink {
    model::EventSink* a;
    model::EventRecorder* b;
    void OnProcess(const model::ProcessInfo& e) override { a->OnProcess(e); }
    void OnDevice(const model::DeviceInfo& e) override { a->OnDevice(e); }
    void OnKernel(const model::KernelEvent& e) override { a->OnKernel(e); }
    void OnMemcpy(const model::MemcpyEvent& e) override { a->OnMemcpy(e); }
    void OnMemset(const model::MemsetEvent& e) override { a->OnMemset(e); }
    void OnSync(const model::SyncEvent& e) override { a->OnSync(e); }
    void OnApiCall(const model::ApiCallEvent& e) override { a->OnApiCall(e); }
    void OnNvtx(const model::NvtxEvent& e) override { a->OnNvtx(e); }
    void OnViewRange(const model::ViewRangeEvent& e) override {
      b->OnViewRange(e);
      a->OnViewRange(e);
    }
    void OnDataQuality(uint32_t pid, model::DataQuality c, uint64_t n) override {
      a->OnDataQuality(pid, c, n);
    }
  } tee;
  tee.a = &collector;
  tee.b = &recorder;
  KinetoImportOptions import_options;
  import_options.host_ops = true;
  import_options.host_range_scanner = scanner;
  base::StatusOr<ImportStats> stats = path.empty()
                                          ? ImportKinetoJson(json, &names, &tee, import_options)
                                          : ImportKinetoTrace(path, &names, &tee, import_options);
  EXPECT_TRUE(stats.ok()) << stats.status().message();
  ViewRun run;
  run.views = collector.Finish();
  if (stats.ok()) {
    run.events = testing::Describe(recorder, names, *stats);
    run.scanned = stats->host_ranges_scanned;
  }
  return run;
}

TEST(HostRangeScannerTest, OpsViewOfAGeneratedTraceIsUnchanged) {
  const std::string json = GeneratedTrace(3000);
  const ViewRun reference = RunOpsView("", json, false);
  const ViewRun fast = RunOpsView("", json, true);
  ASSERT_EQ(reference.views.processes.size(), 1u);
  const model::OpsView& ops = reference.views.processes[0].ops;
  EXPECT_EQ(ops.op_instances + ops.module_instances, 3000u);
  EXPECT_GT(ops.modules.size(), 0u);
  EXPECT_GT(ops.ops.size(), 4u);
  EXPECT_TRUE(fast.views == reference.views);
  EXPECT_EQ(fast.events, reference.events);
  // The reader took the operators and modules but the escaped names (2 of the 7).
  EXPECT_EQ(reference.scanned, 0u);
  EXPECT_GT(fast.scanned, 3000u * 5 / 7 - 300);
  EXPECT_LT(fast.scanned, 3000u * 5 / 7 + 300);
}

TEST(HostRangeScannerTest, OpsViewOfARealTraceIsUnchanged) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  const std::string path = inferscope::testing::SharedTrace(
      "HolisticTraceAnalysis/df_index_resolver/df_index_resolver.json.gz");
  if (path.empty()) GTEST_SKIP() << "df_index_resolver.json.gz not in ../shared/traces";
  const ViewRun reference = RunOpsView(path, "", false);
  const ViewRun fast = RunOpsView(path, "", true);
  ASSERT_FALSE(reference.views.processes.empty());
  EXPECT_EQ(reference.views.processes[0].ops.op_instances, 56680u);
  EXPECT_TRUE(fast.views == reference.views);
  EXPECT_EQ(fast.events, reference.events);
  // Every operator and module of this trace is plain ASCII without escapes: all read in place.
  EXPECT_EQ(fast.scanned, reference.views.processes[0].ops.op_instances +
                              reference.views.processes[0].ops.module_instances);
}

}  // namespace
}  // namespace inferscope::import::kineto
