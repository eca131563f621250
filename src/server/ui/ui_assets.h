// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The dashboard's files, compiled into the binary (a generated source, cmake/EmbedFiles.cmake):
// the bundle of web/ when the build had node and npm, else one page saying how to build it.

#include <cstddef>

namespace inferscope::server::ui_internal {

struct Asset {
  const char* name;          // "index.html", "app.js": served at /ui/<name>
  const char* content_type;  // from the extension
  const unsigned char* data;
  size_t size;
};

extern const Asset kAssets[];
extern const size_t kAssetCount;
// False when the build had no node/npm: index.html is then the "how to build it" page.
extern const bool kAssetsBuilt;

}  // namespace inferscope::server::ui_internal
