// A deliberately tiny kustomize: `resources:` (files, and directories that
// are kustomizations themselves: bases) and `patches:` given as inline
// JSON 6902 operations (add, replace, remove) on one object named by
// kind and name. pathwise's kustomizations (deploy/kubernetes and its
// overlays) use only that, so where neither `kustomize` nor `kubectl
// kustomize` is installed (Debian bookworm packages neither), the manifests
// are rendered with this. Any other kustomization key, patch form or
// operation is an error, never silently ignored. When a real kustomize is
// present, validate.mjs checks that both render the same objects.
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";

const ALLOWED = new Set(["apiVersion", "kind", "resources", "patches"]);
const TARGET_KEYS = new Set(["group", "version", "kind", "name"]);

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

// RFC 6901: "/a/0/b" -> ["a", "0", "b"].
function pointer(p, where) {
  if (typeof p !== "string" || !p.startsWith("/")) throw new Error(`${where}: bad path '${p}'`);
  return p.slice(1).split("/").map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
}

// Applies one JSON 6902 operation (add, replace, remove) to `obj` in place.
export function applyOp(obj, op, where) {
  if (!["add", "replace", "remove"].includes(op.op)) {
    throw new Error(`${where}: kustomize-lite does not support op '${op.op}'`);
  }
  const keys = pointer(op.path, where);
  const last = keys.pop();
  let parent = obj;
  for (const k of keys) {
    parent = Array.isArray(parent) ? parent[Number(k)] : parent?.[k];
    if (parent === undefined || parent === null || typeof parent !== "object") {
      throw new Error(`${where}: ${op.path}: no such parent`);
    }
  }
  if (Array.isArray(parent)) {
    const i = last === "-" ? parent.length : Number(last);
    if (!Number.isInteger(i) || i < 0 || i > parent.length || (op.op !== "add" && i === parent.length)) {
      throw new Error(`${where}: ${op.path}: index out of range`);
    }
    if (op.op === "add") parent.splice(i, 0, structuredClone(op.value));
    else if (op.op === "replace") parent[i] = structuredClone(op.value);
    else parent.splice(i, 1);
    return;
  }
  if (op.op !== "add" && !(last in parent)) throw new Error(`${where}: ${op.path}: no such member`);
  if (op.op === "remove") delete parent[last];
  else parent[last] = structuredClone(op.value);
}

function matches(o, target) {
  const [group, version] = o.apiVersion.includes("/") ? o.apiVersion.split("/") : ["", o.apiVersion];
  return (target.kind === undefined || target.kind === o.kind) &&
    (target.name === undefined || target.name === o.metadata?.name) &&
    (target.group === undefined || target.group === group) &&
    (target.version === undefined || target.version === version);
}

function applyPatch(objs, p, where) {
  for (const k of Object.keys(p)) {
    if (k !== "target" && k !== "patch") throw new Error(`${where}: kustomize-lite does not support patch key '${k}'`);
  }
  const target = p.target ?? {};
  for (const k of Object.keys(target)) {
    if (!TARGET_KEYS.has(k)) throw new Error(`${where}: kustomize-lite does not support target key '${k}'`);
  }
  const ops = YAML.parse(p.patch ?? "");
  if (!Array.isArray(ops)) throw new Error(`${where}: patch is not a list of JSON 6902 operations`);
  const hits = objs.filter((o) => matches(o, target));
  if (hits.length !== 1) throw new Error(`${where}: target matches ${hits.length} objects, want 1`);
  for (const op of ops) applyOp(hits[0], op, where);
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
    if (fs.statSync(p).isDirectory()) objs.push(...renderLite(p));
    else objs.push(...parseAll(fs.readFileSync(p, "utf8"), p));
  }
  (k.patches ?? []).forEach((p, i) => applyPatch(objs, p, `${kfile}: patches[${i}]`));
  return objs;
}

export function key(o) {
  return `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
}
