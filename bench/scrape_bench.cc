// SPDX-License-Identifier: Apache-2.0
// Renders /metrics (and /api/v1/snapshot) for a synthetic topology: what one
// scrape costs, in each exposition.
// 256 paths = 4 subsystems × 16 heads × 4 controllers (paths per head), with
// eBPF-style statistics: per path and head, read/write/flush latency
// histograms (~40 populated kernel buckets each) and discard with no I/O.
// The goal is ≤ 3 ms and ≤ 1.5 MB per scrape of 256 paths in the default
// metrics profile, ≤ 50 series for a busy path (--metrics.profile). Run via
// the bench_scrape_json target, which writes bench/results/scrape.json.
#include <algorithm>
#include <memory>
#include <sstream>
#include <string>

#include "benchmark/benchmark.h"
#include "exporters/prometheus_families.h"
#include "exporters/prometheus_protobuf.h"
#include "exporters/topology_json.h"
#include "model/snapshot_store.h"
#include "model/synthetic.h"
#include "prometheus/text_serializer.h"

namespace pathwise {
namespace {

model::SyntheticShape ShapeFor(int paths) {
  // 4 controllers per subsystem, 16 heads per subsystem.
  return {.subsystems = std::max(1, paths / 64),
          .heads_per_subsystem = 16,
          .controllers_per_subsystem = 4,
          .bpf = true};
}

// The full profile (today's exposition: coarse text, fine text, protobuf)
// and the default one (--metrics.profile=default: sparse text, protobuf).
enum Exposition { kCoarse, kFine, kProtobuf, kDefault, kDefaultProtobuf };

bool IsProtobuf(Exposition e) {
  return e == kProtobuf || e == kDefaultProtobuf;
}

exporters::ExpositionOptions Options(Exposition e) {
  using exporters::HistogramBuckets;
  using exporters::MetricsProfile;
  switch (e) {
    case kCoarse:
      return {HistogramBuckets::kCoarse, MetricsProfile::kFull};
    case kFine:
    case kProtobuf:
      return {HistogramBuckets::kFine, MetricsProfile::kFull};
    case kDefault:
      return {HistogramBuckets::kSparse, MetricsProfile::kDefault};
    case kDefaultProtobuf:
      return {HistogramBuckets::kFine, MetricsProfile::kDefault};
  }
  return {};
}

const char* Name(Exposition e) {
  switch (e) {
    case kCoarse:
      return "full coarse";
    case kFine:
      return "full fine";
    case kProtobuf:
      return "full protobuf";
    case kDefault:
      return "default";
    case kDefaultProtobuf:
      return "default protobuf";
  }
  return "";
}

std::string Render(const model::Snapshot* snap, Exposition e) {
  const auto fams =
      exporters::BuildFamilies(snap, {"bench", "bench"}, Options(e));
  return IsProtobuf(e) ? exporters::SerializeProtobuf(fams)
                       : exporters::SerializeText(fams);
}

// Series as Prometheus stores them: one per text sample line; in protobuf,
// one per metric, but a classic histogram's _count, _sum and buckets. With
// `path`, only the series of that path.
size_t Series(const model::Snapshot& snap, Exposition e,
              const std::string* path = nullptr) {
  const auto fams =
      exporters::BuildFamilies(&snap, {"bench", "bench"}, Options(e));
  size_t n = 0;
  for (const auto& f : fams) {
    for (const auto& m : f.metric) {
      if (path != nullptr &&
          std::none_of(m.label.begin(), m.label.end(), [&](const auto& l) {
            return l.name == "path" && l.value == *path;
          })) {
        continue;
      }
      if (f.type != prometheus::MetricType::Histogram) {
        ++n;
      } else if (IsProtobuf(e)) {
        ++n;  // one native histogram series
      } else {
        n += 2 + m.histogram.bucket.size();  // _count, _sum, buckets
      }
    }
  }
  return n;
}

// The full /metrics handler: the families of the stored snapshot, rendered
// in one exposition. Arg 0: paths; arg 1: an Exposition.
void BM_Scrape(benchmark::State& state) {
  model::SnapshotStore store;
  store.Publish(std::make_shared<model::Snapshot>(model::MakeSyntheticSnapshot(
      ShapeFor(static_cast<int>(state.range(0))))));
  const auto e = static_cast<Exposition>(state.range(1));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string body = Render(store.Load().get(), e);
    bytes = body.size();
    benchmark::DoNotOptimize(body);
  }
  const auto snap = store.Load();
  const double paths = static_cast<double>(snap->topology.paths.size());
  state.SetLabel(Name(e));
  state.counters["paths"] = paths;
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["bytes_per_path"] = static_cast<double>(bytes) / paths;
  state.counters["series"] = static_cast<double>(Series(*snap, e));
  state.counters["series_per_path"] =
      static_cast<double>(Series(*snap, e)) / paths;
  // The series of one busy path alone (reads, writes and flushes).
  state.counters["series_of_a_path"] =
      static_cast<double>(Series(*snap, e, &snap->topology.paths.front().name));
}
BENCHMARK(BM_Scrape)
    ->Args({256, kDefault})
    ->Args({256, kDefaultProtobuf})
    ->Args({256, kCoarse})
    ->Args({256, kFine})
    ->Args({256, kProtobuf})
    ->Args({1024, kDefault})
    ->Args({1024, kCoarse})
    ->Unit(benchmark::kMillisecond);

// What a scrape cost before coarse buckets and the direct text writer: the
// fine buckets through prometheus-cpp's TextSerializer (ostream-based).
void BM_ScrapeBefore(benchmark::State& state) {
  const model::Snapshot snap = model::MakeSyntheticSnapshot(ShapeFor(256));
  size_t bytes = 0;
  for (auto _ : state) {
    std::ostringstream os;
    prometheus::TextSerializer().Serialize(
        os, exporters::BuildFamilies(&snap, {"bench", "bench"},
                                     {exporters::HistogramBuckets::kFine}));
    std::string body = os.str();
    bytes = body.size();
    benchmark::DoNotOptimize(body);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ScrapeBefore)->Unit(benchmark::kMillisecond);

// The two halves of a coarse text scrape: building families, and
// serializing them.
void BM_BuildFamilies(benchmark::State& state) {
  const model::Snapshot snap = model::MakeSyntheticSnapshot(ShapeFor(256));
  const auto options = Options(static_cast<Exposition>(state.range(0)));
  for (auto _ : state) {
    auto fams = exporters::BuildFamilies(&snap, {"bench", "bench"}, options);
    benchmark::DoNotOptimize(fams);
  }
  state.SetLabel(Name(static_cast<Exposition>(state.range(0))));
}
BENCHMARK(BM_BuildFamilies)
    ->Arg(kDefault)
    ->Arg(kCoarse)
    ->Unit(benchmark::kMillisecond);

void BM_Serialize(benchmark::State& state) {
  const model::Snapshot snap = model::MakeSyntheticSnapshot(ShapeFor(256));
  const auto fams = exporters::BuildFamilies(
      &snap, {"bench", "bench"},
      Options(static_cast<Exposition>(state.range(0))));
  for (auto _ : state) {
    std::string body = exporters::SerializeText(fams);
    benchmark::DoNotOptimize(body);
  }
  state.SetLabel(Name(static_cast<Exposition>(state.range(0))));
}
BENCHMARK(BM_Serialize)
    ->Arg(kDefault)
    ->Arg(kCoarse)
    ->Unit(benchmark::kMillisecond);

// /api/v1/snapshot: the whole snapshot as compact JSON (what a terminal view
// polls).
void BM_SnapshotJson(benchmark::State& state) {
  const model::Snapshot snap =
      model::MakeSyntheticSnapshot(ShapeFor(static_cast<int>(state.range(0))));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string body = exporters::SnapshotToJson(snap).dump();
    bytes = body.size();
    benchmark::DoNotOptimize(body);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_SnapshotJson)->Arg(256)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pathwise

BENCHMARK_MAIN();
