// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The fake NVML's behaviour, parsed from FAKE_NVML_SCENARIO (docs/gpu-metrics.md has the syntax):
// how many devices of which architecture, what nvmlInit returns, which calls fail with which
// code on which device and call number, when a device is lost, which XID events are pending and
// when a cumulative counter restarts.

#include <array>
#include <map>
#include <string>
#include <vector>

namespace fake_nvml {

// One injected failure: `call` on `device` (-1 = every device) returns `code` for the calls
// numbered [from_call, to_call] (0-based, per device and call).
struct Failure {
  std::string call;
  int code = 0;
  int device = -1;
  unsigned long long from_call = 0;
  unsigned long long to_call = ~0ull;
};

struct Xid {
  int device = 0;
  unsigned long long code = 0;
};

struct Scenario {
  int devices = 1;
  std::vector<std::string> arch = {"hopper"};  // per device; the last one repeats
  int init_result = 0;                         // nvmlInit's return code
  std::vector<Failure> failures;
  std::map<int, unsigned long long> lost_after;      // device -> samples before it is lost
  std::vector<Xid> xids;                             // pending from init, delivered in order
  std::map<std::string, unsigned long long> resets;  // counter -> call at which it restarts at 0
  // GPM base values (%): SM activity, SM occupancy, tensor activity, DRAM bandwidth; each sample
  // adds 0, 1, 2, 3 x the step of its metric (10, 5, 10, 5), capped at 100.
  std::array<double, 4> gpm_base = {40, 20, 30, 50};

  const std::string& ArchOf(int device) const;
  // The code `call` returns on `device` for its call number `n`, 0 when it succeeds.
  int FailureFor(const std::string& call, int device, unsigned long long n) const;
};

// Parses a spec ("devices=2;arch=hopper,ampere;not_supported=power@1;lost=0@3;xid=1:79") or, when
// `spec` starts with '/', the file it names (clauses one per line or ';'-separated, '#' comments).
// Returns false and sets *error on a malformed spec.
bool ParseScenario(const std::string& spec, Scenario* out, std::string* error);

// "not_supported" -> NVML_ERROR_NOT_SUPPORTED (3), "ok" -> 0; -1 when unknown.
int CodeByName(const std::string& name);

}  // namespace fake_nvml
