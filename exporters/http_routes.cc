// SPDX-License-Identifier: Apache-2.0
#include "exporters/http_routes.h"

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "exporters/prometheus_internal.h"
#include "exporters/prometheus_protobuf.h"
#include "exporters/topology_json.h"
#include "exporters/utf8.h"
#include "exporters/web_assets.h"

namespace pathwise::exporters {
namespace {

constexpr char kJson[] = "application/json";
constexpr char kPlain[] = "text/plain; charset=utf-8";

HttpResponse NoCollectionYet() {
  return {503, kJson, "{\"error\":\"no collection yet\"}\n"};
}

// `indent` as nlohmann's dump(): -1 compact. /api/v1/snapshot is compact: it
// carries every histogram's counts and clients poll it. /api/v1/topology
// stays indented, one key per line, which line-oriented clients (shell
// scripts) rely on.
HttpResponse Json(const nlohmann::json& j, int indent) {
  return {200, kJson, JsonText(j, indent)};
}

// /metrics is a pure function of the published snapshot, so it is rendered
// once per snapshot and exposition, and every scrape of that snapshot gets
// the same bytes: concurrent scrapers share one rendering instead of
// rendering and holding one each. Scrapers that arrive while a render is
// under way wait for it.
class MetricsCache {
 public:
  MetricsCache(const model::SnapshotStore& store, BuildInfo build,
               ExpositionOptions exposition,
               std::shared_ptr<const HttpServerCounters> http)
      : store_(store),
        build_(std::move(build)),
        exposition_(exposition),
        http_(std::move(http)) {}

  std::shared_ptr<const std::string> Get(bool protobuf) {
    std::shared_ptr<const model::Snapshot> snap = store_.Load();
    if (snap == nullptr) return Render(nullptr, protobuf);
    std::lock_guard<std::mutex> lock(mu_);
    Rendering& r = protobuf ? protobuf_ : text_;
    // A weak pointer: the cache must not keep an old snapshot alive, and a
    // freed one never compares equal to the one just loaded.
    if (r.rendered_for.lock() != snap) {
      r.body = Render(snap.get(), protobuf);
      r.rendered_for = snap;
    }
    return r.body;
  }

 private:
  struct Rendering {
    std::weak_ptr<const model::Snapshot> rendered_for;
    std::shared_ptr<const std::string> body;
  };

  // The server's counters are read when a snapshot is rendered, so they are
  // as fresh as the rest of the exposition (one collection interval).
  std::shared_ptr<const std::string> Render(const model::Snapshot* snap,
                                            bool protobuf) const {
    // Fine buckets for protobuf: that exposition turns them into native
    // histograms.
    ExpositionOptions options = exposition_;
    if (protobuf) options.histogram_buckets = HistogramBuckets::kFine;
    std::vector<prometheus::MetricFamily> families =
        BuildFamilies(snap, build_, options);
    if (http_ != nullptr) {
      for (auto& f : HttpServerFamilies(*http_))
        families.push_back(std::move(f));
    }
    return std::make_shared<const std::string>(
        protobuf ? SerializeProtobuf(families) : SerializeText(families));
  }

