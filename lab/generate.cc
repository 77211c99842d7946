// SPDX-License-Identifier: Apache-2.0
#include "lab/generate.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "exporters/labels.h"  // the kernel's ANA spelling, which .scn takes
#include "lab/random.h"

namespace pathwise::lab {
namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kDuration = 20 * kSec;

// Log-uniform in [lo, hi].
double LogUniform(Rng& rng, double lo, double hi) {
  return std::exp(std::log(lo) + rng.Uniform() * (std::log(hi) - std::log(lo)));
}

int UniformInt(Rng& rng, int lo, int hi) {  // [lo, hi]
  return lo + static_cast<int>(rng.Uniform() * (hi - lo + 1));
}

template <typename T>
T Pick(Rng& rng, const std::vector<T>& from) {
  return from[static_cast<size_t>(rng.Uniform() * from.size())];
}

// 0..4 events, each a disturbance of one path and its end, with no two
// disturbances overlapping in time: one path always serves.
void DrawEvents(Rng& rng, Scenario& s) {
  const int n = UniformInt(rng, 0, 4);
  int64_t free_from = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t slot = kDuration / n;
    const int64_t start = std::max(
        free_from, i * slot + static_cast<int64_t>(rng.Uniform() * (slot / 2)));
    const int64_t length = static_cast<int64_t>(LogUniform(rng, 1, 10) * kSec);
    const int64_t end = std::min(start + length, (i + 1) * slot);
    free_from = end;
    const int path = UniformInt(rng, 0, static_cast<int>(s.paths.size()) - 1);
    Event on{.at_ns = start, .path = path};
    Event off{.at_ns = end, .path = path};
    switch (UniformInt(rng, 0, 3)) {
      case 0:  // a delay step
        on.kind = off.kind = EventKind::kDelay;
        on.delay_ns =
            static_cast<int64_t>(LogUniform(rng, 1, 50) *
                                 static_cast<double>(s.paths[path].latency_ns));
        break;
      case 1:  // loss for a while
        on.kind = off.kind = EventKind::kLoss;
        on.loss = std::round(LogUniform(rng, 0.01, 0.10) * 1000) / 1000;
        break;
      case 2:  // a flap
        on.kind = EventKind::kDown;
        off.kind = EventKind::kUp;
        break;
      default:  // an ANA change and back
        on.kind = off.kind = EventKind::kAna;
        on.ana = rng.Uniform() < 0.5 ? model::AnaState::kInaccessible
                                     : model::AnaState::kNonOptimized;
        off.ana = model::AnaState::kOptimized;
        break;
    }
    s.events.push_back(on);
    if (end < kDuration) s.events.push_back(off);
  }
}

}  // namespace

Scenario DrawScenario(uint64_t seed, int index) {
  Rng rng(seed * 1'000'003 + static_cast<uint64_t>(index));
  Scenario s;
  s.name = absl::StrCat("gen-", seed, "-", index);
  s.duration_ns = kDuration;
  s.seed = seed + static_cast<uint64_t>(index);
  const int paths = UniformInt(rng, 2, 8);
  const double base_ns = LogUniform(rng, 20 * kUs, 40 * kMs);
  const bool capacity_bound = rng.Uniform() < 0.5;
  for (int i = 0; i < paths; ++i) {
    PathSpec p;
    p.name = absl::StrCat("p", i);
    const double rtt = i == 0 ? base_ns : base_ns * LogUniform(rng, 0.5, 4);
    p.latency_ns = std::max<int64_t>(1000, static_cast<int64_t>(rtt));
    p.spread_ns = static_cast<int64_t>(rng.Uniform() * 0.5 *
                                       static_cast<double>(p.latency_ns));
    if (capacity_bound) {
      p.parallelism = Pick<int>(rng, {16, 32, 64, 128});
      p.service_ns = static_cast<int64_t>(LogUniform(rng, 50 * kUs, 4 * kMs));
    } else {
      p.parallelism = 0;
      p.service_ns = static_cast<int64_t>(LogUniform(rng, 20 * kUs, 2 * kMs));
    }
    if (rng.Uniform() < 0.4) {  // writes cost 0.25x..4x a read
      p.write_service_ns = static_cast<int64_t>(
          LogUniform(rng, 0.25, 4) * static_cast<double>(p.service_ns));
    }
    // Every path has a link: 30 % a slow one (100 MiB/s..1 GiB/s), else
    // 1..12.5 GB/s (10-100 Gbit/s Ethernet, PCIe).
    p.bandwidth = std::round(rng.Uniform() < 0.3
                                 ? LogUniform(rng, 100.0 * (1 << 20), 1 << 30)
                                 : LogUniform(rng, 1e9, 12.5e9));
    if (i > 0 && rng.Uniform() < 0.1) {
      p.ana = model::AnaState::kNonOptimized;  // path 0 stays optimized
    }
    s.paths.push_back(p);
  }
  Workload& w = s.workload;
  w.numjobs = static_cast<int>(std::round(LogUniform(rng, 1, 64)));
  w.iodepth = static_cast<int>(std::round(LogUniform(rng, 1, 128)));
  while (w.numjobs * w.iodepth > 8192) w.iodepth /= 2;
  w.bs =
      Pick<uint32_t>(rng, {4096, 8192, 16384, 65536, 131072, 262144, 1048576});
  w.read_fraction = Pick<double>(rng, {1.0, 0.7, 0.5, 0.0});
  // The host: 1..16 CPUs (at most one per job), 2..20 us of CPU per I/O.
  w.cpus = std::min(w.numjobs, Pick<int>(rng, {1, 2, 4, 8, 16}));
  w.cpu_per_io_ns = static_cast<int64_t>(LogUniform(rng, 2 * kUs, 20 * kUs));
  DrawEvents(rng, s);
  std::stable_sort(
      s.events.begin(), s.events.end(),
      [](const Event& a, const Event& b) { return a.at_ns < b.at_ns; });
  s.description = absl::StrFormat(
      "drawn: %d paths, %s target, round trip from %.0f us; %d jobs x "
      "iodepth %d on %d CPUs, bs %u, read %.0f%%; %d events",
      paths, capacity_bound ? "capacity-bound" : "latency-bound", base_ns / kUs,
      w.numjobs, w.iodepth, w.cpus, w.bs, w.read_fraction * 100,
      static_cast<int>(s.events.size()));
  return s;
}

