// Generates pathwise's Grafana dashboards (dashboards/*.json) from one place,
// so the three share variables, datasource handling and conventions.
//   node dashboards/generate.mjs            # rewrite the JSON files
//   node dashboards/generate.mjs --check    # exit 1 if a JSON file is stale
// No dependencies. The JSON files are committed: users import them as they are.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SCHEMA_VERSION = 41; // Grafana 12
const DS = { type: "prometheus", uid: "${datasource}" };

// Series selectors; every variable is a multi-value regex.
const I = 'instance=~"$instance"';
const S = `${I},subsystem=~"$subsystem"`;
const H = `${S},head=~"$head"`;
const P = `${H},path=~"$path"`;
const RI = "$__rate_interval";

function variable(name, label, query, extra = {}) {
  return {
    name, label, type: "query", datasource: DS,
    query: { query, refId: `${name}-var` },
    definition: query, refresh: 2, sort: 1,
    multi: true, includeAll: true, allValue: ".*",
    current: { selected: true, text: ["All"], value: ["$__all"] },
    ...extra,
  };
}
const VARIABLES = {
  datasource: {
    name: "datasource", label: "Data source", type: "datasource", query: "prometheus",
    current: {}, hide: 0, refresh: 1,
  },
  instance: variable("instance", "Node (instance)", "label_values(pathwise_build_info, instance)"),
  subsystem: variable("subsystem", "Subsystem", `label_values(pathwise_subsystem_info{${I}}, subsystem)`),
  head: variable("head", "Head", `label_values(pathwise_head_info{${S}}, head)`),
  path: variable("path", "Path", `label_values(pathwise_path_info{${H}}, path)`),
};

let nextId = 1;
function target(expr, legend, extra = {}) {
  return { datasource: DS, expr, legendFormat: legend, range: true, ...extra };
}
function panel(type, title, gridPos, targets, extra = {}) {
  const t = targets.map((x, i) => ({ refId: String.fromCharCode(65 + i), ...x }));
  return {
    id: nextId++, type, title, datasource: DS, gridPos, targets: t,
    fieldConfig: { defaults: extra.defaults ?? {}, overrides: [] },
    options: extra.options ?? {},
    ...(extra.description ? { description: extra.description } : {}),
  };
}
const ts = (title, gp, targets, unit, extra = {}) =>
  panel("timeseries", title, gp, targets, { ...extra, defaults: { unit, ...(extra.defaults ?? {}) } });
const row = (title, y) => ({ id: nextId++, type: "row", title, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] });

const ANA = ["optimized", "non-optimized", "inaccessible", "persistent-loss", "change"];
const CTRL = ["live", "connecting", "resetting", "deleting", "dead", "new"];
const HEALTH = ["healthy", "degraded", "failed", "idle"];
const COLORS = { optimized: "green", "non-optimized": "yellow", inaccessible: "red", "persistent-loss": "dark-red", change: "blue",
  live: "green", connecting: "yellow", resetting: "orange", deleting: "purple", dead: "red", new: "blue",
  healthy: "green", degraded: "orange", failed: "red", idle: "text" };
// A StateSet as one numeric series per object: 1 + the index of its state.
function stateCode(metric, sel, states, by) {
  return `max by (${by}) (\n` + states.map((s, i) =>
    `  (${metric}{${sel},state="${s}"} == 1) * 0 + ${i + 1}`).join("\nor\n") + "\n)";
}
function stateMappings(states) {
  return [{ type: "value", options: Object.fromEntries(states.map((s, i) =>
    [String(i + 1), { text: s, color: COLORS[s], index: i }])) }];
}
const timeline = (title, gp, expr, legend, states) =>
  panel("state-timeline", title, gp, [target(expr, legend)], {
    defaults: { mappings: stateMappings(states), color: { mode: "thresholds" }, thresholds: { mode: "absolute", steps: [{ color: "text", value: null }] } },
    options: { mergeValues: true, showValue: "auto", rowHeight: 0.8, legend: { showLegend: false } },
  });
// Latency histograms arrive as native histograms (one series, `metric`)
// from a Prometheus with native histograms enabled, else as classic buckets
// (`metric_bucket`, `_sum`, `_count`); each query asks for both and gets
// whichever the scrape stored.
const hq = (p, metric, sel, by) =>
  `histogram_quantile(${p}, sum by (${by}) (rate(${metric}{${sel}}[${RI}])))\nor\n` +
  `histogram_quantile(${p}, sum by (${by}, le) (rate(${metric}_bucket{${sel}}[${RI}])))`;
