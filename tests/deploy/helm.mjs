// SPDX-License-Identifier: Apache-2.0
// Checks pathwise's Helm chart (deploy/helm/pathwise) with the real helm
// (get-helm.sh): `helm lint --strict` with its defaults and each toggle, and
// `helm template` against the real kustomize (`kubectl kustomize`): with
// each set of values the chart renders exactly the objects of the
// kustomization it stands for, compared parsed, object by object. The only
// normalisation: the kustomize base's Namespace is left out of the
// comparison unless namespace.create is set (`helm install` installs into a
// namespace that exists). The chart adds no labels of its own, so there are
// none to strip. Rendered objects pass the schema check validate.mjs gives
// kustomize's, and daemonset-args.sh (what the testbed runs) reads the same
// args from the chart's output.
//   node helm.mjs REPO_ROOT HELM
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import YAML from "yaml";
import {
  check, checkDaemonsetArgs, finish, key, parseAll, render, renderWith, validateSchema,
} from "./kube.mjs";

const [root, helmBin] = process.argv.slice(2);
if (!root || !helmBin) {
  console.error("usage: node helm.mjs REPO_ROOT HELM");
  process.exit(2);
}
const chart = path.join(root, "deploy/helm/pathwise");
const kdir = path.join(root, "deploy/kubernetes");
const odir = path.join(kdir, "overlays");
const npDir = path.join(kdir, "components/metrics-networkpolicy");
const dashDir = path.join(root, "dashboards");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pathwise-helm-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
// helm keeps its cache and configuration here, not in $HOME.
const env = {
  ...process.env,
  HELM_CACHE_HOME: path.join(tmp, "cache"),
  HELM_CONFIG_HOME: path.join(tmp, "config"),
  HELM_DATA_HOME: path.join(tmp, "data"),
};

