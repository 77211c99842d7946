// Checks the alert rules against their documented contract, beyond what promtool does:
// - each alert has severity (critical|warning|info), a summary, and a
//   description that names subsystem, head, path and controller;
// - deploy/prometheus/tests/*.test.yml has, for every alert, at least one
//   case where it fires (non-empty exp_alerts) and one where it must not
//   (empty exp_alerts);
// - the alerts the issue lists are all there.
//   node check-rules-tests.mjs REPO_ROOT
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";

const root = process.argv[2];
const rules = YAML.parse(fs.readFileSync(path.join(root, "deploy/prometheus/pathwise-rules.yml"), "utf8"));
const tdir = path.join(root, "deploy/prometheus/tests");
const fires = new Map();
const quiet = new Map();
for (const f of fs.readdirSync(tdir).filter((f) => f.endsWith(".test.yml"))) {
  const t = YAML.parse(fs.readFileSync(path.join(tdir, f), "utf8"));
  for (const tc of t.tests ?? []) {
    for (const a of tc.alert_rule_test ?? []) {
      const m = (a.exp_alerts ?? []).length ? fires : quiet;
      m.set(a.alertname, [...(m.get(a.alertname) ?? []), tc.name]);
    }
  }
}

const REQUIRED = [
  "PathwisePathDegraded", "PathwisePathFailed", "PathwisePathFailovers",
  "PathwiseNoOptimizedPath", "PathwiseSinglePathLeft", "PathwiseLatencyImbalance",
  "PathwiseIopolicyMismatch", "PathwiseAgentDown", "PathwiseBpfUnavailable",
  "PathwiseEventsDropped", "PathwiseActuatorFailed", "PathwiseActuatorRefused",
  "PathwiseProbesFailing", "PathwiseProbesUnavailable",
];
let failures = 0;
const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert);
const names = alerts.map((a) => a.alert);
function check(name, fn) {
  try { fn(); console.log(`ok   ${name}`); } catch (e) { failures++; console.log(`FAIL ${name}: ${e.message}`); }
}
check("every documented alert is defined once", () => {
  for (const n of REQUIRED) assert.equal(names.filter((x) => x === n).length, 1, n);
});
for (const a of alerts) {
  check(`${a.alert}: severity, summary, description naming subsystem/head/path/controller`, () => {
    assert.match(a.labels?.severity ?? "", /^(critical|warning|info)$/);
    assert.ok(a.annotations?.summary, "summary");
    const d = a.annotations?.description ?? "";
    for (const w of ["subsystem", "head", "path", "controller"]) assert.match(d, new RegExp(w), `description lacks '${w}'`);
  });
  check(`${a.alert}: a unit test fires it and one must not`, () => {
    assert.ok(fires.has(a.alert), "no firing case");
    assert.ok(quiet.has(a.alert), "no non-firing case");
  });
}
check("no test names an alert that does not exist", () => {
  for (const n of [...fires.keys(), ...quiet.keys()]) assert.ok(names.includes(n), n);
});
check("severities: NoOptimizedPath critical, IopolicyMismatch info", () => {
  const sev = Object.fromEntries(alerts.map((a) => [a.alert, a.labels.severity]));
  assert.equal(sev.PathwiseNoOptimizedPath, "critical");
  assert.equal(sev.PathwiseIopolicyMismatch, "info");
});
check("`for:` of the issue: Degraded 1m, Imbalance 5m, IopolicyMismatch 30m", () => {
  const f = Object.fromEntries(alerts.map((a) => [a.alert, a.for]));
  assert.equal(f.PathwisePathDegraded, "1m");
  assert.equal(f.PathwiseLatencyImbalance, "5m");
  assert.equal(f.PathwiseIopolicyMismatch, "30m");
});
console.log(failures ? `${failures} check(s) failed` : `all ${alerts.length} alerts covered`);
process.exit(failures ? 1 : 0);
