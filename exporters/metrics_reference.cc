// SPDX-License-Identifier: Apache-2.0
// The table of sources (one row per family: why the file is long) and the
// Markdown of the metrics reference; see metrics_reference.h.
#include "exporters/metrics_reference.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace pathwise::exporters {
namespace {

// The sources, spelled once so that rows that share one read the same.
constexpr char kAgent[] = "agent (every collection)";
constexpr char kTopo[] = "topology collector (sysfs)";
constexpr char kIo[] =
    "eBPF sampler; sysfs stat files (fallback); the datapath's own counters";
constexpr char kIoAbsent[] =
    "with the sysfs fallback (`--bpf=off`, or `auto` where BPF cannot load) "
    "the same counters from `/sys/block/*/stat`, per op read, write, discard "
    "and flush only";
constexpr char kBpf[] = "eBPF sampler";
constexpr char kBpfAbsent[] =
    "no series with the sysfs fallback (`--bpf=off`, or `auto` where BPF "
    "cannot load)";
constexpr char kDevices[] = "eBPF sampler, with `--devices=all`";
constexpr char kDevicesAbsent[] =
    "no series without `--devices=all` or without the eBPF sampler (sysfs "
    "fallback)";
constexpr char kScoring[] = "scoring stage (deltas of the I/O counters)";
constexpr char kProbes[] =
    "controller prober (`serve`, `--probe-interval`, default 1 s)";
constexpr char kProbesAbsent[] =
    "no series with `--probe-interval=0`, with a `--path.sysfs` other than "
    "`/sys`, or without io_uring; without access to `/dev/nvmeX` every probe "
    "counts as `reason=\"unavailable\"`";
constexpr char kDiag[] = "the kernel's `diag/` counters in sysfs";
constexpr char kDiagAbsent[] =
    "no series where the kernel has no such `diag/` attribute (kernels before "
    "the counters, 6.12 included), never a 0";
constexpr char kQueues[] = "queue map (`--queues`: sysfs, procfs, sock_diag)";
constexpr char kQueuesAbsent[] = "no series without `--queues`";
constexpr char kQueuesBpf[] =
    "queue map (`--queues`) with BPF (nvme_tcp's BTF)";
constexpr char kQueuesBpfAbsent[] =
    "no series without `--queues`, or for a flow whose queue BPF could not "
    "tell (no nvme_tcp BTF)";
constexpr char kSocket[] = "queue map (`--queues`): the socket's tcp_info";
constexpr char kSocketAbsent[] =
    "no series without `--queues`, or for a socket sock_diag gave no "
    "tcp_info for";
constexpr char kHctx[] = "queue map (`--queues`) with the eBPF sampler";
constexpr char kHctxAbsent[] =
    "no series without `--queues` or without the eBPF sampler's per-queue "
    "counts (sysfs fallback)";
constexpr char kActuator[] = "iopolicy actuator (`serve`, `--actuate`)";
constexpr char kHeadIostats[] = "head iostats switch (`--head-iostats`)";
constexpr char kHeadIostatsAbsent[] =
    "no series with `--head-iostats=keep` (the default)";
constexpr char kDatapath[] = "`pathwise datapath` (its own exposition)";
constexpr char kDatapathAbsent[] =
    "only on a `pathwise datapath` listen address; the agent has none";
constexpr char kHttp[] = "HTTP server (`serve`, `pathwise datapath`)";
constexpr char kHttpAbsent[] =
    "always there on a served `/metrics`; none in `pathwise snapshot`";

constexpr char kAreaAgent[] = "The agent itself";
constexpr char kAreaTopo[] = "Topology";
constexpr char kAreaIo[] = "I/O of paths, heads and other block devices";
constexpr char kAreaNvme[] = "NVMe status, retries and failovers";
constexpr char kAreaSampler[] = "The eBPF sampler's own statistics";
constexpr char kAreaScoring[] = "Scoring";
constexpr char kAreaProbes[] = "Controller probes";
constexpr char kAreaDiag[] = "The kernel's own counters (diag/)";
constexpr char kAreaQueues[] = "Queues and flows (--queues)";
constexpr char kAreaActuators[] = "Actuators";
constexpr char kAreaDatapath[] = "The userspace datapath";
constexpr char kAreaHttp[] = "The HTTP server";

std::vector<MetricSource> Rows() {
  return {
      {"pathwise_build_info", kAreaAgent, "the build", "always there"},
      {"pathwise_collector_duration_seconds", kAreaAgent, kAgent,
       "always there once a collection ran (one series per stage)"},
      {"pathwise_collector_success", kAreaAgent, kAgent,
       "always there once a collection ran; 0 when a stage failed or read "
       "a bad value"},
      {"pathwise_sampler_info", kAreaAgent, kAgent,
       "`source=\"sysfs\"` on the fallback; no series before an I/O source "
       "ran"},
      {"pathwise_topology_changes_total", kAreaAgent, kTopo,
       "always there once a collection ran"},
      {"pathwise_subsystems", kAreaAgent, kTopo,
       "always there once a collection ran; 0 on a host without NVMe "
       "subsystems (no nvme_core, or no device)"},
      {"pathwise_multipath_subsystems", kAreaAgent, kTopo,
       "always there once a collection ran; 0 on a host without native "
       "multipath (nvme_core multipath=N): alert on it"},
      {"pathwise_invalid_utf8_label_values", kAreaAgent,
       "the exposition (label values repaired)",
       "no series while every label value is valid UTF-8"},

      {"pathwise_subsystem_info", kAreaTopo, kTopo,
       "no series on a host without NVMe subsystems"},
      {"pathwise_head_info", kAreaTopo, kTopo,
       "no series on a host without multipath heads"},
      {"pathwise_path_info", kAreaTopo, kTopo,
       "no series on a host without NVMe paths"},
      {"pathwise_path_ana_state", kAreaTopo,
       "topology collector (sysfs `ana_state`)",
       "no series for a path without an ANA state in sysfs (no ANA, or "
       "`nvme_core.multipath=N`); all 0 for a state this version does not "
       "know"},
      {"pathwise_controller_state", kAreaTopo, kTopo,
       "all 0 for a state this version does not know"},
      {"pathwise_controller_info", kAreaTopo, kTopo,
       "no series on a host without NVMe controllers"},
      {"pathwise_controller_io_queues", kAreaTopo, kTopo,
       "no series for a controller whose `queue_count` is unreadable"},

      {"pathwise_path_io_completed_total", kAreaIo, kIo, kIoAbsent},
      {"pathwise_path_io_bytes_total", kAreaIo, kIo, kIoAbsent},
      {"pathwise_path_io_time_seconds_total", kAreaIo, kIo,
       "with the sysfs fallback the stat file's milliseconds"},
      {"pathwise_path_io_inflight", kAreaIo, "sysfs stat files",
       "no series with the eBPF sampler"},
      {"pathwise_path_io_latency_seconds", kAreaIo,
       "eBPF sampler; the datapath's own latencies", kBpfAbsent},
      {"pathwise_path_io_errors_total", kAreaIo, kBpf, kBpfAbsent},
      {"pathwise_head_io_completed_total", kAreaIo, kIo, kIoAbsent},
      {"pathwise_head_io_bytes_total", kAreaIo, kIo, kIoAbsent},
      {"pathwise_head_io_time_seconds_total", kAreaIo, kIo,
       "with the sysfs fallback the stat file's milliseconds"},
      {"pathwise_head_io_inflight", kAreaIo, "sysfs stat files",
       "no series with the eBPF sampler"},
      {"pathwise_head_io_latency_seconds", kAreaIo,
       "eBPF sampler (its paths' merged); the datapath's own latencies",
       kBpfAbsent},
      {"pathwise_head_io_errors_total", kAreaIo, kBpf, kBpfAbsent},
      {"pathwise_device_io_completed_total", kAreaIo, kDevices, kDevicesAbsent},
      {"pathwise_device_io_bytes_total", kAreaIo, kDevices, kDevicesAbsent},
      {"pathwise_device_io_time_seconds_total", kAreaIo, kDevices,
       kDevicesAbsent},
      {"pathwise_device_io_latency_seconds", kAreaIo, kDevices, kDevicesAbsent},
      {"pathwise_device_io_errors_total", kAreaIo, kDevices, kDevicesAbsent},

      {"pathwise_path_nvme_errors_total", kAreaNvme,
       "eBPF sampler (nvme_complete_rq); the datapath's completions",
       "no series with the sysfs fallback or where nvme_complete_rq cannot "
       "be attached; `pathwise_path_diag_command_errors_total` counts "
       "errors where the kernel has it"},
      {"pathwise_path_io_retries_total", kAreaNvme, kBpf,
       "no series with the sysfs fallback; "
       "`pathwise_path_diag_command_retries_total` where the kernel has it"},
      {"pathwise_path_failovers_total", kAreaNvme,
       "eBPF sampler (the failover hook); the datapath's failovers",
       "no series with the sysfs fallback; "
       "`pathwise_path_diag_failovers_total` where the kernel has it"},

      {"pathwise_bpf_events_dropped_total", kAreaSampler, kBpf, kBpfAbsent},
      {"pathwise_bpf_init_context_blind", kAreaSampler, kBpf, kBpfAbsent},
      {"pathwise_bpf_program_run_seconds_total", kAreaSampler,
       "eBPF sampler, while `kernel.bpf_stats_enabled` (`--bpf-stats`)",
       "no series without `--bpf-stats` (or the sysctl) or without the "
       "sampler"},
      {"pathwise_bpf_program_runs_total", kAreaSampler,
       "eBPF sampler, while `kernel.bpf_stats_enabled` (`--bpf-stats`)",
       "no series without `--bpf-stats` (or the sysctl) or without the "
       "sampler"},

      {"pathwise_path_latency_ewma_seconds", kAreaScoring, kScoring,
       "on the sysfs fallback from the stat files' milliseconds; no series "
       "for an op group before its first sample (probes give idle paths "
       "one)"},
      {"pathwise_path_weight", kAreaScoring, kScoring,
       "on the sysfs fallback from the stat files' milliseconds"},
      {"pathwise_path_score", kAreaScoring, kScoring,
       "no series for a path without evidence yet"},
      {"pathwise_path_health", kAreaScoring,
       "scoring stage; controller probes (a failed probe makes a path "
       "failed)",
       "without probes an idle path is `idle`, and a failed controller is "
       "seen only by its I/O"},
      {"pathwise_path_sample_age_seconds", kAreaScoring, kScoring,
       "no series for a path that completed no I/O yet"},
      {"pathwise_head_paths", kAreaScoring, kScoring,
       "no series before the scoring stage ran"},
      {"pathwise_head_latency_imbalance_ratio", kAreaScoring, kScoring,
       "no series with fewer than two usable paths with an EWMA"},
      {"pathwise_subsystem_iopolicy_recommended", kAreaScoring,
       "scoring stage (the iopolicy advisor)",
       "no series before the scoring stage ran; queue-depth only where the "
       "kernel has it (`--kernel-queue-depth`)"},

      {"pathwise_controller_probe_latency_seconds", kAreaProbes, kProbes,
       kProbesAbsent},
      {"pathwise_controller_probe_failures_total", kAreaProbes, kProbes,
       kProbesAbsent},

      {"pathwise_path_diag_failovers_total", kAreaDiag, kDiag,
       "no series where the kernel has no `diag/` attribute (kernels "
       "before the counters, 6.12 included), never a 0; "
       "`pathwise_path_failovers_total` with the eBPF sampler"},
      {"pathwise_path_diag_command_retries_total", kAreaDiag, kDiag,
       kDiagAbsent},
      {"pathwise_path_diag_command_errors_total", kAreaDiag, kDiag,
       kDiagAbsent},
      {"pathwise_head_diag_io_requeued_no_usable_path_total", kAreaDiag, kDiag,
       kDiagAbsent},
      {"pathwise_head_diag_io_failed_no_available_path_total", kAreaDiag, kDiag,
       kDiagAbsent},
      {"pathwise_controller_diag_command_errors_total", kAreaDiag, kDiag,
       kDiagAbsent},
      {"pathwise_controller_diag_resets_total", kAreaDiag, kDiag, kDiagAbsent},
      {"pathwise_controller_diag_reconnects_total", kAreaDiag, kDiag,
       "no series where the kernel has no `diag/reconnect_count` (and for "
       "PCIe controllers: fabrics only)"},

      {"pathwise_queue_map_bpf", kAreaQueues, kQueues, kQueuesAbsent},
      {"pathwise_queue_io_queues", kAreaQueues, kQueues, kQueuesAbsent},
      {"pathwise_queue_flows", kAreaQueues, kQueues, kQueuesAbsent},
      {"pathwise_queue_hctx_cpus", kAreaQueues, kQueues, kQueuesAbsent},
      {"pathwise_queue_nic_queues", kAreaQueues, kQueues, kQueuesAbsent},
      {"pathwise_queue_nic_irq_cpus", kAreaQueues, kQueues,
       "no series without `--queues`, or for a NIC queue with no IRQ "
       "matched (virtual devices)"},
      {"pathwise_queue_mismatches", kAreaQueues, kQueues, kQueuesAbsent},
      {"pathwise_flow_info", kAreaQueues, kQueues,
       "no series without `--queues`; `qid` empty without BPF (nvme_tcp's "
       "BTF)"},
      {"pathwise_flow_rtt_seconds", kAreaQueues, kSocket, kSocketAbsent},
      {"pathwise_flow_retransmitted_segments_total", kAreaQueues, kSocket,
       kSocketAbsent},
      {"pathwise_flow_sent_bytes_total", kAreaQueues, kSocket, kSocketAbsent},
      {"pathwise_flow_received_bytes_total", kAreaQueues, kSocket,
       kSocketAbsent},
      {"pathwise_flow_unacked_segments", kAreaQueues, kSocket, kSocketAbsent},
      {"pathwise_flow_notsent_bytes", kAreaQueues, kSocket,
       "no series without `--queues`; 0 for a socket without tcp_info"},
      {"pathwise_flow_io_cpu", kAreaQueues, kQueuesBpf,
       "no series without `--queues`, without BPF (nvme_tcp's BTF), or for "
       "an unbound queue"},
      {"pathwise_flow_nic_queue", kAreaQueues,
       "queue map (`--queues`): the socket's recorded queues",
       "no series without `--queues`, or without BPF unless the device has "
       "one queue that way"},
      {"pathwise_queue_hctx_completed_total", kAreaQueues, kHctx, kHctxAbsent},
      {"pathwise_queue_hctx_latency_seconds", kAreaQueues, kHctx, kHctxAbsent},
      {"pathwise_queue_hctx_remote_completions_total", kAreaQueues, kHctx,
       kHctxAbsent},
      {"pathwise_queue_hctx_dropped_total", kAreaQueues, kHctx, kHctxAbsent},

      {"pathwise_actuator_mode", kAreaActuators, kActuator,
       "always there in `serve` (`mode=\"off\"` by default); none in "
       "`pathwise snapshot`"},
      {"pathwise_actuator_decisions_total", kAreaActuators, kActuator,
       "no series before the actuator decided anything (and with "
       "`--actuate=off`)"},
      {"pathwise_head_iostats_disabled_heads", kAreaActuators, kHeadIostats,
       kHeadIostatsAbsent},
      {"pathwise_head_iostats_changes_total", kAreaActuators, kHeadIostats,
       kHeadIostatsAbsent},

      {"pathwise_datapath_info", kAreaDatapath, kDatapath, kDatapathAbsent},
      {"pathwise_datapath_requests_total", kAreaDatapath, kDatapath,
       kDatapathAbsent},
      {"pathwise_datapath_failed_requests_total", kAreaDatapath, kDatapath,
       kDatapathAbsent},
      {"pathwise_datapath_no_path_waits_total", kAreaDatapath, kDatapath,
       kDatapathAbsent},
      {"pathwise_datapath_no_path_timeouts_total", kAreaDatapath, kDatapath,
       kDatapathAbsent},
      {"pathwise_datapath_path_selections_total", kAreaDatapath, kDatapath,
       kDatapathAbsent},
      {"pathwise_datapath_path_timeouts_total", kAreaDatapath, kDatapath,
       kDatapathAbsent},
      {"pathwise_datapath_path_transport_errors_total", kAreaDatapath,
       kDatapath, kDatapathAbsent},
      {"pathwise_datapath_path_probes_total", kAreaDatapath, kDatapath,
       kDatapathAbsent},
      {"pathwise_datapath_path_probe_failures_total", kAreaDatapath, kDatapath,
       kDatapathAbsent},
      {"pathwise_datapath_path_fenced_writes_total", kAreaDatapath, kDatapath,
       kDatapathAbsent},
      {"pathwise_datapath_path_inflight", kAreaDatapath, kDatapath,
       kDatapathAbsent},
      {"pathwise_datapath_path_base_latency_seconds", kAreaDatapath,
       "`pathwise datapath --policy=pathwise` (its selector)",
       "only with the pathwise policy, once the path has a base latency"},
      {"pathwise_datapath_path_cap", kAreaDatapath,
       "`pathwise datapath --policy=pathwise` (its selector)",
       "only with the pathwise policy, once the path has a base latency"},
      {"pathwise_datapath_path_state", kAreaDatapath, kDatapath,
       kDatapathAbsent},

      {"pathwise_http_connections_open", kAreaHttp, kHttp, kHttpAbsent},
      {"pathwise_http_connections_accepted_total", kAreaHttp, kHttp,
       kHttpAbsent},
      {"pathwise_http_connections_refused_total", kAreaHttp, kHttp,
       kHttpAbsent},
      {"pathwise_http_gzip_responses_total", kAreaHttp, kHttp, kHttpAbsent},
  };
}

std::string TypeName(prometheus::MetricType t) {
  switch (t) {
    case prometheus::MetricType::Counter:
      return "counter";
    case prometheus::MetricType::Gauge:
      return "gauge";
    case prometheus::MetricType::Summary:
      return "summary";
    case prometheus::MetricType::Histogram:
      return "histogram";
    case prometheus::MetricType::Untyped:
      return "untyped";
  }
  return "untyped";
}

// A table cell: no line breaks, pipes escaped.
// (Debian's Abseil has its own string_view: std::string_view goes through
// std::string.)
std::string Cell(std::string_view s) {
  return absl::StrReplaceAll(std::string(s), {{"|", "\\|"}, {"\n", " "}});
}

std::string Code(std::string_view s) {
  return absl::StrCat("`", std::string(s), "`");
}

}  // namespace

