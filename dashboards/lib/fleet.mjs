// SPDX-License-Identifier: Apache-2.0
// @ts-check
// pathwise / Fleet: every node together, from the recording rules of group
// pathwise.fleet (deploy/prometheus/pathwise-rules.yml), which must be
// loaded where this dashboard's data source queries.
import * as common from "@grafana/grafana-foundation-sdk/common";
import * as dash from "@grafana/grafana-foundation-sdk/dashboard";
import * as statushistory from "@grafana/grafana-foundation-sdk/statushistory";
import { dashboard, fill, target, tableTarget, tablePanel, ts, bars, thresholds, valueMappings } from "./common.mjs";

const PORT = 'nqn=~"$nqn",address=~"$address"';
// Each path's target port, as the rules join it: the subsystem's NQN and the
// address without the host's own part.
const TARGET_PORT = `max by (job, instance, path, nqn, address) (
  label_replace(
      pathwise_path_info{transport=~"tcp|rdma|fc"}
    * on (job, instance, subsystem) group_left (nqn)
      max by (job, instance, subsystem, nqn) (pathwise_subsystem_info{nqn=~"$nqn"}),
    "address", "$1", "address", "(.*?)(?:,(?:src_addr|host_traddr|host_iface)=.*)?"
  )
)`;
// Per path: 2 degraded or failed, 1 in use and healthy, 0 idle.
const PATH_STATE = `(
    2 * max by (job, instance, path) (
        pathwise_path_health{state=~"degraded|failed"} == 1
      or pathwise_path_ana_state{state=~"inaccessible|persistent-loss"} == 1
      or (pathwise_path_info and on (job, instance, controller) (pathwise_controller_state{state="live"} == 0))
    )
  or on (job, instance, path)
    max by (job, instance, path) (pathwise_path_health{state="healthy"} == 1)
  or on (job, instance, path)
    0 * max by (job, instance, path) (pathwise_path_info)
)`;
/** @type {[string, number|null][]} */
const SHARE = [["green", null], ["orange", 0.01], ["red", 0.5]];

export function fleet() {
  return dashboard("pathwise-fleet", "pathwise / Fleet",
    "Every node together: is it the host or the target? Target ports by the hosts that use them, the fleet's latency to each, and the hosts with the most degraded paths.",
    ["datasource", "nqn", "address"], [
      tablePanel("Firing fleet alerts", [5, 24], [tableTarget(
        'sum by (alertname, nqn, address, instance) (ALERTS{alertname=~"PathwiseTargetPortDegraded|PathwiseHostPathsDegraded",alertstate="firing"})')]),
      tablePanel("Target ports: hosts that reach them, use them, see them degraded", [8, 12], [
        tableTarget(`nqn_address:pathwise_hosts:count{${PORT}}`),
        tableTarget(`nqn_address:pathwise_hosts_active:count{${PORT}}`),
        tableTarget(`nqn_address:pathwise_hosts_degraded:count{${PORT}}`),
        tableTarget(`nqn_address:pathwise_hosts_degraded:ratio{${PORT}}`),
      ], "One row per target port (subsystem NQN, address). PathwiseTargetPortDegraded fires when the share reaches fleet:pathwise_target_port_degraded_hosts:min_ratio with at least fleet:pathwise_target_port_degraded_hosts:min_count hosts.")
        .sortBy([new common.TableSortByFieldStateBuilder().displayName("Value #D").desc(true)])
        .withTransformation({ id: "merge", options: {} }),
      ts("Share of the hosts using each target port that see it degraded", [8, 12], [
        target(`nqn_address:pathwise_hosts_degraded:ratio{${PORT}}`, "{{nqn}} {{address}}"),
        target("fleet:pathwise_target_port_degraded_hosts:min_ratio", "alert threshold"),
      ], "percentunit").min(0).max(1).thresholds(thresholds(SHARE)),
      fill(new statushistory.PanelBuilder(), "Hosts × target ports (degraded first)", [10, 24], [target(
        `topk(30,\n  max by (instance, nqn, address) (\n    ${TARGET_PORT.replaceAll("\n", "\n    ")}\n    * on (job, instance, path) group_left ()\n    ${PATH_STATE.replaceAll("\n", "\n    ")}\n  )\n  and on (nqn, address) nqn_address:pathwise_hosts:count{${PORT}}\n)`,
        "{{instance}} → {{address}}")],
        "Each row one host's paths to one target port: red when one is degraded or failed, green when in use and healthy, grey when idle. At most 30 rows at a time, degraded first.")
        .mappings(valueMappings({
          0: { text: "idle", color: "text" }, 1: { text: "in use, healthy", color: "green" },
          2: { text: "degraded or failed", color: "red" } }))
        .colorScheme(new dash.FieldColorBuilder().mode(dash.FieldColorModeId.Thresholds))
        .thresholds(thresholds([["text", null]]))
        .showValue(common.VisibilityMode.Never).rowHeight(0.9)
        .legend(new common.VizLegendOptionsBuilder().showLegend(false)),
      ts("Fleet p50 / p99 latency per target port (read+write)", [8, 12], [
        target(`nqn_address:pathwise_path_io_latency_seconds:p50_rate5m{${PORT}}`, "p50 {{address}}"),
        target(`nqn_address:pathwise_path_io_latency_seconds:p99_rate5m{${PORT}}`, "p99 {{address}}"),
      ], "s"),
      ts("Fleet I/O rate per target port (read+write)", [8, 12], [
        target(`nqn_address:pathwise_path_io_completed:rate5m{${PORT}}`, "{{nqn}} {{address}}"),
      ], "iops"),
      bars("Hosts with the most degraded paths (share of their paths in use)", [9, 12], [target(
        "topk(15, instance:pathwise_paths_degraded:ratio)", "{{instance}}", { instant: true })], "gradient",
        "PathwiseHostPathsDegraded fires when a host's share, without its paths to ports PathwiseTargetPortDegraded explains, reaches fleet:pathwise_host_degraded_paths:min_ratio over at least fleet:pathwise_host_degraded_target_ports:min_count target ports.")
        .unit("percentunit").min(0).max(1).thresholds(thresholds(SHARE)),
      ts("Degraded paths and target ports of the worst hosts", [9, 12], [
        target("topk(10, instance:pathwise_paths_degraded:count)", "paths {{instance}}"),
        target("topk(10, instance:pathwise_target_ports_degraded:count)", "target ports {{instance}}"),
      ], "none").min(0).decimals(0),
    ]);
}
