// SPDX-License-Identifier: Apache-2.0
// The live page: polls /api/v1/snapshot (same origin, so the browser sends
// the page's basic-auth credentials), draws the topology tree and, per
// head, latency and IOPS charts over the last few minutes (uPlot).
import {pathWindows} from './window.js';

const POLL_MS = 1000;
const HISTORY_S = 300;
const COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b',
                 '#e377c2', '#17becf', '#bcbd22'];
// Health as text and mark, never colour alone.
const HEALTH = {
  healthy: {mark: '●', text: 'healthy'},
  idle: {mark: '○', text: 'idle'},
  degraded: {mark: '▲', text: 'DEGRADED'},
  failed: {mark: '✕', text: 'FAILED'},
  unknown: {mark: '?', text: 'unknown'},
};

let previous = null;
let lastGeneration = null;
const history = new Map();  // head -> {t: [], paths: Map(path -> {lat, iops})}
const charts = new Map();   // head -> {lat, iops, paths: [...]}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c !== null && c !== undefined) {
      e.append(c instanceof Node ? c : String(c));
    }
  }
  return e;
}

function seconds(v) {
  if (v === null || v === undefined) return '–';
  // Thresholds just under the unit so that rounding never shows 1000µs.
  if (v < 0.9995e-3) return `${(v * 1e6).toFixed(0)}µs`;
  if (v < 0.9995) return `${(v * 1e3).toFixed(v < 0.9995e-2 ? 2 : 1)}ms`;
  return `${v.toFixed(2)}s`;
}
function rate(v) {
  return v >= 100 ? v.toFixed(0) : v.toFixed(1);
}

function healthBadge(h) {
  const m = HEALTH[h] || HEALTH.unknown;
  return el('span', {class: `badge health-${h}`, title: `path health: ${h}`},
            `${m.mark} ${m.text}`);
}

function renderFailedCollectors(snap, box) {
  const failed = (snap.collectors || []).filter((c) => !c.success);
  for (const c of failed) {
    box.append(el('div', {class: 'attention health-failed'},
                  `collector ${c.name} failed: ${c.error}`));
  }
  return failed.length;
}

function renderSummary(snap, rows) {
  // A host without NVMe multipath: nothing is wrong and nothing is healthy
  // either, so neither green nor an alert (unless a collector failed).
  const notice = snap.multipath && snap.multipath.notice;
  if (notice) {
    const box = document.getElementById('summary');
    box.replaceChildren(el('strong', {}, notice),
      ` · io source ${snap.io_source}`);
    box.className = renderFailedCollectors(snap, box) ? 'summary alert' : 'summary neutral';
    return;
  }
  const counts = {};
  for (const r of rows) counts[r.health] = (counts[r.health] || 0) + 1;
  const bad = rows.filter((r) => r.health === 'degraded' || r.health === 'failed');
  const box = document.getElementById('summary');
  box.replaceChildren();
  box.className = bad.length ? 'summary alert' : 'summary ok';
  const parts = Object.entries(counts).map(([h, n]) => `${n} ${h}`);
  box.append(el('strong', {}, bad.length
    ? `${bad.length} of ${rows.length} paths need attention`
    : `${rows.length} paths, none degraded or failed`),
  ` (${parts.join(', ') || 'no paths'}) · io source ${snap.io_source}`);
  for (const r of bad) {
    box.append(el('div', {class: `attention health-${r.health}`},
      healthBadge(r.health), ` ${r.path} on ${r.controller} (${r.transport} ${r.address}), ANA ${r.ana || '?'}, controller ${r.controllerState || '?'}`));
  }
  renderFailedCollectors(snap, box);
}

function latencyOf(w) {
  return w.p99 !== null ? w.p99 : w.mean;
}

function renderTree(snap, rows) {
  const tree = document.getElementById('tree');
  tree.replaceChildren();
  const advice = (snap.scoring && snap.scoring.iopolicy_recommended) || {};
  for (const s of snap.subsystems || []) {
    const a = advice[s.name];
    const sub = el('details', {class: 'subsystem', open: ''},
      el('summary', {}, el('strong', {}, s.name), ` ${s.nqn} · iopolicy ${s.iopolicy}`,
         a ? ` · advice ${a.iopolicy}${a.reason ? ` (${a.reason})` : ''}` : ''));
    if (s.actuator_last_decision) {
      const d = s.actuator_last_decision;
      sub.append(el('div', {class: 'decision'},
        `actuator: ${d.result} ${d.from} → ${d.to}${d.reason ? `: ${d.reason}` : ''}`));
    }
    for (const h of s.heads || []) {
      const head = el('details', {class: 'head', open: ''},
        el('summary', {}, el('strong', {}, h.name), ` nsid ${h.nsid} · ${(h.paths || []).length} paths`));
      const table = el('table', {class: 'paths'});
      table.append(el('thead', {}, el('tr', {},
        ...['path', 'health', 'ANA', 'controller', 'transport', 'address',
            'r IOPS', 'w IOPS', 'r p50', 'r p99', 'r mean', 'EWMA', 'weight']
          .map((t) => el('th', {}, t)))));
      const body = el('tbody');
      for (const r of rows.filter((x) => x.head === h.name && x.subsystem === s.name)) {
        body.append(el('tr', {class: `path health-${r.health}`, 'data-path': r.path},
          el('td', {}, r.path), el('td', {}, healthBadge(r.health)),
          el('td', {class: r.ana === 'optimized' ? '' : 'warn'}, r.ana || '?'),
          el('td', {class: r.controllerState === 'live' ? '' : 'warn'},
             `${r.controller} (${r.controllerState || '?'})`),
          el('td', {}, r.transport), el('td', {}, r.address),
          el('td', {class: 'num'}, rate(r.read.iops)),
          el('td', {class: 'num'}, rate(r.write.iops)),
          el('td', {class: 'num'}, seconds(r.read.p50)),
          el('td', {class: 'num'}, seconds(r.read.p99)),
          el('td', {class: 'num'}, seconds(r.read.mean)),
          el('td', {class: 'num'}, seconds(r.ewma)),
          el('td', {class: 'num'}, r.weight === null ? '–' : r.weight)));
      }
      table.append(body);
      head.append(table);
      sub.append(head);
    }
    tree.append(sub);
  }
}

