// SPDX-License-Identifier: Apache-2.0
// --metrics.profile: the default exposition of a busy topology costs at most
// 50 series per path with reads and writes, family by family as the
// README's table says; every default sample is a full one with the same
// value; a head's I/O is its paths' sums; promtool accepts it.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "exporters/prometheus_families.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"
#include "scoring/stage.h"
#include "tests/unit/golden.h"
#include "tests/unit/promtool.h"

namespace pathwise::exporters {
namespace {

const BuildInfo kBuild{"0.0.0-test", "golden"};
const ExpositionOptions kDefault{.histogram_buckets = HistogramBuckets::kSparse,
                                 .profile = MetricsProfile::kDefault};
const ExpositionOptions kFull{};  // today's exposition

// A busy topology as the agent sees it with the eBPF sampler on a kernel
// with diag/ counters: 2 heads x 2 paths, every path with reads and writes
// (and flushes with `flush`), no errors, scored over two windows by the
// real scoring stage.
model::Snapshot Busy(bool flush) {
  model::Snapshot s =
      model::MakeSyntheticSnapshot({.subsystems = 1,
                                    .heads_per_subsystem = 2,
                                    .controllers_per_subsystem = 2,
                                    .bpf = true});
  for (auto& [name, io] : s.path_io) {
    io.op(model::Op::kWrite)->errors = 0;
    if (!flush) {
      *io.op(model::Op::kFlush) = {.errors = 0,
                                   .latency = model::LatencyHistogram{}};
    }
  }
  for (model::Path& p : s.topology.paths) {
    p.diag = {.failovers = 0, .command_retries = 0, .command_errors = 0};
    s.path_nvme[p.name].errors_by_class.emplace();
    s.path_nvme[p.name].errors_by_class->fill(0);
  }
  scoring::ScoringStage stage({});
  auto idle = s.path_io;
  for (auto& [name, io] : idle) {
    for (auto& op : io.ops) {
      if (op) op = model::OpStats{};
    }
  }
  stage.Score(s.topology, idle, s.path_nvme);
  s.scoring = stage.Score(s.topology, s.path_io, s.path_nvme);
  return s;
}

// Series per family that carry path="`path`": a histogram counts its
// buckets, _sum and _count.
std::map<std::string, size_t> PathSeries(
    const std::vector<prometheus::MetricFamily>& fams,
    const std::string& path) {
  std::map<std::string, size_t> out;
  for (const auto& f : fams) {
    for (const auto& m : f.metric) {
      bool on_path = false;
      for (const auto& l : m.label)
        on_path |= l.name == "path" && l.value == path;
      if (!on_path) continue;
      out[f.name] += f.type == prometheus::MetricType::Histogram
                         ? m.histogram.bucket.size() + 2
                         : 1;
    }
  }
  return out;
}

size_t Sum(const std::map<std::string, size_t>& m) {
  size_t n = 0;
  for (const auto& [name, count] : m) n += count;
  return n;
}

// The sample lines of a text exposition, as "name{labels}" -> value.
std::map<std::string, std::string> Samples(const std::string& text) {
  std::map<std::string, std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    out[std::string(line.substr(0, space))] =
        std::string(line.substr(space + 1));
  }
  return out;
}

TEST(MetricsProfile, BusyPathWithReadsAndWritesCostsAtMost50) {
  const model::Snapshot s = Busy(/*flush=*/false);
  const std::string& path = s.topology.paths[0].name;
  const auto fams = BuildFamilies(&s, kBuild, kDefault);
  const std::map<std::string, size_t> got = PathSeries(fams, path);
  // What each family costs (README "What earns a series by default").
  const std::map<std::string, size_t> want = {
      {"pathwise_path_info", 1},
      {"pathwise_path_ana_state", 1},           // the current state only
      {"pathwise_path_io_completed_total", 2},  // read, write
      {"pathwise_path_io_bytes_total", 2},
      // 12 sparse buckets, _sum, _count; read and write. No
      // io_time_seconds_total: the histograms' _sum is that counter.
      {"pathwise_path_io_latency_seconds", 2 * 14},
      {"pathwise_path_latency_ewma_seconds", 2},  // read, write groups
      {"pathwise_path_weight", 3},                // every op group
      {"pathwise_path_score", 1},
      {"pathwise_path_health", 1},  // the current state only
      {"pathwise_path_sample_age_seconds", 1},
      {"pathwise_path_io_retries_total", 1},
      {"pathwise_path_failovers_total", 1},
      {"pathwise_path_diag_failovers_total", 1},
      {"pathwise_path_diag_command_retries_total", 1},
      {"pathwise_path_diag_command_errors_total", 1},
  };
  EXPECT_EQ(got, want);
  EXPECT_EQ(Sum(got), 47u);
  EXPECT_LE(Sum(got), 50u);
  // The text exposition has exactly these lines for the path.
  size_t lines = 0;
  for (const auto& [series, value] : Samples(SerializeText(fams))) {
    lines += series.find("path=\"" + path + "\"") != std::string::npos;
  }
  EXPECT_EQ(lines, Sum(got));

  const std::map<std::string, size_t> full =
      PathSeries(BuildFamilies(&s, kBuild, kFull), path);
  EXPECT_EQ(Sum(full), 98u) << "full profile, same path";
  RecordProperty("series_per_path_default", static_cast<int>(Sum(got)));
  RecordProperty("series_per_path_full", static_cast<int>(Sum(full)));
}

TEST(MetricsProfile, FlushesAddTheirCountersAndGroup) {
  // A flush has no latency histogram by default (sparse buckets: read, write
  // and passthru only) and no bytes; its mean latency is time / completed.
  const model::Snapshot s = Busy(/*flush=*/true);
  const auto got =
      PathSeries(BuildFamilies(&s, kBuild, kDefault), s.topology.paths[0].name);
  EXPECT_EQ(got.at("pathwise_path_io_completed_total"), 3u);
  EXPECT_EQ(got.at("pathwise_path_io_bytes_total"), 2u);
  EXPECT_EQ(got.at("pathwise_path_io_time_seconds_total"), 1u);  // flush
  EXPECT_EQ(got.at("pathwise_path_io_latency_seconds"), 2u * 14);
  EXPECT_EQ(got.at("pathwise_path_latency_ewma_seconds"), 3u);
  EXPECT_EQ(Sum(got), 50u);
}

TEST(MetricsProfile, EveryDefaultSampleIsAFullOneWithTheSameValue) {
  for (bool flush : {false, true}) {
    const model::Snapshot s = Busy(flush);
    const auto def =
        Samples(SerializeText(BuildFamilies(&s, kBuild, kDefault)));
    const auto full = Samples(SerializeText(BuildFamilies(&s, kBuild, kFull)));
    ASSERT_GT(def.size(), 100u);
    for (const auto& [series, value] : def) {
      auto it = full.find(series);
      ASSERT_NE(it, full.end()) << series << " is not in the full exposition";
      EXPECT_EQ(it->second, value) << series;
    }
    EXPECT_LT(def.size(), full.size() / 2);
  }
}

TEST(MetricsProfile, WhatTheDefaultLeavesOut) {
  model::Snapshot s = Busy(/*flush=*/false);
  s.topology.paths[1].ana_state = model::AnaState::kInaccessible;
  const auto fams = BuildFamilies(&s, kBuild, kDefault);
  std::set<std::string> names;
  for (const auto& f : fams) names.insert(f.name);
  // Heads: only the in-flight gauge; the rest is the paths' sums.
  for (const char* gone :
       {"pathwise_head_io_completed_total", "pathwise_head_io_bytes_total",
        "pathwise_head_io_time_seconds_total",
        "pathwise_head_io_latency_seconds", "pathwise_head_io_errors_total",
        "pathwise_path_nvme_errors_total", "pathwise_path_io_errors_total"}) {
    EXPECT_FALSE(names.contains(gone)) << gone;
  }
  EXPECT_TRUE(names.contains("pathwise_head_io_inflight"));
  const auto text = Samples(SerializeText(fams));
  for (const auto& [series, value] : text) {
    // No op without I/O, no StateSet member that is not the current state.
    EXPECT_EQ(series.find("op=\"discard\""), std::string::npos) << series;
    EXPECT_EQ(series.find("op=\"flush\""), std::string::npos) << series;
    if (series.starts_with("pathwise_path_ana_state{") ||
        series.starts_with("pathwise_path_health{")) {
      EXPECT_EQ(value, "1") << series;
    }
  }
  EXPECT_EQ(
      text.count("pathwise_path_ana_state{subsystem=\"nvme-subsys0\","
                 "head=\"" +
                 s.topology.paths[1].head + "\",path=\"" +
                 s.topology.paths[1].name + "\",controller=\"" +
                 s.topology.paths[1].controller + "\",state=\"inaccessible\"}"),
      1u);
  // An error class, a block-layer error: their series appear once nonzero.
  s.path_nvme[s.topology.paths[0].name].errors_by_class->at(0) = 2;
  s.path_io[s.topology.paths[0].name].op(model::Op::kWrite)->errors = 1;
  const auto again = BuildFamilies(&s, kBuild, kDefault);
  const auto p0 = PathSeries(again, s.topology.paths[0].name);
  EXPECT_EQ(p0.at("pathwise_path_nvme_errors_total"), 1u);
  EXPECT_EQ(p0.at("pathwise_path_io_errors_total"), 1u);
}

TEST(MetricsProfile, AHeadsSeriesAreItsPathsSums) {
  const model::Snapshot s = Busy(/*flush=*/true);
  const auto def = Samples(SerializeText(BuildFamilies(&s, kBuild, kDefault)));
  const auto full = Samples(SerializeText(BuildFamilies(&s, kBuild, kFull)));
  // sum by (subsystem, head, op) of the default's path counters and buckets
  // = the full profile's head series.
  std::map<std::string, double> sums;
  for (const auto& [series, value] : def) {
    if (!series.starts_with("pathwise_path_io_") ||
        series.starts_with("pathwise_path_io_retries_total")) {
      continue;
    }
    std::string head_series = series;
    head_series.replace(0, sizeof("pathwise_path_io_") - 1,
                        "pathwise_head_io_");
    // Drop path and controller: subsystem,head,path,controller,op...
    const size_t path_at = head_series.find(",path=\"");
    const size_t rest =
        head_series.find(",", head_series.find("controller=\"", path_at) + 12);
    head_series.erase(path_at, rest - path_at);
    sums[head_series] += std::stod(value);
  }
  ASSERT_GT(sums.size(), 20u);
  for (const auto& [series, sum] : sums) {
    auto it = full.find(series);
    ASSERT_NE(it, full.end()) << series;
    EXPECT_NEAR(std::stod(it->second), sum, 1e-9 * sum) << series;
  }
}

TEST(MetricsProfile, PromtoolAcceptsTheDefaultExposition) {
  const model::Snapshot s = Busy(/*flush=*/true);
  testing_util::ExpectPromtoolAccepts(
      SerializeText(BuildFamilies(&s, kBuild, kDefault)), "default.prom");
}

// Every part a snapshot can have but --queues (controller probes, the
// iopolicy actuator, --head_iostats) on the busy topology, in both
// profiles: tests/deploy/check-default-profile.mjs reads these to prove
// that each family a dashboard, rule or alert queries is in the default
// exposition.
TEST(MetricsProfile, EverythingGolden) {
  model::Snapshot s = Busy(/*flush=*/true);
  for (const model::Controller& c : s.topology.controllers) {
    model::ControllerProbeStats& probe = s.controller_probe[c.name];
    probe.latency.Observe(150'000, 10);
    probe.latency_sum_ns = 1'500'000;
    probe.failures[model::Index(model::ProbeFailure::kTimeout)] = 1;
  }
  s.actuator.emplace();
  s.actuator->mode = model::ActuateMode::kOn;
  s.actuator->decisions_total[{
      s.topology.subsystems[0].name, model::Iopolicy::kNuma,
      model::Iopolicy::kRoundRobin, model::DecisionResult::kApplied}] = 1;
  s.head_iostats.emplace();
  s.head_iostats->mode = model::HeadIostatsMode::kOff;
  s.head_iostats->heads_off = 2;
  s.head_iostats->changes_total[{
      .restore = false, .result = model::DecisionResult::kApplied}] = 2;
  const std::string def = SerializeText(BuildFamilies(&s, kBuild, kDefault));
  const std::string full = SerializeText(BuildFamilies(&s, kBuild, kFull));
  testing::ExpectMatchesGolden(def, "everything.default.prom");
  testing::ExpectMatchesGolden(full, "everything.prom");
  testing_util::ExpectPromtoolAccepts(def, "everything.default.prom");
}

}  // namespace
}  // namespace pathwise::exporters
