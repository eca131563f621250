// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// zlib compression for tests that build compressed inputs in memory (gzip trace files, gzip or
// deflate HTTP bodies). Test-only: the product only inflates.

#include <zlib.h>

#include <string>
#include <string_view>

namespace inferscope::testing {

// Window bits as zlib's deflateInit2 takes them: 31 (= 16 + 15) gzip, 15 zlib, -15 raw deflate.
inline constexpr int kGzipWindowBits = 16 + MAX_WBITS;

// `in` compressed at level 6; empty on a zlib error (a test then fails on its content).
inline std::string Compress(std::string_view in, int window_bits = kGzipWindowBits) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out(deflateBound(&zs, static_cast<uLong>(in.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(rc == Z_STREAM_END ? zs.total_out : 0);
  deflateEnd(&zs);
  return out;
}

inline std::string Gzip(std::string_view in) { return Compress(in, kGzipWindowBits); }

}  // namespace inferscope::testing
