// SPDX-License-Identifier: Apache-2.0
// Checks dashboards/*.json and extracts every panel's PromQL.
//   node check-dashboards.mjs REPO_ROOT OUT_DIR
// - valid JSON, identical to what dashboards/generate.mjs produces (run from
//   ./dashboards/, where node-run.sh copies it next to node_modules);
// - required fields: uid, title, schemaVersion (current), panels with ids,
//   types, gridPos; every panel and target on the ${datasource} variable and
//   no datasource UID of a particular install anywhere;
// - template variables: datasource (prometheus), instance, subsystem, and
//   head/path where the dashboard is about heads/paths;
// - panels whose series exist only with an opt-in of the agent (probes,
//   --queues, --actuate decisions, the datapath) say so in the generator
//   (`needs`), and only those: a query on such a family without `needs`, or
//   a panel with `needs` and no such family, fails;
// - writes OUT_DIR/dashboard-queries.jsonl (one {dashboard, panel, refId,
//   expr, promql, needs} per target: promql has Grafana's variables replaced
//   by match-all values; needs null or what the series need, so the
//   end-to-end test lets that query come back empty) for the end-to-end test, and
//   OUT_DIR/dashboard-queries.rules.yml, every query as a recording rule,
//   which the caller parses with `promtool check rules`.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [root, outDir] = process.argv.slice(2);
const ddir = path.join(root, "dashboards");
const { DASHBOARDS, SCHEMA_VERSION, render } =
  await import(pathToFileURL(path.resolve("dashboards/generate.mjs")).href);
// Families an agent exports only with an opt-in (or once it acted): probes
// (off in the DaemonSet's args), --queues, actuator decisions, the datapath.
const OPT_IN = /\bpathwise_(controller_probe_|queue_|flow_|actuator_decisions_|datapath_)/;

let failures = 0;
function check(name, fn) {
  try { fn(); console.log(`ok   ${name}`); } catch (e) { failures++; console.log(`FAIL ${name}: ${e.message}`); }
}
export function substitute(expr) {
  return expr
    .replaceAll("$__rate_interval", "1m")
    .replaceAll("$__interval", "15s")
    .replaceAll("$__range", "1h")
    .replace(/\$\{?(instance|subsystem|head|path|node|nqn|address)\}?/g, ".*");
}

const NEEDS = {
  "pathwise-overview.json": ["datasource", "instance", "subsystem"],
  "pathwise-path.json": ["datasource", "instance", "subsystem", "head", "path"],
  "pathwise-head.json": ["datasource", "instance", "subsystem", "head"],
  "pathwise-fleet.json": ["datasource", "nqn", "address"],
};
const queries = [];
const files = fs.readdirSync(ddir).filter((f) => f.endsWith(".json")).sort();
check("dashboards/ has exactly the generated dashboards", () =>
  assert.deepEqual(files, Object.keys(DASHBOARDS).sort()));
