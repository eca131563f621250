// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/server/ui/ui_routes.h"

#include <string>

#include "src/server/ui/ui_assets.h"

namespace inferscope::server {

void AddUiRoutes(HttpServer* server) {
  for (size_t i = 0; i < ui_internal::kAssetCount; ++i) {
    const ui_internal::Asset& asset = ui_internal::kAssets[i];
    // The bytes live for the whole program; each answer copies them (the largest file, the
    // bundle, is ~100 KB, and the page loads it once).
    auto handler = [&asset](const HttpRequest&) {
      HttpResponse r;
      r.content_type = asset.content_type;
      r.body.assign(reinterpret_cast<const char*>(asset.data), asset.size);
      return r;
    };
    const std::string name = asset.name;
    server->Get("/ui/" + name, handler);
    if (name == "index.html") {
      server->Get("/ui", handler);
      server->Get("/ui/", handler);
    }
  }
}

bool UiAssetsBuilt() { return ui_internal::kAssetsBuilt; }

}  // namespace inferscope::server
