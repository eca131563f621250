// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The gtest side of test_clickhouse_server.h (which the benchmarks use without gtest).

#include <gtest/gtest.h>

#include <string>

#include "src/fleet/sink/test_clickhouse_server.h"

namespace inferscope::fleet::testing {

// The fixture of a test suite that shares one server, started before its first test and stopped
// after its last (`Suite` is the derived fixture, so each suite has its own). `kWhat` names what
// the skip message says needs the server; `kHttps` also serves HTTPS (https_error_ says why not).
// A derived SetUp calls RequireServer() first and returns when it skipped or failed.
template <typename Suite>
class SharedServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (ClickHouseServerBinary().empty()) return;
    server_ = new TestClickHouseServer();
    if (Suite::kHttps && !server_->EnableHttps()) https_error_ = server_->error();
    if (!server_->Start()) start_error_ = server_->error();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  // Skips without the binary (fails with INFERSCOPE_REQUIRE_CLICKHOUSE=1); fails when the server
  // did not start. The caller returns when IsSkipped() or HasFatalFailure().
  void RequireServer() {
    if (!server_) {
      if (ClickHouseRequired())
        FAIL() << "clickhouse-server not installed and INFERSCOPE_REQUIRE_CLICKHOUSE=1";
      GTEST_SKIP() << "clickhouse-server not installed (apt-get install clickhouse-server); "
                   << Suite::kWhat << " need it";
    }
    ASSERT_TRUE(start_error_.empty()) << start_error_;
  }
  // A database of the test's own name: tests do not see each other's rows.
  static std::string TestDatabase(const char* prefix) {
    return prefix + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  static inline TestClickHouseServer* server_ = nullptr;
  static inline std::string start_error_, https_error_;
};

}  // namespace inferscope::fleet::testing
