// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The agent's engine-metrics collector: finds the engine's Prometheus endpoint among the
// listening sockets of the profiled process tree (or uses --metrics-url), scrapes it on a
// cadence, and hands out EngineMetricsWindows. docs/engine-metrics.md has the details.

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "src/telemetry/scrape/discovery.h"
#include "src/telemetry/scrape/engine_scraper.h"
#include "src/telemetry/scrape/engine_window.h"
#include "src/telemetry/scrape/http_fetch.h"

namespace inferscope::telemetry::scrape {

struct EngineMetricsOptions {
  std::string metrics_url;  // --metrics-url: overrides discovery (http:// only)
  std::string proc_root = "/proc";
  int64_t scrape_interval_ns = 1'000'000'000;
  // While no endpoint is known, discovery runs at most this often (and whenever the root pids
  // change); probing ports is not free.
  int64_t rediscover_interval_ns = 30'000'000'000;
  int failures_before_rediscovery = 3;  // consecutive failed scrapes of a discovered endpoint
  net::FetchOptions fetch;              // scrapes: 2 s timeouts, 16 MiB bodies
  int64_t probe_timeout_ms = 300;       // discovery probes, per connect and per read
  size_t max_probe_ports = 32;
  ScraperOptions scraper;
  // The time a scrape's response arrived, which is what the scrape is stamped with. Unset (tests):
  // the `now_unix_ns` given to Poll. The agent sets the wall clock: a GET can take up to its
  // timeout, and a scrape stamped before it would belong to a window already closed.
  std::function<int64_t()> clock;
};

// What the collector did with one URL since it started, for the agent's status: a server that
// counts its requests (rather than time) served `scrapes + abandoned + probes_abandoned` bodies.
struct ScrapeTargetStats {
  std::string url;
  uint64_t scrapes = 0;    // bodies used as scrapes (the discovery probe that found it included)
  uint64_t failures = 0;   // scrapes that failed: no connection, no answer, HTTP status not 200
  uint64_t abandoned = 0;  // of those, GETs sent whose answer never came (timed out after connect)
  uint64_t probes_abandoned = 0;  // discovery probes that connected and got no answer in time
  bool operator==(const ScrapeTargetStats&) const = default;
};

// Thread-safe: the agent calls Poll from its collector thread (it blocks for up to the HTTP
// timeouts) while other threads call TakeWindow, health or SetRootPids. No threads of its own.
// Never throws; every failure (no endpoint, unreachable, not Prometheus text) shows in health().
class EngineMetricsCollector {
 public:
  explicit EngineMetricsCollector(EngineMetricsOptions options);

  // The profiled processes (roots of the tree searched for listening sockets).
  void SetRootPids(std::vector<int> pids);
  // Discovers the endpoint if needed and scrapes it if the interval has passed. Concurrent calls
  // return at once while one is running.
  void Poll(int64_t now_unix_ns);
  // Scrapes recorded at times in [start, end), merged (EngineMetricsScraper::TakeWindow).
  EngineMetricsWindow TakeWindow(int64_t start_unix_ns, int64_t end_unix_ns);

  // One line: "ok: ...", "degraded: ..." or "off: ...", saying what to do when it is not ok.
  std::string health() const;
  bool ok() const;
  std::string endpoint() const;  // the URL scraped, empty when none
  // Per URL scraped or probed with something to count, in the order first seen; at most
  // kMaxTargets (later URLs are not tracked; the scraped target is always among the first).
  std::vector<ScrapeTargetStats> targets() const;
  static constexpr size_t kMaxTargets = 32;

 private:
  struct Found {
    std::optional<net::HttpTarget> target;
    std::string body;                           // the probe's response: the first scrape
    std::string message;                        // why nothing was found
    std::vector<std::string> abandoned_probes;  // URLs of probes sent and not answered in time
  };
  Found Discover(const std::vector<int>& pids) const;
  void SetHealth(std::string health, bool ok);
  ScrapeTargetStats* Target(const std::string& url);  // null past kMaxTargets; mu_ held

  const EngineMetricsOptions options_;
  std::optional<net::HttpTarget> configured_;  // from --metrics-url
  std::string configured_error_;

  mutable std::mutex mu_;
  bool polling_ = false;
  std::vector<int> root_pids_;
  bool pids_changed_ = true;
  std::optional<net::HttpTarget> target_;
  int64_t last_discovery_ns_ = 0;
  int64_t last_scrape_ns_ = 0;
  // Scrapes run on a fixed grid, half an interval off its multiples: with windows a multiple of
  // the interval, every window gets the same number of scrapes and none sits on a boundary.
  int64_t next_scrape_ns_ = 0;
  int consecutive_failures_ = 0;
  EngineMetricsScraper scraper_;
  std::vector<ScrapeTargetStats> targets_;
  std::string health_ = "off: not polled yet";
  bool ok_ = false;
};

}  // namespace inferscope::telemetry::scrape
