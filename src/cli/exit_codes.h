// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The inferscope binary's exit codes (documented in docs/cli.md and `inferscope --help`).

#include <exception>
#include <new>
#include <ostream>

#include "src/base/status.h"

namespace inferscope::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;        // anything else (I/O errors, internal errors)
inline constexpr int kExitUsage = 2;        // bad flags or arguments, bad rule file
inline constexpr int kExitNotFound = 3;     // an input path does not exist
inline constexpr int kExitUnsupported = 4;  // not a trace / unsupported format
inline constexpr int kExitDataLoss = 5;     // corrupt or truncated input

inline int ExitCodeFor(const base::Status& status) {
  switch (status.code()) {
    case base::StatusCode::kOk:
      return kExitOk;
    case base::StatusCode::kInvalidArgument:
      return kExitUsage;
    case base::StatusCode::kNotFound:
      return kExitNotFound;
    case base::StatusCode::kUnsupported:
      return kExitUnsupported;
    case base::StatusCode::kDataLoss:
      return kExitDataLoss;
    default:
      return kExitError;
  }
}

// Runs a command body and turns anything it throws (bad_alloc, a library's exception) into one
// error line and `error_code`: no exception leaves a command.
// `error_code` is what an escaped exception returns (`diff` uses 2: its 1 means "regression").
template <typename Body>
int RunGuarded(Body&& body, std::ostream& err, int error_code = kExitError) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    err << "inferscope: error: out of memory\n";
  } catch (const std::exception& e) {
    err << "inferscope: error: internal error: " << e.what() << "\n";
  } catch (...) {
    err << "inferscope: error: internal error\n";
  }
  return error_code;
}

}  // namespace inferscope::cli
