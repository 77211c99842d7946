// SPDX-License-Identifier: Apache-2.0
// @ts-check
// What pathwise's dashboards share: the data source, the variables, the
// PromQL helpers and one builder per kind of panel, on Grafana's foundation
// SDK so that `tsc --checkJs` (tests/deploy/dashboards-test.sh) rejects a
// misspelt option or a value of the wrong type.
import * as cog from "@grafana/grafana-foundation-sdk/cog";
import * as common from "@grafana/grafana-foundation-sdk/common";
import * as dash from "@grafana/grafana-foundation-sdk/dashboard";
import * as prom from "@grafana/grafana-foundation-sdk/prometheus";
import * as timeseries from "@grafana/grafana-foundation-sdk/timeseries";
import * as table from "@grafana/grafana-foundation-sdk/table";
import * as bargauge from "@grafana/grafana-foundation-sdk/bargauge";
import * as statetimeline from "@grafana/grafana-foundation-sdk/statetimeline";

/** @typedef {cog.Builder<dash.Panel>} AnyPanel */
/** @typedef {cog.Builder<dash.RowPanel>} Row */
/** @typedef {{type: "panel", panel: AnyPanel, needs?: string} | {type: "row", row: Row}} Item */

export const DS = { type: "prometheus", uid: "${datasource}" };

// Series selectors; every variable is a multi-value regex.
export const I = 'instance=~"$instance"';
export const S = `${I},subsystem=~"$subsystem"`;
export const H = `${S},head=~"$head"`;
export const P = `${H},path=~"$path"`;
export const RI = "$__rate_interval";

/**
 * @param {string} name
 * @param {string} label
 * @param {string} query
 */
export function variable(name, label, query) {
  return new dash.QueryVariableBuilder(name)
    .label(label)
    .datasource(DS)
    .query({ query, refId: `${name}-var` })
    .definition(query)
    .refresh(dash.VariableRefresh.OnTimeRangeChanged)
    .sort(dash.VariableSort.AlphabeticalAsc)
    .multi(true)
    .includeAll(true)
    .allValue(".*")
    .current({ selected: true, text: ["All"], value: ["$__all"] });
}

/** @type {Record<string, cog.Builder<dash.VariableModel>>} */
export const VARIABLES = {
  datasource: new dash.DatasourceVariableBuilder("datasource").label("Data source").type("prometheus")
    .hide(dash.VariableHide.DontHide),
  instance: variable("instance", "Node (instance)", "label_values(pathwise_build_info, instance)"),
  subsystem: variable("subsystem", "Subsystem", `label_values(pathwise_subsystem_info{${I}}, subsystem)`),
  head: variable("head", "Head", `label_values(pathwise_head_info{${S}}, head)`),
  path: variable("path", "Path", `label_values(pathwise_path_info{${H}}, path)`),
  nqn: variable("nqn", "Subsystem (NQN)", "label_values(nqn_address:pathwise_hosts:count, nqn)"),
  address: variable("address", "Target port (address)",
    'label_values(nqn_address:pathwise_hosts:count{nqn=~"$nqn"}, address)'),
};

/**
 * A range query (a table's with `table: true`: instant, table format).
 * @param {string} expr
 * @param {string} legend
 * @param {{table?: boolean, instant?: boolean, heatmap?: boolean}} [how]
 */
export function target(expr, legend, how = {}) {
  const t = new prom.DataqueryBuilder().datasource(DS).expr(expr).legendFormat(legend);
  if (how.table) t.format(prom.PromQueryFormat.Table);
  if (how.heatmap) t.format(prom.PromQueryFormat.Heatmap);
  return how.table || how.instant ? t.instant() : t.range();
}
/** @param {string} expr */
export const tableTarget = (expr) => target(expr, "", { table: true });

/**
 * Gives a panel its targets (refIds A, B, ...), data source, title and size.
 * @template {{withTarget(t: cog.Builder<cog.Dataquery>): any, datasource(d: common.DataSourceRef): any, title(t: string): any, height(h: number): any, span(w: number): any, description(d: string): any}} B
 * @param {B} b
 * @param {string} title
 * @param {[number, number]} size height, width
 * @param {prom.DataqueryBuilder[]} targets
 * @param {string} [description]
 * @returns {B}
 */
export function fill(b, title, [h, w], targets, description) {
  b.title(title).datasource(DS).height(h).span(w);
  targets.forEach((t, i) => b.withTarget(t.refId(String.fromCharCode(65 + i))));
  if (description) b.description(description);
  return b;
}