// helm's stdout; throws with its stderr when it fails.
function helm(...args) {
  try {
    return execFileSync(helmBin, args, { encoding: "utf8", env, stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    if (e.code === "ENOENT") throw new Error(`${helmBin} not found (get-helm.sh unpacks it: the deploy_helm_binary test)`);
    // Its output on one line, without the notes that files/ holds links.
    const lines = `${e.stdout ?? ""}\n${e.stderr ?? ""}`.split("\n")
      .filter((l) => l.trim() && !/found symbolic link in path/.test(l));
    throw new Error(`helm ${args.join(" ")} failed: ${lines.join(" | ")}`);
  }
}
const setArgs = (sets) => Object.entries(sets).flatMap(([k, v]) => ["--set", `${k}=${v}`]);
function template(sets, { release = "pathwise", namespace = "pathwise", src = chart } = {}) {
  const text = helm("template", release, src, "--namespace", namespace, ...setArgs(sets));
  const objs = parseAll(text, "helm template");
  // A template that renders nothing must leave nothing, not a document of
  // comments (helm heads each document with "# Source: TEMPLATE").
  const empty = text.split(/^---\s*$/m).filter((d) => d.trim() && parseAll(d, "helm template").length === 0)
    .map((d) => d.match(/^# Source: (.*)$/m)?.[1] ?? d.trim().slice(0, 60));
  assert.deepEqual(empty, [], `documents without an object: ${empty.join(", ")}`);
  return objs;
}

// Where two parsed objects differ: up to five JSON paths, with both values.
function differences(a, b, at = "", out = []) {
  if (out.length >= 5) return out;
  if (a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) differences(a[k], b[k], `${at}.${k}`, out);
  } else if (JSON.stringify(a) !== JSON.stringify(b)) {
    // Strings from their first difference on (a dashboard is 60 KB).
    let i = 0;
    if (typeof a === "string" && typeof b === "string") while (a[i] === b[i]) i++;
    const from = Math.max(0, i - 20);
    const show = (v) => (v === undefined ? "(absent)"
      : typeof v === "string" ? `${from ? "…" : ""}${JSON.stringify(v.slice(from, from + 80))} (${v.length} chars)`
      : JSON.stringify(v).slice(0, 120));
    out.push(`${at || "."}: helm ${show(a)}, kustomize ${show(b)}`);
  }
  return out;
}

// What each set of values stands for: a kustomization (a directory, or one
// written on the fly as a user's overlay would be).
const VARIANTS = [
  { name: "defaults", sets: {}, kust: () => render(kdir) },
  { name: "namespace.create", sets: { "namespace.create": true }, kust: () => render(kdir), withNamespace: true },
  { name: "no-operator", sets: { "serviceMonitor.enabled": false, "prometheusRule.enabled": false }, kust: () => render(path.join(odir, "no-operator")) },
  { name: "active", sets: { "active.enabled": true }, kust: () => render(path.join(odir, "active")) },
  { name: "dashboards", sets: { "dashboards.enabled": true }, kust: () => render(path.join(odir, "dashboards")) },
  { name: "networkPolicy", sets: { "networkPolicy.enabled": true },
    kust: () => renderWith((rel) => ({ resources: [rel(kdir)], components: [rel(npDir)] })) },
  // The combination docs/deployment.md describes for kustomize users.
  { name: "no-operator + dashboards + networkPolicy",
    sets: { "serviceMonitor.enabled": false, "prometheusRule.enabled": false, "dashboards.enabled": true, "networkPolicy.enabled": true },
    kust: () => renderWith((rel) => ({ resources: [rel(path.join(odir, "no-operator"))], components: [rel(dashDir), rel(npDir)] })) },
  { name: "active + networkPolicy", sets: { "active.enabled": true, "networkPolicy.enabled": true },
    kust: () => renderWith((rel) => ({ resources: [rel(path.join(odir, "active"))], components: [rel(npDir)] })) },
];

check("the chart's version and appVersion are the project's (CMakeLists.txt)", () => {
  const version = fs.readFileSync(path.join(root, "CMakeLists.txt"), "utf8").match(/^project\(pathwise VERSION ([0-9.]+)/m)?.[1];
  const c = YAML.parse(fs.readFileSync(path.join(chart, "Chart.yaml"), "utf8"));
  assert.ok(version, "no project(pathwise VERSION ...)");
  assert.equal(c.version, version);
  assert.equal(c.appVersion, version);
});
check("the chart's rules and dashboards are their one source's (files/ links to deploy/prometheus and dashboards/)", () => {
  const same = (a, b) => assert.ok(fs.readFileSync(a).equals(fs.readFileSync(b)), `${path.relative(root, a)} differs from ${path.relative(root, b)}`);
  same(path.join(chart, "files/pathwise-rules.yml"), path.join(root, "deploy/prometheus/pathwise-rules.yml"));
  const json = (d) => fs.readdirSync(d).filter((f) => f.endsWith(".json")).sort();
  const files = json(path.join(chart, "files/dashboards"));
  assert.deepEqual(files, json(dashDir));
  assert.ok(files.length > 0, "no dashboards");
  for (const f of files) same(path.join(chart, "files/dashboards", f), path.join(dashDir, f));
});

for (const v of VARIANTS) {
  check(`${v.name}: helm lint --strict passes without warnings`, () => {
    const out = helm("lint", "--strict", chart, "--namespace", "pathwise", ...setArgs(v.sets));
    assert.doesNotMatch(out, /\[(WARNING|ERROR)\]/, out);
  });
  let objs = [];
  let want = [];
  check(`${v.name}: helm template renders, kubectl kustomize renders`, () => {
    objs = template(v.sets);
    want = v.kust();
    if (!v.withNamespace) want = want.filter((o) => o.kind !== "Namespace");
    assert.ok(objs.length > 0, "helm rendered nothing");
  });
  check(`${v.name}: every object passes its schema`, () => {
    for (const o of objs) {
      try { validateSchema(o); } catch (e) { throw new Error(`${key(o)}: ${e.message}`); }
    }
  });
  check(`${v.name}: the same objects as kustomize's, object by object`, () => {
    assert.deepEqual(objs.map(key).sort(), want.map(key).sort());
    for (const o of objs) {
      const w = want.find((x) => key(x) === key(o));
      assert.deepEqual(o, w, `${key(o)}: ${differences(o, w).join("; ")}`);
    }
  });
  const file = path.join(tmp, `${v.name.replace(/[^a-z.-]+/gi, "_")}.yaml`);
  fs.writeFileSync(file, objs.map((o) => YAML.stringify(o)).join("---\n"));
  checkDaemonsetArgs(root, `${v.name}: helm template`, file, objs);
}

// Values beyond the kustomizations': each lands where it says.
check("another release, registry, port and flags: names, image, listen address, ports and annotations follow", () => {
  const objs = template({
    "image.registry": "registry.example.com/ops", "image.tag": "9.9.9", port: 9100,
    "serviceMonitor.enabled": false, "prometheusRule.enabled": false,
    "extraArgs[0]": "--log.format=json", "commonLabels.team": "storage",
  }, { release: "nodes", namespace: "monitoring" });
  for (const o of objs) validateSchema(o);
  assert.deepEqual(objs.map(key).sort(), [
    "apps/v1/DaemonSet/monitoring/nodes-pathwise", "v1/Service/monitoring/nodes-pathwise",
    "v1/ServiceAccount/monitoring/nodes-pathwise"]);
  const ds = objs.find((o) => o.kind === "DaemonSet");
  const c = ds.spec.template.spec.containers[0];
  assert.equal(c.image, "registry.example.com/ops/pathwise:9.9.9");
  assert.equal(ds.spec.template.spec.serviceAccountName, "nodes-pathwise");
  assert.ok(c.args.includes("--web.listen-address=:9100"), c.args.join(" "));
  assert.equal(c.args.at(-1), "--log.format=json");
  assert.deepEqual(c.ports.map((p) => p.containerPort), [9100]);
  const svc = objs.find((o) => o.kind === "Service");
  assert.equal(svc.spec.ports[0].port, 9100);
  assert.equal(svc.metadata.annotations["prometheus.io/port"], "9100");
  for (const o of objs) assert.equal(o.metadata.labels.team, "storage", key(o));
  assert.equal(ds.spec.template.metadata.labels.team, undefined, "commonLabels reached the pod template");
});
check("serviceMonitor.labels and prometheusRule.labels reach the operator's selectors; dashboards.namespace moves the ConfigMaps", () => {
  const objs = template({ "serviceMonitor.labels.release": "kps", "prometheusRule.labels.release": "kps",
    "dashboards.enabled": true, "dashboards.namespace": "grafana" });
  for (const k of ["ServiceMonitor", "PrometheusRule"]) assert.equal(objs.find((o) => o.kind === k).metadata.labels.release, "kps", k);
  const cms = objs.filter((o) => o.kind === "ConfigMap");
  assert.ok(cms.length > 0);
  for (const c of cms) assert.equal(c.metadata.namespace, "grafana", c.metadata.name);
});
check("values.schema.json refuses a misspelled key and a bad value", () => {
  for (const [sets, msg] of [[{ "serviceMonitr.enabled": false }, /serviceMonitr/], [{ bpf: "maybe" }, /bpf/],
    [{ "extraArgs[0]": "log.level=debug" }, /extraArgs/]]) {
    assert.throws(() => helm("template", "pathwise", chart, ...setArgs(sets)), msg, JSON.stringify(sets));
  }
});

// `helm package`: what a chart repository would serve. The links are
// followed: the archive holds the rules and the dashboards' JSON, and no
// other file of dashboards/; it renders what the directory renders.
check("helm package: the archive holds the rules and dashboards' JSON only, and renders as the directory does", () => {
  const pkgDir = path.join(tmp, "pkg");
  helm("package", chart, "--destination", pkgDir);
  const [tgz] = fs.readdirSync(pkgDir);
  const list = execFileSync("tar", ["-tzvf", path.join(pkgDir, tgz)], { encoding: "utf8" }).trim().split("\n");
  assert.ok(list.every((l) => l.startsWith("-")), `not a regular file: ${list.filter((l) => !l.startsWith("-")).join("; ")}`);
  const names = list.map((l) => l.split(/\s+/).pop());
  const dash = names.filter((n) => n.startsWith("pathwise/files/dashboards/")).map((n) => path.basename(n)).sort();
  assert.deepEqual(dash, fs.readdirSync(dashDir).filter((f) => f.endsWith(".json")).sort());
  assert.ok(names.includes("pathwise/files/pathwise-rules.yml"), "no rules");
  const sets = { "dashboards.enabled": true, "networkPolicy.enabled": true };
  assert.deepEqual(template(sets, { src: path.join(pkgDir, tgz) }), template(sets));
});

finish();