const q = (p, sel, by) => hq(p, "pathwise_path_io_latency_seconds", sel, by);
const mean = (metric, sel, by) => {
  const native = `sum by (${by}) (rate(${metric}{${sel}}[${RI}]))`;
  return `histogram_sum(${native}) / histogram_count(${native})\nor\n` +
    `sum by (${by}) (rate(${metric}_sum{${sel}}[${RI}])) / sum by (${by}) (rate(${metric}_count{${sel}}[${RI}]))`;
};

function dashboard(uid, title, description, vars, panels) {
  return {
    uid, title, description,
    tags: ["pathwise", "nvme", "multipath"],
    editable: true, graphTooltip: 1, schemaVersion: SCHEMA_VERSION, version: 1,
    time: { from: "now-1h", to: "now" }, refresh: "30s", timezone: "",
    fiscalYearStartMonth: 0, liveNow: false, weekStart: "",
    annotations: { list: [{
      builtIn: 1, datasource: { type: "grafana", uid: "-- Grafana --" }, enable: true, hide: true,
      iconColor: "rgba(0, 211, 255, 1)", name: "Annotations & Alerts", type: "dashboard",
    }] },
    links: [{ title: "pathwise", type: "dashboards", tags: ["pathwise"], asDropdown: true, includeVars: true, keepTime: true }],
    templating: { list: vars.map((v) => VARIABLES[v]) },
    panels,
  };
}

function overview() {
  nextId = 1;
  return dashboard("pathwise-overview", "pathwise / Overview",
    "NVMe native multipath, per node and subsystem: path health, ANA and controller states, latency imbalance, firing alerts.",
    ["datasource", "instance", "subsystem"], [
      panel("table", "Firing pathwise alerts", { h: 7, w: 24, x: 0, y: 0 }, [target(
        'sum by (alertname, severity, instance, subsystem, head, path, controller) (ALERTS{alertname=~"Pathwise.*",alertstate="firing"})',
        "", { format: "table", instant: true, range: false })], { options: { showHeader: true } }),
      panel("bargauge", "Paths by health", { h: 8, w: 8, x: 0, y: 7 }, [target(
        `count by (instance, subsystem, state) (pathwise_path_health{${S}} == 1)`, "{{instance}} {{subsystem}} {{state}}")],
        { options: { displayMode: "gradient", orientation: "horizontal" } }),
      panel("bargauge", "Paths by ANA state", { h: 8, w: 8, x: 8, y: 7 }, [target(
        `count by (instance, subsystem, state) (pathwise_path_ana_state{${S}} == 1)`, "{{instance}} {{subsystem}} {{state}}")],
        { options: { displayMode: "gradient", orientation: "horizontal" } }),
      panel("bargauge", "Controllers by state", { h: 8, w: 8, x: 16, y: 7 }, [target(
        `count by (instance, state) ((pathwise_controller_state{${I}} == 1) and on (instance, controller) pathwise_controller_info{${S}})`,
        "{{instance}} {{state}}")], { options: { displayMode: "gradient", orientation: "horizontal" } }),
      ts("Head latency imbalance (worst usable EWMA / best)", { h: 8, w: 12, x: 0, y: 15 }, [target(
        `pathwise_head_latency_imbalance_ratio{${S}}`, "{{instance}} {{head}}")], "none",
        { defaults: { thresholds: { mode: "absolute", steps: [{ color: "green", value: null }, { color: "red", value: 3 }] } } }),
      ts("Head IOPS", { h: 8, w: 12, x: 12, y: 15 }, [target(
        `sum by (instance, head) (rate(pathwise_head_io_completed_total{${S}}[${RI}]))`, "{{instance}} {{head}}")], "iops"),
      panel("table", "Subsystems: iopolicy and recommendation", { h: 7, w: 16, x: 0, y: 23 }, [
        target(`pathwise_subsystem_info{${S}}`, "", { format: "table", instant: true, range: false }),
        target(`pathwise_subsystem_iopolicy_recommended{${S}} == 1`, "", { format: "table", instant: true, range: false }),
      ]),
      panel("table", "Agents: sampler and collectors", { h: 7, w: 8, x: 16, y: 23 }, [
        target(`pathwise_sampler_info{${I}}`, "", { format: "table", instant: true, range: false }),
        target(`min by (instance, collector) (pathwise_collector_success{${I}})`, "", { format: "table", instant: true, range: false }),
      ]),
    ]);
}

