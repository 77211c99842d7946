// SPDX-License-Identifier: Apache-2.0
// The dashboards, recording rules and alerts work with the agent's default
// metrics profile (--metrics.profile=default, README "What earns a series
// by default"):
// - every pathwise_* metric a dashboard query (panels and template
//   variables) or a rule's expr reads is in the default exposition: the
//   union of tests/unit/golden/*.default.prom, which the unit tests keep
//   equal to what the exporter renders (everything.default.prom has every
//   optional part but --queues). A metric that only the full goldens
//   (*.prom) have is a failure ("full-only"), as is one in no exposition;
//   the --queues families and the datapath's own exposition, to which
//   --metrics.profile does not apply and which no golden here holds, pass
//   by name (NO_PROFILE) and are listed;
// - a dashboard query on a family the default profile exports only once
//   nonzero (block-layer and NVMe errors) has an `or` fallback, or its
//   panel is empty on a healthy host (the testbed's deploy e2e case wants
//   every panel query non-empty);
// - a path StateSet (pathwise_path_ana_state, pathwise_path_health) has
//   only its current state's series by default, so a query must test it
//   with == 1, never == 0 / != 1 / < 1;
// - the promtool rule tests (deploy/prometheus/tests/*.test.yml) pass with
//   their input series in the default profile's shape: a path StateSet
//   member is stale while it is 0, and pathwise_head_io_* (but in-flight) is
//   gone.
// Before all that, a self-test: a query on a full-only family and a
// StateSet tested against 0 are caught.
//   node check-default-profile.mjs REPO_ROOT
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import YAML from "yaml";

const root = process.argv[2];
assert.ok(root, "usage: check-default-profile.mjs REPO_ROOT");
const goldenDir = path.join(root, "tests/unit/golden");
const NO_PROFILE = /^pathwise_(queue|flow|datapath)_/;
// Families the default profile exports only once nonzero: a dashboard panel
// on them needs a fallback (`or 0 * ...`) not to go empty on a healthy host.
const ONCE_NONZERO = /\bpathwise_(path|device)_(io_errors_total|nvme_errors_total)\b/;
const PATH_STATESETS = /\bpathwise_path_(ana_state|health)\b(\{[^}]*\})?\s*(==\s*0\b|!=\s*1\b|<\s*1\b)/;

let failures = 0;
function check(name, fn) {
  try { fn(); console.log(`ok   ${name}`); } catch (e) { failures++; console.log(`FAIL ${name}: ${e.message}`); }
}

// Family name -> type, from the # TYPE lines of the goldens.
function families(files) {
  const out = new Map();
  for (const f of files) {
    for (const m of fs.readFileSync(path.join(goldenDir, f), "utf8").matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      out.set(m[1], m[2]);
    }
  }
  return out;
}
const goldens = fs.readdirSync(goldenDir).filter((f) => f.endsWith(".prom")).sort();
const defaultFiles = goldens.filter((f) => f.endsWith(".default.prom"));
const DEFAULT = families(defaultFiles);
const FULL = families(goldens.filter((f) => !f.endsWith(".default.prom")));
check(`default goldens: ${defaultFiles.join(", ")}`, () => {
  assert.ok(defaultFiles.includes("everything.default.prom"), "everything.default.prom missing");
  assert.ok(DEFAULT.size >= 40, `only ${DEFAULT.size} families`);
});

// The pathwise_* metric names an expression reads: tokens without a colon
// (a recording rule's name is not an exported metric).
function metricsOf(expr) {
  const names = new Set();
  for (const [tok] of expr.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    if (tok.startsWith("pathwise_") && !tok.includes(":")) names.add(tok);
  }
  return names;
}

// The family a queried name belongs to, and where it is.
function classify(name) {
  const base = name.replace(/_(bucket|sum|count)$/, "");
  const fam = [name, base].find((n) => DEFAULT.has(n) || FULL.has(n)) ?? name;
  if (fam !== name && (DEFAULT.get(fam) ?? FULL.get(fam)) !== "histogram") return { fam: name, where: "none" };
  if (DEFAULT.has(fam)) return { fam, where: "default" };
  if (FULL.has(fam)) return { fam, where: "full-only" };
  if (NO_PROFILE.test(base)) return { fam: base, where: "no-profile" };
  return { fam, where: "none" };
}

// The problems of one query, "" when none; `dashboard`: a panel's.
function problems(expr, dashboard = false) {
  const out = [];
  for (const name of metricsOf(expr)) {
    const { fam, where } = classify(name);
    if (where === "full-only") out.push(`${fam} is only in --metrics.profile=full`);
    if (where === "none") out.push(`${name} is in no exposition`);
  }
  // The datapath's own exposition has no profile: its zeros are there.
  if (dashboard && ONCE_NONZERO.test(expr) && !/\bor\b/.test(expr) && !/pathwise_datapath_/.test(expr)) {
    out.push(`${expr.match(ONCE_NONZERO)[0]} has series only once nonzero by default: add an 'or 0 * ...' fallback`);
  }
  const m = expr.match(PATH_STATESETS);
  if (m) out.push(`'${m[0]}': a path StateSet has only its current state's series by default; test == 1`);
  return out.join("; ");
}

check("self-test: a full-only family and a StateSet tested against 0 are caught", () => {
  assert.match(problems("sum by (head) (rate(pathwise_head_io_completed_total[5m]))"), /only in --metrics.profile=full/);
  assert.match(problems('histogram_quantile(0.9, rate(pathwise_head_io_latency_seconds_bucket[5m]))'), /only in --metrics.profile=full/);
  assert.match(problems('pathwise_path_health{state="idle"} == 0'), /current state/);
  assert.match(problems("rate(pathwise_no_such_total[5m])"), /in no exposition/);
  assert.match(problems("sum by (path) (rate(pathwise_path_io_errors_total[1m]))", true), /only once nonzero/);
  assert.equal(problems('sum by (head) (rate(pathwise_path_io_completed_total[5m])) and pathwise_path_health{state="failed"} == 1'), "");
});

