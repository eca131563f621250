// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target, differential: the hand-written operator/module reader (host_range_scanner.h)
// against its simdjson reference. The first byte picks the category the scanner reported
// (cpu_op, python_function, Operator) and the padding byte after the event (simdjson looks at
// it); the rest is one event's bytes, given to the event mapper with the reader on and off, or,
// for half of the first bytes, pieces (split at 0x01) spliced into a Kineto operator event (for a
// quarter, tamed: a plain name, numbers of digits), so that runs from an empty corpus reach the
// events the reader takes. The input is also imported as
// a whole document (operators on) both ways. Any difference in what is delivered aborts.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "src/import/kineto/kineto_importer.h"
#include "src/import/kineto/test_host_range_diff.h"

namespace {

using inferscope::import::kineto::testing::Describe;
using inferscope::import::kineto::testing::MapOneEvent;

void Check(const std::string& fast, const std::string& reference, std::string_view input) {
  if (fast == reference) return;
  std::fprintf(stderr,
               "host-range reader differs from simdjson on:\n%.*s\nreader:\n%s\nsimdjson:\n%s",
               static_cast<int>(input.size()), input.data(), fast.c_str(), reference.c_str());
  std::abort();
}

std::string ImportBoth(std::string_view json, bool scanner) {
  inferscope::import::KinetoImportOptions options;
  options.host_ops = true;
  options.host_range_scanner = scanner;
  inferscope::model::NameTable names;
  inferscope::model::EventRecorder sink;
  auto stats = inferscope::import::ImportKinetoJson(json, &names, &sink, options);
  if (!stats.ok()) return "error " + stats.status().message();
  inferscope::import::ImportStats counted = *stats;
  counted.host_ranges_scanned = 0;  // the one thing allowed to differ
  return Describe(sink, names, counted);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* cats[] = {"cpu_op", "python_function", "Operator"};
  const char pads[] = {' ', '}', ']', ',', '"', '\\', '\0', '{'};
  const std::string_view cat = cats[data[0] % 3];
  const char pad = pads[(data[0] / 3) % 8];
  std::string_view event(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string spliced;
  std::string pieces[4];  // name, pid, ts, args
  if (data[0] >= 128) {
    size_t piece = 0;
    for (char c : event) {
      if (c == '\x01' && piece < 3) {
        ++piece;
      } else {
        pieces[piece] += c;
      }
    }
    if (data[0] >= 192) {
      // Tame: a printable name without quotes or escapes, numbers of digits and a point, so that
      // most events are ones the reader takes (its accepting paths, not only its declining ones).
      for (char& c : pieces[0]) {
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') c = static_cast<char>('a' + (c & 15));
      }
      for (int k : {1, 2}) {
        for (char& c : pieces[k]) c = "0123456789."[static_cast<unsigned char>(c) % 11];
      }
    }
    spliced = R"({"ph": "X", "cat": "cpu_op", "name": ")" + pieces[0] + R"(", "pid": )" +
              pieces[1] + R"(, "tid": 8, "ts": )" + pieces[2] + R"(, "dur": 5, "args": {)" +
              pieces[3] + "}}";
    event = spliced;
  }
  // ParseMicrosToNs' 64-bit fast path against its general path (a leading space takes that).
  for (std::string_view text : {event, std::string_view(pieces[2])}) {
    int64_t fast_ns = -1, general_ns = -1;
    const bool fast_ok = inferscope::import::kineto::ParseMicrosToNs(text, &fast_ns);
    const bool general_ok =
        inferscope::import::kineto::ParseMicrosToNs(" " + std::string(text), &general_ns);
    if (fast_ok != general_ok || fast_ns != general_ns) {
      std::fprintf(stderr, "ParseMicrosToNs differs on [%.*s]: %d %lld / %d %lld\n",
                   static_cast<int>(text.size()), text.data(), fast_ok,
                   static_cast<long long>(fast_ns), general_ok, static_cast<long long>(general_ns));
      std::abort();
    }
  }
  Check(MapOneEvent(event, cat, true, pad), MapOneEvent(event, cat, false, pad), event);
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  Check(ImportBoth(json, true), ImportBoth(json, false), json);
  return 0;
}
