// SPDX-License-Identifier: Apache-2.0
// @ts-check
// pathwise / Path detail: one or more paths, everything about them.
import * as common from "@grafana/grafana-foundation-sdk/common";
import * as heatmap from "@grafana/grafana-foundation-sdk/heatmap";
import {
  I, P, RI, ANA, CTRL, HEALTH, dashboard, fill, target, ts, timeline, stateCode, q, hq, mean, item, row,
} from "./common.mjs";

const PROBES = "probes on (`--probe-interval` > 0, the default, and read access to /dev/nvmeX)";
// The controllers of the selected paths.
const OF_PATHS = `and on (instance, controller) pathwise_path_info{${P}}`;

export function pathDetail() {
  const by = "instance, path";
  return dashboard("pathwise-path", "pathwise / Path detail",
    "One or more NVMe paths: latency distribution, percentiles, I/O, scoring, failovers and errors, ANA and controller states, and their controllers' probes.",
    ["datasource", "instance", "subsystem", "head", "path"], [
      fill(new heatmap.PanelBuilder(), "Read+write latency (histogram buckets)", [9, 24], [target(
        `sum by (le) (rate(pathwise_path_io_latency_seconds_bucket{${P},op=~"read|write"}[${RI}]))\nor\nsum(rate(pathwise_path_io_latency_seconds{${P},op=~"read|write"}[${RI}]))`,
        "{{le}}", { heatmap: true })])
        .calculate(false)
        .yAxis(new heatmap.YAxisConfigBuilder().unit("s"))
        .cellGap(1)
        .color(new heatmap.HeatmapColorOptionsBuilder().mode(heatmap.HeatmapColorMode.Scheme).scheme("Oranges").steps(64))
        .scaleDistribution(new common.ScaleDistributionConfigBuilder().type(common.ScaleDistribution.Linear)),
      ts("p50 / p99 latency per path", [8, 12], [
        target(q(0.5, `${P},op=~"read|write"`, by), "p50 {{instance}} {{path}}"),
        target(q(0.99, `${P},op=~"read|write"`, by), "p99 {{instance}} {{path}}"),
      ], "s"),
      ts("Mean latency per path and op", [8, 12], [target(
        mean("pathwise_path_io_latency_seconds", P, "instance, path, op"),
        "{{instance}} {{path}} {{op}}")], "s"),
      ts("IOPS per path (read, write)", [8, 12], [target(
        `sum by (instance, path, op) (rate(pathwise_path_io_completed_total{${P},op=~"read|write"}[${RI}]))`, "{{instance}} {{path}} {{op}}")], "iops"),
      ts("Throughput per path (read, write)", [8, 12], [target(
        `sum by (instance, path, op) (rate(pathwise_path_io_bytes_total{${P},op=~"read|write"}[${RI}]))`, "{{instance}} {{path}} {{op}}")], "Bps"),
      ts("Latency EWMA per path", [8, 12], [target(
        `pathwise_path_latency_ewma_seconds{${P}}`, "{{instance}} {{path}} {{op_group}}")], "s"),
      ts("Weight per path (0-64)", [8, 12], [target(
        `pathwise_path_weight{${P}}`, "{{instance}} {{path}} {{op_group}}")], "none").min(0).max(64),
      ts("Failovers, retries and errors per path", [8, 24], [
        target(`sum by (instance, path) (rate(pathwise_path_failovers_total{${P}}[${RI}]))`, "failovers {{instance}} {{path}}"),
        target(`sum by (instance, path) (rate(pathwise_path_io_retries_total{${P}}[${RI}]))`, "retries {{instance}} {{path}}"),
        // Error series exist once nonzero (default metrics profile): 0 for a
        // path with the sampler (retries) or I/O (completed) and none.
        target(`sum by (instance, path, status_class) (rate(pathwise_path_nvme_errors_total{${P}}[${RI}]))\nor\n0 * sum by (instance, path) (rate(pathwise_path_io_retries_total{${P}}[${RI}]))`, "NVMe errors {{instance}} {{path}} {{status_class}}"),
        target(`sum by (instance, path, op) (rate(pathwise_path_io_errors_total{${P}}[${RI}]))\nor\n0 * sum by (instance, path, op) (rate(pathwise_path_io_completed_total{${P}}[${RI}]))`, "block-layer errors {{instance}} {{path}} {{op}}"),
      ], "ops"),
      timeline("ANA state", [6, 24], stateCode("pathwise_path_ana_state", P, ANA, by), "{{instance}} {{path}}", ANA),
      timeline("Controller state", [6, 24],
        `${stateCode("pathwise_controller_state", I, CTRL, "instance, controller")}\nand on (instance, controller) pathwise_path_info{${P}}`,
        "{{instance}} {{controller}}", CTRL),
      timeline("Health", [6, 24], stateCode("pathwise_path_health", P, HEALTH, by), "{{instance}} {{path}}", HEALTH),

      row("Probes of the paths' controllers"),
      item(ts("p99: the path's I/O against its controller's probe", [8, 12], [
        target(q(0.99, `${P},op=~"read|write"`, "instance, path, controller"), "I/O {{instance}} {{path}}"),
        target(hq(0.99, "pathwise_controller_probe_latency_seconds", I, "instance, controller", OF_PATHS), "probe {{instance}} {{controller}}"),
      ], "s", "Both slow: the target or the network; only the I/O slow: queueing on the host or in the path."), PROBES),
      item(ts("Probe failures by reason", [8, 12], [target(
        `sum by (instance, controller, reason) (rate(pathwise_controller_probe_failures_total{${I}}[${RI}]) ${OF_PATHS})`,
        "{{instance}} {{controller}} {{reason}}")], "ops",
        "timeout and transport make the controller's paths failed within a probe interval and timeout."), PROBES),
    ]);
}
