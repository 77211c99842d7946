// Unit test of kustomize-lite on throwaway kustomizations (node --test).
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { renderLite } from "./kustomize-lite.mjs";

function tmpKust(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klite-"));
  for (const [n, t] of Object.entries(files)) fs.writeFileSync(path.join(dir, n), t);
  return dir;
}

test("renders every document of every resource, in order", () => {
  const dir = tmpKust({
    "kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml, b.yaml]\n",
    "a.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\n# only a comment\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: s, namespace: x}\n",
    "b.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: v, namespace: x}\n",
  });
  const objs = renderLite(dir);
  assert.deepEqual(objs.map((o) => o.kind), ["Namespace", "ServiceAccount", "Service"]);
});

test("refuses kustomization features it does not implement", () => {
  const dir = tmpKust({
    "kustomization.yaml": "kind: Kustomization\nnamespace: other\nresources: [a.yaml]\n",
    "a.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
  });
  assert.throws(() => renderLite(dir), /does not support 'namespace'/);
});

test("reports YAML errors with the file", () => {
  const dir = tmpKust({
    "kustomization.yaml": "kind: Kustomization\nresources: [a.yaml]\n",
    "a.yaml": "apiVersion: v1\nkind: [\n",
  });
  assert.throws(() => renderLite(dir), /a\.yaml/);
});

test("renders a base directory and applies inline JSON 6902 patches to its target", () => {
  const base = tmpKust({
    "kustomization.yaml": "kind: Kustomization\nresources: [a.yaml]\n",
    "a.yaml": "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d, namespace: x}\nspec: {args: [a, b], vols: [{n: 1}], sc: {ro: true, drop: x}}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: d, namespace: x}\n",
  });
  const overlay = tmpKust({});
  fs.writeFileSync(path.join(overlay, "kustomization.yaml"), [
    "kind: Kustomization",
    `resources: [${path.relative(overlay, base)}]`,  // relative, as overlays name their base
    "patches:",
    "  - target: {group: apps, version: v1, kind: DaemonSet, name: d}",
    "    patch: |-",
    "      - {op: replace, path: /spec/args, value: [a, c]}",
    "      - {op: add, path: /spec/vols/-, value: {n: 2}}",
    "      - {op: add, path: /spec/vols/0, value: {n: 0}}",
    "      - {op: replace, path: /spec/sc/ro, value: false}",
    "      - {op: remove, path: /spec/sc/drop}",
    "",
  ].join("\n"));
  const objs = renderLite(overlay);
  assert.deepEqual(objs.map((o) => o.kind), ["DaemonSet", "Service"]);
  assert.deepEqual(objs[0].spec, { args: ["a", "c"], vols: [{ n: 0 }, { n: 1 }, { n: 2 }], sc: { ro: false } });
  // the base renders as before
  assert.deepEqual(renderLite(base)[0].spec.args, ["a", "b"]);
});

test("refuses patches it cannot apply exactly", () => {
  const mk = (patch, target = "{kind: Service, name: s}") => tmpKust({
    "kustomization.yaml": `kind: Kustomization\nresources: [a.yaml]\npatches:\n  - target: ${target}\n    patch: |-\n      ${patch}\n`,
    "a.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [1]}\n",
  });
  assert.throws(() => renderLite(mk("- {op: move, from: /spec, path: /x}")), /does not support op 'move'/);
  assert.throws(() => renderLite(mk("- {op: replace, path: /spec/nope, value: 1}")), /no such member/);
  assert.throws(() => renderLite(mk("- {op: replace, path: /spec/ports/1, value: 1}")), /index out of range/);
  assert.throws(() => renderLite(mk("- {op: add, path: /nope/x, value: 1}")), /no such parent/);
  assert.throws(() => renderLite(mk("- {op: add, path: /spec/x, value: 1}", "{kind: DaemonSet}")), /matches 0 objects/);
  assert.throws(() => renderLite(mk("- {op: add, path: /spec/x, value: 1}", "{kind: Service, labelSelector: a=b}")), /target key 'labelSelector'/);
});
