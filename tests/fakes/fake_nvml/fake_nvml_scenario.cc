// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "tests/fakes/fake_nvml/fake_nvml_scenario.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fake_nvml {
namespace {

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(Trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(Trim(cur));
  return parts;
}

bool ParseUInt(const std::string& s, unsigned long long* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

bool ParseInt(const std::string& s, int* out) {
  unsigned long long v;
  if (!ParseUInt(s, &v) || v > 1'000'000) return false;
  *out = static_cast<int>(v);
  return true;
}

const std::vector<std::string> kArchitectures = {"volta", "turing", "ampere",
                                                 "ada",   "hopper", "blackwell"};

// "<call>[@<device>][#<from>[-[<to>]]]"
bool ParseFailure(const std::string& item, int code, Failure* f) {
  std::string rest = item;
  const size_t hash = rest.find('#');
  if (hash != std::string::npos) {
    const std::string range = rest.substr(hash + 1);
    rest = rest.substr(0, hash);
    const size_t dash = range.find('-');
    if (dash == std::string::npos) {
      if (!ParseUInt(range, &f->from_call)) return false;
      f->to_call = f->from_call;
    } else {
      if (!ParseUInt(range.substr(0, dash), &f->from_call)) return false;
      const std::string to = range.substr(dash + 1);
      if (!to.empty() && !ParseUInt(to, &f->to_call)) return false;
    }
  }
  const size_t at = rest.find('@');
  if (at != std::string::npos) {
    if (!ParseInt(rest.substr(at + 1), &f->device)) return false;
    rest = rest.substr(0, at);
  }
  f->call = rest;
  f->code = code;
  return !rest.empty();
}

bool ParseClause(const std::string& clause, Scenario* s, std::string* error) {
  const size_t eq = clause.find('=');
  if (eq == std::string::npos) {
    *error = "clause without '=': " + clause;
    return false;
  }
  const std::string key = Trim(clause.substr(0, eq));
  const std::string value = Trim(clause.substr(eq + 1));
  if (key == "devices") {
    if (!ParseInt(value, &s->devices) || s->devices > 64) {
      *error = "devices must be 0..64: " + value;
      return false;
    }
  } else if (key == "arch") {
    s->arch = Split(value, ',');
    for (const std::string& a : s->arch) {
      bool known = false;
      for (const std::string& k : kArchitectures) known = known || a == k;
      if (!known) {
        *error = "unknown arch: " + a;
        return false;
      }
    }
  } else if (key == "init") {
    s->init_result = CodeByName(value);
    if (s->init_result < 0) {
      *error = "unknown return code: " + value;
      return false;
    }
  } else if (key == "lost") {  // <device>@<samples>
    const auto parts = Split(value, '@');
    int device;
    unsigned long long after;
    if (parts.size() != 2 || !ParseInt(parts[0], &device) || !ParseUInt(parts[1], &after)) {
      *error = "lost wants <device>@<samples>: " + value;
      return false;
    }
    s->lost_after[device] = after;
  } else if (key == "xid") {  // <device>:<code>[,...]
    for (const std::string& item : Split(value, ',')) {
      const auto parts = Split(item, ':');
      Xid x;
      if (parts.size() != 2 || !ParseInt(parts[0], &x.device) || !ParseUInt(parts[1], &x.code)) {
        *error = "xid wants <device>:<code>: " + item;
        return false;
      }
      s->xids.push_back(x);
    }
  } else if (key == "gpm") {  // <sm>,<occupancy>,<tensor>,<dram> base percentages
    const auto parts = Split(value, ',');
    bool ok = parts.size() == 4;
    for (size_t i = 0; ok && i < 4; ++i) {
      unsigned long long v;
      ok = ParseUInt(parts[i], &v) && v <= 100;
      if (ok) s->gpm_base[i] = static_cast<double>(v);
    }
    if (!ok) {
      *error = "gpm wants <sm>,<occupancy>,<tensor>,<dram> percentages: " + value;
      return false;
    }
  } else if (key == "reset") {  // <counter>@<call>
    const auto parts = Split(value, '@');
    unsigned long long call;
    if (parts.size() != 2 || parts[0].empty() || !ParseUInt(parts[1], &call)) {
      *error = "reset wants <counter>@<call>: " + value;
      return false;
    }
    s->resets[parts[0]] = call;
  } else {
    const int code = CodeByName(key);
    if (code <= 0) {
      *error = "unknown key: " + key;
      return false;
    }
    for (const std::string& item : Split(value, ',')) {
      Failure f;
      if (!ParseFailure(item, code, &f)) {
        *error = "bad failure spec: " + item;
        return false;
      }
      s->failures.push_back(f);
    }
  }
  return true;
}

}  // namespace

const std::string& Scenario::ArchOf(int device) const {
  static const std::string kDefault = "hopper";
  if (arch.empty()) return kDefault;
  return device < static_cast<int>(arch.size()) ? arch[device] : arch.back();
}

int Scenario::FailureFor(const std::string& call, int device, unsigned long long n) const {
  for (const Failure& f : failures) {
    if (f.call == call && (f.device < 0 || f.device == device) && n >= f.from_call &&
        n <= f.to_call) {
      return f.code;
    }
  }
  return 0;
}

int CodeByName(const std::string& name) {
  static const std::map<std::string, int> kCodes = {
      {"ok", 0},
      {"uninitialized", 1},
      {"invalid_argument", 2},
      {"not_supported", 3},
      {"no_permission", 4},
      {"not_found", 6},
      {"driver_not_loaded", 9},
      {"timeout", 10},
      {"function_not_found", 13},
      {"gpu_is_lost", 15},
      {"lib_rm_version_mismatch", 18},
      {"no_data", 21},
      {"argument_version_mismatch", 25},
      {"unknown", 999},
  };
  auto it = kCodes.find(name);
  return it == kCodes.end() ? -1 : it->second;
}

bool ParseScenario(const std::string& spec, Scenario* out, std::string* error) {
  std::string text = spec;
  if (!spec.empty() && spec[0] == '/') {
    std::ifstream in(spec);
    if (!in) {
      *error = "cannot read scenario file " + spec;
      return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  *out = Scenario();
  std::string clause;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t hash = line.find("# ");
    if (!line.empty() && line[0] == '#') continue;
    if (hash != std::string::npos) line = line.substr(0, hash);
    for (const std::string& c : Split(line, ';')) {
      if (c.empty()) continue;
      if (!ParseClause(c, out, error)) return false;
    }
  }
  return true;
}

}  // namespace fake_nvml
