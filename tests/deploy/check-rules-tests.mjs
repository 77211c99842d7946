// SPDX-License-Identifier: Apache-2.0
// Checks the alert rules against their documented contract, beyond what promtool does:
// - each alert has severity (critical|warning|info), a summary, and a
//   description that names subsystem, head, path and controller; the fleet
//   alerts (group pathwise.fleet), which span hosts, name instead the target
//   port's nqn and address (TargetPort) or the instance (HostPaths), and say
//   "target side" or "host side" in their summary;
// - the per-path alerts carry the target port (nqn, address) that the
//   Alertmanager inhibit example matches on (their expr joins it);
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
  "PathwiseTargetPortDegraded", "PathwiseHostPathsDegraded",
];
const fleet = new Set(rules.groups.filter((g) => g.name === "pathwise.fleet").flatMap((g) => g.rules).map((r) => r.alert).filter(Boolean));
let failures = 0;
const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert);
const names = alerts.map((a) => a.alert);
function check(name, fn) {
  try { fn(); console.log(`ok   ${name}`); } catch (e) { failures++; console.log(`FAIL ${name}: ${e.message}`); }
}
check("every documented alert is defined once", () => {
  for (const n of REQUIRED) assert.equal(names.filter((x) => x === n).length, 1, n);
});
const FLEET_WORDS = {
  PathwiseTargetPortDegraded: { words: ["\\$labels.nqn", "\\$labels.address", "hosts"], side: /^Target side: / },
  PathwiseHostPathsDegraded: { words: ["\\$labels.instance", "target ports"], side: /^Host side: / },
};
for (const a of alerts) {
  const f = FLEET_WORDS[a.alert];
  check(`${a.alert}: severity, summary, description naming ${f ? f.words.join("/") : "subsystem/head/path/controller"}`, () => {
    assert.match(a.labels?.severity ?? "", /^(critical|warning|info)$/);
    assert.ok(a.annotations?.summary, "summary");
    const d = a.annotations?.description ?? "";
    for (const w of f?.words ?? ["subsystem", "head", "path", "controller"]) assert.match(d, new RegExp(w), `description lacks '${w}'`);
    if (f) assert.match(a.annotations.summary, f.side);
    assert.equal(!!f, fleet.has(a.alert), "fleet alerts are those of group pathwise.fleet");
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
check("per-path alerts carry the target port (nqn, address) for the inhibit rule", () => {
  for (const n of ["PathwisePathDegraded", "PathwisePathFailed", "PathwisePathFailovers"]) {
    const e = alerts.find((a) => a.alert === n).expr;
    assert.match(e, /group_left \(nqn, address\)/, n);
  }
});
check("`for:` of the fleet alerts: TargetPort 30s (before the per-path alerts it inhibits), HostPaths 1m", () => {
  const f = Object.fromEntries(alerts.map((a) => [a.alert, a.for]));
  assert.equal(f.PathwiseTargetPortDegraded, "30s");
  assert.equal(f.PathwiseHostPathsDegraded, "1m");
});
check("thresholds: four fleet: records of one number; the kustomize patch in docs/alerts.md points at one", () => {
  const g = rules.groups.findIndex((x) => x.name === "pathwise.fleet");
  const th = rules.groups[g].rules.filter((r) => r.record?.startsWith("fleet:"));
  assert.equal(th.length, 4);
  for (const r of th) assert.match(String(r.expr), /^vector\([0-9.]+\)$/, r.record);
  const doc = fs.readFileSync(path.join(root, "docs", "alerts.md"), "utf8");
  const m = [...doc.matchAll(/path: \/spec\/groups\/(\d+)\/rules\/(\d+)\/record\n\s*value: (\S+)/g)];
  assert.ok(m.length >= 1, "no kustomize test op in docs/alerts.md");
  for (const [, gi, ri, name] of m) assert.equal(rules.groups[+gi]?.rules[+ri]?.record, name, `docs/alerts.md: groups/${gi}/rules/${ri}`);
});
console.log(failures ? `${failures} check(s) failed` : `all ${alerts.length} alerts covered`);
process.exit(failures ? 1 : 0);
