// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The listener's access model (docs/agent.md, "Access") through a real HttpServer: Host, Origin,
// the token, the dashboard's one-time sign-in and read-only cookie, /metrics and --metrics-token.

#include "src/server/access.h"

#include <httplib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "src/base/access_token.h"
#include "tests/temp_dir.h"

namespace inferscope::server {
namespace {

using ::inferscope::testing::TempDir;

TEST(AccessTest, OwnHostAndOrigin) {
  EXPECT_TRUE(IsOwnHost("127.0.0.1:9470", "127.0.0.1", 9470));
  EXPECT_TRUE(IsOwnHost("localhost:9470", "127.0.0.1", 9470));
  EXPECT_TRUE(IsOwnHost("LOCALHOST:9470", "127.0.0.1", 9470));
  EXPECT_TRUE(IsOwnHost("[::1]:9470", "127.0.0.1", 9470));
  EXPECT_TRUE(IsOwnHost("localhost", "127.0.0.1", 80));
  EXPECT_FALSE(IsOwnHost("localhost", "127.0.0.1", 9470));
  EXPECT_FALSE(IsOwnHost("127.0.0.1:9471", "127.0.0.1", 9470));
  EXPECT_FALSE(IsOwnHost("evil.example:9470", "127.0.0.1", 9470));  // DNS rebinding
  EXPECT_FALSE(IsOwnHost("127.0.0.1.evil.example:9470", "127.0.0.1", 9470));
  EXPECT_FALSE(IsOwnHost("127.0.0.1:9470x", "127.0.0.1", 9470));
  EXPECT_FALSE(IsOwnHost("[::1", "127.0.0.1", 9470));
  EXPECT_FALSE(IsOwnHost("", "127.0.0.1", 9470));

  EXPECT_TRUE(IsOwnOrigin("http://127.0.0.1:9470", "127.0.0.1", 9470));
  EXPECT_TRUE(IsOwnOrigin("http://localhost:9470", "127.0.0.1", 9470));
  EXPECT_FALSE(IsOwnOrigin("http://127.0.0.1:8000", "127.0.0.1", 9470));  // another local page
  EXPECT_FALSE(IsOwnOrigin("https://127.0.0.1:9470", "127.0.0.1", 9470));
  EXPECT_FALSE(IsOwnOrigin("http://127.0.0.1:9470/x", "127.0.0.1", 9470));
  EXPECT_FALSE(IsOwnOrigin("null", "127.0.0.1", 9470));
  EXPECT_FALSE(IsOwnOrigin("http://evil.example:9470", "127.0.0.1", 9470));
}

class AccessServerTest : public ::testing::Test {
 protected:
  void Start(const std::string& metrics_token_file = "") {
    auto token = base::EnsureAccessToken(dir_.path());
    ASSERT_TRUE(token.ok()) << token.status().message();
    token_ = *token;
    AccessOptions options;
    options.state_dir = dir_.path();
    options.metrics_token_file = metrics_token_file;
    access_ = std::make_unique<AccessControl>(options);
    server_.SetGate([this](const HttpRequest& req) { return access_->Check(req, req.local_port); });
    access_->AddLoginRoutes(&server_);
    server_.Get("/api/v1/read", [](const HttpRequest&) {
      HttpResponse r;
      r.body = "{\"read\": true}";
      return r;
    });
    server_.Post("/api/v1/change", [this](const HttpRequest&) {
      ++changes_;
      HttpResponse r;
      r.body = "{\"changed\": true}";
      return r;
    });
    server_.Get("/metrics", [](const HttpRequest&) {
      HttpResponse r;
      r.content_type = "text/plain";
      r.body = "up 1\n";
      return r;
    });
    server_.Get("/ui/", [](const HttpRequest&) {
      HttpResponse r;
      r.content_type = "text/html";
      r.body = "<html>dashboard</html>";
      return r;
    });
    auto port = server_.Start("127.0.0.1", 0, false);
    ASSERT_TRUE(port.ok()) << port.status().message();
    port_ = *port;
  }
  httplib::Headers Bearer(const std::string& token) {
    return {{"Authorization", "Bearer " + token}};
  }
  std::string Own() { return "127.0.0.1:" + std::to_string(port_); }

