// SPDX-License-Identifier: Apache-2.0
// The docs' pictures that are not the live page itself (scripts/
// make-pictures), in Debian's chromium through puppeteer-core:
//
//   node picture.mjs terminal SCREEN.html OUT.png
//     a terminal capture rendered to HTML (tmux capture-pane -e | aha), as a
//     terminal window: the <pre> on a dark background, monospace;
//
//   node picture.mjs panel PROM_URL QUERIES.jsonl DASHBOARDS_DIR
//                    DASHBOARD.json PANEL_TITLE UPLOT_DIR SECONDS OUT.png
//     one dashboard panel's query result: every target of the panel as
//     tests/deploy/check-dashboards.mjs extracted it (QUERIES.jsonl: its
//     Grafana variables replaced by match-all values), asked of a real
//     Prometheus over the last SECONDS (query_range), drawn with the live
//     page's vendored uPlot (UPLOT_DIR/uPlot.iife.min.js, uPlot.min.css)
//     with the panel's title, unit and legend format. A rendering of the
//     panel's query, not Grafana: the picture says so.
//
// Fails (exit 1) when the page does not render, a query fails or returns no
// series, or a series has fewer than 2 points.
import fs from 'node:fs';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

const die = (m) => { console.error(`FAIL: ${m}`); process.exit(1); };

async function launch() {
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--force-device-scale-factor=1'],
  });
}

async function terminal(input, out) {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    await page.setViewport({width: 1400, height: 900});
    await page.goto(`file://${path.resolve(input)}`, {waitUntil: 'load'});
    // aha writes colours as inline styles; the window around them is ours.
    await page.addStyleTag({content: `
      body { margin: 0; padding: 16px; background: #e9e9e9; }
      pre { display: inline-block; margin: 0; padding: 12px 14px;
            background: #1d1f21; color: #d0d0d0; border-radius: 6px;
            font: 14px/1.25 "DejaVu Sans Mono", monospace;
            box-shadow: 0 2px 8px rgba(0,0,0,.35); }`});
    const pre = await page.$('pre');
    if (!pre) die(`${input}: no <pre> (not aha's output?)`);
    const text = await page.$eval('pre', (e) => e.textContent);
    if (!text.trim()) die(`${input}: the terminal capture is empty`);
    await pre.screenshot({path: out});
    console.log(`ok: ${out}`);
  } finally {
    await browser.close();
  }
}

// Grafana's {{label}} legend format.
const legend = (fmt, metric) =>
  (fmt || '').replace(/\{\{\s*(\w+)\s*\}\}/g, (_, l) => metric[l] ?? '').trim() ||
  JSON.stringify(metric);

