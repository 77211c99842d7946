// SPDX-License-Identifier: Apache-2.0
// @ts-check
// The userspace datapath's row of the Overview: what `pathwise datapath`
// (its own process and port, :9879) does with the I/O it sends itself. Its
// per-path series have the agent's names (pathwise_path_io_*, failovers, NVMe
// errors, ANA state, EWMA, weight); `and on (instance)
// pathwise_datapath_info` keeps the datapath's own (its instance is its own
// host:port) apart from an agent's on the same node.
import {
  I, S, RI, ANA, DATAPATH, target, ts, shareTs, timeline, stateCode, hq, item, row,
} from "./common.mjs";

const NEEDS = "`pathwise datapath` beside it on the node, scraped at `:9879`";
const DP = `and on (instance) pathwise_datapath_info{${I}}`;
// Device-level series have a device but no subsystem label.
const DP_DEVICE = `and on (instance, device) pathwise_datapath_info{${S}}`;
const BY = "instance, path";

/** @returns {import("./common.mjs").Item[]} */
export function datapathRow() {
  /** @param {string} m @param {string} legend */
  const perPath = (m, legend) => target(`sum by (${BY}) (rate(${m}{${S}}[${RI}]) ${DP})`, `${legend} {{instance}} {{path}}`);
  const selections = `pathwise_datapath_path_selections_total{${S}}`;
  return [
    row("Userspace datapath (`pathwise datapath`)"),
    item(timeline("Datapath: paths in use (usable, failed, ANA unusable)", [6, 12],
      stateCode("pathwise_datapath_path_state", S, DATAPATH, BY), "{{instance}} {{path}}", DATAPATH), NEEDS),
    item(timeline("Datapath: ANA state per path", [6, 12],
      `${stateCode("pathwise_path_ana_state", S, ANA, BY)}\n${DP}`, "{{instance}} {{path}}", ANA), NEEDS),
    item(ts("Datapath: block requests per device", [8, 12], [
      target(`sum by (instance, device) (rate(pathwise_datapath_requests_total{${I}}[${RI}]) ${DP_DEVICE})`, "completed {{instance}} {{device}}"),
      target(`sum by (instance, device) (rate(pathwise_datapath_failed_requests_total{${I}}[${RI}]) ${DP_DEVICE})`, "failed {{instance}} {{device}}"),
    ], "reqps", "Requests of the ublk device: completed, and those that completed with an error (the application saw EIO)."), NEEDS),
    item(ts("Datapath: requests waiting for a usable path", [8, 12], [
      target(`sum by (instance, device) (rate(pathwise_datapath_no_path_waits_total{${I}}[${RI}]) ${DP_DEVICE})`, "waited {{instance}} {{device}}"),
      target(`sum by (instance, device) (rate(pathwise_datapath_no_path_timeouts_total{${I}}[${RI}]) ${DP_DEVICE})`, "failed after --no-path-timeout {{instance}} {{device}}"),
    ], "reqps", "Every path was failed or ANA-unusable: requests queue until one comes back, and fail after --no-path-timeout."), NEEDS),
    item(ts("Datapath: IOPS per path (read, write)", [8, 12], [target(
      `sum by (instance, path, op) (rate(pathwise_path_io_completed_total{${S},op=~"read|write"}[${RI}]) ${DP})`,
      "{{instance}} {{path}} {{op}}")], "iops"), NEEDS),
    item(ts("Datapath: p50 / p99 latency per path", [8, 12], [
      target(hq(0.5, "pathwise_path_io_latency_seconds", `${S},op=~"read|write"`, BY, DP), "p50 {{instance}} {{path}}"),
      target(hq(0.99, "pathwise_path_io_latency_seconds", `${S},op=~"read|write"`, BY, DP), "p99 {{instance}} {{path}}"),
    ], "s", "Submission to completion of the datapath's own NVMe commands, exact (no block layer in between)."), NEEDS),
    item(shareTs("Datapath: the selector's choices (share per path)", [8, 8], [target(
      `sum by (instance, path, policy) (rate(${selections}[${RI}]))\n/ on (instance) group_left ()\nsum by (instance) (rate(${selections}[${RI}]))`,
      "{{instance}} {{path}} ({{policy}})")]), NEEDS),
    item(ts("Datapath: latency EWMA per path", [8, 8], [target(
      `pathwise_path_latency_ewma_seconds{${S}} ${DP}`, "{{instance}} {{path}} {{op_group}}")], "s"), NEEDS),
    item(ts("Datapath: weight per path (0-64)", [8, 8], [target(
      `pathwise_path_weight{${S}} ${DP}`, "{{instance}} {{path}} {{op_group}}")], "none").min(0).max(64), NEEDS),
    item(ts("Datapath: failovers, errors, timeouts and probes per path", [8, 24], [
      perPath("pathwise_path_failovers_total", "failovers"),
      target(`sum by (${BY}, status_class) (rate(pathwise_path_nvme_errors_total{${S}}[${RI}]) ${DP})`, "NVMe errors {{instance}} {{path}} {{status_class}}"),
      perPath("pathwise_datapath_path_timeouts_total", "timeouts"),
      perPath("pathwise_datapath_path_transport_errors_total", "transport errors"),
      perPath("pathwise_datapath_path_probes_total", "probes of a failed path"),
      perPath("pathwise_datapath_path_probe_failures_total", "probe failures"),
    ], "ops", "A failover is an I/O that left the path for another; a timeout (--io-timeout) or transport error takes the path out of use, and probes bring it back."), NEEDS),
  ];
}