// The queries: every dashboard's panel targets and query variables, every
// rule's expr.
const queries = [];
const ddir = path.join(root, "dashboards");
for (const f of fs.readdirSync(ddir).filter((f) => f.endsWith(".json")).sort()) {
  const walk = (o, where) => {
    if (Array.isArray(o)) return o.forEach((x, i) => walk(x, `${where}[${i}]`));
    if (!o || typeof o !== "object") return;
    if (typeof o.expr === "string") queries.push({ where: `${f} ${o.refId ?? ""} ${where}`, expr: o.expr, dashboard: true });
    if (o.type === "query" && typeof o.query?.query === "string") queries.push({ where: `${f} variable ${o.name}`, expr: o.query.query, dashboard: true });
    for (const [k, v] of Object.entries(o)) walk(v, `${where}.${k}`);
  };
  walk(JSON.parse(fs.readFileSync(path.join(ddir, f), "utf8")), "");
}
const rulesFile = path.join(root, "deploy/prometheus/pathwise-rules.yml");
for (const g of YAML.parse(fs.readFileSync(rulesFile, "utf8")).groups) {
  for (const r of g.rules) queries.push({ where: `rules ${g.name} ${r.alert ?? r.record}`, expr: String(r.expr) });
}
const seen = new Map();
check(`${queries.length} dashboard and rule queries read only the default profile's metrics`, () => {
  assert.ok(queries.length > 100, `only ${queries.length} queries found`);
  const bad = [];
  for (const q of queries) {
    const p = problems(q.expr, q.dashboard);
    if (p) bad.push(`${q.where}: ${p}`);
    for (const name of metricsOf(q.expr)) {
      const { fam, where } = classify(name);
      seen.set(fam, where);
    }
  }
  assert.equal(bad.length, 0, "\n  " + bad.join("\n  "));
});
const noProfile = [...seen].filter(([, w]) => w === "no-profile").map(([f]) => f).sort();
console.log(`     ${seen.size} metrics queried; ${seen.size - noProfile.length} in the default goldens; ` +
  `${noProfile.length} of --queues or the datapath (no profile there): ${noProfile.join(" ")}`);

// The rule tests with their inputs as the default profile exports them.
// Value notation (promtool): "a", "axN" (N+1 times a), "a+bxN", "_", "_xN",
// "stale", space-separated.
function expand(values) {
  const out = [];
  for (const tok of values.trim().split(/\s+/)) {
    const m = tok.match(/^(-?[\d.e+]+|_)(?:([+-][\d.e]+)?x(\d+))?$/);
    if (!m) { out.push(null); continue; }  // not understood: left as it is
    const [, a, step, n] = m;
    if (n === undefined) { out.push(a); continue; }
    for (let i = 0; i <= Number(n); i++) {
      out.push(a === "_" ? "_" : String(Number(a) + i * Number(step ?? 0)));
    }
  }
  return out;
}
function toDefault(t) {
  let dropped = 0, staled = 0;
  for (const tc of t.tests ?? []) {
    const kept = [];
    for (const s of tc.input_series ?? []) {
      const name = s.series.match(/^[^{]+/)[0];
      if (/^pathwise_head_io_/.test(name) && name !== "pathwise_head_io_inflight") { dropped++; continue; }
      if (/^pathwise_path_(ana_state|health)$/.test(name)) {
        const v = expand(String(s.values));
        if (!v.includes(null) && v.some((x) => x === "0")) {
          staled++;
          if (v.every((x) => x === "0" || x === "_")) { dropped++; continue; }
          s.values = v.map((x) => (x === "0" ? "stale" : x)).join(" ");
        }
      }
      kept.push(s);
    }
    tc.input_series = kept;
  }
  return { dropped, staled };
}
check("the rule tests pass with default-profile inputs", () => {
  const tdir = path.join(root, "deploy/prometheus/tests");
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pathwise-default-profile-"));
  try {
    fs.mkdirSync(path.join(tmp, "tests"));
    fs.copyFileSync(rulesFile, path.join(tmp, "pathwise-rules.yml"));
    let dropped = 0, staled = 0;
    const files = fs.readdirSync(tdir).filter((f) => f.endsWith(".test.yml")).sort();
    for (const f of files) {
      const t = YAML.parse(fs.readFileSync(path.join(tdir, f), "utf8"));
      const r = toDefault(t);
      dropped += r.dropped; staled += r.staled;
      fs.writeFileSync(path.join(tmp, "tests", f), YAML.stringify(t, { lineWidth: 0 }));
    }
    assert.ok(staled > 50, `only ${staled} StateSet inputs changed: the transformation did nothing`);
    try {
      execFileSync("promtool", ["test", "rules", ...files.map((f) => path.join("tests", f))],
        { cwd: tmp, encoding: "utf8", stdio: "pipe" });
    } catch (e) {
      throw new Error(`promtool test rules failed with default-profile inputs:\n${e.stdout}${e.stderr}`);
    }
    console.log(`     ${files.length} test files: ${staled} StateSet series stale while 0 (${dropped} series dropped)`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

console.log(failures ? `${failures} check(s) failed` : "the dashboards, rules and alerts work with the default profile");
process.exit(failures ? 1 : 0);
