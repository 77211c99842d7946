// SPDX-License-Identifier: Apache-2.0
// The agent's HTTP routes, built from what the agent exposes (the snapshot
// store, its health, build info) for HttpServer to serve:
//   /                 the live page (HTML): topology tree, per-path latency
//                     and IOPS charts, polled from /api/v1/snapshot; its
//                     script, style and uPlot under /assets/ (embedded,
//                     exporters/web/), with kLivePageCsp
//   /metrics          Prometheus exposition: text, or protobuf with native
//                     histograms when the Accept header prefers it (or the
//                     query says format=protobuf; format=text forces text)
//   /healthz          200 "ok" or 503 with the reason, then the notice of a
//                     host without multipath, then one line per stage
//   /api/v1/topology  the topology tree (TopologyToJson)
//   /api/v1/snapshot  the whole snapshot (SnapshotToJson), histograms included
// The JSON routes answer 503 with a JSON error body before the first
// collection.
#ifndef PATHWISE_EXPORTERS_HTTP_ROUTES_H_
#define PATHWISE_EXPORTERS_HTTP_ROUTES_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exporters/http_server.h"
#include "exporters/prometheus_families.h"
#include "model/health.h"
#include "model/snapshot_store.h"

namespace pathwise::exporters {

// Returns the agent's current health; called on the server's handler threads,
// so it must be thread-safe.
using HealthSource = std::function<model::Health()>;

// The routes above. `store` must outlive the routes. `exposition`: the
// metrics profile (--metrics.profile) and the classic buckets of the text
// exposition's latency histograms (--histogram-buckets); protobuf always
// gets native histograms. With `http`, /metrics also has the server's
// pathwise_http_* families.
HttpRoutes MakeAgentRoutes(
    const model::SnapshotStore& store, HealthSource health,
    const BuildInfo& build, ExpositionOptions exposition = {},
    std::shared_ptr<const HttpServerCounters> http = nullptr);

// pathwise_http_connections_open, _accepted_total, _refused_total{reason}
// and pathwise_http_gzip_responses_total from `http`.
std::vector<prometheus::MetricFamily> HttpServerFamilies(
    const HttpServerCounters& http);

// /healthz: 200 when healthy, else 503; the body's first line is "ok" or the
// reason, then the health's notice when it has one (a host without NVMe
// multipath is healthy: collection works, there is nothing to collect),
// then "collector <name>: ok" or "collector <name>: failed: <error>" per
// stage of the latest collection.
HttpResponse HealthzResponse(const model::Health& health);

// /livez: 200 while collections keep coming (health.live), even when a stage
// keeps failing (malformed sysfs, a state this version does not know): a
// liveness probe must not restart an agent that is working but reporting a
// fault, which /healthz (readiness) does report.
HttpResponse LivezResponse(const model::Health& health);

// The live page's HTML (exporters/web/index.html) with the build's version;
// it links every other route.
std::string LivePage(const BuildInfo& build);

// The Content-Security-Policy of / and /assets/: scripts, styles and
// fetches from this origin only; nothing inline, no frames, no forms.
inline constexpr char kLivePageCsp[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'";

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_HTTP_ROUTES_H_
