// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// A tiny standalone OTLP/HTTP server for tests and local experiments: binds 127.0.0.1 on an
// ephemeral port and mounts POST /v1/traces on a SpanCollector. The agent mounts HandleTraces on
// its own HTTP server instead; this exists so tests can talk to a real socket.

#include <memory>
#include <string>

#include "src/base/status.h"
#include "src/telemetry/otlp/span_collector.h"

namespace inferscope::telemetry::otlp {

// Owns one httplib server and its listening thread. Start() returns once the port is bound;
// Stop() (or the destructor) joins the thread. The collector must outlive the server.
class OtlpTestServer {
 public:
  explicit OtlpTestServer(SpanCollector* collector);
  ~OtlpTestServer();
  OtlpTestServer(const OtlpTestServer&) = delete;
  OtlpTestServer& operator=(const OtlpTestServer&) = delete;

  base::Status Start();
  void Stop();

  int port() const { return port_; }
  // http://127.0.0.1:<port>/v1/traces
  std::string traces_url() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace inferscope::telemetry::otlp
