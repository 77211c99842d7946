// A deliberately tiny kustomize: `resources:` (files) and nothing else.
// pathwise's deploy/kubernetes/kustomization.yaml uses only that, so where
// neither `kustomize` nor `kubectl kustomize` is installed (Debian bookworm
// packages neither), the manifests are rendered with this. Any other
// kustomization key is an error, never silently ignored. When a real
// kustomize is present, validate.mjs checks that both render the same objects.
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";

const ALLOWED = new Set(["apiVersion", "kind", "resources"]);

export function parseAll(text, where) {
  const docs = YAML.parseAllDocuments(text);
  const out = [];
  for (const d of docs) {
    if (d.errors.length) throw new Error(`${where}: ${d.errors[0].message}`);
    const v = d.toJS();
    if (v !== null && v !== undefined) out.push(v);
  }
  return out;
}

export function renderLite(dir) {
  const kfile = ["kustomization.yaml", "kustomization.yml", "Kustomization"]
    .map((f) => path.join(dir, f))
    .find((f) => fs.existsSync(f));
  if (!kfile) throw new Error(`${dir}: no kustomization.yaml`);
  const k = YAML.parse(fs.readFileSync(kfile, "utf8"));
  for (const key of Object.keys(k)) {
    if (!ALLOWED.has(key)) {
      throw new Error(`${kfile}: kustomize-lite does not support '${key}'`);
    }
  }
  if (k.kind !== "Kustomization") throw new Error(`${kfile}: kind is not Kustomization`);
  const objs = [];
  for (const r of k.resources ?? []) {
    const p = path.join(dir, r);
    if (fs.statSync(p).isDirectory()) {
      throw new Error(`${p}: kustomize-lite renders files, not bases`);
    }
    objs.push(...parseAll(fs.readFileSync(p, "utf8"), p));
  }
  return objs;
}

export function key(o) {
  return `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
}