async function panel(prom, queriesFile, dashDir, dashFile, panelTitle, uplotDir, seconds, out) {
  const queries = fs.readFileSync(queriesFile, 'utf8').split('\n').filter(Boolean)
    .map((l) => JSON.parse(l)).filter((q) => q.dashboard === dashFile && q.panel === panelTitle);
  if (queries.length === 0) die(`no query of ${dashFile} / '${panelTitle}' in ${queriesFile}`);
  const dash = JSON.parse(fs.readFileSync(path.join(dashDir, dashFile), 'utf8'));
  const dashTitle = dash.title;
  const panels = dash.panels.flatMap((p) => [p, ...(p.panels || [])]);
  const p = panels.find((x) => x.title === panelTitle);
  if (!p) die(`no panel '${panelTitle}' in ${dashFile}`);
  const unit = p.fieldConfig?.defaults?.unit || '';

  const end = Math.floor(Date.now() / 1000);
  const start = end - Number(seconds);
  const series = [];
  for (const q of queries) {
    const target = p.targets.find((t) => t.refId === q.refId) || {};
    const u = new URL('/api/v1/query_range', prom);
    u.search = new URLSearchParams({query: q.promql, start, end, step: 1}).toString();
    const r = await (await fetch(u)).json();
    if (r.status !== 'success') die(`${q.refId}: ${q.promql}: ${JSON.stringify(r)}`);
    for (const s of r.data.result) {
      series.push({label: legend(target.legendFormat, s.metric), values: s.values});
    }
  }
  if (series.length === 0) die(`'${panelTitle}': Prometheus returned no series`);
  for (const s of series) {
    if (s.values.length < 2) die(`series ${s.label}: ${s.values.length} point(s)`);
  }
  series.sort((a, b) => a.label.localeCompare(b.label));
  // One x axis: every timestamp of any series, null where one has none.
  const xs = [...new Set(series.flatMap((s) => s.values.map((v) => v[0])))].sort((a, b) => a - b);
  const data = [xs, ...series.map((s) => {
    const m = new Map(s.values.map((v) => [v[0], Number(v[1])]));
    return xs.map((x) => (m.has(x) ? m.get(x) : null));
  })];

  const js = fs.readFileSync(path.join(uplotDir, 'uPlot.iife.min.js'), 'utf8');
  const css = fs.readFileSync(path.join(uplotDir, 'uPlot.min.css'), 'utf8');
  const html = `<!doctype html><html><head><meta charset="utf-8"><style>${css}
    body { margin: 0; padding: 12px; background: #fff; font: 13px Helvetica, Arial, sans-serif; }
    #panel { display: inline-block; border: 1px solid #d8d9da; border-radius: 3px; padding: 8px 10px 4px; }
    .title { font-weight: 600; font-size: 14px; margin: 2px 0 6px; }
    .note { color: #6e6e6e; font-size: 11px; margin-top: 4px; }
    </style></head><body><div id="panel">
    <div class="title"></div><div id="chart"></div>
    <div class="note"></div></div>
    <script>${js}</script></body></html>`;
  const browser = await launch();
  try {
    const page = await browser.newPage();
    await page.setViewport({width: 1000, height: 600});
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.setContent(html, {waitUntil: 'load'});
    await page.evaluate((cfg) => {
      document.querySelector('.title').textContent = `${cfg.dash} › ${cfg.title}`;
      document.querySelector('.note').textContent =
        `Rendered by scripts/make-pictures: the panel's query (${cfg.n} series) from Prometheus, ` +
        'drawn with uPlot. Not a Grafana screenshot.';
      const colors = ['#7eb26d', '#eab839', '#6ed0e0', '#ef843c', '#e24d42', '#1f78c1', '#ba43a9', '#705da0'];
      const fmt = (v) => {
        if (v == null) return '';
        if (v === 0) return '0';
        if (cfg.unit === 's') {
          return v >= 1 ? `${v.toFixed(1)} s` : v >= 1e-3 ? `${+(v * 1e3).toFixed(1)} ms` : `${+(v * 1e6).toFixed(0)} µs`;
        }
        if (cfg.unit === 'iops') return `${+v.toFixed(0)} io/s`;
        return `${+v.toPrecision(3)}`;
      };
      const series = [{}, ...cfg.labels.map((label, i) => ({
        label, stroke: colors[i % colors.length], width: 2, value: (u, v) => fmt(v),
      }))];
      window.__plot = new uPlot({
        width: 900, height: 320, series, legend: {live: false},
        scales: {x: {time: true}},
        axes: [{}, {values: (u, vals) => vals.map(fmt), size: 70}],
      }, cfg.data, document.querySelector('#chart'));
    }, {dash: dashTitle, title: panelTitle, unit, n: series.length,
        labels: series.map((s) => s.label), data});
    if (errors.length) die(`page errors: ${errors.join('; ')}`);
    const el = await page.$('#panel');
    await el.screenshot({path: out});
    console.log(`ok: ${out}: ${series.map((s) => `${s.label} (${s.values.length} points)`).join(', ')}`);
  } finally {
    await browser.close();
  }
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'terminal' && args.length === 2) await terminal(...args);
else if (mode === 'panel' && args.length === 8) await panel(...args);
else die('usage: picture.mjs terminal SCREEN.html OUT.png | panel PROM_URL QUERIES.jsonl DASHBOARDS_DIR DASHBOARD.json PANEL UPLOT_DIR SECONDS OUT.png');