const legend = () => new common.VizLegendOptionsBuilder()
  .showLegend(true).displayMode(common.LegendDisplayMode.List).placement(common.LegendPlacement.Bottom);
/** @param {[string, number|null][]} steps color, from value */
export const thresholds = (steps) => new dash.ThresholdsConfigBuilder()
  .mode(dash.ThresholdsMode.Absolute).steps(steps.map(([color, value]) => ({ color, value })));

/**
 * @param {string} title
 * @param {[number, number]} size
 * @param {prom.DataqueryBuilder[]} targets
 * @param {string} unit
 * @param {string} [description]
 */
export const ts = (title, size, targets, unit, description) =>
  fill(new timeseries.PanelBuilder(), title, size, targets, description).unit(unit).legend(legend());
/** A stacked share of 0..1. @param {string} title @param {[number, number]} size @param {prom.DataqueryBuilder[]} targets */
export const shareTs = (title, size, targets) => ts(title, size, targets, "percentunit").min(0).max(1)
  .stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal)).fillOpacity(30);
/**
 * @param {string} title
 * @param {[number, number]} size
 * @param {prom.DataqueryBuilder[]} targets
 * @param {string} [description]
 */
export const tablePanel = (title, size, targets, description) =>
  fill(new table.PanelBuilder(), title, size, targets, description).showHeader(true);
/**
 * @param {string} title
 * @param {[number, number]} size
 * @param {prom.DataqueryBuilder[]} targets
 * @param {"gradient"|"basic"} [mode]
 * @param {string} [description]
 */
export const bars = (title, size, targets, mode = "gradient", description) =>
  fill(new bargauge.PanelBuilder(), title, size, targets, description)
    .displayMode(mode === "basic" ? common.BarGaugeDisplayMode.Basic : common.BarGaugeDisplayMode.Gradient)
    .orientation(mode === "basic" ? common.VizOrientation.Vertical : common.VizOrientation.Horizontal);

const COLORS = {
  optimized: "green", "non-optimized": "yellow", inaccessible: "red", "persistent-loss": "dark-red", change: "blue",
  live: "green", connecting: "yellow", resetting: "orange", deleting: "purple", dead: "red", new: "blue",
  healthy: "green", degraded: "orange", failed: "red", idle: "text",
  off: "text", "dry-run": "yellow", on: "green",
  usable: "green", ana_unusable: "purple",
};
/** @typedef {keyof typeof COLORS} State */
export const ANA = /** @type {State[]} */ (["optimized", "non-optimized", "inaccessible", "persistent-loss", "change"]);
export const CTRL = /** @type {State[]} */ (["live", "connecting", "resetting", "deleting", "dead", "new"]);
export const HEALTH = /** @type {State[]} */ (["healthy", "degraded", "failed", "idle"]);
export const ACTUATOR = /** @type {State[]} */ (["off", "dry-run", "on"]);
export const DATAPATH = /** @type {State[]} */ (["usable", "failed", "ana_unusable"]);

/**
 * A StateSet as one numeric series per object: 1 + the index of its state.
 * @param {string} metric
 * @param {string} sel
 * @param {State[]} states
 * @param {string} by
 * @param {string} [label] the StateSet's label
 */
export function stateCode(metric, sel, states, by, label = "state") {
  return `max by (${by}) (\n` + states.map((s, i) =>
    `  (${metric}{${sel},${label}="${s}"} == 1) * 0 + ${i + 1}`).join("\nor\n") + "\n)";
}
/** @param {Record<string, {text: string, color: string}>} values @returns {dash.ValueMapping[]} */
export const valueMappings = (values) => [{
  type: dash.MappingType.ValueToText,
  options: Object.fromEntries(Object.entries(values).map(([k, v], index) => [k, { ...v, index }])),
}];
/** @param {State[]} states */
const stateMappings = (states) =>
  valueMappings(Object.fromEntries(states.map((s, i) => [String(i + 1), { text: s, color: COLORS[s] }])));
/**
 * @param {string} title
 * @param {[number, number]} size
 * @param {string} expr
 * @param {string} legendFormat
 * @param {State[]} states
 */
export const timeline = (title, size, expr, legendFormat, states) =>
  fill(new statetimeline.PanelBuilder(), title, size, [target(expr, legendFormat)])
    .mappings(stateMappings(states))
    .colorScheme(new dash.FieldColorBuilder().mode(dash.FieldColorModeId.Thresholds))
    .thresholds(thresholds([["text", null]]))
    .mergeValues(true).showValue(common.VisibilityMode.Auto).rowHeight(0.8)
    .legend(new common.VizLegendOptionsBuilder().showLegend(false));