  const model::SnapshotStore& store_;
  const BuildInfo build_;
  const ExpositionOptions exposition_;
  const std::shared_ptr<const HttpServerCounters> http_;
  std::mutex mu_;
  Rendering text_, protobuf_;
};

// Whether /metrics answers in protobuf: `format=text` or `format=protobuf`
// in the query string decides (for a scraper that cannot choose its Accept
// header per target, such as Prometheus before 2.49), else the Accept
// header.
bool WantsProtobuf(const HttpRequest& request) {
  for (absl::string_view kv : absl::StrSplit(request.query, '&')) {
    if (kv == "format=text") return false;
    if (kv == "format=protobuf") return true;
  }
  return PrefersProtobuf(request.accept);
}

}  // namespace

HttpResponse HealthzResponse(const model::Health& health) {
  std::string body = health.ok() ? "ok" : health.reason;
  body += "\n";
  if (!health.notice.empty()) absl::StrAppend(&body, health.notice, "\n");
  for (const model::CollectorResult& r : health.stages) {
    absl::StrAppend(&body, "collector ", r.name, ": ",
                    r.success ? "ok" : absl::StrCat("failed: ", r.error), "\n");
  }
  // An error may quote a sysfs string byte for byte.
  ReplaceInvalidUtf8(body);
  return {health.ok() ? 200 : 503, kPlain, std::move(body)};
}

HttpResponse LivezResponse(const model::Health& health) {
  if (health.live) return {200, kPlain, "ok\n"};
  std::string body = health.reason + "\n";
  ReplaceInvalidUtf8(body);
  return {503, kPlain, std::move(body)};
}

std::string LivePage(const BuildInfo& build) {
  std::string page;
  for (const WebAsset& a : WebAssets()) {
    if (a.name == "index.html") page = std::string(a.bytes);
  }
  // Build strings come from the build system, but stay text in the page
  // whatever they hold.
  std::string version = absl::StrCat(build.version, " (", build.revision, ")");
  version = absl::StrReplaceAll(
      version,
      {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
  return absl::StrReplaceAll(page, {{"@VERSION@", version}});
}

std::vector<prometheus::MetricFamily> HttpServerFamilies(
    const HttpServerCounters& http) {
  std::vector<prometheus::MetricFamily> out;
  prometheus::MetricFamily open = internal::Family(
      "pathwise_http_connections_open",
      "HTTP connections the server holds now, idle ones included.",
      prometheus::MetricType::Gauge);
  internal::AddGauge(open, {}, static_cast<double>(http.open.load()));
  out.push_back(std::move(open));
  prometheus::MetricFamily accepted = internal::Family(
      "pathwise_http_connections_accepted_total", "HTTP connections accepted.",
      prometheus::MetricType::Counter);
  internal::AddCounter(accepted, {}, static_cast<double>(http.accepted.load()));
  out.push_back(std::move(accepted));
  prometheus::MetricFamily refused = internal::Family(
      "pathwise_http_connections_refused_total",
      "HTTP connections closed by the server before their request was "
      "answered, by reason: client_limit (its address held "
      "--web.max-connections-per-client; the address's longest-waiting "
      "connection is the one closed), total_limit (--web.max-connections), "
      "request_timeout (TLS handshake and headers not complete in time), "
      "write_timeout (the answer not taken in time).",
      prometheus::MetricType::Counter);
  for (int i = 0; i < kRefuseReasons; ++i) {
    const auto reason = static_cast<RefuseReason>(i);
    internal::AddCounter(refused, {{"reason", RefuseReasonLabel(reason)}},
                         static_cast<double>(http.Refused(reason)));
  }
  out.push_back(std::move(refused));
  prometheus::MetricFamily gzip = internal::Family(
      "pathwise_http_gzip_responses_total",
      "HTTP answers sent gzip-compressed (the client accepted gzip).",
      prometheus::MetricType::Counter);
  internal::AddCounter(gzip, {},
                       static_cast<double>(http.gzip_responses.load()));
  out.push_back(std::move(gzip));
  return out;
}

HttpRoutes MakeAgentRoutes(const model::SnapshotStore& store,
                           HealthSource health, const BuildInfo& build,
                           ExpositionOptions exposition,
                           std::shared_ptr<const HttpServerCounters> http) {
  auto metrics =
      std::make_shared<MetricsCache>(store, build, exposition, std::move(http));
  HttpRoutes routes;
  routes["/metrics"] = [metrics](const HttpRequest& request) {
    const bool protobuf = WantsProtobuf(request);
    return HttpResponse{200, protobuf ? kProtobufContentType : kTextContentType,
                        "", metrics->Get(protobuf)};
  };
  routes["/healthz"] = [health] { return HealthzResponse(health()); };
  routes["/livez"] = [health = std::move(health)] {
    return LivezResponse(health());
  };
  routes["/api/v1/topology"] = [&store] {
    std::shared_ptr<const model::Snapshot> snap = store.Load();
    if (snap == nullptr) return NoCollectionYet();
    return Json(TopologyToJson(snap->topology,
                               snap->scoring ? &*snap->scoring : nullptr,
                               snap->actuator ? &*snap->actuator : nullptr),
                2);
  };
  routes["/api/v1/snapshot"] = [&store] {
    std::shared_ptr<const model::Snapshot> snap = store.Load();
    if (snap == nullptr) return NoCollectionYet();
    return Json(SnapshotToJson(*snap), -1);
  };
  // The live page: its own files only, no inline script or style, and
  // fetches to this origin only (the JSON API above), so the browser sends
  // the page's basic-auth credentials with each of them.
  const std::vector<std::pair<std::string, std::string>> page_headers = {
      {"Content-Security-Policy", kLivePageCsp},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"}};
  routes["/"] = [page = std::make_shared<const std::string>(LivePage(build)),
                 page_headers] {
    HttpResponse r{200, "text/html; charset=utf-8", "", page};
    r.headers = page_headers;
    return r;
  };
  for (const WebAsset& a : WebAssets()) {
    if (a.name == "index.html") continue;
    routes["/assets/" + std::string(a.name)] =
        [type = std::string(a.content_type),
         bytes = std::make_shared<const std::string>(a.bytes), page_headers] {
          HttpResponse r{200, type, "", bytes};
          r.headers = page_headers;
          return r;
        };
  }
  return routes;
}

}  // namespace pathwise::exporters
