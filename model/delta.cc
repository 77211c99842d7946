// SPDX-License-Identifier: Apache-2.0
#include "model/delta.h"

#include <cmath>

namespace pathwise::model {
namespace {

uint64_t CounterDelta(uint64_t now, uint64_t earlier) {
  return now >= earlier ? now - earlier : 0;
}

using IoMap = std::map<std::string, IoStats, std::less<>>;

std::map<std::string, IoRates, std::less<>> MapRates(const IoMap& earlier,
                                                     const IoMap& now,
                                                     double seconds) {
  std::map<std::string, IoRates, std::less<>> out;
  const IoStats none;
  for (const auto& [name, io] : now) {
    auto it = earlier.find(name);
    out[name] =
        RatesBetween(it == earlier.end() ? none : it->second, io, seconds);
  }
  return out;
}

}  // namespace

OpStats Delta(const OpStats& now, const OpStats& earlier) {
  OpStats d;
  d.completed = CounterDelta(now.completed, earlier.completed);
  d.bytes = CounterDelta(now.bytes, earlier.bytes);
  d.time_ns = CounterDelta(now.time_ns, earlier.time_ns);
  if (now.errors)
    d.errors = CounterDelta(*now.errors, earlier.errors.value_or(0));
  if (now.latency) {
    d.latency =
        earlier.latency ? now.latency->Delta(*earlier.latency) : *now.latency;
  }
  return d;
}

double OpRates::LatencyQuantile(double q) const {
  if (!latency) return std::nan("");
  return latency->Quantile(q);
}

OpRates RatesOf(const OpStats& window, double seconds) {
  OpRates r;
  r.completed = window.completed;
  if (seconds > 0) {
    r.iops = static_cast<double>(window.completed) / seconds;
    r.bytes_per_second = static_cast<double>(window.bytes) / seconds;
  }
  if (window.completed > 0) {
    r.mean_latency_seconds = static_cast<double>(window.time_ns) / 1e9 /
                             static_cast<double>(window.completed);
  }
  r.latency = window.latency;
  return r;
}

IoRates RatesBetween(const IoStats& earlier, const IoStats& now,
                     double seconds) {
  IoRates out;
  for (Op op : kAllOps) {
    const std::optional<OpStats>& n = now.op(op);
    if (!n) continue;
    const OpStats& e = earlier.op(op) ? *earlier.op(op) : OpStats{};
    out.ops[Index(op)] = RatesOf(Delta(*n, e), seconds);
  }
  return out;
}

std::optional<SnapshotRates> RatesBetween(const Snapshot& earlier,
                                          const Snapshot& now) {
  const double seconds =
      absl::ToDoubleSeconds(now.collected_at - earlier.collected_at);
  if (!(seconds > 0) || std::isinf(seconds)) return std::nullopt;
  SnapshotRates out;
  out.seconds = seconds;
  out.paths = MapRates(earlier.path_io, now.path_io, seconds);
  out.heads = MapRates(earlier.head_io, now.head_io, seconds);
  out.devices = MapRates(earlier.device_io, now.device_io, seconds);
  return out;
}

}  // namespace pathwise::model
