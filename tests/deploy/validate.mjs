// Validates pathwise's Kubernetes manifests as users get them: the kustomize
// output of deploy/kubernetes, checked against the Kubernetes and
// prometheus-operator schemas (npm kubernetes-models,
// @kubernetes-models/prometheus-operator), plus pathwise's own deployment
// policy (least privilege, probes, mounts, the generated PrometheusRule).
//   node validate.mjs REPO_ROOT
// Rendering: a real kustomize (`kustomize build`, or `kubectl kustomize`) when
// one is on PATH, and always kustomize-lite.mjs; when both ran, they must
// render the same objects. $KUSTOMIZE=none forces the lite renderer only.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { Namespace, Service, ServiceAccount } from "kubernetes-models/v1";
import { DaemonSet } from "kubernetes-models/apps/v1";
import {
  PrometheusRule,
  ServiceMonitor,
} from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import { key, parseAll, renderLite } from "./kustomize-lite.mjs";

const root = process.argv[2];
if (!root) {
  console.error("usage: node validate.mjs REPO_ROOT");
  process.exit(2);
}
const kdir = path.join(root, "deploy/kubernetes");

function which(cmd) {
  for (const d of (process.env.PATH ?? "").split(":")) {
    const p = path.join(d, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {}
  }
  return null;
}

function renderReal() {
  if (process.env.KUSTOMIZE === "none") return null;
  const tries = [];
  if (which("kustomize")) tries.push(["kustomize", ["build", kdir]]);
  if (which("kubectl")) tries.push(["kubectl", ["kustomize", kdir]]);
  for (const [cmd, args] of tries) {
    try {
      const out = execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
      return { how: `${cmd} ${args[0]}`, objs: parseAll(out, `${cmd} output`) };
    } catch (e) {
      console.log(`note: ${cmd} ${args[0]} failed (${String(e.stderr ?? e).split("\n")[0]}), trying the next renderer`);
    }
  }
  return null;
}

let failures = 0;
function check(name, fn) {
  try {
    fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e.message}`);
  }
}

const lite = renderLite(kdir);
const real = renderReal();
let objs = lite;
if (real) {
  console.log(`rendered with ${real.how} and with kustomize-lite`);
  check("kustomize and kustomize-lite render the same objects", () => {
    const a = new Map(real.objs.map((o) => [key(o), o]));
    const b = new Map(lite.map((o) => [key(o), o]));
    assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort());
    for (const [k, o] of a) assert.deepEqual(o, b.get(k), k);
  });
  objs = real.objs;
} else {
  console.log("rendered with kustomize-lite (no kustomize or kubectl on PATH)");
}

const MODELS = {
  "v1/Namespace": Namespace,
  "v1/ServiceAccount": ServiceAccount,
  "v1/Service": Service,
  "apps/v1/DaemonSet": DaemonSet,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
  "monitoring.coreos.com/v1/PrometheusRule": PrometheusRule,
};
const byKind = {};
for (const o of objs) {
  const id = `${o.apiVersion}/${o.kind}`;
  check(`schema ${key(o)}`, () => {
    const M = MODELS[id];
    assert.ok(M, `unexpected kind ${id}`);
    new M(o).validate();
  });
  (byKind[o.kind] ??= []).push(o);
}

check("exactly one Namespace, ServiceAccount, DaemonSet, Service, ServiceMonitor, PrometheusRule", () => {
  assert.deepEqual(
    Object.keys(byKind).sort(),
    ["DaemonSet", "Namespace", "PrometheusRule", "Service", "ServiceAccount", "ServiceMonitor"]);
  for (const [k, v] of Object.entries(byKind)) assert.equal(v.length, 1, k);
});
const ns = byKind.Namespace?.[0];
const ds = byKind.DaemonSet?.[0];
const svc = byKind.Service?.[0];
const sm = byKind.ServiceMonitor?.[0];
const pr = byKind.PrometheusRule?.[0];
const pod = ds?.spec?.template?.spec ?? {};
const c = pod.containers?.[0] ?? {};

check("every namespaced object is in the Namespace", () => {
  for (const o of objs) if (o.kind !== "Namespace") assert.equal(o.metadata.namespace, ns.metadata.name, key(o));
});
check("DaemonSet: one container, runs `pathwise serve`", () => {
  assert.equal(pod.containers.length, 1);
  assert.equal(c.args[0], "serve");
});
check("DaemonSet: active mode off (no --active* flag)", () => {
  assert.ok(!c.args.some((a) => /^--active/.test(a)), c.args.join(" "));
});
check("DaemonSet: listens on the declared container port", () => {
  const listen = c.args.find((a) => a.startsWith("--listen_address="));
  assert.ok(listen, "no --listen_address");
  const port = Number(listen.split(":").pop());
  assert.deepEqual(c.ports.map((p) => p.containerPort), [port]);
});
check("DaemonSet: tolerates every taint", () => {
  assert.ok(pod.tolerations.some((t) => t.operator === "Exists" && !t.key && !t.effect));
});
check("DaemonSet: cpu and memory requests and limits", () => {
  for (const kind of ["requests", "limits"]) for (const r of ["cpu", "memory"]) assert.ok(c.resources?.[kind]?.[r], `${kind}.${r}`);
});
check("DaemonSet: liveness GET /livez, readiness GET /healthz, on the metrics port", () => {
  for (const [p, path] of [[c.livenessProbe, "/livez"], [c.readinessProbe, "/healthz"]]) {
    assert.equal(p.httpGet.path, path);
    const port = p.httpGet.port;
    assert.ok(port === c.ports[0].containerPort || port === c.ports[0].name, `port ${port}`);
  }
});
check("DaemonSet: least privilege (drop ALL; add only BPF, PERFMON, SYS_RESOURCE)", () => {
  const sc = c.securityContext;
  assert.notEqual(sc.privileged, true);
  assert.equal(sc.allowPrivilegeEscalation, false);
  assert.equal(sc.readOnlyRootFilesystem, true);
  assert.deepEqual(sc.capabilities.drop, ["ALL"]);
  assert.deepEqual([...sc.capabilities.add].sort(), ["BPF", "PERFMON", "SYS_RESOURCE"]);
  assert.equal(pod.securityContext?.seccompProfile?.type, "RuntimeDefault");
});
check("DaemonSet: no hostNetwork, hostPID or hostIPC; no API token", () => {
  assert.notEqual(pod.hostNetwork, true);
  assert.notEqual(pod.hostPID, true);
  assert.notEqual(pod.hostIPC, true);
  assert.equal(pod.automountServiceAccountToken, false);
});
check("DaemonSet: read-only mounts of exactly the host's /sys at the --sysfs_root", () => {
  const sysfsRoot = c.args.find((a) => a.startsWith("--sysfs_root="))?.split("=")[1] ?? "/sys";
  assert.equal(sysfsRoot, "/sys", "a sysfs root other than /sys needs SYS_ADMIN (mount namespace)");
  assert.deepEqual(pod.volumes.map((v) => v.hostPath?.path), ["/sys"]);
  assert.deepEqual(c.volumeMounts.map((m) => [m.mountPath, m.readOnly]), [["/sys", true]]);
});
check("daemonset-args.sh (used by the testbed and capability tests) reads the same args and capabilities", () => {
  const sh = path.join(root, "tests/deploy/daemonset-args.sh");
  const run = (m) => execFileSync(sh, [m], { encoding: "utf8" }).trim().split("\n");
  assert.deepEqual(run("--args"), c.args);
  assert.deepEqual(run("--caps"), c.securityContext.capabilities.add);
});
check("Service: headless, selects the DaemonSet's pods, targets the metrics port", () => {
  assert.equal(svc.spec.clusterIP, "None");
  for (const [k, v] of Object.entries(svc.spec.selector)) assert.equal(ds.spec.template.metadata.labels[k], v, k);
  assert.equal(svc.spec.ports[0].targetPort, c.ports[0].name);
});
check("ServiceMonitor: selects the Service and scrapes its port; job matches PathwiseAgentDown", () => {
  for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) assert.equal(svc.metadata.labels[k], v, k);
  assert.equal(sm.spec.endpoints[0].port, svc.spec.ports[0].name);
  assert.match(svc.metadata.labels[sm.spec.jobLabel], /^pathwise/);
});
check("PrometheusRule: spec.groups equals deploy/prometheus/pathwise-rules.yml", () => {
  const src = YAML.parse(fs.readFileSync(path.join(root, "deploy/prometheus/pathwise-rules.yml"), "utf8"));
  assert.deepEqual(pr.spec, src);
});

console.log(failures ? `${failures} check(s) failed` : "all manifest checks passed");
process.exit(failures ? 1 : 0);
