// SPDX-License-Identifier: Apache-2.0
// Validates what validate.mjs does not: the overlays no-operator and
// dashboards, the NetworkPolicy component on every overlay, and the image
// set in one place. Everything is rendered by the real kustomize
// (`kubectl kustomize`), as users get it, and schema-checked.
//   node validate-overlays.mjs REPO_ROOT
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";
import {
  check, checkDaemonsetArgs, finish, key, renderChecked, renderWith, validateSchema,
} from "./kube.mjs";

const root = process.argv[2];
if (!root) {
  console.error("usage: node validate-overlays.mjs REPO_ROOT");
  process.exit(2);
}
const kdir = path.join(root, "deploy/kubernetes");
const odir = path.join(kdir, "overlays");
const npDir = path.join(kdir, "components/metrics-networkpolicy");
const OVERLAYS = ["active", "dashboards", "datapath", "no-operator"];

check("overlays: exactly those this file and validate.mjs check", () => {
  assert.deepEqual(fs.readdirSync(odir).sort(), OVERLAYS);
});

const base = renderChecked("deploy/kubernetes", kdir);
const byKey = new Map(base.map((o) => [key(o), o]));
const ns = base.find((o) => o.kind === "Namespace")?.metadata.name;
const ds = base.find((o) => o.kind === "DaemonSet");
const metricsPort = ds?.spec.template.spec.containers[0].ports.find((p) => p.name === "metrics");
const rendered = { base };

// Every overlay: it renders, each object passes its schema, and what the
// testbed runs (daemonset-args.sh) is what it renders.
for (const name of OVERLAYS) {
  const dir = path.join(odir, name);
  const objs = renderChecked(`overlays/${name}`, dir);
  rendered[name] = objs;
  check(`overlays/${name}: every object passes its schema`, () => {
    for (const o of objs) {
      try { validateSchema(o); } catch (e) { throw new Error(`${key(o)}: ${e.message}`); }
    }
  });
  checkDaemonsetArgs(root, `overlays/${name}`, dir, objs);
}

// ---- no-operator: no custom resources; a plain Service Prometheus finds by
// its annotations.
const noop = rendered["no-operator"];
check("overlays/no-operator: no prometheus-operator resources (no CRDs needed)", () => {
  assert.deepEqual(noop.filter((o) => !/^(v1|apps\/v1)$/.test(o.apiVersion)).map(key), []);
});
check("overlays/no-operator: the base's objects but ServiceMonitor and PrometheusRule, unchanged but for the Service's annotations", () => {
  const want = base.filter((o) => !["ServiceMonitor", "PrometheusRule"].includes(o.kind)).map(key).sort();
  assert.deepEqual(noop.map(key).sort(), want);
  for (const o of noop) {
    const b = structuredClone(byKey.get(key(o)));
    const x = structuredClone(o);
    if (o.kind === "Service") { delete x.metadata.annotations; delete b.metadata.annotations; }
    assert.deepEqual(x, b, key(o));
  }
});
check("overlays/no-operator: the Service's prometheus.io annotations scrape the agent's metrics port at /metrics", () => {
  const svc = noop.find((o) => o.kind === "Service");
  assert.deepEqual(svc.metadata.annotations, {
    "prometheus.io/scrape": "true",
    "prometheus.io/port": String(metricsPort.containerPort),
    "prometheus.io/path": "/metrics",
  });
  assert.equal(svc.spec.ports.find((p) => p.targetPort === metricsPort.name)?.port, metricsPort.containerPort);
});

// ---- dashboards: the base plus each dashboards/*.json as a ConfigMap.
const dash = rendered.dashboards;
const jsonFiles = fs.readdirSync(path.join(root, "dashboards")).filter((f) => f.endsWith(".json")).sort();
const cms = dash.filter((o) => o.kind === "ConfigMap");
check("overlays/dashboards: the base's objects unchanged, plus one ConfigMap per dashboards/*.json", () => {
  for (const o of base) assert.deepEqual(dash.find((x) => key(x) === key(o)), o, key(o));
  assert.deepEqual(dash.filter((o) => !byKey.has(key(o))).map((o) => o.kind), cms.map(() => "ConfigMap"));
  assert.ok(jsonFiles.length >= 4, `dashboards: ${jsonFiles}`);
  assert.deepEqual(cms.flatMap((c) => Object.keys(c.data ?? {})).sort(), jsonFiles);
  assert.ok(cms.every((c) => Object.keys(c.data).length === 1), "one dashboard per ConfigMap");
});
check("overlays/dashboards: each ConfigMap holds its file byte for byte, a dashboard with a uid", () => {
  for (const c of cms) {
    const [[file, text]] = Object.entries(c.data);
    assert.equal(text, fs.readFileSync(path.join(root, "dashboards", file), "utf8"), file);
    assert.match(JSON.parse(text).uid ?? "", /^pathwise-/, file);
  }
});
check("overlays/dashboards: labelled grafana_dashboard \"1\" for Grafana's sidecar, in pathwise's namespace, names without a hash", () => {
  for (const c of cms) {
    assert.equal(c.metadata.labels?.grafana_dashboard, "1", c.metadata.name);
    assert.equal(c.metadata.namespace, ns, c.metadata.name);
    const file = Object.keys(c.data)[0];
    assert.equal(c.metadata.name, `pathwise-dashboard-${file.replace(/^pathwise-|\.json$/g, "")}`);
  }
});
check("overlays/dashboards: each ConfigMap fits `kubectl apply`'s last-applied annotation (256 KiB)", () => {
  for (const c of cms) assert.ok(JSON.stringify(c).length < 262144, `${c.metadata.name}: ${JSON.stringify(c).length} bytes`);
});

