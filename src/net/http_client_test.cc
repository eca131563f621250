// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/net/http_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <thread>

namespace inferscope::net {
namespace {

TEST(HttpClientTest, ParsesUrls) {
  auto t = ParseHttpUrl("http://127.0.0.1:9470/api/v1", "agent API URL");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(*t, (HttpTarget{"127.0.0.1", 9470, "/api/v1"}));
  EXPECT_EQ(t->ToUrl(), "http://127.0.0.1:9470/api/v1");
  t = ParseHttpUrl("http://localhost:80", "agent API URL");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->path, "/");
  t = ParseHttpUrl("http://[::1]:8000", "x", "/metrics");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, (HttpTarget{"::1", 8000, "/metrics"}));
  EXPECT_EQ(t->ToUrl(), "http://[::1]:8000/metrics");
  for (const char* bad :
       {"https://x/y", "http:///y", "ftp://x/", "127.0.0.1:8000", "http://", "http://h:0/",
        "http://h:99999/", "http://h:/", "http://u@h/", "http://[::1/", "http://h h/"}) {
    auto r = ParseHttpUrl(bad, "agent API URL");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message().rfind("agent API URL ", 0), 0u) << r.status().message();
  }
}

TEST(HttpClientTest, GetsAndPostsWithBoundsAndErrors) {
  httplib::Server server;
  server.Get("/hello", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content("accept=" + req.get_header_value("Accept"), "text/plain");
  });
  server.Post("/watch", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content("watching " + req.get_param_value("pid"), "text/plain");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread thread([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  FetchOptions options;
  options.accept = "application/json";
  auto r = HttpGet({"127.0.0.1", static_cast<uint16_t>(port), "/hello"}, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "accept=application/json");
  EXPECT_EQ(r->content_type, "text/plain");
  r = HttpPost({"127.0.0.1", static_cast<uint16_t>(port), "/watch?pid=7"}, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "watching 7");
  r = HttpGet({"127.0.0.1", static_cast<uint16_t>(port), "/missing"}, options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 404);

  server.stop();
  thread.join();
  r = HttpGet({"127.0.0.1", static_cast<uint16_t>(port), "/hello"}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), base::StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("http://127.0.0.1:"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::net
