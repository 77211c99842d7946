// SPDX-License-Identifier: Apache-2.0
// The kernel's own diagnostic counters (sysfs diag/ of paths, heads and
// controllers), where the running kernel has them. A counter the kernel does
// not have has no series, and a family with none is left out, so on older
// kernels none of these families appears.
#include <optional>
#include <string>
#include <vector>

#include "exporters/prometheus_internal.h"

namespace pathwise::exporters::internal {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

void AddIfPresent(MetricFamily& f, const Labels& labels,
                  const std::optional<uint64_t>& v) {
  if (v) AddCounter(f, labels, static_cast<double>(*v));
}

}  // namespace

void AddKernelDiagFamilies(const model::Topology& topo,
                           std::vector<MetricFamily>& out) {
  MetricFamily path_failovers =
      Family("pathwise_path_diag_failovers_total",
             "Requests the kernel failed over from this path to another one "
             "(the kernel's diag/multipath_failover_count).",
             MetricType::Counter);
  MetricFamily path_retries =
      Family("pathwise_path_diag_command_retries_total",
             "Commands the kernel retried on this path (the kernel's "
             "diag/command_retries_count).",
             MetricType::Counter);
  MetricFamily path_errors =
      Family("pathwise_path_diag_command_errors_total",
             "Commands of this path that completed with an error (the "
             "kernel's diag/command_error_count).",
             MetricType::Counter);
  for (const model::Path& p : topo.paths) {
    const Labels base = PathLabels(p);
    AddIfPresent(path_failovers, base, p.diag.failovers);
    AddIfPresent(path_retries, base, p.diag.command_retries);
    AddIfPresent(path_errors, base, p.diag.command_errors);
  }
  Push(out, std::move(path_failovers));
  Push(out, std::move(path_retries));
  Push(out, std::move(path_errors));

  MetricFamily head_requeued =
      Family("pathwise_head_diag_io_requeued_no_usable_path_total",
             "I/Os the head queued because none of its paths was usable at the "
             "time (the kernel's diag/io_requeue_no_usable_path_count).",
             MetricType::Counter);
  MetricFamily head_failed =
      Family("pathwise_head_diag_io_failed_no_available_path_total",
             "I/Os the head failed because no path was left to carry them (the "
             "kernel's diag/io_fail_no_available_path_count).",
             MetricType::Counter);
  for (const model::Head& h : topo.heads) {
    const Labels base = HeadLabels(h);
    AddIfPresent(head_requeued, base, h.diag.requeued_no_usable_path);
    AddIfPresent(head_failed, base, h.diag.failed_no_available_path);
  }
  Push(out, std::move(head_requeued));
  Push(out, std::move(head_failed));

  MetricFamily ctrl_errors =
      Family("pathwise_controller_diag_command_errors_total",
             "Admin commands of a controller that completed with an error "
             "(the kernel's diag/command_error_count).",
             MetricType::Counter);
  MetricFamily ctrl_resets =
      Family("pathwise_controller_diag_resets_total",
             "Resets of a controller (the kernel's diag/reset_count).",
             MetricType::Counter);
  MetricFamily ctrl_reconnects =
      Family("pathwise_controller_diag_reconnects_total",
             "Reconnect attempts of a fabrics controller (the kernel's "
             "diag/reconnect_count).",
             MetricType::Counter);
  for (const model::Controller& c : topo.controllers) {
    const Labels base = {{"controller", c.name}};
    AddIfPresent(ctrl_errors, base, c.diag.command_errors);
    AddIfPresent(ctrl_resets, base, c.diag.resets);
    AddIfPresent(ctrl_reconnects, base, c.diag.reconnects);
  }
  Push(out, std::move(ctrl_errors));
  Push(out, std::move(ctrl_resets));
  Push(out, std::move(ctrl_reconnects));
}

}  // namespace pathwise::exporters::internal