function record(t, rows) {
  for (const r of rows) {
    const key = `${r.subsystem}/${r.head}`;
    if (!history.has(key)) history.set(key, {t: [], paths: new Map(), head: r.head});
    const h = history.get(key);
    if (!h.paths.has(r.path)) h.paths.set(r.path, {lat: h.t.map(() => null), iops: h.t.map(() => null)});
  }
  for (const [key, h] of history) {
    h.t.push(t);
    for (const [name, s] of h.paths) {
      const r = rows.find((x) => x.path === name && `${x.subsystem}/${x.head}` === key);
      s.lat.push(r ? latencyOf(r.read) ?? latencyOf(r.write) : null);
      s.iops.push(r ? r.read.iops + r.write.iops : null);
    }
    while (h.t.length && h.t[0] < t - HISTORY_S) {
      h.t.shift();
      for (const s of h.paths.values()) { s.lat.shift(); s.iops.shift(); }
    }
  }
}

function chartWidth() {
  const box = document.getElementById('charts');
  return Math.max(300, Math.min(720, Math.floor(box.clientWidth / 2) - 24));
}

function makeChart(title, paths, unit, rows, target) {
  const series = [{}];
  paths.forEach((p, i) => {
    const r = rows.find((x) => x.path === p);
    const bad = r && (r.health === 'degraded' || r.health === 'failed');
    series.push({
      label: bad ? `${p} (${r.health})` : p,
      stroke: COLOURS[i % COLOURS.length],
      width: bad ? 3 : 1.5,
      dash: bad ? [8, 4] : undefined,
      spanGaps: false,
      value: (u, v) => (v === null ? '–' : unit === 's' ? seconds(v) : rate(v)),
    });
  });
  const opts = {
    title, width: chartWidth(), height: 200, series,
    scales: {x: {time: true}},
    axes: [{}, {values: (u, vals) => vals.map((v) => (unit === 's' ? seconds(v) : rate(v))), size: 80}],
  };
  const data = [[], ...paths.map(() => [])];
  // eslint-disable-next-line new-cap
  return new uPlot(opts, data, target);
}

function renderCharts(rows, ioSource) {
  const box = document.getElementById('charts');
  for (const [key, h] of history) {
    const names = [...h.paths.keys()];
    let c = charts.get(key);
    const sig = names.join(',') + rows.filter((r) => names.includes(r.path)).map((r) => r.health).join(',');
    if (!c || c.sig !== sig) {
      if (c) { c.lat.destroy(); c.iops.destroy(); c.box.remove(); }
      const wrap = el('div', {class: 'chart-head', 'data-head': h.head});
      wrap.append(el('h2', {}, h.head));
      const latBox = el('div', {class: 'chart', 'data-chart': 'latency'});
      const iopsBox = el('div', {class: 'chart', 'data-chart': 'iops'});
      wrap.append(latBox, iopsBox);
      box.append(wrap);
      const what = ioSource === 'bpf' ? 'p99 latency (read, else write)' : 'mean latency (read, else write)';
      c = {box: wrap, sig, latBox, iopsBox,
           lat: makeChart(`${h.head}: ${what}`, names, 's', rows, latBox),
           iops: makeChart(`${h.head}: IOPS (read + write)`, names, 'n', rows, iopsBox)};
      // The chart on its box (a property, not an attribute), so that the
      // browser tests read the series and points uPlot draws.
      latBox.uplot = c.lat;
      iopsBox.uplot = c.iops;
      charts.set(key, c);
    }
    const lat = [h.t, ...names.map((n) => h.paths.get(n).lat)];
    const iops = [h.t, ...names.map((n) => h.paths.get(n).iops)];
    c.lat.setData(lat);
    c.iops.setData(iops);
    const count = (d) => d.slice(1).reduce((n, s) => n + s.filter((v) => v !== null).length, 0);
    c.latBox.dataset.points = count(lat);
    c.iopsBox.dataset.points = count(iops);
  }
}

function setStatus(text, bad) {
  const s = document.getElementById('status');
  s.textContent = text;
  s.className = bad ? 'status stale' : 'status';
}

async function poll() {
  try {
    const r = await fetch('/api/v1/snapshot', {cache: 'no-store'});
    if (!r.ok) throw new Error(`HTTP ${r.status}${r.status === 503 ? ' (no collection yet)' : ''}`);
    const snap = await r.json();
    if (snap.generation !== lastGeneration) {
      const {seconds: dt, rows} = pathWindows(snap, previous);
      renderSummary(snap, rows);
      renderTree(snap, rows);
      if (previous && dt > 0) {
        record(Date.parse(snap.collected_at) / 1000, rows);
        if (typeof uPlot !== 'undefined') renderCharts(rows, snap.io_source);
      }
      previous = snap;
      lastGeneration = snap.generation;
      document.body.dataset.generation = snap.generation;
      setStatus(`live · collection ${snap.generation} at ${snap.collected_at}${dt > 0 ? ` · window ${dt.toFixed(1)}s` : ''}`, false);
    }
  } catch (e) {
    setStatus(`agent not answering: ${e.message} (showing the last data)`, true);
  }
  setTimeout(poll, POLL_MS);
}

poll();