std::string ScenarioText(const Scenario& s) {
  std::string out = absl::StrCat(
      "# Drawn by pathwise lab's scenario generator (lab/generate.h).\n\n",
      "[scenario]\nname = ", s.name, "\ndescription = ", s.description,
      "\nduration = ", s.duration_ns, "ns\nseed = ", s.seed, "\n\n");
  const Workload& w = s.workload;
  absl::StrAppend(&out, "[workload]\nnumjobs = ", w.numjobs,
                  "\niodepth = ", w.iodepth, "\nbs = ", w.bs,
                  "\nread = ", absl::StrFormat("%.17g", w.read_fraction), "\n");
  if (w.cpus != 0) absl::StrAppend(&out, "cpus = ", w.cpus, "\n");
  absl::StrAppend(&out, "numa_node = ", w.numa_node, "\n");
  if (w.cpu_per_io_ns != 0) {
    absl::StrAppend(&out, "cpu_per_io = ", w.cpu_per_io_ns, "ns\n");
  }
  if (w.host_latency_ns != 0) {
    absl::StrAppend(&out, "host_latency = ", w.host_latency_ns, "ns\n");
  }
  for (const PathSpec& p : s.paths) {
    absl::StrAppend(&out, "\n[path ", p.name, "]\n");
    if (p.bandwidth > 0) {
      absl::StrAppend(
          &out, "bandwidth = ", absl::StrFormat("%.17g", p.bandwidth), "B/s\n");
    }
    absl::StrAppend(
        &out, "parallelism = ", p.parallelism, "\nservice = ", p.service_ns,
        "ns\nlatency = ", p.latency_ns, "ns\nspread = ", p.spread_ns, "ns\n");
    if (p.write_service_ns >= 0) {
      absl::StrAppend(&out, "write_service = ", p.write_service_ns, "ns\n");
    }
    if (p.queues != 0) absl::StrAppend(&out, "queues = ", p.queues, "\n");
    absl::StrAppend(&out, "mss = ", p.mss, "\nnuma_node = ", p.numa_node,
                    "\nana = ", exporters::AnaStateLabel(p.ana), "\n");
  }
  if (!s.events.empty()) absl::StrAppend(&out, "\n[events]\n");
  for (const Event& e : s.events) {
    absl::StrAppend(&out, e.at_ns, "ns ", s.paths[e.path].name, " ");
    switch (e.kind) {
      case EventKind::kDelay:
        absl::StrAppend(&out, "delay ", e.delay_ns, "ns\n");
        break;
      case EventKind::kLoss:
        absl::StrAppend(&out, "loss ", absl::StrFormat("%.17g", e.loss), "\n");
        break;
      case EventKind::kDown:
        absl::StrAppend(&out, "down\n");
        break;
      case EventKind::kUp:
        absl::StrAppend(&out, "up\n");
        break;
      case EventKind::kAna:
        absl::StrAppend(&out, "ana ", exporters::AnaStateLabel(e.ana), "\n");
        break;
    }
  }
  return out;
}

}  // namespace pathwise::lab