// ---- The NetworkPolicy component, added to the base and to every overlay
// the way its kustomization.yaml tells users to.
function selects(sel, labels) {
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const ok = { In: has && e.values.includes(labels[e.key]), NotIn: !has || !e.values.includes(labels[e.key]),
      Exists: has, DoesNotExist: !has }[e.operator];
    assert.notEqual(ok, undefined, `operator ${e.operator}`);
    if (!ok) return false;
  }
  return true;
}
for (const name of ["base", ...OVERLAYS]) {
  const src = name === "base" ? kdir : path.join(odir, name);
  let objs = [];
  check(`${name} + components/metrics-networkpolicy: renders`, () => {
    objs = renderWith((rel) => ({ resources: [rel(src)], components: [rel(npDir)] }));
  });
  const nps = objs.filter((o) => o.kind === "NetworkPolicy");
  const np = nps[0];
  check(`${name} + networkpolicy: the overlay's objects plus one NetworkPolicy, which passes its schema`, () => {
    assert.deepEqual(objs.filter((o) => o.kind !== "NetworkPolicy"), rendered[name]);
    assert.equal(nps.length, 1);
    validateSchema(np);
    assert.equal(np.metadata.namespace, ns);
  });
  const pods = rendered[name].filter((o) => o.kind === "DaemonSet").map((d) => d.spec.template);
  check(`${name} + networkpolicy: selects every DaemonSet's pods`, () => {
    assert.ok(pods.length > 0);
    for (const p of pods) assert.ok(selects(np.spec.podSelector, p.metadata.labels), JSON.stringify(p.metadata.labels));
    assert.ok(!selects(np.spec.podSelector, { "app.kubernetes.io/name": "something-else" }), "selects other pods too");
  });
  check(`${name} + networkpolicy: ingress only, from Prometheus pods in the namespace monitoring only`, () => {
    assert.deepEqual(np.spec.policyTypes, ["Ingress"]);
    assert.equal(np.spec.ingress.length, 1);
    assert.deepEqual(np.spec.ingress[0].from, [{
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
      podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } },
    }]);
  });
  check(`${name} + networkpolicy: admits each selected container's metrics port, and no other port`, () => {
    const ports = np.spec.ingress[0].ports;
    const admits = (cp) => ports.some((p) => (p.protocol ?? "TCP") === (cp.protocol ?? "TCP") &&
      (p.port === cp.name || p.port === cp.containerPort));
    const all = pods.flatMap((p) => p.spec.containers.flatMap((c) => c.ports ?? []));
    for (const cp of all.filter((x) => x.name === "metrics")) assert.ok(admits(cp), `port ${cp.name}/${cp.containerPort}`);
    for (const p of ports) {
      assert.ok(all.some((cp) => (p.port === cp.name || p.port === cp.containerPort) && cp.name === "metrics"),
        `port ${p.port} is no container's metrics port`);
    }
  });
}

// ---- The image: set once, in the base's `images:`.
const baseK = YAML.parse(fs.readFileSync(path.join(kdir, "base/kustomization.yaml"), "utf8"));
const img = baseK.images?.find((i) => i.name === "pathwise") ?? {};
const version = fs.readFileSync(path.join(root, "CMakeLists.txt"), "utf8").match(/^project\(pathwise VERSION ([0-9.]+)/m)?.[1];
check("image: base/kustomization.yaml's images: is the only one; its tag is the project's version and deploy/build-image.sh's", () => {
  const ks = execFileSync("find", [kdir, path.join(root, "dashboards"), "-name", "kustomization.yaml"], { encoding: "utf8" })
    .trim().split("\n");
  const withImages = ks.filter((f) => YAML.parse(fs.readFileSync(f, "utf8")).images).map((f) => path.relative(kdir, f));
  assert.deepEqual(withImages, ["base/kustomization.yaml"]);
  assert.equal(img.newTag, version);
  const tag = execFileSync(path.join(root, "deploy/build-image.sh"), ["--print-tag"], { encoding: "utf8", env: { ...process.env, REGISTRY: "" } }).trim();
  assert.equal(tag, `${img.newName}:${img.newTag}`);
});
check("image: every container of every overlay runs the base's image", () => {
  for (const [name, objs] of Object.entries(rendered)) {
    for (const d of objs.filter((o) => o.kind === "DaemonSet")) {
      for (const c of d.spec.template.spec.containers) assert.equal(c.image, `${img.newName}:${img.newTag}`, `${name}: ${c.name}`);
    }
  }
});
check("image: a user's overlay of overlays/datapath with images: [{name: localhost/pathwise, newName: REGISTRY/pathwise}] moves both DaemonSets", () => {
  const reg = "registry.example.com/ops/pathwise";
  const objs = renderWith((rel) => ({ resources: [rel(path.join(odir, "datapath"))], images: [{ name: img.newName, newName: reg }] }));
  const images = objs.filter((o) => o.kind === "DaemonSet").flatMap((d) => d.spec.template.spec.containers.map((c) => c.image));
  assert.deepEqual(images, [`${reg}:${img.newTag}`, `${reg}:${img.newTag}`]);
});

finish();
