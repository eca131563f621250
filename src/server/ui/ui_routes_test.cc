// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/server/ui/ui_routes.h"

#include <httplib.h>

#include <string>

#include "gtest/gtest.h"

namespace inferscope::server {
namespace {

class UiRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AddUiRoutes(&server_);
    auto port = server_.Start("127.0.0.1", 0, /*fall_back_to_any_port=*/false);
    ASSERT_TRUE(port.ok()) << port.status().message();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", *port);
  }
  HttpServer server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(UiRoutesTest, ServesThePageAtEveryEntryPath) {
  for (const char* path : {"/ui", "/ui/", "/ui/index.html"}) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_EQ(r->get_header_value("Content-Type"), "text/html; charset=utf-8") << path;
    EXPECT_NE(r->body.find("inferscope"), std::string::npos) << path;
  }
}

TEST_F(UiRoutesTest, ServesTheBundleOrSaysHowToBuildIt) {
  auto page = client_->Get("/ui/");
  ASSERT_TRUE(page);
  auto js = client_->Get("/ui/app.js");
  ASSERT_TRUE(js);
  if (UiAssetsBuilt()) {
    EXPECT_NE(page->body.find("/ui/app.js"), std::string::npos);
    EXPECT_EQ(js->status, 200);
    EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
    EXPECT_GT(js->body.size(), 10'000u);  // the app and uPlot
    auto css = client_->Get("/ui/app.css");
    ASSERT_TRUE(css);
    EXPECT_EQ(css->status, 200);
  } else {
    EXPECT_NE(page->body.find("npm"), std::string::npos);  // how to build it
    EXPECT_EQ(js->status, 404);
  }
  auto missing = client_->Get("/ui/nope.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

}  // namespace
}  // namespace inferscope::server
