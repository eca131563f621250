// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/fleet_report.h"

#include <optional>

#include "src/base/time_point.h"
#include "src/cli/exit_codes.h"
#include "src/fleet/query/fleet_profile.h"
#include "src/fleet/query/fleet_query.h"

namespace inferscope::cli {

namespace ch = fleet;

int RunFleetReport(const FleetReportOptions& o, std::ostream& out, std::ostream& err) {
  auto usage = [&](const std::string& message) {
    err << "inferscope: error: " << message << "\nRun 'inferscope report --help' for usage.\n";
    return kExitUsage;
  };
  auto target = ch::ParseClickHouseUrl(o.source);
  if (!target.ok()) return usage("--source: " + target.status().message());
  if (!o.credentials_path.empty()) {
    auto creds = ch::ReadCredentialsFile(o.credentials_path);
    if (!creds.ok()) return usage("--source-credentials: " + creds.status().message());
    target->user = creds->user;
    target->password = creds->password;
  }
  ch::FleetQuery q;
  if (!ch::ParseGroupBy(o.group_by, &q.group_by))
    return usage("--group-by: want host, model, engine or gpu_model");
  if (!ch::ParseFleetMetric(o.rank_by, &q.rank_by))
    return usage("--rank-by: want idle, communication, sync or step");
  for (const std::string& label : o.labels) {
    const base::Status s = ch::ParseLabel(label, &q.labels);
    if (!s.ok()) return usage("--label: " + s.message());
  }
  q.hosts = o.hosts;
  q.exact = o.exact;
  q.top = static_cast<size_t>(o.top);
  const int64_t now_ns = o.now_unix_ns ? o.now_unix_ns : base::UnixNowNs();
  q.from_ns = now_ns - o.last_ns;
  q.to_ns = now_ns + 60'000'000'000;  // a little ahead: clocks of other hosts may lead
  if (!o.from.empty()) {
    auto from = base::ParseTimePoint(o.from, now_ns);
    if (!from.ok()) return usage("--from: " + from.status().message());
    q.from_ns = *from;
  }
  if (!o.to.empty()) {
    auto to = base::ParseTimePoint(o.to, now_ns);
    if (!to.ok()) return usage("--to: " + to.status().message());
    q.to_ns = *to;
  }
  if (q.to_ns <= q.from_ns) return usage("--to must be after --from");
  const ch::ClickHouseClient client(*target, 60'000);
  auto view = ch::QueryFleet(client, q);
  if (!view.ok()) {
    err << "inferscope: error: " << view.status().message() << "\n";
    if (view.status().message().find("Code: 81,") != std::string::npos ||
        view.status().message().find("Code: 60,") != std::string::npos)
      err << "  (no fleet tables in " << target->database << " yet: start an agent with --sink "
          << target->ToUrl() << ")\n";
    return kExitError;
  }
  if (view->groups.empty()) {
    err << "inferscope: no windows in " << target->ToUrl()
        << " for this range and these filters; widen it with --last or --from/--to\n";
    return kExitNotFound;
  }
  std::optional<analyze::Analysis> kernels;
  if (o.kernels_view) {
    bool no_configs = false;
    auto k = ch::QueryFleetKernels(client, q, o.kernels_top, &no_configs);
    if (!k.ok()) {
      err << "inferscope: error: " << k.status().message() << "\n";
      return kExitError;
    }
    if (no_configs)
      err << "inferscope: note: " << target->ToUrl()
          << " has no launch configurations yet (schema 4: start an agent of this version with "
             "--sink on it to migrate); the kernels view lists none\n";
    kernels = std::move(*k);
  }
  const analyze::Analysis* k = kernels ? &*kernels : nullptr;
  out << (o.json ? ch::RenderFleetJson(*view, q, target->ToUrl(), k)
                 : ch::RenderFleetText(*view, q, target->ToUrl(), k));
  return kExitOk;
}

}  // namespace inferscope::cli
