// SPDX-License-Identifier: Apache-2.0
// The datapath's exposition: its counters under the agent's names and
// labels where the meaning is the same (the per-controller namespaces as
// paths, the ublk device as their head), its own pathwise_datapath_*
// families, the controllers read from a sysfs tree built here, the routes,
// and promtool's verdict on the whole text.
#include "datapath/exposition.h"

#include <stdio.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "exporters/prometheus_protobuf.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/datapath/view_fixture.h"
#include "tests/unit/promtool.h"

namespace pathwise::datapath {
namespace {

using testing_util::kP0;
using testing_util::kP1;
using testing_util::Path;
using testing_util::TwoPathView;

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const exporters::BuildInfo kBuild{"1.2.3", "abc"};

// Two paths: path 0 served reads and writes and failed over once, path 1
// is failed and being probed.
DatapathView View() {
  DatapathView v = TwoPathView(policy::Policy::kQueueDepth);
  PathStats& p0 = v.stats.paths[0];
  p0.RecordOp(model::Op::kRead, 4096, 100'000);     // 100 us
  p0.RecordOp(model::Op::kRead, 4096, 3'000'000);   // 3 ms
  p0.RecordOp(model::Op::kWrite, 8192, 1'000'000);  // 1 ms
  p0.RecordOp(model::Op::kOther, 0, 50'000);        // write zeroes
  p0.ios = 4;
  p0.selections = 5;
  p0.failovers = 1;
  p0.errors_by_class[model::ErrorClassIndex(model::NvmeStatusClass::kPath)] = 1;
  PathStats& p1 = v.stats.paths[1];
  p1.RecordOp(model::Op::kRead, 4096, 200'000);
  p1.selections = 2;
  p1.timeouts = 1;
  p1.probes = 3;
  p1.probe_failures = 2;
  p1.transport_errors = 1;
  v.stats.requests = 5;
  v.stats.no_path_waits = 1;
  v.status = {PathStatus{}, PathStatus{.failed = true, .probing = true}};
  v.status[0].ana = model::AnaState::kOptimized;
  return v;
}

std::vector<model::Controller> Controllers() {
  std::vector<model::Controller> c(2);
  c[0].name = "nvme0";
  c[1].name = "nvme1";
  for (auto& x : c) {
    x.subsystem = "nvme-subsys3";
    x.transport = "tcp";
    x.state = model::ControllerState::kLive;
  }
  return c;
}

std::string Text(
    const DatapathView& v,
    exporters::HistogramBuckets b = exporters::HistogramBuckets::kCoarse) {
  const model::Topology t =
      DatapathTopology(v, {"nvme-subsys3", "nvme-subsys3"}, Controllers());
  const model::Snapshot s = DatapathSnapshot(v, t);
  std::vector<prometheus::MetricFamily> f =
      exporters::BuildFamilies(&s, kBuild, {b});
  for (auto& x : DatapathFamilies(v, t)) f.push_back(std::move(x));
  return exporters::SerializeText(f);
}

TEST(DatapathExposition, PathIoUnderTheAgentsNamesPerOp) {
  const std::string text = Text(View());
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_path_io_completed_total{",
                                           kP0, ",op=\"read\"} 2\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_path_io_bytes_total{", kP0,
                                           ",op=\"write\"} 8192\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_path_io_completed_total{",
                                           kP0, ",op=\"other\"} 1\n")));
  EXPECT_THAT(
      text, HasSubstr(absl::StrCat("pathwise_path_io_time_seconds_total{", kP0,
                                   ",op=\"read\"} 0.0031\n")));
  // The histogram: coarse buckets, the sum being the exact latency sum.
  EXPECT_THAT(text,
              HasSubstr(absl::StrCat("pathwise_path_io_latency_seconds_count{",
                                     kP0, ",op=\"read\"} 2\n")));
  EXPECT_THAT(
      text, HasSubstr(absl::StrCat("pathwise_path_io_latency_seconds_sum{", kP0,
                                   ",op=\"read\"} 0.0031\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "pathwise_path_io_latency_seconds_bucket{", kP0,
                        ",op=\"read\",le=\"0.000131072\"} 1\n")));
  // Reads and writes always have their counters; an op never seen has none.
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_path_io_completed_total{",
                                           kP1, ",op=\"write\"} 0\n")));
  EXPECT_THAT(text, Not(HasSubstr("op=\"discard\"")));
  // The device is the head: its I/O the sum of its paths'.
  EXPECT_THAT(text, HasSubstr("pathwise_head_io_completed_total{subsystem="
                              "\"nvme-subsys3\",head=\"ublkb0\",op=\"read\"} "
                              "3\n"));
  EXPECT_THAT(text, HasSubstr("pathwise_head_info{subsystem=\"nvme-subsys3\","
                              "head=\"ublkb0\",nsid=\"1\"} 1\n"));
}

TEST(DatapathExposition, FineBucketsOnRequest) {
  const std::string text = Text(View(), exporters::HistogramBuckets::kFine);
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "pathwise_path_io_latency_seconds_bucket{", kP0,
                        ",op=\"read\",le=\"0.000114688\"} 1\n")));
}

