// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The scraper's view of the shared HTTP client (src/net): metrics URLs and GETs that ask for
// the Prometheus text format.

#include <string_view>

#include "src/base/status.h"
#include "src/net/http_client.h"

namespace inferscope::telemetry::scrape {

using net::FetchOptions;
using net::FetchResult;
using net::HttpTarget;

// The Accept header of a scrape: Prometheus text exposition format 0.0.4.
inline constexpr const char* kPrometheusTextAccept = "text/plain;version=0.0.4";

// Parses `http://host[:port][/path]` (the --metrics-url flag). The path defaults to /metrics.
// https, user info and other schemes are refused with a message saying what to do instead.
base::StatusOr<net::HttpTarget> ParseMetricsUrl(std::string_view url);

// net::HttpGet asking for Prometheus text (unless `options` names another Accept).
base::StatusOr<net::FetchResult> FetchMetrics(const net::HttpTarget& target,
                                              const net::FetchOptions& options);

}  // namespace inferscope::telemetry::scrape