for (const f of files) {
  const text = fs.readFileSync(path.join(ddir, f), "utf8");
  let d;
  check(`${f}: valid JSON`, () => { d = JSON.parse(text); });
  if (!d) continue;
  check(`${f}: matches generate.mjs`, () => assert.equal(text, render(f)));
  const needs = DASHBOARDS[f]().needs;
  check(`${f}: uid, title, schemaVersion ${SCHEMA_VERSION}, time, panels`, () => {
    assert.match(d.uid, /^pathwise-[a-z-]+$/);
    assert.ok(d.title.startsWith("pathwise"));
    assert.equal(d.schemaVersion, SCHEMA_VERSION);
    assert.ok(d.time?.from && d.time?.to);
    assert.ok(Array.isArray(d.panels) && d.panels.length > 0);
  });
  check(`${f}: template variables ${NEEDS[f].join(", ")}`, () => {
    const vars = Object.fromEntries(d.templating.list.map((v) => [v.name, v]));
    for (const n of NEEDS[f]) assert.ok(vars[n], n);
    assert.equal(vars.datasource.type, "datasource");
    assert.equal(vars.datasource.query, "prometheus");
    for (const v of d.templating.list.filter((v) => v.type === "query")) {
      assert.equal(v.datasource.uid, "${datasource}", v.name);
      queries.push({ dashboard: f, panel: `variable ${v.name}`, refId: "var", expr: v.query.query, promql: null });
    }
  });
  check(`${f}: no datasource UID of one install`, () => {
    const walk = (o, where) => {
      if (Array.isArray(o)) return o.forEach((x, i) => walk(x, `${where}[${i}]`));
      if (o && typeof o === "object") {
        if (o.datasource && typeof o.datasource === "object" && o.datasource.type !== "grafana") {
          assert.equal(o.datasource.uid, "${datasource}", where);
        }
        if (typeof o.datasource === "string") assert.fail(`${where}: datasource by name`);
        for (const [k, v] of Object.entries(o)) walk(v, `${where}.${k}`);
      }
    };
    walk(d, f);
  });
  // Panels of collapsed rows are nested in the row.
  const panels = d.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  check(`${f}: every panel has a unique id and title, type, gridPos and PromQL targets`, () => {
    const ids = new Set(), titles = new Set();
    for (const p of panels) {
      assert.ok(!ids.has(p.id), `duplicate id ${p.id}`); ids.add(p.id);
      assert.ok(p.type && p.gridPos, `panel ${p.id}`);
      if (p.type === "row") continue;
      assert.ok(!titles.has(p.title), `duplicate title '${p.title}'`); titles.add(p.title);
      assert.ok(p.targets?.length, `panel '${p.title}' has no targets`);
      for (const t of p.targets) {
        assert.ok(t.expr?.trim(), `panel '${p.title}' ${t.refId}: empty expr`);
        queries.push({ dashboard: f, panel: p.title, refId: t.refId, expr: t.expr, promql: substitute(t.expr),
          needs: needs.get(p.title) ?? null });
      }
    }
  });
  // docs/metrics.md "Latency histograms": the classic form alone would show nothing
  // where Prometheus stores native histograms.
  check(`${f}: every latency histogram is queried native or classic`, () => {
    for (const p of panels.filter((p) => p.type !== "row")) {
      for (const t of p.targets) {
        for (const [, m, suffix] of t.expr.matchAll(/\b(pathwise_\w+_seconds)_(bucket|sum|count)\{/g)) {
          assert.ok(t.expr.includes(`(${m}{`), `'${p.title}' ${t.refId}: ${m}_${suffix} without the native ${m}`);
          if (suffix !== "bucket") assert.ok(t.expr.includes("histogram_sum("), `'${p.title}' ${t.refId}: no histogram_sum`);
        }
      }
    }
  });
  check(`${f}: exactly the panels on opt-in families say what they need`, () => {
    for (const p of panels.filter((p) => p.type !== "row")) {
      const optIn = p.targets.some((t) => OPT_IN.test(t.expr));
      assert.equal(needs.has(p.title), optIn,
        `'${p.title}': ${optIn ? "queries an opt-in family but has no needs" : "has needs but queries no opt-in family"}`);
      if (optIn) assert.match(p.description, /Empty unless the agent runs with/, p.title);
    }
    for (const t of needs.keys()) assert.ok(panels.some((p) => p.title === t), `needs for no panel: '${t}'`);
  });
}
check("the Path detail dashboard has the issue's panels", () => {
  const types = DASHBOARDS["pathwise-path.json"]().json.panels.map((/** @type {any} */ p) => p.type);
  for (const t of ["heatmap", "timeseries", "state-timeline"]) assert.ok(types.includes(t), t);
});

fs.mkdirSync(outDir, { recursive: true });
const panelQueries = queries.filter((x) => x.promql);
fs.writeFileSync(path.join(outDir, "dashboard-queries.jsonl"), panelQueries.map((x) => JSON.stringify(x)).join("\n") + "\n");
const rules = ["groups:", "  - name: dashboard-queries", "    rules:"];
panelQueries.forEach((x, i) => {
  rules.push(`      - record: dashboard:query_${i}`);
  rules.push(`        expr: ${JSON.stringify(x.promql)}`);
});
fs.writeFileSync(path.join(outDir, "dashboard-queries.rules.yml"), rules.join("\n") + "\n");
console.log(`${panelQueries.length} panel queries written to ${outDir}, ${panelQueries.filter((x) => x.needs).length} of them may be empty (needs)`);
console.log(failures ? `${failures} check(s) failed` : "all dashboard checks passed");
process.exit(failures ? 1 : 0);