const std::vector<MetricSource>& MetricSources() {
  static const std::vector<MetricSource>* rows =
      new std::vector<MetricSource>(Rows());
  return *rows;
}

std::vector<ReferenceColumn> DefaultReferenceColumns() {
  return {
      {"metric", [](const FamilyDoc& d) { return Code(d.name); }},
      {"type", [](const FamilyDoc& d) { return d.type; }},
      {"labels",
       [](const FamilyDoc& d) {
         std::vector<std::string> l;
         for (const std::string& x : d.labels) l.push_back(Code(x));
         return l.empty() ? std::string("—") : absl::StrJoin(l, ", ");
       }},
      {"help", [](const FamilyDoc& d) { return Cell(d.help); }},
      {"source", [](const FamilyDoc& d) { return Cell(d.source.source); }},
      {"when the source is absent",
       [](const FamilyDoc& d) { return Cell(d.source.absent); }},
  };
}

absl::StatusOr<std::vector<FamilyDoc>> DocumentFamilies(
    const std::vector<prometheus::MetricFamily>& families) {
  std::map<std::string, FamilyDoc, std::less<>> seen;
  std::vector<std::string> errors;
  for (const prometheus::MetricFamily& f : families) {
    auto [it, fresh] = seen.try_emplace(f.name);
    FamilyDoc& d = it->second;
    if (fresh) {
      d.name = f.name;
      d.type = TypeName(f.type);
      d.help = f.help;
    } else if (d.type != TypeName(f.type) || d.help != f.help) {
      errors.push_back(absl::StrCat(
          f.name, ": rendered twice with a different type or help"));
    }
    for (const prometheus::ClientMetric& m : f.metric) {
      for (const prometheus::ClientMetric::Label& l : m.label) {
        if (std::find(d.labels.begin(), d.labels.end(), l.name) ==
            d.labels.end()) {
          d.labels.push_back(l.name);
        }
      }
    }
  }
  std::vector<FamilyDoc> out;
  std::set<std::string, std::less<>> listed;
  for (const MetricSource& row : MetricSources()) {
    listed.insert(std::string(row.family));
    auto it = seen.find(row.family);
    if (it == seen.end()) {
      errors.push_back(absl::StrCat(
          std::string(row.family),
          ": in the table of sources (exporters/metrics_reference.cc) but "
          "not rendered: the family is gone, or "
          "agent/metrics_reference_main.cc does not populate it"));
      continue;
    }
    it->second.source = row;
    out.push_back(it->second);
  }
  for (const auto& [name, d] : seen) {
    if (!listed.contains(name)) {
      errors.push_back(absl::StrCat(
          name,
          ": rendered but not in the table of sources "
          "(exporters/metrics_reference.cc): add its source and fallback"));
    }
  }
  if (!errors.empty()) {
    return absl::FailedPreconditionError(absl::StrJoin(errors, "\n"));
  }
  return out;
}

std::string MetricsReferenceMarkdown(
    const std::vector<FamilyDoc>& docs,
    const std::vector<ReferenceColumn>& columns, std::string_view intro) {
  std::string md(intro);
  std::string_view area;
  for (const FamilyDoc& d : docs) {
    if (d.source.area != area) {
      area = d.source.area;
      absl::StrAppend(&md, "\n## ", std::string(area), "\n\n|");
      for (const ReferenceColumn& c : columns)
        absl::StrAppend(&md, " ", c.header, " |");
      absl::StrAppend(&md, "\n|");
      for (size_t i = 0; i < columns.size(); ++i) md += "---|";
      md += "\n";
    }
    md += "|";
    for (const ReferenceColumn& c : columns) {
      absl::StrAppend(&md, " ", c.cell(d), " |");
    }
    md += "\n";
  }
  return md;
}

}  // namespace pathwise::exporters
