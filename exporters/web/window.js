// SPDX-License-Identifier: Apache-2.0
// What two successive /api/v1/snapshot documents say about each path over
// the interval between them: IOPS, MiB/s, p50/p99 from the latency
// histogram's delta (the BPF sampler's; mean latency from time/completed
// with either source). Pure functions: no DOM, no fetch (node tests them).

// The q-quantile of non-cumulative `counts` over `bounds` (seconds, one
// fewer than counts: the last slot is +Inf), as Prometheus'
// histogram_quantile() and model::LatencyHistogram::Quantile estimate it:
// linear inside the bucket that holds the rank, 0 as the first lower edge,
// the last finite bound when the rank falls in +Inf. null when empty.
export function quantile(counts, bounds, q) {
  let total = 0;
  for (const c of counts) total += c;
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i];
    if (n > 0 && below + n >= rank) {
      if (i >= bounds.length) return bounds[bounds.length - 1];
      const lower = i === 0 ? 0 : bounds[i - 1];
      return lower + (bounds[i] - lower) * ((rank - below) / n);
    }
    below += n;
  }
  return bounds[bounds.length - 1];
}

// A counter's growth; one that went backwards (agent restarted) counts
// from zero, as model/delta.cc does.
function grew(now, before) {
  return now >= before ? now - before : now;
}

// One op's window: {iops, mibps, p50, p99, mean} (latencies in seconds,
// null when unknown or without I/O).
export function opWindow(now, before, seconds, bounds) {
  const out = {iops: 0, mibps: 0, p50: null, p99: null, mean: null};
  if (!now) return out;
  const b = before || {completed: 0, bytes: 0, time_seconds: 0};
  const done = grew(now.completed, b.completed);
  if (seconds > 0) {
    out.iops = done / seconds;
    out.mibps = grew(now.bytes, b.bytes) / seconds / (1024 * 1024);
  }
  if (done > 0) {
    const t = now.time_seconds - b.time_seconds;
    if (t >= 0) out.mean = t / done;
  }
  const h = now.latency_seconds;
  if (h && bounds) {
    const hb = (before && before.latency_seconds) || null;
    const d = h.counts.map((c, i) => (hb ? Math.max(0, c - hb.counts[i]) : c));
    out.p50 = quantile(d, bounds, 0.5);
    out.p99 = quantile(d, bounds, 0.99);
  }
  return out;
}

// Every path of `now` in tree order (subsystem, head, path) with what the
// tree and charts show. `before` may be null (no interval yet).
export function pathWindows(now, before) {
  const seconds = before
    ? (Date.parse(now.collected_at) - Date.parse(before.collected_at)) / 1000
    : 0;
  const bounds = now.latency_histogram
    ? now.latency_histogram.upper_bounds_seconds
    : null;
  const rows = [];
  for (const s of now.subsystems || []) {
    const ctrls = new Map((s.controllers || []).map((c) => [c.name, c]));
    for (const h of s.heads || []) {
      for (const p of h.paths || []) {
        const io = (now.io && now.io.paths && now.io.paths[p.name]) || null;
        const prev =
          (before && before.io && before.io.paths && before.io.paths[p.name]) ||
          null;
        const op = (name) =>
          opWindow(io && io.ops[name], prev && prev.ops[name], seconds, bounds);
        const c = ctrls.get(p.controller) || {};
        rows.push({
          subsystem: s.name,
          head: h.name,
          path: p.name,
          controller: p.controller,
          controllerState: p.controller_state || c.state || '',
          transport: p.transport || c.transport || '',
          address: c.traddr ? `${c.traddr}:${c.trsvcid}` : p.address || '',
          ana: p.ana_state || '',
          health: p.health || 'unknown',
          ewma: p.latency_ewma_seconds ? p.latency_ewma_seconds.read : null,
          weight: p.weight ? p.weight.read : null,
          read: op('read'),
          write: op('write'),
        });
      }
    }
  }
  return {seconds, rows};
}