  TempDir dir_;
  std::string token_;
  std::unique_ptr<AccessControl> access_;
  HttpServer server_;
  int port_ = 0;
  int changes_ = 0;
};

// Any local user (or web page) read and drove the API. Now every route
// but /metrics and the sign-in link needs the token; an unknown path tells nothing either.
TEST_F(AccessServerTest, EveryRouteNeedsTheToken) {
  Start();
  httplib::Client c("127.0.0.1", port_);
  auto r = c.Get("/api/v1/read");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->body.find("agent.token"), std::string::npos) << r->body;
  EXPECT_EQ(c.Get("/api/v1/read", Bearer("wrong"))->status, 401);
  EXPECT_EQ(c.Get("/api/v1/read", Bearer(token_ + "x"))->status, 401);
  r = c.Get("/api/v1/read", Bearer(token_));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(c.Post("/api/v1/change", "", "text/plain")->status, 401);
  EXPECT_EQ(c.Post("/api/v1/change", Bearer(token_), "", "text/plain")->status, 200);
  EXPECT_EQ(changes_, 1);
  EXPECT_EQ(c.Get("/api/v1/nothing-here")->status, 401);
  EXPECT_EQ(c.Get("/api/v1/nothing-here", Bearer(token_))->status, 404);
  r = c.Get("/ui/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->get_header_value("Content-Type").find("text/html"), std::string::npos);
  EXPECT_NE(r->body.find("inferscope ui"), std::string::npos) << r->body;
  r = c.Get("/metrics");  // open: scrapers
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(AccessServerTest, ForeignHostAndOriginAreRefusedEvenWithTheToken) {
  Start();
  httplib::Client c("127.0.0.1", port_);
  httplib::Headers h = Bearer(token_);
  h.emplace("Host", "evil.example:" + std::to_string(port_));  // DNS rebinding
  auto r = c.Get("/api/v1/read", h);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  h = Bearer(token_);
  h.emplace("Host", "evil.example");
  EXPECT_EQ(c.Get("/metrics", h)->status, 400);  // /metrics too: a rebound page reads nothing
  h = Bearer(token_);
  h.emplace("Origin", "http://evil.example");
  EXPECT_EQ(c.Get("/api/v1/read", h)->status, 403);
  EXPECT_EQ(c.Post("/api/v1/change", h, "{}", "application/json")->status, 403);
  h = Bearer(token_);
  h.emplace("Origin", "http://127.0.0.1:1");  // another local page is another site
  EXPECT_EQ(c.Get("/api/v1/read", h)->status, 403);
  h = Bearer(token_);
  h.emplace("Origin", "http://" + Own());
  EXPECT_EQ(c.Get("/api/v1/read", h)->status, 200);
  h = Bearer(token_);
  h.emplace("Host", "localhost:" + std::to_string(port_));
  EXPECT_EQ(c.Get("/api/v1/read", h)->status, 200);
  EXPECT_EQ(changes_, 0);
}

// The dashboard: `inferscope ui` asks for a one-time link; the browser trades it for an HttpOnly,
// SameSite=Strict cookie that reads but never changes anything (a page's text/plain POST would
// carry it).
TEST_F(AccessServerTest, OneTimeSignInGivesAReadOnlyCookie) {
  Start();
  httplib::Client c("127.0.0.1", port_);
  EXPECT_EQ(c.Post("/api/v1/ui/login")->status, 401);  // only the token's holder mints links
  auto link = c.Post("/api/v1/ui/login", Bearer(token_), "", "text/plain");
  ASSERT_TRUE(link);
  ASSERT_EQ(link->status, 200) << link->body;
  const std::string prefix = "http://" + Own() + "/ui/login?code=";
  const size_t at = link->body.find(prefix);
  ASSERT_NE(at, std::string::npos) << link->body;
  const std::string path = "/ui/login?code=" + link->body.substr(at + prefix.size(), 32);

  auto r = c.Get(path);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 303);
  EXPECT_EQ(r->get_header_value("Location"), "/ui/");
  const std::string cookie = r->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos) << cookie;
  EXPECT_EQ(cookie.find(token_), std::string::npos) << "the cookie is not the token";
  const std::string pair = cookie.substr(0, cookie.find(';'));
  EXPECT_EQ(c.Get(path)->status, 401);  // once

  httplib::Headers browser = {{"Cookie", "other=1; " + pair}, {"Origin", "http://" + Own()}};
  EXPECT_EQ(c.Get("/api/v1/read", browser)->status, 200);
  EXPECT_EQ(c.Get("/ui/", browser)->status, 200);
  r = c.Post("/api/v1/change", browser, "capture please", "text/plain");  // a "simple" request
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_NE(r->body.find("only reads"), std::string::npos) << r->body;
  EXPECT_EQ(c.Post("/api/v1/change", browser, "{}", "application/json")->status, 403);
  EXPECT_EQ(changes_, 0);
  // The cookie of another listener (cookies ignore ports) or a forged value opens nothing.
  EXPECT_EQ(
      c.Get("/api/v1/read", {{"Cookie", "inferscope_session_1=" + pair.substr(pair.find('=') + 1)}})
          ->status,
      401);
  EXPECT_EQ(c.Get("/api/v1/read", {{"Cookie", pair + "0"}})->status, 401);
  EXPECT_EQ(c.Get("/ui/login?code=00000000000000000000000000000000")->status, 401);

  // A new token (rotation) ends the session.
  {
    std::ofstream out(dir_.path() + "/agent.token", std::ios::trunc);
    out << "rotated-0123456789abcdef\n";
  }
  EXPECT_EQ(c.Get("/api/v1/read", browser)->status, 401);
}

TEST_F(AccessServerTest, MetricsTokenClosesMetrics) {
  TempDir other;
  const std::string file = other.path() + "/scrape.token";
  {
    std::ofstream out(file);
    out << "scraper-secret-0123\n";
  }
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  Start(file);
  httplib::Client c("127.0.0.1", port_);
  auto r = c.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->body.find("--metrics-token"), std::string::npos) << r->body;
  EXPECT_EQ(c.Get("/metrics", Bearer("scraper-secret-0123"))->status, 200);
  EXPECT_EQ(c.Get("/metrics", Bearer(token_))->status, 200);
  EXPECT_EQ(c.Get("/api/v1/read", Bearer("scraper-secret-0123"))->status, 401);  // /metrics only
}

TEST_F(AccessServerTest, AMissingOrPublicTokenFileFailsClosed) {
  Start();
  httplib::Client c("127.0.0.1", port_);
  ASSERT_EQ(::chmod((dir_.path() + "/agent.token").c_str(), 0644), 0);
  auto r = c.Get("/api/v1/read", Bearer(token_));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_NE(r->body.find("chmod 600"), std::string::npos) << r->body;
}

}  // namespace
}  // namespace inferscope::server
