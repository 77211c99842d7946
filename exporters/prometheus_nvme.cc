// SPDX-License-Identifier: Apache-2.0
// The eBPF sampler's NVMe families (per path, from nvme_complete_rq and the
// failover hook) and the sampler's own statistics.
#include <string>
#include <vector>

#include "exporters/labels.h"
#include "exporters/prometheus_internal.h"

namespace pathwise::exporters::internal {

using prometheus::MetricFamily;
using prometheus::MetricType;

void AddPathNvmeFamilies(const model::Snapshot& snapshot,
                         MetricsProfile profile,
                         std::vector<MetricFamily>& out) {
  // NVMe status codes, by status code type; a path's block-layer errors are
  // pathwise_path_io_errors_total.
  MetricFamily nvme_errors = Family(
      "pathwise_path_nvme_errors_total",
      "Completions of a path with a non-zero NVMe status, by status class "
      "(status code type; eBPF sampler, nvme_complete_rq).",
      MetricType::Counter);
  MetricFamily retries =
      Family("pathwise_path_io_retries_total",
             "Completions of retried NVMe commands on a path (eBPF sampler).",
             MetricType::Counter);
  MetricFamily failovers = Family(
      "pathwise_path_failovers_total",
      "Requests of a path that the kernel failed over to another path; not "
      "counted as I/Os of this path (eBPF sampler).",
      MetricType::Counter);
  for (const model::Path& p : snapshot.topology.paths) {
    auto it = snapshot.path_nvme.find(p.name);
    if (it == snapshot.path_nvme.end()) continue;
    const Labels base = PathLabels(p);
    if (const auto& errors = it->second.errors_by_class) {
      for (model::NvmeStatusClass cls : model::kNvmeErrorClasses) {
        const uint64_t n = (*errors)[model::ErrorClassIndex(cls)];
        if (profile == MetricsProfile::kDefault && n == 0) continue;
        AddCounter(nvme_errors,
                   With(base, {{"status_class",
                                std::string(NvmeStatusClassLabel(cls))}}),
                   static_cast<double>(n));
      }
    }
    AddCounter(retries, base, static_cast<double>(it->second.retries));
    AddCounter(failovers, base, static_cast<double>(it->second.failovers));
  }
  Push(out, std::move(nvme_errors));
  Push(out, std::move(retries));
  Push(out, std::move(failovers));
}

void AddSamplerFamilies(const model::Snapshot& snapshot,
                        std::vector<MetricFamily>& out) {
  if (!snapshot.sampler) return;
  MetricFamily dropped =
      Family("pathwise_bpf_events_dropped_total",
             "Events the eBPF sampler could not account, by reason.",
             MetricType::Counter);
  for (model::DropReason reason : model::kAllDropReasons) {
    AddCounter(
        dropped, {{"reason", std::string(DropReasonLabel(reason))}},
        static_cast<double>(snapshot.sampler->dropped[model::Index(reason)]));
  }
  Push(out, std::move(dropped));
  MetricFamily blind = Family(
      "pathwise_bpf_init_context_blind",
      "1 when the kernel does not run pathwise's BPF programs while a thread "
      "of PID 1 is current (a sandbox kernel patch): I/O completed in such a "
      "thread's softirq is neither counted nor in "
      "pathwise_bpf_events_dropped_total.",
      MetricType::Gauge);
  AddGauge(blind, {}, snapshot.sampler->init_context_hidden ? 1 : 0);
  Push(out, std::move(blind));
  MetricFamily run_seconds =
      Family("pathwise_bpf_program_run_seconds_total",
             "Time the kernel spent running a pathwise BPF program (only while "
             "kernel.bpf_stats_enabled is on; see --bpf-stats).",
             MetricType::Counter);
  MetricFamily runs = Family(
      "pathwise_bpf_program_runs_total",
      "Runs of a pathwise BPF program (only while kernel.bpf_stats_enabled "
      "is on; see --bpf-stats).",
      MetricType::Counter);
  for (const model::SamplerStats::Program& p : snapshot.sampler->programs) {
    AddCounter(run_seconds, {{"program", p.name}},
               static_cast<double>(p.run_time_ns) / 1e9);
    AddCounter(runs, {{"program", p.name}}, static_cast<double>(p.run_count));
  }
  Push(out, std::move(run_seconds));
  Push(out, std::move(runs));
}

}  // namespace pathwise::exporters::internal
