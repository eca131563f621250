// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/otlp/otlp_test_server.h"

#include <httplib.h>

#include <thread>

namespace inferscope::telemetry::otlp {

struct OtlpTestServer::Impl {
  SpanCollector* collector = nullptr;
  httplib::Server server;
  std::thread thread;
};

OtlpTestServer::OtlpTestServer(SpanCollector* collector) : impl_(std::make_unique<Impl>()) {
  impl_->collector = collector;
}

OtlpTestServer::~OtlpTestServer() { Stop(); }

base::Status OtlpTestServer::Start() {
  if (port_ != 0) return base::OkStatus();
  Impl* impl = impl_.get();
  impl->server.Post("/v1/traces", [impl](const httplib::Request& req, httplib::Response& res) {
    const std::string encoding = req.get_header_value("Content-Encoding");
    OtlpHttpResult r = impl->collector->HandleTraces(
        req.get_header_value("Content-Type"), EncodingLeftToDecode(encoding, req.body), req.body);
    res.status = r.status;
    res.set_content(r.body, r.content_type.c_str());
  });
  // Bounds what httplib reads (and, for gzip, what it inflates) before the handler runs.
  impl->server.set_payload_max_length(impl->collector->options().limits.max_body_bytes);
  int port = impl->server.bind_to_any_port("127.0.0.1");
  if (port <= 0) return base::UnavailableError("cannot bind 127.0.0.1 for the OTLP test server");
  port_ = port;
  impl->thread = std::thread([impl] { impl->server.listen_after_bind(); });
  return base::OkStatus();
}

void OtlpTestServer::Stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->server.stop();
  impl_->thread.join();
}

std::string OtlpTestServer::traces_url() const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/v1/traces";
}

}  // namespace inferscope::telemetry::otlp
