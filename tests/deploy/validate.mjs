// SPDX-License-Identifier: Apache-2.0
// Validates pathwise's Kubernetes manifests as users get them: the output of
// the real kustomize (`kubectl kustomize`) for deploy/kubernetes (the
// read-only base), deploy/kubernetes/overlays/active and overlays/datapath,
// checked against the Kubernetes and prometheus-operator schemas (npm
// kubernetes-models, @kubernetes-models/prometheus-operator), plus
// pathwise's own deployment policy (least privilege, probes, mounts, the
// generated PrometheusRule; each overlay differs from the base only by what
// it is for). validate-overlays.mjs checks the other overlays, the
// NetworkPolicy component and the image.
//   node validate.mjs REPO_ROOT
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { check, checkDaemonsetArgs, finish, key, renderChecked, validateSchema } from "./kube.mjs";

const root = process.argv[2];
if (!root) {
  console.error("usage: node validate.mjs REPO_ROOT");
  process.exit(2);
}
const kdir = path.join(root, "deploy/kubernetes");
const activeDir = path.join(kdir, "overlays/active");

const objs = renderChecked("deploy/kubernetes", kdir);

const byKind = {};
for (const o of objs) {
  check(`schema ${key(o)}`, () => validateSchema(o));
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
check("DaemonSet: active mode off (no --actuate but off; --probe-interval, if given, 0)", () => {
  assert.ok(!c.args.some((a) => /^--actuate(=|$)/.test(a) && a !== "--actuate=off"), c.args.join(" "));
  assert.ok(!c.args.some((a) => /^--probe-interval(=|$)/.test(a) && a !== "--probe-interval=0"), c.args.join(" "));
  assert.ok(!c.args.some((a) => /^--active/.test(a)), c.args.join(" "));
});
check("DaemonSet: listens on the declared container port", () => {
  const listen = c.args.find((a) => a.startsWith("--web.listen-address="));
  assert.ok(listen, "no --web.listen-address");
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
check("DaemonSet: read-only mounts of exactly the host's /sys at the --path.sysfs", () => {
  const sysfsRoot = c.args.find((a) => a.startsWith("--path.sysfs="))?.split("=")[1] ?? "/sys";
  assert.equal(sysfsRoot, "/sys", "a sysfs root other than /sys needs SYS_ADMIN (mount namespace)");
  assert.deepEqual(pod.volumes.map((v) => v.hostPath?.path), ["/sys"]);
  assert.deepEqual(c.volumeMounts.map((m) => [m.mountPath, m.readOnly]), [["/sys", true]]);
});
checkDaemonsetArgs(root, "deploy/kubernetes", kdir, objs);
check("daemonset-args.sh with no directory reads the base", () => {
  const out = execFileSync(path.join(root, "tests/deploy/daemonset-args.sh"), { encoding: "utf8" });
  assert.deepEqual(out.trim().split("\n"), c.args);
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

// ---- overlays/active: the base plus what active mode needs, nothing else.
const active = renderChecked("overlays/active", activeDir);
const aDs = active.find((o) => o.kind === "DaemonSet");
const aPod = aDs?.spec?.template?.spec ?? {};
const ac = aPod.containers?.[0] ?? {};
const NVME_SUBSYS = "/sys/devices/virtual/nvme-subsystem";
const ACTIVE_ARGS = ["--actuate=on", "--probe-interval=1s"];
for (const o of active) {
  check(`overlays/active: schema ${key(o)}`, () => validateSchema(o));
}
check("overlays/active: the base's objects, all but the DaemonSet unchanged", () => {
  assert.deepEqual(active.map(key).sort(), objs.map(key).sort());
  for (const o of active) {
    if (o.kind !== "DaemonSet") assert.deepEqual(o, objs.find((b) => key(b) === key(o)), key(o));
  }
});
check("overlays/active: args are the base's plus --actuate=on and --probe-interval=1s", () => {
  const baseArgs = c.args.filter((a) => !/^--(actuate|probe-interval)(=|$)/.test(a));
  assert.deepEqual(ac.args, [...baseArgs, ...ACTIVE_ARGS]);
});
check("overlays/active: the DaemonSet differs from the base's only in args, securityContext, volumes, mounts and one annotation", () => {
  const strip = (d) => {
    const o = structuredClone(d);
    delete o.metadata.annotations;
    const p = o.spec.template.spec;
    delete p.volumes;
    for (const ct of p.containers) { delete ct.args; delete ct.securityContext; delete ct.volumeMounts; }
    return o;
  };
  assert.deepEqual(strip(aDs), strip(ds));
  assert.equal(ds.metadata.annotations, undefined);
  assert.deepEqual(aDs.metadata.annotations, { "pathwise.io/mode": "active" });
});
check("overlays/active: one writable mount, the host's nvme-subsystem directory; /sys stays read-only", () => {
  const extra = ac.volumeMounts.filter((m) => !c.volumeMounts.some((b) => b.name === m.name));
  assert.deepEqual(ac.volumeMounts.slice(0, c.volumeMounts.length), c.volumeMounts);
  assert.deepEqual(extra.map((m) => [m.mountPath, m.readOnly]), [[NVME_SUBSYS, false]]);
  assert.deepEqual(ac.volumeMounts.filter((m) => m.readOnly === false).map((m) => m.mountPath), [NVME_SUBSYS]);
  const vol = aPod.volumes.find((v) => v.name === extra[0].name);
  assert.deepEqual(vol.hostPath, { path: NVME_SUBSYS, type: "Directory" });
  assert.deepEqual(aPod.volumes.slice(0, pod.volumes.length), pod.volumes);
  assert.equal(aPod.volumes.length, pod.volumes.length + 1);
});
check("overlays/active: privileged only for the device cgroup; root filesystem still read-only", () => {
  const sc = ac.securityContext;
  assert.equal(sc.privileged, true);
  // The API server refuses privileged with allowPrivilegeEscalation false.
  assert.notEqual(sc.allowPrivilegeEscalation, false);
  assert.equal(sc.readOnlyRootFilesystem, true);
  assert.equal(sc.runAsUser, 0);
  // Capabilities mean nothing in a privileged container: none are listed
  // that could suggest otherwise.
  assert.equal(sc.capabilities, undefined);
});

// ---- overlays/datapath: the base unchanged plus the datapath's DaemonSet,
// Service and ServiceMonitor under their own job.
const dp = renderChecked("overlays/datapath", path.join(kdir, "overlays/datapath"));
for (const o of dp) {
  check(`overlays/datapath: schema ${key(o)}`, () => validateSchema(o));
}
const dpOnly = dp.filter((o) => !objs.some((b) => key(b) === key(o)));
check("overlays/datapath: the base's objects unchanged, plus one DaemonSet, Service and ServiceMonitor", () => {
  for (const o of objs) assert.deepEqual(dp.find((x) => key(x) === key(o)), o, key(o));
  assert.deepEqual(dpOnly.map((o) => o.kind).sort(), ["DaemonSet", "Service", "ServiceMonitor"]);
  for (const o of dpOnly) assert.equal(o.metadata.namespace, ns.metadata.name, key(o));
});
const dDs = dpOnly.find((o) => o.kind === "DaemonSet");
const dPod = dDs?.spec?.template?.spec ?? {};
const dc = dPod.containers?.[0] ?? {};
const dSvc = dpOnly.find((o) => o.kind === "Service");
const dSm = dpOnly.find((o) => o.kind === "ServiceMonitor");
check("overlays/datapath: runs `pathwise datapath --namespace=...` on labelled nodes, metrics on its declared port (not the agent's)", () => {
  assert.equal(dPod.containers.length, 1);
  assert.equal(dc.args[0], "datapath");
  assert.ok(dc.args.some((a) => /^--namespace=./.test(a)), dc.args.join(" "));
  const port = Number(dc.args.find((a) => a.startsWith("--web.listen-address=")).split(":").pop());
  assert.deepEqual(dc.ports.map((p) => p.containerPort), [port]);
  assert.notEqual(port, c.ports[0].containerPort);
  assert.equal(dPod.nodeSelector["pathwise.io/datapath"], "true");
  for (const [p, route] of [[dc.livenessProbe, "/livez"], [dc.readinessProbe, "/healthz"]]) {
    assert.equal(p.httpGet.path, route);
    assert.equal(p.httpGet.port, dc.ports[0].name);
  }
});
check("overlays/datapath: privileged with the host's /dev and a read-only /sys; nothing else of the host", () => {
  const sc = dc.securityContext;
  assert.equal(sc.privileged, true);
  assert.notEqual(sc.allowPrivilegeEscalation, false);
  assert.equal(sc.readOnlyRootFilesystem, true);
  assert.equal(sc.capabilities, undefined);
  assert.deepEqual(dPod.volumes.map((v) => v.hostPath?.path).sort(), ["/dev", "/sys"]);
  assert.deepEqual(dc.volumeMounts.map((m) => [m.mountPath, m.readOnly]).sort(), [["/dev", false], ["/sys", true]]);
  assert.notEqual(dPod.hostNetwork, true);
  assert.notEqual(dPod.hostPID, true);
  assert.equal(dPod.automountServiceAccountToken, false);
});
check("overlays/datapath: Service and ServiceMonitor select it; its job is pathwise-datapath, not the agent's", () => {
  assert.equal(dSvc.spec.clusterIP, "None");
  for (const [k, v] of Object.entries(dSvc.spec.selector)) assert.equal(dDs.spec.template.metadata.labels[k], v, k);
  assert.equal(dSvc.spec.ports[0].targetPort, dc.ports[0].name);
  for (const [k, v] of Object.entries(dSm.spec.selector.matchLabels)) assert.equal(dSvc.metadata.labels[k], v, k);
  assert.equal(dSm.spec.endpoints[0].port, dSvc.spec.ports[0].name);
  assert.equal(dSvc.metadata.labels[dSm.spec.jobLabel], "pathwise-datapath");
  // Its pods must not be the agent's Service's endpoints.
  assert.ok(Object.entries(svc.spec.selector).some(([k, v]) => dDs.spec.template.metadata.labels[k] !== v));
});

finish();
