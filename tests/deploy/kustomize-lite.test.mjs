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
