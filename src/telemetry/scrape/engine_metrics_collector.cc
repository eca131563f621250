// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/scrape/engine_metrics_collector.h"

#include <fmt/format.h>

#include <utility>

#include "src/telemetry/scrape/engine_map.h"
#include "src/telemetry/scrape/prometheus_text.h"

namespace inferscope::telemetry::scrape {
namespace {

// The two paths engines serve Prometheus text on: /metrics (vLLM, SGLang, TGI, Dynamo, Triton)
// and /prometheus/metrics (trtllm-serve, whose /metrics is JSON iteration stats).
constexpr const char* kProbePaths[] = {"/metrics", "/prometheus/metrics"};

std::string JoinPids(const std::vector<int>& pids) {
  std::string out;
  for (size_t i = 0; i < pids.size() && i < 8; ++i) out += (i ? "," : "") + std::to_string(pids[i]);
  if (pids.size() > 8) out += fmt::format(",... ({} processes)", pids.size());
  return out;
}

}  // namespace

EngineMetricsCollector::EngineMetricsCollector(EngineMetricsOptions options)
    : options_(std::move(options)), scraper_(options_.scraper) {
  if (!options_.metrics_url.empty()) {
    auto target = ParseMetricsUrl(options_.metrics_url);
    if (target.ok()) {
      configured_ = *target;
    } else {
      configured_error_ = "off: " + target.status().message();
    }
  }
}

void EngineMetricsCollector::SetRootPids(std::vector<int> pids) {
  std::lock_guard lock(mu_);
  if (pids == root_pids_) return;
  root_pids_ = std::move(pids);
  pids_changed_ = true;
}

void EngineMetricsCollector::SetHealth(std::string health, bool ok) {
  health_ = std::move(health);
  ok_ = ok;
}

std::string EngineMetricsCollector::health() const {
  std::lock_guard lock(mu_);
  return health_;
}

bool EngineMetricsCollector::ok() const {
  std::lock_guard lock(mu_);
  return ok_;
}

std::string EngineMetricsCollector::endpoint() const {
  std::lock_guard lock(mu_);
  return target_ ? target_->ToUrl() : "";
}

std::vector<ScrapeTargetStats> EngineMetricsCollector::targets() const {
  std::lock_guard lock(mu_);
  return targets_;
}

ScrapeTargetStats* EngineMetricsCollector::Target(const std::string& url) {
  for (ScrapeTargetStats& t : targets_)
    if (t.url == url) return &t;
  if (targets_.size() >= kMaxTargets) return nullptr;
  targets_.push_back(ScrapeTargetStats{.url = url});
  return &targets_.back();
}

EngineMetricsWindow EngineMetricsCollector::TakeWindow(int64_t start_unix_ns, int64_t end_unix_ns) {
  std::lock_guard lock(mu_);
  return scraper_.TakeWindow(start_unix_ns, end_unix_ns);
}

EngineMetricsCollector::Found EngineMetricsCollector::Discover(const std::vector<int>& pids) const {
  Found found;
  if (pids.empty()) {
    found.message =
        "off: no profiled processes yet (the engine's metrics port is found among their "
        "listening sockets; or pass --metrics-url)";
    return found;
  }
  DiscoveryOptions discovery;
  discovery.proc_root = options_.proc_root;
  const DiscoveryResult listening = FindListeningPorts(pids, discovery);
  if (listening.ports.empty()) {
    if (listening.unreadable_fd_dirs > 0) {
      found.message = fmt::format(
          "off: cannot see the sockets of {} of {} profiled processes ({}); run the agent as "
          "the engine's user or pass --metrics-url",
          listening.unreadable_fd_dirs, listening.pids.size(), listening.problems.front());
    } else {
      found.message = fmt::format(
          "off: no listening TCP ports in pids {}; is the engine's HTTP server among the "
          "profiled processes? Otherwise pass --metrics-url",
          JoinPids(listening.pids.empty() ? pids : listening.pids));
    }
    return found;
  }

  net::FetchOptions probe;
  probe.connect_timeout_ms = options_.probe_timeout_ms;
  probe.read_timeout_ms = options_.probe_timeout_ms;
  probe.max_body_bytes = options_.fetch.max_body_bytes;
  std::string probed, skipped, unknown;
  size_t tried = 0;
  for (const ListeningPort& port : listening.ports) {
    if (port.hosts.empty()) {
      skipped += fmt::format("{}{} on {}", skipped.empty() ? "" : ", ", port.port, port.address);
      continue;
    }
    if (tried++ >= options_.max_probe_ports) break;
    probed += (probed.empty() ? "" : ",") + std::to_string(port.port);
    for (const std::string& host : port.hosts) {
      bool answered = false;
      for (const char* path : kProbePaths) {
        const net::HttpTarget target{host, port.port, path};
        auto response = FetchMetrics(target, probe);
        if (!response.ok()) {
          // Connected, request sent, no answer in time: the server may still serve it.
          if (response.status().code() == base::StatusCode::kDataLoss)
            found.abandoned_probes.push_back(target.ToUrl());
          break;  // nothing there, or not HTTP: the other path will not help
        }
        answered = true;
        if (response->status != 200) continue;
        const Exposition e = ParsePrometheusText(response->body, options_.scraper.parse);
        const Detection d = DetectEngine(e);
        if (d.engine != Engine::kUnknown) {
          found.target = target;
          found.body = std::move(response->body);
          return found;
        }
        if (e.stats.samples > 0 && unknown.empty())
          unknown = fmt::format("; {} serves Prometheus text of no known engine", target.ToUrl());
      }
      if (answered) break;  // the same server on the other address
    }
  }
  found.message = fmt::format(
      "off: no engine metrics on /metrics or /prometheus/metrics of listening ports {} of pids "
      "{}{}{}; enable the engine's metrics (SGLang: --enable-metrics) or pass --metrics-url",
      probed.empty() ? "(none on loopback)" : probed, JoinPids(listening.pids),
      skipped.empty() ? "" : " (not on loopback, not probed: " + skipped + ")", unknown);
  return found;
}

namespace {

// The first time after `t` of the form k * interval + interval / 2.
int64_t NextOnGrid(int64_t t, int64_t interval) {
  if (interval <= 0) return t;
  const int64_t half = interval / 2;
  int64_t next = (t - half) / interval * interval + half;
  while (next <= t) next += interval;
  return next;
}

}  // namespace

void EngineMetricsCollector::Poll(int64_t now_unix_ns) {
  std::unique_lock lock(mu_);
  if (polling_) return;
  if (!configured_error_.empty()) {
    SetHealth(configured_error_, false);
    return;
  }
  polling_ = true;

  if (!target_) {
    if (configured_) {
      target_ = configured_;
      scraper_.Reset();
    } else {
      if (!pids_changed_ && last_discovery_ns_ != 0 &&
          now_unix_ns - last_discovery_ns_ < options_.rediscover_interval_ns) {
        polling_ = false;
        return;
      }
      const std::vector<int> pids = root_pids_;
      pids_changed_ = false;
      last_discovery_ns_ = now_unix_ns;
      lock.unlock();
      Found found = Discover(pids);
      lock.lock();
      polling_ = false;
      for (const std::string& url : found.abandoned_probes)
        if (ScrapeTargetStats* t = Target(url)) ++t->probes_abandoned;
      if (!found.target) {
        SetHealth(std::move(found.message), false);
        return;
      }
      target_ = found.target;
      consecutive_failures_ = 0;
      scraper_.Reset();
      // The probe's body is a scrape like any other: the baseline.
      const int64_t at = options_.clock ? options_.clock() : now_unix_ns;
      const ScrapeResult r = scraper_.Scrape(found.body, at);
      if (ScrapeTargetStats* t = Target(target_->ToUrl())) ++t->scrapes;
      last_scrape_ns_ = at;
      next_scrape_ns_ = NextOnGrid(at, options_.scrape_interval_ns);
      SetHealth(fmt::format("ok: scraping {} metrics from {} (found among the listening ports of "
                            "pids {})",
                            EngineName(r.detection.engine), target_->ToUrl(), JoinPids(pids)),
                true);
      return;
    }
  }

  // Not due yet (a clock that went back more than an interval starts the grid over).
  if (last_scrape_ns_ != 0 && now_unix_ns < next_scrape_ns_ &&
      now_unix_ns >= last_scrape_ns_ - options_.scrape_interval_ns) {
    polling_ = false;
    return;
  }
  const net::HttpTarget target = *target_;
  lock.unlock();
  auto response = FetchMetrics(target, options_.fetch);
  lock.lock();
  polling_ = false;
  now_unix_ns = options_.clock ? options_.clock() : now_unix_ns;  // when the answer arrived
  last_scrape_ns_ = now_unix_ns;
  next_scrape_ns_ = NextOnGrid(now_unix_ns, options_.scrape_interval_ns);
  const std::string url = target.ToUrl();
  ScrapeTargetStats* stats = Target(url);
  if (!response.ok() || response->status != 200) {
    // Connected and sent, but no answer in time (net::HttpGet's DataLoss): abandoned. A refused
    // connection never reached the server; an HTTP error status is an answer.
    const bool abandoned =
        !response.ok() && response.status().code() == base::StatusCode::kDataLoss;
    scraper_.RecordFailure(now_unix_ns, abandoned);
    if (stats) {
      ++stats->failures;
      stats->abandoned += abandoned ? 1 : 0;
    }
    ++consecutive_failures_;
    const std::string why = response.ok() ? fmt::format("{}: HTTP status {}", url, response->status)
                                          : response.status().message();
    if (!configured_ && consecutive_failures_ >= options_.failures_before_rediscovery) {
      target_.reset();
      last_discovery_ns_ = 0;  // look again at the next poll
      SetHealth(fmt::format("off: lost the engine metrics endpoint ({}, {} failures in a row); "
                            "looking for it again",
                            why, consecutive_failures_),
                false);
      return;
    }
    SetHealth(fmt::format("degraded: {} ({} failure{} in a row){}", why, consecutive_failures_,
                          consecutive_failures_ == 1 ? "" : "s",
                          configured_ ? "; check --metrics-url" : ""),
              false);
    return;
  }
  consecutive_failures_ = 0;
  const ScrapeResult r = scraper_.Scrape(response->body, now_unix_ns);
  if (stats) ++stats->scrapes;
  if (r.detection.engine == Engine::kUnknown) {
    SetHealth(fmt::format("degraded: {} serves {} metric families but none of a known engine "
                          "(vLLM, SGLang, TGI, TensorRT-LLM, Dynamo); only other series are kept",
                          url, r.families),
              false);
    return;
  }
  std::string extra;
  if (r.stats.bad_lines)
    extra += fmt::format("; {} bad lines skipped ({})", r.stats.bad_lines, r.stats.first_error);
  if (r.stats.dropped_series)
    extra += fmt::format("; {} series over the limit dropped", r.stats.dropped_series);
  if (response->truncated) extra += "; body cut at the size limit";
  SetHealth(
      fmt::format("ok: scraping {} metrics from {}{}", EngineName(r.detection.engine), url, extra),
      true);
}

}  // namespace inferscope::telemetry::scrape