TEST(DatapathExposition, ErrorsFailoversStateUnderTheAgentsNames) {
  const std::string text = Text(View());
  EXPECT_THAT(text,
              HasSubstr(absl::StrCat("pathwise_path_nvme_errors_total{", kP0,
                                     ",status_class=\"path\"} 1\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_path_failovers_total{",
                                           kP0, "} 1\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_path_ana_state{", kP0,
                                           ",state=\"optimized\"} 1\n")));
  // Path 1's ANA state is unknown: no StateSet, as the agent does.
  EXPECT_THAT(text,
              Not(HasSubstr(absl::StrCat("pathwise_path_ana_state{", kP1))));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_path_info{", kP0,
                                           ",transport=\"tcp\",address=\"\"} "
                                           "1\n")));
  EXPECT_THAT(text, HasSubstr("pathwise_controller_state{controller=\"nvme1\","
                              "state=\"live\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("pathwise_subsystem_info{subsystem=\"nvme-"
                              "subsys3\",nqn=\"nqn.2014-08.org.example:ns\""));
}

TEST(DatapathExposition, DatapathOnlyFamilies) {
  const std::string text = Text(View());
  EXPECT_THAT(text, HasSubstr("pathwise_datapath_info{device=\"ublkb0\","
                              "subsystem=\"nvme-subsys3\",namespace=\"uuid."
                              "0000-1\",policy=\"queue-depth\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("pathwise_datapath_requests_total{device="
                              "\"ublkb0\"} 5\n"));
  EXPECT_THAT(text, HasSubstr("pathwise_datapath_no_path_waits_total{device="
                              "\"ublkb0\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr(absl::StrCat("pathwise_datapath_path_selections_total{",
                                     kP0, ",policy=\"queue-depth\"} 5\n")));
  EXPECT_THAT(text,
              HasSubstr(absl::StrCat("pathwise_datapath_path_timeouts_total{",
                                     kP1, "} 1\n")));
  EXPECT_THAT(
      text, HasSubstr(absl::StrCat(
                "pathwise_datapath_path_probe_failures_total{", kP1, "} 2\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "pathwise_datapath_path_transport_errors_total{", kP1,
                        "} 1\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_datapath_path_state{", kP0,
                                           ",state=\"usable\"} 1\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_datapath_path_state{", kP1,
                                           ",state=\"failed\"} 1\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_datapath_path_state{", kP1,
                                           ",state=\"usable\"} 0\n")));
}

TEST(DatapathExposition, AnaStateThatAllowsNoIo) {
  DatapathView v = View();
  v.status[0].ana = model::AnaState::kInaccessible;
  const std::string text = Text(v);
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_datapath_path_state{", kP0,
                                           ",state=\"ana_unusable\"} 1\n")));
}

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

TEST(DatapathExposition, ReadControllersFromSysfs) {
  // A directory of its own: ctest runs tests in parallel.
  std::string tmpl = ::testing::TempDir() + "/dp_sysfs-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const fs::path root = tmpl;
  for (int i : {0, 1}) {
    const fs::path c = root / "class/nvme" / ("nvme" + std::to_string(i));
    Write(c / "transport", "tcp");
    Write(c / "address",
          "traddr=10.0.0." + std::to_string(i) + ",trsvcid=4420");
    Write(c / "state", i == 0 ? "live" : "connecting");
    Write(c / "cntlid", std::to_string(i + 1));
    fs::create_directories(root / "class/nvme-subsystem/nvme-subsys3" /
                           ("nvme" + std::to_string(i)));
  }
  DatapathView v = View();
  std::vector<std::string> subsystems;
  std::vector<model::Controller> controllers;
  EXPECT_TRUE(
      ReadControllers(root.string(), v.group, &subsystems, &controllers).ok());
  ASSERT_EQ(controllers.size(), 2u);
  EXPECT_EQ(subsystems[1], "nvme-subsys3");
  EXPECT_EQ(controllers[1].state, model::ControllerState::kConnecting);
  EXPECT_EQ(controllers[0].address, "traddr=10.0.0.0,trsvcid=4420");
  EXPECT_EQ(controllers[1].cntlid, "2");
  fs::remove_all(root / "class/nvme/nvme1/state");
  EXPECT_FALSE(
      ReadControllers(root.string(), v.group, &subsystems, &controllers).ok());
  fs::remove_all(root);
}

TEST(DatapathExposition, RoutesServeMetricsAndHealth) {
  DatapathView v = View();
  exporters::HttpRoutes routes =
      DatapathRoutes([&v] { return v; }, "/nonexistent", kBuild,
                     exporters::HistogramBuckets::kCoarse, nullptr);
  const exporters::HttpResponse m = routes.at("/metrics")();
  EXPECT_EQ(m.status, 200);
  EXPECT_THAT(m.Body(), HasSubstr("pathwise_datapath_info{device=\"ublkb0\""));
  // The sysfs read failed: the collector says so, the rest is exported.
  EXPECT_THAT(
      m.Body(),
      HasSubstr("pathwise_collector_success{collector=\"datapath\"} 0"));
  exporters::HttpRequest proto;
  proto.query = "format=protobuf";
  EXPECT_EQ(routes.at("/metrics")(proto).content_type,
            exporters::kProtobufContentType);
  exporters::HttpResponse h = routes.at("/healthz")();
  EXPECT_EQ(h.status, 200);
  EXPECT_THAT(h.Body(), HasSubstr("path nvme1n1: failed, probing"));
  v.status[0].failed = true;
  h = routes.at("/healthz")();
  EXPECT_EQ(h.status, 503);
  EXPECT_THAT(h.Body(), HasSubstr("no usable path"));
}

TEST(DatapathExposition, PromtoolAcceptsIt) {
  for (auto b : {exporters::HistogramBuckets::kCoarse,
                 exporters::HistogramBuckets::kFine}) {
    testing_util::ExpectPromtoolAccepts(Text(View(), b), "datapath.prom");
  }
}

}  // namespace
}  // namespace pathwise::datapath