// Latency histograms arrive as native histograms (one series, `metric`)
// from a Prometheus with native histograms enabled, else as classic buckets
// (`metric_bucket`, `_sum`, `_count`); each query asks for both and gets
// whichever the scrape stored. `filter` ("and on (...) ...") narrows the
// series before they are summed.
/**
 * @param {number} p
 * @param {string} metric
 * @param {string} sel
 * @param {string} by
 * @param {string} [filter]
 */
export const hq = (p, metric, sel, by, filter = "") => {
  const f = filter ? ` ${filter}` : "";
  return `histogram_quantile(${p}, sum by (${by}) (rate(${metric}{${sel}}[${RI}])${f}))\nor\n` +
    `histogram_quantile(${p}, sum by (${by}, le) (rate(${metric}_bucket{${sel}}[${RI}])${f}))`;
};
/** @param {number} p @param {string} sel @param {string} by */
export const q = (p, sel, by) => hq(p, "pathwise_path_io_latency_seconds", sel, by);
/** @param {string} metric @param {string} sel @param {string} by */
export const mean = (metric, sel, by) => {
  const native = `sum by (${by}) (rate(${metric}{${sel}}[${RI}]))`;
  return `histogram_sum(${native}) / histogram_count(${native})\nor\n` +
    `sum by (${by}) (rate(${metric}_sum{${sel}}[${RI}])) / sum by (${by}) (rate(${metric}_count{${sel}}[${RI}]))`;
};

/**
 * A panel in a dashboard's list; `needs` says what the agent must run with
 * for its series to exist (shown in its description; the end-to-end test
 * lets such a panel's queries come back empty).
 * @param {AnyPanel} panel
 * @param {string} [needs]
 * @returns {Item}
 */
export const item = (panel, needs) => ({ type: "panel", panel, needs });
/** An open row; the panels after it are its own. @param {string} title @returns {Item} */
export const row = (title) => ({ type: "row", row: new dash.RowBuilder(title).collapsed(false) });

/**
 * @typedef {object} Built
 * @property {dash.Dashboard} json
 * @property {Map<string, string>} needs panel title -> what its series need
 */
/**
 * The dashboard: the builder lays the panels out left to right, top to
 * bottom, a row starting a new line; ids are given in that order.
 * @param {string} uid
 * @param {string} title
 * @param {string} description
 * @param {(keyof typeof VARIABLES)[]} vars
 * @param {(Item | AnyPanel)[]} items
 * @returns {Built}
 */
export function dashboard(uid, title, description, vars, items) {
  const b = new dash.DashboardBuilder(title)
    .uid(uid).description(description)
    .tags(["pathwise", "nvme", "multipath"])
    .editable().tooltip(dash.DashboardCursorSync.Crosshair).version(1)
    .time({ from: "now-1h", to: "now" }).refresh("30s").timezone("")
    .fiscalYearStartMonth(0).liveNow(false).weekStart("")
    .annotation(new dash.AnnotationQueryBuilder()
      .builtIn(1).datasource({ type: "grafana", uid: "-- Grafana --" }).enable(true).hide(true)
      .iconColor("rgba(0, 211, 255, 1)").name("Annotations & Alerts").type("dashboard"))
    .link(new dash.DashboardLinkBuilder("pathwise").type(dash.DashboardLinkType.Dashboards)
      .tags(["pathwise"]).asDropdown(true).includeVars(true).keepTime(true))
    .variables(vars.map((v) => VARIABLES[v]));
  /** @type {Map<string, string>} */
  const needs = new Map();
  for (const it of items) {
    const x = "build" in it ? item(it) : it;
    if (x.type === "row") { b.withRow(x.row); continue; }
    if (x.needs) {
      const p = x.panel.build();
      needs.set(p.title ?? "", x.needs);
    }
    b.withPanel(x.panel);
  }
  const json = b.build();
  let id = 1;
  for (const p of json.panels ?? []) {
    p.id = id++;
    const want = "title" in p ? needs.get(p.title ?? "") : undefined;
    if (want) {
      const panel = /** @type {dash.Panel} */ (p);
      const note = `Empty unless the agent runs with ${want}.`;
      panel.description = panel.description ? `${panel.description} ${note}` : note;
    }
  }
  return { json, needs };
}
