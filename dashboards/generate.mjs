// SPDX-License-Identifier: Apache-2.0
// @ts-check
// Generates pathwise's Grafana dashboards (dashboards/*.json) with Grafana's
// foundation SDK (dashboards/lib/), so the four share variables, data source
// handling and conventions, and `tsc` checks every builder call.
//   dashboards/generate.sh            # rewrite the JSON files
//   dashboards/generate.sh --check    # exit 1 if a JSON file is stale
// generate.sh runs this file where tests/deploy's npm dependencies are
// installed (tests/deploy/node-run.sh). The JSON files are committed: users
// import them as they are.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { overview } from "./lib/overview.mjs";
import { pathDetail } from "./lib/path.mjs";
import { head } from "./lib/head.mjs";
import { fleet } from "./lib/fleet.mjs";

export const SCHEMA_VERSION = 42; // what the foundation SDK writes (Grafana 12)

/** @type {Record<string, () => import("./lib/common.mjs").Built>} */
export const DASHBOARDS = {
  "pathwise-overview.json": overview,
  "pathwise-path.json": pathDetail,
  "pathwise-head.json": head,
  "pathwise-fleet.json": fleet,
};

/** @param {string} file */
export const render = (file) => JSON.stringify(DASHBOARDS[file]().json, null, 2) + "\n";

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // --dir DIR: where the JSON files are (the repository's dashboards/).
  const args = process.argv.slice(2);
  const check = args.includes("--check");
  const at = args.indexOf("--dir");
  const dir = at >= 0 ? args[at + 1] : path.dirname(fileURLToPath(import.meta.url));
  let stale = 0;
  for (const file of Object.keys(DASHBOARDS)) {
    const text = render(file);
    const p = path.join(dir, file);
    if (check) {
      if (!fs.existsSync(p) || fs.readFileSync(p, "utf8") !== text) {
        console.log(`stale: dashboards/${file} (run dashboards/generate.sh)`);
        stale++;
      }
    } else fs.writeFileSync(p, text);
  }
  if (check) console.log(stale ? `${stale} stale dashboard(s)` : "dashboards match generate.mjs");
  process.exit(stale ? 1 : 0);
}