function pathDetail() {
  nextId = 1;
  const by = "instance, path";
  return dashboard("pathwise-path", "pathwise / Path detail",
    "One or more NVMe paths: latency distribution, percentiles, I/O, scoring, failovers and errors, ANA and controller states.",
    ["datasource", "instance", "subsystem", "head", "path"], [
      panel("heatmap", "Read+write latency (histogram buckets)", { h: 9, w: 24, x: 0, y: 0 }, [target(
        `sum by (le) (rate(pathwise_path_io_latency_seconds_bucket{${P},op=~"read|write"}[${RI}]))\nor\nsum(rate(pathwise_path_io_latency_seconds{${P},op=~"read|write"}[${RI}]))`, "{{le}}",
        { format: "heatmap" })], {
        options: { calculate: false, yAxis: { unit: "s" }, cellGap: 1, color: { mode: "scheme", scheme: "Oranges", steps: 64 } },
        defaults: { custom: { scaleDistribution: { type: "linear" } } },
      }),
      ts("p50 / p99 latency per path", { h: 8, w: 12, x: 0, y: 9 }, [
        target(q(0.5, `${P},op=~"read|write"`, by), "p50 {{instance}} {{path}}"),
        target(q(0.99, `${P},op=~"read|write"`, by), "p99 {{instance}} {{path}}"),
      ], "s"),
      ts("Mean latency per path and op", { h: 8, w: 12, x: 12, y: 9 }, [target(
        mean("pathwise_path_io_latency_seconds", P, "instance, path, op"),
        "{{instance}} {{path}} {{op}}")], "s"),
      ts("IOPS per path (read, write)", { h: 8, w: 12, x: 0, y: 17 }, [target(
        `sum by (instance, path, op) (rate(pathwise_path_io_completed_total{${P},op=~"read|write"}[${RI}]))`, "{{instance}} {{path}} {{op}}")], "iops"),
      ts("Throughput per path (read, write)", { h: 8, w: 12, x: 12, y: 17 }, [target(
        `sum by (instance, path, op) (rate(pathwise_path_io_bytes_total{${P},op=~"read|write"}[${RI}]))`, "{{instance}} {{path}} {{op}}")], "Bps"),
      ts("Latency EWMA per path", { h: 8, w: 12, x: 0, y: 25 }, [target(
        `pathwise_path_latency_ewma_seconds{${P}}`, "{{instance}} {{path}} {{op_group}}")], "s"),
      ts("Weight per path (0-64)", { h: 8, w: 12, x: 12, y: 25 }, [target(
        `pathwise_path_weight{${P}}`, "{{instance}} {{path}} {{op_group}}")], "none", { defaults: { min: 0, max: 64 } }),
      ts("Failovers, retries and errors per path", { h: 8, w: 24, x: 0, y: 33 }, [
        target(`sum by (instance, path) (rate(pathwise_path_failovers_total{${P}}[${RI}]))`, "failovers {{instance}} {{path}}"),
        target(`sum by (instance, path) (rate(pathwise_path_io_retries_total{${P}}[${RI}]))`, "retries {{instance}} {{path}}"),
        target(`sum by (instance, path, status_class) (rate(pathwise_path_nvme_errors_total{${P}}[${RI}]))`, "NVMe errors {{instance}} {{path}} {{status_class}}"),
        target(`sum by (instance, path, op) (rate(pathwise_path_io_errors_total{${P}}[${RI}]))`, "block-layer errors {{instance}} {{path}} {{op}}"),
      ], "ops"),
      timeline("ANA state", { h: 6, w: 24, x: 0, y: 41 },
        stateCode("pathwise_path_ana_state", P, ANA, by), "{{instance}} {{path}}", ANA),
      timeline("Controller state", { h: 6, w: 24, x: 0, y: 47 },
        `${stateCode("pathwise_controller_state", I, CTRL, "instance, controller")}\nand on (instance, controller) pathwise_path_info{${P}}`,
        "{{instance}} {{controller}}", CTRL),
      timeline("Health", { h: 6, w: 24, x: 0, y: 53 },
        stateCode("pathwise_path_health", P, HEALTH, by), "{{instance}} {{path}}", HEALTH),
    ]);
}

