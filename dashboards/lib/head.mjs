// SPDX-License-Identifier: Apache-2.0
// @ts-check
// pathwise / Head: a namespace's merged latency and how it shares its I/O.
// A head's series are its paths' summed by head: the default metrics profile
// has no pathwise_head_io_* but the in-flight gauge (README "What earns a
// series by default"), and the sums are the head's counters exactly.
import { H, RI, dashboard, target, ts, shareTs, bars, q, mean } from "./common.mjs";

/** @param {string} m */
const share = (m) =>
  `sum by (instance, head, path) (rate(${m}{${H}}[${RI}]))\n/ on (instance, head) group_left ()\nsum by (instance, head) (rate(${m}{${H}}[${RI}]))`;

export function head() {
  return dashboard("pathwise-head", "pathwise / Head",
    "A multipath head (namespace): its merged latency against each path's, and how its traffic is shared between paths.",
    ["datasource", "instance", "subsystem", "head"], [
      ts("p99 latency: head (merged) vs its paths", [9, 12], [
        target(q(0.99, `${H},op=~"read|write"`, "instance, head"), "head {{instance}} {{head}}"),
        target(q(0.99, `${H},op=~"read|write"`, "instance, head, path"), "path {{instance}} {{path}}"),
      ], "s"),
      ts("Mean latency: head (merged) vs its paths", [9, 12], [
        target(mean("pathwise_path_io_latency_seconds", H, "instance, head"), "head {{instance}} {{head}}"),
        target(mean("pathwise_path_io_latency_seconds", H, "instance, path"), "path {{instance}} {{path}}"),
      ], "s"),
      shareTs("Share of I/Os per path", [8, 12], [target(share("pathwise_path_io_completed_total"), "{{instance}} {{path}}")]),
      shareTs("Share of bytes per path", [8, 12], [target(share("pathwise_path_io_bytes_total"), "{{instance}} {{path}}")]),
      ts("Head IOPS and block-layer errors", [8, 12], [
        target(`sum by (instance, head) (rate(pathwise_path_io_completed_total{${H}}[${RI}]))`, "IOPS {{instance}} {{head}}"),
        // Error series exist once nonzero (default metrics profile): 0 for a
        // head with I/O and none.
        target(`sum by (instance, head) (rate(pathwise_path_io_errors_total{${H}}[${RI}]))\nor\n0 * sum by (instance, head) (rate(pathwise_path_io_completed_total{${H}}[${RI}]))`, "block-layer errors {{instance}} {{head}}"),
      ], "iops"),
      ts("Path weights and imbalance", [8, 12], [
        target(`pathwise_path_weight{${H},op_group="read"}`, "read weight {{instance}} {{path}}"),
        target(`pathwise_head_latency_imbalance_ratio{${H}}`, "imbalance {{instance}} {{head}}"),
      ], "none"),
      bars("Paths of the head by health", [6, 24], [target(`pathwise_head_paths{${H}}`, "{{instance}} {{head}} {{state}}")], "basic"),
    ]);
}
