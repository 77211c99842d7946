// SPDX-License-Identifier: Apache-2.0
// DatapathRoutes (exposition.h): the datapath's HTTP routes.
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "datapath/exposition.h"
#include "exporters/http_routes.h"
#include "exporters/prometheus_protobuf.h"
#include "exporters/topology_json.h"

namespace pathwise::datapath {
namespace {

// As the agent's /metrics: the query's format= decides, else the Accept
// header.
bool WantsProtobuf(const exporters::HttpRequest& request) {
  for (absl::string_view kv : absl::StrSplit(request.query, '&')) {
    if (kv == "format=text") return false;
    if (kv == "format=protobuf") return true;
  }
  return exporters::PrefersProtobuf(request.accept);
}

// The snapshot of one request: the datapath's counters are read at the
// request (they are at most one queue tick, 100 ms, old), the controllers'
// states re-read from sysfs.
model::Snapshot RequestSnapshot(const DatapathView& view,
                                const std::string& sysfs_root) {
  std::vector<std::string> subsystems;
  std::vector<model::Controller> controllers;
  const absl::Status read =
      ReadControllers(sysfs_root, view.group, &subsystems, &controllers);
  model::Snapshot snap =
      DatapathSnapshot(view, DatapathTopology(view, subsystems, controllers));
  snap.collectors.push_back({.name = "datapath",
                             .success = read.ok(),
                             .error = std::string(read.message())});
  return snap;
}

// The exposition of one scrape.
std::vector<prometheus::MetricFamily> Families(
    const DatapathView& view, const std::string& sysfs_root,
    const exporters::BuildInfo& build, exporters::HistogramBuckets buckets) {
  model::Snapshot snap = RequestSnapshot(view, sysfs_root);
  std::vector<prometheus::MetricFamily> families =
      exporters::BuildFamilies(&snap, build, {buckets});
  for (prometheus::MetricFamily& f : DatapathFamilies(view, snap.topology)) {
    families.push_back(std::move(f));
  }
  return families;
}

}  // namespace

exporters::HttpRoutes DatapathRoutes(
    std::function<DatapathView()> view, std::string sysfs_root,
    exporters::BuildInfo build, exporters::HistogramBuckets buckets,
    std::shared_ptr<const exporters::HttpServerCounters> http) {
  exporters::HttpRoutes routes;
  routes["/metrics"] = [view, sysfs_root, build, buckets,
                        http](const exporters::HttpRequest& request) {
    const bool protobuf = WantsProtobuf(request);
    // Fine buckets for protobuf: that exposition makes them native.
    std::vector<prometheus::MetricFamily> families =
        Families(view(), sysfs_root, build,
                 protobuf ? exporters::HistogramBuckets::kFine : buckets);
    if (http != nullptr) {
      for (auto& f : exporters::HttpServerFamilies(*http)) {
        families.push_back(std::move(f));
      }
    }
    return exporters::HttpResponse{200,
                                   protobuf ? exporters::kProtobufContentType
                                            : exporters::kTextContentType,
                                   protobuf
                                       ? exporters::SerializeProtobuf(families)
                                       : exporters::SerializeText(families)};
  };
  // The agent's snapshot document, so that `pathwise top --url` reads the
  // datapath as it reads an agent, plus what only the datapath decides.
  routes["/api/v1/snapshot"] = [view, sysfs_root] {
    const model::Snapshot snap = RequestSnapshot(view(), sysfs_root);
    nlohmann::json j = exporters::SnapshotToJson(snap);
    if (snap.datapath) j["datapath"] = DatapathReportToJson(*snap.datapath);
    return exporters::HttpResponse{200, "application/json",
                                   exporters::JsonText(j, -1)};
  };
  // Ready while some path is usable: the device then serves I/O.
  routes["/healthz"] = [view] {
    const DatapathView v = view();
    bool any = false;
    std::string lines;
    for (size_t i = 0; i < v.group.paths.size() && i < v.status.size(); ++i) {
      const PathStatus& s = v.status[i];
      any = any || s.usable();
      absl::StrAppend(&lines, "path ", v.group.paths[i].name, ": ",
                      s.usable() ? "usable"
                      : s.failed ? (s.probing ? "failed, probing" : "failed")
                                 : "ANA state allows no I/O",
                      "\n");
    }
    return exporters::HttpResponse{
        any ? 200 : 503, "text/plain; charset=utf-8",
        absl::StrCat(any ? "ok" : "no usable path", "\n", lines)};
  };
  // Alive while it answers: a liveness probe must never restart the
  // datapath for its paths' sake (that removes the device under its users).
  routes["/livez"] = [] {
    return exporters::HttpResponse{200, "text/plain; charset=utf-8", "ok\n"};
  };
  routes["/"] = [build] {
    return exporters::HttpResponse{
        200, "text/html; charset=utf-8",
        absl::StrCat("<!DOCTYPE html>\n<html><head><title>pathwise "
                     "datapath</title></head><body>\n<h1>pathwise "
                     "datapath</h1>\n<p>Version ",
                     build.version, " (", build.revision,
                     ").</p>\n<ul>\n<li><a href=\"/metrics\">/metrics</a>: "
                     "Prometheus metrics</li>\n<li><a "
                     "href=\"/api/v1/snapshot\">/api/v1/snapshot</a>: "
                     "the snapshot as JSON (pathwise top --url)</li>\n<li><a "
                     "href=\"/healthz\">/healthz</a>: ready (some path "
                     "usable)</li>\n</ul>\n</body></html>\n")};
  };
  return routes;
}

}  // namespace pathwise::datapath