function head() {
  nextId = 1;
  const share = (m) =>
    `sum by (instance, head, path) (rate(${m}{${H}}[${RI}]))\n/ on (instance, head) group_left ()\nsum by (instance, head) (rate(${m}{${H}}[${RI}]))`;
  return dashboard("pathwise-head", "pathwise / Head",
    "A multipath head (namespace): its merged latency against each path's, and how its traffic is shared between paths.",
    ["datasource", "instance", "subsystem", "head"], [
      ts("p99 latency: head (merged) vs its paths", { h: 9, w: 12, x: 0, y: 0 }, [
        target(hq(0.99, "pathwise_head_io_latency_seconds", `${H},op=~"read|write"`, "instance, head"), "head {{instance}} {{head}}"),
        target(q(0.99, `${H},op=~"read|write"`, "instance, head, path"), "path {{instance}} {{path}}"),
      ], "s"),
      ts("Mean latency: head (merged) vs its paths", { h: 9, w: 12, x: 12, y: 0 }, [
        target(mean("pathwise_head_io_latency_seconds", H, "instance, head"), "head {{instance}} {{head}}"),
        target(mean("pathwise_path_io_latency_seconds", H, "instance, path"), "path {{instance}} {{path}}"),
      ], "s"),
      ts("Share of I/Os per path", { h: 8, w: 12, x: 0, y: 9 }, [target(share("pathwise_path_io_completed_total"), "{{instance}} {{path}}")],
        "percentunit", { defaults: { min: 0, max: 1, custom: { stacking: { mode: "normal" }, fillOpacity: 30 } } }),
      ts("Share of bytes per path", { h: 8, w: 12, x: 12, y: 9 }, [target(share("pathwise_path_io_bytes_total"), "{{instance}} {{path}}")],
        "percentunit", { defaults: { min: 0, max: 1, custom: { stacking: { mode: "normal" }, fillOpacity: 30 } } }),
      ts("Head IOPS and block-layer errors", { h: 8, w: 12, x: 0, y: 17 }, [
        target(`sum by (instance, head) (rate(pathwise_head_io_completed_total{${H}}[${RI}]))`, "IOPS {{instance}} {{head}}"),
        target(`sum by (instance, head) (rate(pathwise_head_io_errors_total{${H}}[${RI}]))`, "block-layer errors {{instance}} {{head}}"),
      ], "iops"),
      ts("Path weights and imbalance", { h: 8, w: 12, x: 12, y: 17 }, [
        target(`pathwise_path_weight{${H},op_group="read"}`, "read weight {{instance}} {{path}}"),
        target(`pathwise_head_latency_imbalance_ratio{${H}}`, "imbalance {{instance}} {{head}}"),
      ], "none"),
      panel("bargauge", "Paths of the head by health", { h: 6, w: 24, x: 0, y: 25 }, [target(
        `pathwise_head_paths{${H}}`, "{{instance}} {{head}} {{state}}")], { options: { displayMode: "basic", orientation: "vertical" } }),
    ]);
}

// The fleet: every node's series together, by target port (nqn, address) and
// by host, from the recording rules of group pathwise.fleet
// (deploy/prometheus/pathwise-rules.yml), which must be loaded where this
// dashboard's data source queries.
VARIABLES.nqn = variable("nqn", "Subsystem (NQN)", "label_values(nqn_address:pathwise_hosts:count, nqn)");
VARIABLES.address = variable("address", "Target port (address)",
  'label_values(nqn_address:pathwise_hosts:count{nqn=~"$nqn"}, address)');
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
const fleetMappings = [{ type: "value", options: {
  0: { text: "idle", color: "text", index: 0 }, 1: { text: "in use, healthy", color: "green", index: 1 },
  2: { text: "degraded or failed", color: "red", index: 2 } } }];
const instant = { format: "table", instant: true, range: false };

