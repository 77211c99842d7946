// SPDX-License-Identifier: Apache-2.0
// What tests/deploy's manifest checks share: rendering a kustomization with
// the real kustomize (`kubectl kustomize`, kustomize v5 inside kubectl; the
// machine image ships kubectl, Debian bookworm's kubernetes-client 1.20 is
// too old for components and patches with targets), schema models, and a
// check harness that counts failures.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import YAML from "yaml";
import { ConfigMap, Namespace, Service, ServiceAccount } from "kubernetes-models/v1";
import { DaemonSet } from "kubernetes-models/apps/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import {
  PrometheusRule,
  ServiceMonitor,
} from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";

export function parseAll(text, where) {
  const out = [];
  for (const d of YAML.parseAllDocuments(text)) {
    if (d.errors.length) throw new Error(`${where}: ${d.errors[0].message}`);
    const v = d.toJS();
    if (v !== null && v !== undefined) out.push(v);
  }
  return out;
}

export function key(o) {
  return `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
}

// The objects `kubectl kustomize DIR` renders; throws with kustomize's own
// error when it fails, and when kubectl is missing.
export function render(dir) {
  try {
    return parseAll(
      execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }),
      `kubectl kustomize ${dir}`);
  } catch (e) {
    if (e.code === "ENOENT") throw new Error("kubectl not found: the manifests are rendered by `kubectl kustomize`");
    const why = String(e.stderr ?? "").trim().split("\n").pop() || e.message;
    throw new Error(`kubectl kustomize ${dir} failed: ${why}`);
  }
}

// Renders a kustomization written on the fly, as a user's own overlay would
// be, in a temporary directory: make(rel) returns it as an object, where
// rel(DIR) is DIR relative to that directory (kustomize refuses absolute
// paths).
export function renderWith(make) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pathwise-kust-"));
  try {
    const k = make((dir) => path.relative(tmp, dir));
    fs.writeFileSync(path.join(tmp, "kustomization.yaml"), YAML.stringify(k));
    return render(tmp);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

export const MODELS = {
  "v1/Namespace": Namespace,
  "v1/ServiceAccount": ServiceAccount,
  "v1/Service": Service,
  "v1/ConfigMap": ConfigMap,
  "apps/v1/DaemonSet": DaemonSet,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
  "monitoring.coreos.com/v1/PrometheusRule": PrometheusRule,
};

// Throws unless `o` is of a known kind and valid against its schema.
export function validateSchema(o) {
  const M = MODELS[`${o.apiVersion}/${o.kind}`];
  assert.ok(M, `unexpected kind ${o.apiVersion}/${o.kind}`);
  new M(o).validate();
}

let failures = 0;
export function check(name, fn) {
  try {
    fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e.message}`);
  }
}
export function finish() {
  console.log(failures ? `${failures} check(s) failed` : "all manifest checks passed");
  process.exit(failures ? 1 : 0);
}

// render(dir) as a check named "NAME: renders with kubectl kustomize": the
// objects, or none after a failed check.
export function renderChecked(name, dir) {
  let objs = [];
  check(`${name}: renders with kubectl kustomize`, () => {
    objs = render(dir);
    assert.ok(objs.length > 0, "no objects");
  });
  return objs;
}

// What tests/deploy/daemonset-args.sh says a DaemonSet container of the
// kustomization DIR runs, against the rendered objects' own.
export function checkDaemonsetArgs(root, name, dir, objs) {
  const sh = path.join(root, "tests/deploy/daemonset-args.sh");
  const run = (...a) => {
    const out = execFileSync(sh, [...a, dir], { encoding: "utf8" }).trim();
    return out ? out.split("\n") : [];
  };
  check(`${name}: daemonset-args.sh (the testbed, image and capability tests read it) agrees on every container's args and capabilities`, () => {
    const want = [];
    for (const ds of objs.filter((o) => o.kind === "DaemonSet")) {
      for (const c of ds.spec.template.spec.containers) {
        want.push(`${ds.metadata.name}/${c.name}`);
        assert.deepEqual(run("--args", "--container", c.name), c.args, c.name);
        assert.deepEqual(run("--caps", "--container", c.name), c.securityContext?.capabilities?.add ?? [], c.name);
      }
    }
    assert.ok(want.length > 0, "no DaemonSet");
    assert.deepEqual(run("--containers"), want);
  });
}
