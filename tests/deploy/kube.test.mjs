// SPDX-License-Identifier: Apache-2.0
// kube.mjs, the renderer the manifest checks share: the real kustomize, whose
// failures surface with kustomize's own message, never as an empty result.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { render, renderWith } from "./kube.mjs";

test("renders a kustomization with kubectl kustomize", () => {
  const objs = renderWith(() => ({
    configMapGenerator: [{ name: "x", literals: ["a=1"] }],
    generatorOptions: { disableNameSuffixHash: true },
  }));
  assert.deepEqual(objs, [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" }, data: { a: "1" } }]);
});

test("a kustomization that does not render is an error naming the cause", () => {
  assert.throws(() => renderWith(() => ({ resources: ["no-such-dir"] })), /kubectl kustomize .* failed: .*no-such-dir/);
});

test("a file outside the kustomization's directory is refused, as kubectl apply -k refuses it", () => {
  const outside = path.join(os.tmpdir(), `pathwise-outside-${process.pid}.json`);
  fs.writeFileSync(outside, "{}");
  try {
    assert.throws(() => renderWith((rel) => ({ configMapGenerator: [{ name: "d", files: [rel(outside)] }] })),
      /security; file .* is not in or below/);
  } finally {
    fs.rmSync(outside);
  }
});

test("a directory with no kustomization is an error", () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), "pathwise-empty-"));
  try {
    assert.throws(() => render(empty), /failed/);
  } finally {
    fs.rmSync(empty, { recursive: true });
  }
});
