// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Locates the real GPU traces in ../shared/traces (beside the checkout). They are not part of the
// repository: tests that need them call INFERSCOPE_REQUIRE_SHARED_TRACES() and are skipped, with a
// message saying so, on a fresh clone.

#include <gtest/gtest.h>

#include "tests/trace_paths.h"

#define INFERSCOPE_REQUIRE_SHARED_TRACES()                                               \
  do {                                                                                   \
    if (::inferscope::testing::SharedTracesDir().empty())                                \
      GTEST_SKIP() << "../shared/traces not found (set INFERSCOPE_SHARED_TRACES); this " \
                      "test needs the real GPU traces";                                  \
  } while (0)
