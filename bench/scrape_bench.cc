// Renders /metrics (and /api/v1/snapshot) for a synthetic topology: what one
// scrape costs, in each exposition.
// 256 paths = 4 subsystems × 16 heads × 4 controllers (paths per head), with
// eBPF-style statistics: per path and head, read/write/flush latency
// histograms (~40 populated kernel buckets each) and discard with no I/O.
// The goal is ≤ 5 ms per scrape of 256 paths. Run via the bench_scrape_json
// target, which writes bench/results/scrape.json.
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

enum Exposition { kCoarse, kFine, kProtobuf };

std::string Render(const model::Snapshot* snap, Exposition e) {
  const exporters::BuildInfo build{"bench", "bench"};
  if (e == kProtobuf) {
    return exporters::SerializeProtobuf(exporters::BuildFamilies(
        snap, build, {exporters::HistogramBuckets::kFine}));
  }
  return exporters::SerializeText(exporters::BuildFamilies(
      snap, build,
      {e == kCoarse ? exporters::HistogramBuckets::kCoarse
                    : exporters::HistogramBuckets::kFine}));
}

// Series as Prometheus stores them: one per text sample line; in protobuf,
// one per metric, but a classic histogram's _count, _sum and buckets.
size_t Series(const model::Snapshot& snap, Exposition e) {
  const auto fams = exporters::BuildFamilies(
      &snap, {"bench", "bench"},
      {e == kCoarse ? exporters::HistogramBuckets::kCoarse
                    : exporters::HistogramBuckets::kFine});
  size_t n = 0;
  for (const auto& f : fams) {
    for (const auto& m : f.metric) {
      if (f.type != prometheus::MetricType::Histogram) {
        ++n;
      } else if (e == kProtobuf) {
        ++n;  // one native histogram series
      } else {
        n += 2 + m.histogram.bucket.size();  // _count, _sum, buckets
      }
    }
  }
  return n;
}

// The full /metrics handler: the families of the stored snapshot, rendered
// in one exposition. Arg 0: paths; arg 1: 0 coarse text, 1 fine text, 2
// protobuf with native histograms.
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
  state.SetLabel(e == kCoarse ? "coarse" : e == kFine ? "fine" : "protobuf");
  state.counters["paths"] = paths;
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["bytes_per_path"] = static_cast<double>(bytes) / paths;
  state.counters["series"] = static_cast<double>(Series(*snap, e));
  state.counters["series_per_path"] =
      static_cast<double>(Series(*snap, e)) / paths;
}
BENCHMARK(BM_Scrape)
    ->Args({256, kCoarse})
    ->Args({256, kFine})
    ->Args({256, kProtobuf})
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
  for (auto _ : state) {
    auto fams = exporters::BuildFamilies(&snap, {"bench", "bench"});
    benchmark::DoNotOptimize(fams);
  }
}
BENCHMARK(BM_BuildFamilies)->Unit(benchmark::kMillisecond);

void BM_Serialize(benchmark::State& state) {
  const model::Snapshot snap = model::MakeSyntheticSnapshot(ShapeFor(256));
  const auto fams = exporters::BuildFamilies(&snap, {"bench", "bench"});
  for (auto _ : state) {
    std::string body = exporters::SerializeText(fams);
    benchmark::DoNotOptimize(body);
  }
}
BENCHMARK(BM_Serialize)->Unit(benchmark::kMillisecond);

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
