// Renders /metrics (and /api/v1/snapshot) for a synthetic topology: what one
// scrape costs.
// 256 paths = 4 subsystems × 16 heads × 4 controllers (paths per head).
// The goal is ≤ 20 ms per scrape of 256 paths. Run via the bench_scrape_json
// target, which writes bench/results/scrape.json.
#include <memory>

#include "benchmark/benchmark.h"
#include "exporters/prometheus_families.h"
#include "exporters/topology_json.h"
#include "model/snapshot_store.h"
#include "model/synthetic.h"

namespace pathwise {
namespace {

model::SyntheticShape ShapeFor(int paths) {
  // 4 controllers per subsystem, 16 heads per subsystem.
  return {.subsystems = std::max(1, paths / 64),
          .heads_per_subsystem = 16,
          .controllers_per_subsystem = 4};
}

// The full /metrics handler: Collect() from the store + TextSerializer.
void BM_Scrape(benchmark::State& state) {
  model::SnapshotStore store;
  store.Publish(std::make_shared<model::Snapshot>(model::MakeSyntheticSnapshot(
      ShapeFor(static_cast<int>(state.range(0))))));
  const exporters::SnapshotCollectable collectable(store, {"bench", "bench"});
  size_t bytes = 0;
  for (auto _ : state) {
    std::string body = exporters::SerializeText(collectable.Collect());
    bytes = body.size();
    benchmark::DoNotOptimize(body);
  }
  state.counters["paths"] =
      static_cast<double>(store.Load()->topology.paths.size());
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Scrape)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

// The two halves separately: building families, and serializing them.
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