function fleet() {
  nextId = 1;
  const share = { thresholds: { mode: "absolute", steps: [{ color: "green", value: null }, { color: "orange", value: 0.01 }, { color: "red", value: 0.5 }] } };
  return dashboard("pathwise-fleet", "pathwise / Fleet",
    "Every node together: is it the host or the target? Target ports by the hosts that use them, the fleet's latency to each, and the hosts with the most degraded paths.",
    ["datasource", "nqn", "address"], [
      panel("table", "Firing fleet alerts", { h: 5, w: 24, x: 0, y: 0 }, [target(
        'sum by (alertname, nqn, address, instance) (ALERTS{alertname=~"PathwiseTargetPortDegraded|PathwiseHostPathsDegraded",alertstate="firing"})',
        "", instant)], { options: { showHeader: true } }),
      { ...panel("table", "Target ports: hosts that reach them, use them, see them degraded", { h: 8, w: 12, x: 0, y: 5 }, [
        target(`nqn_address:pathwise_hosts:count{${PORT}}`, "", instant),
        target(`nqn_address:pathwise_hosts_active:count{${PORT}}`, "", instant),
        target(`nqn_address:pathwise_hosts_degraded:count{${PORT}}`, "", instant),
        target(`nqn_address:pathwise_hosts_degraded:ratio{${PORT}}`, "", instant),
      ], {
        description: "One row per target port (subsystem NQN, address). PathwiseTargetPortDegraded fires when the share reaches fleet:pathwise_target_port_degraded_hosts:min_ratio with at least fleet:pathwise_target_port_degraded_hosts:min_count hosts.",
        options: { showHeader: true, sortBy: [{ displayName: "Value #D", desc: true }] },
      }), transformations: [{ id: "merge", options: {} }] },
      ts("Share of the hosts using each target port that see it degraded", { h: 8, w: 12, x: 12, y: 5 }, [
        target(`nqn_address:pathwise_hosts_degraded:ratio{${PORT}}`, "{{nqn}} {{address}}"),
        target("fleet:pathwise_target_port_degraded_hosts:min_ratio", "alert threshold"),
      ], "percentunit", { defaults: { min: 0, max: 1, ...share } }),
      panel("status-history", "Hosts × target ports (degraded first)", { h: 10, w: 24, x: 0, y: 13 }, [target(
        `topk(30,\n  max by (instance, nqn, address) (\n    ${TARGET_PORT.replaceAll("\n", "\n    ")}\n    * on (job, instance, path) group_left ()\n    ${PATH_STATE.replaceAll("\n", "\n    ")}\n  )\n  and on (nqn, address) nqn_address:pathwise_hosts:count{${PORT}}\n)`,
        "{{instance}} → {{address}}")], {
        description: "Each row one host's paths to one target port: red when one is degraded or failed, green when in use and healthy, grey when idle. At most 30 rows at a time, degraded first.",
        defaults: { mappings: fleetMappings, color: { mode: "thresholds" }, thresholds: { mode: "absolute", steps: [{ color: "text", value: null }] } },
        options: { showValue: "never", rowHeight: 0.9, legend: { showLegend: false } },
      }),
      ts("Fleet p50 / p99 latency per target port (read+write)", { h: 8, w: 12, x: 0, y: 23 }, [
        target(`nqn_address:pathwise_path_io_latency_seconds:p50_rate5m{${PORT}}`, "p50 {{address}}"),
        target(`nqn_address:pathwise_path_io_latency_seconds:p99_rate5m{${PORT}}`, "p99 {{address}}"),
      ], "s"),
      ts("Fleet I/O rate per target port (read+write)", { h: 8, w: 12, x: 12, y: 23 }, [
        target(`nqn_address:pathwise_path_io_completed:rate5m{${PORT}}`, "{{nqn}} {{address}}"),
      ], "iops"),
      panel("bargauge", "Hosts with the most degraded paths (share of their paths in use)", { h: 9, w: 12, x: 0, y: 31 }, [target(
        "topk(15, instance:pathwise_paths_degraded:ratio)", "{{instance}}", { instant: true, range: false })], {
        description: "PathwiseHostPathsDegraded fires when a host's share, without its paths to ports PathwiseTargetPortDegraded explains, reaches fleet:pathwise_host_degraded_paths:min_ratio over at least fleet:pathwise_host_degraded_target_ports:min_count target ports.",
        defaults: { unit: "percentunit", min: 0, max: 1, ...share },
        options: { displayMode: "gradient", orientation: "horizontal" },
      }),
      ts("Degraded paths and target ports of the worst hosts", { h: 9, w: 12, x: 12, y: 31 }, [
        target("topk(10, instance:pathwise_paths_degraded:count)", "paths {{instance}}"),
        target("topk(10, instance:pathwise_target_ports_degraded:count)", "target ports {{instance}}"),
      ], "none", { defaults: { min: 0, decimals: 0 } }),
    ]);
}

export const DASHBOARDS = {
  "pathwise-overview.json": overview,
  "pathwise-path.json": pathDetail,
  "pathwise-head.json": head,
  "pathwise-fleet.json": fleet,
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv[2] === "--check";
  let stale = 0;
  for (const [file, make] of Object.entries(DASHBOARDS)) {
    const text = JSON.stringify(make(), null, 2) + "\n";
    const p = path.join(HERE, file);
    if (check) {
      if (!fs.existsSync(p) || fs.readFileSync(p, "utf8") !== text) {
        console.log(`stale: dashboards/${file} (run node dashboards/generate.mjs)`);
        stale++;
      }
    } else fs.writeFileSync(p, text);
  }
  if (check) console.log(stale ? `${stale} stale dashboard(s)` : "dashboards match generate.mjs");
  process.exit(stale ? 1 : 0);
}
