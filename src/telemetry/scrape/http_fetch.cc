// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/scrape/http_fetch.h"

#include <cctype>
#include <string>

namespace inferscope::telemetry::scrape {

base::StatusOr<net::HttpTarget> ParseMetricsUrl(std::string_view url) {
  constexpr std::string_view kHttps = "https://";
  std::string scheme(url.substr(0, kHttps.size()));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme == kHttps)  // say what to do instead
    return base::InvalidArgumentError(
        "metrics URL " + std::string(url.substr(0, 200)) +
        ": https is not supported; use the engine's plain-HTTP port (engines serve /metrics on "
        "it)");
  return net::ParseHttpUrl(url, "metrics URL", "/metrics");
}

base::StatusOr<net::FetchResult> FetchMetrics(const net::HttpTarget& target,
                                              const net::FetchOptions& options) {
  if (!options.accept.empty()) return net::HttpGet(target, options);
  net::FetchOptions with_accept = options;
  with_accept.accept = kPrometheusTextAccept;
  return net::HttpGet(target, with_accept);
}

}  // namespace inferscope::telemetry::scrape
