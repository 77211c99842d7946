// SPDX-License-Identifier: Apache-2.0
// The agent's routes over a real socket: every route before and after the
// first collection, /api/v1/snapshot as the same document as
// `pathwise snapshot --format=json` (histograms included), /healthz from
// typed health, and clean errors for hostile requests.
#include "exporters/http_routes.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "exporters/prometheus_protobuf.h"
#include "exporters/topology_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"
#include "nlohmann/json.hpp"
#include "tests/unit/gunzip.h"
#include "tests/unit/http_client.h"

namespace pathwise::exporters {
namespace {

using ::pathwise::testing::Gunzip;

using ::pathwise::testing::Body;
using ::pathwise::testing::RawRequest;
using ::pathwise::testing::Request;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using json = nlohmann::json;

// A BPF-like snapshot: a read latency histogram and errors on one path,
// NVMe statistics, sampler statistics, another block device and scoring.
model::Snapshot RichSnapshot() {
  model::Snapshot s = model::MakeSyntheticSnapshot({});
  const std::string path = s.topology.paths[0].name;
  model::OpStats& read = s.path_io[path].op(model::Op::kRead).emplace();
  read.completed = 5;
  read.bytes = 5 * 4096;
  read.time_ns = 500000000;
  read.errors = 2;
  model::LatencyHistogram h;
  h.Observe(100'000, 3);       // 100 us
  h.Observe(10'000'000);       // 10 ms
  h.Observe(400'000'000'000);  // 400 s: above every finite bound
  read.latency = h;
  model::PathNvmeStats& nvme = s.path_nvme[path];
  nvme.errors_by_class.emplace();
  (*nvme.errors_by_class)[model::ErrorClassIndex(
      model::NvmeStatusClass::kPath)] = 4;
  nvme.retries = 2;
  nvme.failovers = 3;
  s.device_io["loop0"].op(model::Op::kWrite).emplace().completed = 7;
  model::SamplerStats st;
  st.dropped[model::Index(model::DropReason::kNoStartTime)] = 5;
  st.programs.push_back({"pw_done_btf", 1500, 10});
  s.sampler = st;
  model::Scoring sc;
  sc.paths[path].health = model::PathHealth::kDegraded;
  sc.paths[path].weight = {1, 32, 32};
  sc.paths[path].sample_age_seconds = 2;
  sc.heads[s.topology.heads[0].name].paths_by_state = {1, 1, 0, 0};
  sc.heads[s.topology.heads[0].name].latency_imbalance_ratio = 60;
  sc.iopolicy_recommended["nvme-subsys0"] = {model::Iopolicy::kQueueDepth,
                                             "imbalance"};
  s.scoring = sc;
  s.io_source = model::IoSource::kBpf;
  s.generation = 7;
  s.collected_at = absl::FromUnixSeconds(1700000000);
  return s;
}

class HttpRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server =
        HttpServer::Start("127.0.0.1:0", MakeAgentRoutes(
                                             store_,
                                             [this] {
                                               absl::MutexLock lock(&mu_);
                                               return health_;
                                             },
                                             BuildInfo{"1.2.3", "abc"}));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ASSERT_FALSE(server_->ListeningPorts().empty());
    port_ = server_->ListeningPorts()[0];
  }

  // Publishes a synthetic snapshot; returns its text exposition (coarse
  // buckets) and its protobuf one (fine buckets), as the routes build them.
  std::pair<std::string, std::string> PublishSynthetic() {
    const model::Snapshot s = model::MakeSyntheticSnapshot({.bpf = true});
    store_.Publish(std::make_shared<model::Snapshot>(s));
    const BuildInfo build{"1.2.3", "abc"};
    return {
        SerializeText(BuildFamilies(&s, build)),
        SerializeProtobuf(BuildFamilies(&s, build, {HistogramBuckets::kFine}))};
  }

  void SetHealth(model::Health h) {
    absl::MutexLock lock(&mu_);
    health_ = std::move(h);
  }

  // The JSON body of a GET, asserting its status and content type.
  json GetJson(const std::string& path, int status) {
    const std::string r = Request(port_, "GET", path);
    EXPECT_THAT(r, StartsWith(absl::StrCat("HTTP/1.1 ", status, " ")));
    EXPECT_THAT(r, HasSubstr("Content-Type: application/json\r\n"));
    return json::parse(Body(r), nullptr, /*allow_exceptions=*/false);
  }

  model::SnapshotStore store_;
  absl::Mutex mu_;
  model::Health health_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

TEST_F(HttpRoutesTest, BeforeTheFirstCollection) {
  SetHealth({.reason = "not ready: no collection yet"});
  for (const char* path : {"/api/v1/topology", "/api/v1/snapshot"}) {
    json j = GetJson(path, 503);
    ASSERT_FALSE(j.is_discarded()) << path;
    EXPECT_EQ(j, json({{"error", "no collection yet"}})) << path;
  }
  const std::string metrics = Request(port_, "GET", "/metrics");
  EXPECT_THAT(metrics, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(metrics, HasSubstr("pathwise_build_info{version=\"1.2.3\""));
  const std::string health = Request(port_, "GET", "/healthz");
  EXPECT_THAT(health, StartsWith("HTTP/1.1 503"));
  EXPECT_EQ(Body(health), "not ready: no collection yet\n");
}

// /metrics is rendered once per snapshot: the same snapshot gives the same
// text as a fresh render, and a newly published one is what the next scrape
// shows (even when equal in content to one rendered before).
TEST_F(HttpRoutesTest, MetricsFollowEachPublishedSnapshot) {
  const model::Snapshot two = model::MakeSyntheticSnapshot({});
  const model::Snapshot one =
      model::MakeSyntheticSnapshot({.controllers_per_subsystem = 1});
  const BuildInfo build{"1.2.3", "abc"};
  for (const model::Snapshot* s : {&two, &one, &two, &two}) {
    store_.Publish(std::make_shared<model::Snapshot>(*s));
    const std::string want = SerializeText(BuildFamilies(s, build));
    EXPECT_EQ(Body(Request(port_, "GET", "/metrics")), want);
    EXPECT_EQ(Body(Request(port_, "GET", "/metrics")), want);
  }
  EXPECT_NE(SerializeText(BuildFamilies(&one, build)),
            SerializeText(BuildFamilies(&two, build)));
}

// Content negotiation: Prometheus' native-histogram Accept header gets the
// protobuf exposition (fine buckets as native histograms), everyone else the
// text one with coarse buckets; ?format= overrides the header.
TEST_F(HttpRoutesTest, MetricsNegotiatesProtobufOrText) {
  const auto [text, proto] = PublishSynthetic();
  ASSERT_NE(text, proto);
  auto get = [this](const std::string& path, const std::string& accept) {
    return RawRequest(port_,
                      absl::StrCat("GET ", path, " HTTP/1.0\r\n",
                                   accept.empty() ? "" : "Accept: ", accept,
                                   accept.empty() ? "" : "\r\n", "\r\n"));
  };
  const std::string prometheus =
      "application/vnd.google.protobuf;proto=io.prometheus.client."
      "MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,"
      "*/*;q=0.2";
  std::string r = get("/metrics", prometheus);
  EXPECT_THAT(r, HasSubstr("Content-Type: application/vnd.google.protobuf; "
                           "proto=io.prometheus.client.MetricFamily; "
                           "encoding=delimited\r\n"));
  EXPECT_EQ(Body(r), proto);
  r = get("/metrics", "");
  EXPECT_THAT(r, HasSubstr("Content-Type: text/plain; version=0.0.4"));
  EXPECT_EQ(Body(r), text);
  EXPECT_EQ(Body(get("/metrics?format=text", prometheus)), text);
  EXPECT_EQ(Body(get("/metrics?format=protobuf", "")), proto);
  EXPECT_EQ(Body(get("/metrics", "text/plain")), text);
}

// As Prometheus asks (gzip, and protobuf or text): both expositions come
// gzipped, and each decompresses to exactly the uncompressed one.
TEST_F(HttpRoutesTest, MetricsGzipsBothExpositions) {
  const auto [text, proto] = PublishSynthetic();
  for (const auto& [format, want] :
       {std::pair{"protobuf", proto}, std::pair{"text", text}}) {
    const std::string r = RawRequest(
        port_, absl::StrCat("GET /metrics?format=", format,
                            " HTTP/1.1\r\nHost: x\r\nAccept-Encoding: "
                            "gzip\r\nConnection: close\r\n\r\n"));
    EXPECT_THAT(r, HasSubstr("Content-Encoding: gzip\r\n")) << format;
    EXPECT_EQ(Gunzip(Body(r)), want) << format;
  }
}

TEST_F(HttpRoutesTest, LivePageLinksEveryRouteUnderItsCsp) {
  const std::string r = Request(port_, "GET", "/");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(r, HasSubstr("Content-Type: text/html; charset=utf-8"));
  EXPECT_THAT(r, HasSubstr(absl::StrCat(
                     "Content-Security-Policy: ", kLivePageCsp, "\r\n")));
  EXPECT_EQ(Body(r), LivePage({"1.2.3", "abc"}));
  for (const char* route : {"/metrics", "/healthz", "/livez",
                            "/api/v1/topology", "/api/v1/snapshot"}) {
    EXPECT_THAT(Body(r), HasSubstr(absl::StrCat("href=\"", route, "\"")));
  }
  EXPECT_THAT(Body(r), HasSubstr("1.2.3 (abc)"));
  // No inline script or style: the CSP would block them.
  EXPECT_THAT(Body(r), Not(HasSubstr("<script>")));
  EXPECT_THAT(Body(r), Not(HasSubstr("<style")));
  EXPECT_THAT(Body(r), Not(HasSubstr(" style=")));
  // Every asset the page names is served, under the same policy.
  for (const char* asset :
       {"/assets/live.js", "/assets/window.js", "/assets/live.css",
        "/assets/uPlot.iife.min.js", "/assets/uPlot.min.css"}) {
    const std::string a = Request(port_, "GET", asset);
    EXPECT_THAT(a, StartsWith("HTTP/1.1 200")) << asset;
    EXPECT_THAT(a, HasSubstr("Content-Security-Policy: ")) << asset;
    EXPECT_THAT(a, HasSubstr("X-Content-Type-Options: nosniff")) << asset;
    EXPECT_THAT(a, HasSubstr(absl::EndsWith(asset, ".js")
                                 ? "Content-Type: text/javascript"
                                 : "Content-Type: text/css"))
        << asset;
    EXPECT_GT(Body(a).size(), 100u) << asset;
  }
  EXPECT_THAT(Request(port_, "GET", "/assets/index.html"),
              StartsWith("HTTP/1.1 404"));
  EXPECT_THAT(Request(port_, "GET", "/assets/nope.js"),
              StartsWith("HTTP/1.1 404"));
}

TEST_F(HttpRoutesTest, SnapshotIsTheCliDocumentWithHistograms) {
  const model::Snapshot snap = RichSnapshot();
  store_.Publish(std::make_shared<model::Snapshot>(snap));
  const std::string r = Request(port_, "GET", "/api/v1/snapshot");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200"));
  // The same document `pathwise snapshot --format=json` prints.
  EXPECT_EQ(Body(r), SnapshotToJson(snap).dump() + "\n");

  json j = GetJson("/api/v1/snapshot", 200);
  ASSERT_FALSE(j.is_discarded());
  const std::string path = snap.topology.paths[0].name;
  const json& read = j["io"]["paths"][path]["ops"]["read"];
  EXPECT_EQ(read["completed"], 5);
  EXPECT_EQ(read["errors"], 2);
  const json& hist = read["latency_seconds"];
  // JSON has no +Inf: one bound per finite bucket, one more count.
  const json& bounds = j["latency_histogram"]["upper_bounds_seconds"];
  EXPECT_FALSE(hist.contains("upper_bounds_seconds"));  // once, not per op
  ASSERT_EQ(bounds.size(), model::LatencyHistogram::kFiniteBuckets);
  ASSERT_EQ(hist["counts"].size(), model::LatencyHistogram::kBuckets);
  const size_t b100us = model::LatencyHistogram::BucketFor(100'000);
  EXPECT_GE(bounds[b100us].get<double>(), 100e-6);
  EXPECT_LT(bounds[b100us - 1].get<double>(), 100e-6);
  EXPECT_EQ(hist["counts"][b100us], 3);
  EXPECT_EQ(hist["counts"][model::LatencyHistogram::BucketFor(10'000'000)], 1);
  EXPECT_EQ(hist["counts"].back(), 1);
  EXPECT_EQ(hist["count"], 5);
  // The histogram's sum is the ops' time counter.
  EXPECT_DOUBLE_EQ(hist["sum_seconds"].get<double>(), 0.5);
  // Sysfs-like ops have neither errors nor a histogram.
  const json& other = j["io"]["paths"][snap.topology.paths[1].name]["ops"];
  for (const auto& [op, stats] : other.items()) {
    EXPECT_FALSE(stats.contains("latency_seconds")) << op;
  }
  EXPECT_EQ(j["io"]["devices"]["loop0"]["ops"]["write"]["completed"], 7);
  EXPECT_EQ(j["nvme"][path], json({{"errors_by_class",
                                    {{"generic", 0},
                                     {"command_specific", 0},
                                     {"media", 0},
                                     {"path", 4},
                                     {"vendor", 0},
                                     {"reserved", 0}}},
                                   {"retries", 2},
                                   {"failovers", 3}}));
  EXPECT_EQ(j["sampler"]["dropped"]["no_start_time"], 5);
  EXPECT_EQ(j["sampler"]["programs"][0]["name"], "pw_done_btf");
  EXPECT_EQ(j["sampler"]["programs"][0]["run_count"], 10);
  EXPECT_EQ(j["scoring"]["paths"][path]["health"], "degraded");
  EXPECT_EQ(j["scoring"]["paths"][path]["sample_age_seconds"], 2);
  const std::string head = snap.topology.heads[0].name;
  EXPECT_EQ(j["scoring"]["heads"][head]["paths_by_state"]["degraded"], 1);
  EXPECT_EQ(j["scoring"]["heads"][head]["latency_imbalance_ratio"], 60);
  EXPECT_EQ(j["scoring"]["iopolicy_recommended"]["nvme-subsys0"]["iopolicy"],
            "queue-depth");
  EXPECT_EQ(j["generation"], 7);
  EXPECT_EQ(j["collected_at"], "2023-11-14T22:13:20+00:00");
  EXPECT_EQ(j["io_source"], "bpf");
  EXPECT_TRUE(j["collectors"].is_array());
  EXPECT_EQ(j["subsystems"].size(), snap.topology.subsystems.size());
}

TEST_F(HttpRoutesTest, SnapshotWithoutSamplerOrScoringHasNulls) {
  model::Snapshot snap = model::MakeSyntheticSnapshot({});
  snap.scoring.reset();
  store_.Publish(std::make_shared<model::Snapshot>(snap));
  json j = GetJson("/api/v1/snapshot", 200);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j["sampler"].is_null());
  EXPECT_TRUE(j["scoring"].is_null());
  EXPECT_EQ(j["nvme"], json::object());
}

TEST_F(HttpRoutesTest, TopologyAfterACollection) {
  const model::Snapshot snap = RichSnapshot();
  store_.Publish(std::make_shared<model::Snapshot>(snap));
  const std::string r = Request(port_, "GET", "/api/v1/topology");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(Body(r),
            TopologyToJson(snap.topology, &*snap.scoring).dump(2) + "\n");
}

TEST_F(HttpRoutesTest, HealthzRendersTypedHealth) {
  model::Health h;
  h.ready = true;
  h.live = true;
  h.stages = {{"nvme_topology", 0.1, true, ""},
              {"bpf_io", 0.2, false, "map read: EPERM"}};
  SetHealth(h);
  std::string r = Request(port_, "GET", "/healthz");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(r, HasSubstr("Content-Type: text/plain; charset=utf-8"));
  EXPECT_EQ(Body(r),
            "ok\ncollector nvme_topology: ok\n"
            "collector bpf_io: failed: map read: EPERM\n");

  h.live = false;
  h.reason = "unhealthy: last collection 20s ago";
  SetHealth(h);
  r = Request(port_, "GET", "/healthz");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 503"));
  EXPECT_THAT(Body(r), StartsWith("unhealthy: last collection 20s ago\n"
                                  "collector nvme_topology: ok\n"));
}

TEST_F(HttpRoutesTest, LivezIsAliveWhileCollectionsComeEvenIfNeverReady) {
  model::Health h;
  h.ready = false;  // a stage has failed on every collection so far
  h.live = true;
  h.reason = "not ready: no collection has succeeded yet";
  h.stages = {{"nvme_topology", 0.1, false, "unknown controller state"}};
  SetHealth(h);
  EXPECT_THAT(Request(port_, "GET", "/healthz"), StartsWith("HTTP/1.1 503"));
  std::string r = Request(port_, "GET", "/livez");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_EQ(Body(r), "ok\n");

  h.live = false;  // collections stopped coming: restart it
  h.reason = "unhealthy: last collection 20s ago";
  SetHealth(h);
  r = Request(port_, "GET", "/livez");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 503"));
  EXPECT_EQ(Body(r), "unhealthy: last collection 20s ago\n");
}

// The server answers what it cannot parse itself, with its own 4xx page.
MATCHER(IsClientError, "is an HTTP 4xx response") {
  return ::testing::Matches(
      ::testing::ContainsRegex("^HTTP/1\\.[01] 4[0-9][0-9] "))(arg);
}

TEST_F(HttpRoutesTest, HostileRequestsGetCleanErrors) {
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    const std::string r = Request(port_, method, "/api/v1/snapshot");
    EXPECT_THAT(r, StartsWith("HTTP/1.1 405")) << method;
    EXPECT_EQ(Body(r), "method not allowed\n") << method;
  }
  EXPECT_THAT(Request(port_, "BREW", "/api/v1/snapshot"), IsClientError());
  for (const std::string& path :
       {std::string("/api/v1/snapshot/x"), std::string("/api/v1"),
        std::string("/api/v1/snapshot%2F.."), std::string("/../etc/passwd"),
        std::string("/api/v1/snapshot/")}) {
    EXPECT_THAT(Request(port_, "GET", path), StartsWith("HTTP/1.1 404"))
        << path;
  }
  // A query string does not change the route.
  EXPECT_THAT(Request(port_, "GET", "/api/v1/snapshot?pretty=0"),
              StartsWith("HTTP/1.1 503"));
  EXPECT_THAT(Request(port_, "GET", "/" + std::string(100000, 'a')),
              IsClientError());
  // A line that is no request line at all (one word: no method and
  // target) is not HTTP/1.x: closed unanswered, as for an HTTP/0.9 client.
  EXPECT_THAT(RawRequest(port_, "garbage\r\n\r\n"),
              ::testing::AnyOf(IsClientError(), ::testing::IsEmpty()));
  EXPECT_THAT(RawRequest(port_, "garbage / HTTP/1.1\r\n\r\n"), IsClientError());
  // And the server keeps serving.
  EXPECT_THAT(Request(port_, "GET", "/metrics"), StartsWith("HTTP/1.1 200"));
}

TEST(HealthzResponse, ReasonFirstThenOneLinePerStage) {
  model::Health h{.ready = false,
                  .live = true,
                  .reason = "not ready: no collection has succeeded yet",
                  .stages = {{"scoring", 0, true, ""}}};
  HttpResponse r = HealthzResponse(h);
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body,
            "not ready: no collection has succeeded yet\n"
            "collector scoring: ok\n");
}

// A host without multipath is healthy (collection works, nothing to
// collect): 200, and the body says why there is nothing.
TEST(HealthzResponse, NoticeOfAnEmptyHostWithA200) {
  model::Health h{.ready = true,
                  .live = true,
                  .stages = {{"nvme_topology", 0, true, ""}},
                  .notice =
                      "no NVMe multipath subsystems: is nvme_core "
                      "loaded with multipath=Y? (x)"};
  HttpResponse r = HealthzResponse(h);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body,
            "ok\nno NVMe multipath subsystems: is nvme_core loaded with "
            "multipath=Y? (x)\ncollector nvme_topology: ok\n");
}

}  // namespace
}  // namespace pathwise::exporters
