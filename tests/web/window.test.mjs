// SPDX-License-Identifier: Apache-2.0
// The live page's pure part (exporters/web/window.js: quantiles and rates
// from two snapshots) and the vendored uPlot against the npm package the
// lockfile pins. Run by tests/web/node-run.sh with PATHWISE_SOURCE_DIR.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {readFileSync} from 'node:fs';
import {join} from 'node:path';
import {pathToFileURL} from 'node:url';

const src = process.env.PATHWISE_SOURCE_DIR;
const web = join(src, 'exporters/web');
const {quantile, opWindow, pathWindows} =
    await import(pathToFileURL(join(web, 'window.js')));

test('vendored uPlot is the locked npm package', () => {
  for (const f of ['uPlot.iife.min.js', 'uPlot.min.css']) {
    assert.ok(readFileSync(join(web, 'vendor', f))
                  .equals(readFileSync(join('node_modules/uplot/dist', f))),
              `exporters/web/vendor/${f} differs from node_modules/uplot/dist/${f}: ` +
              'copy it from there after changing the version in tests/web/package.json');
  }
  const lock = JSON.parse(readFileSync('package-lock.json'));
  const pkg = JSON.parse(readFileSync('node_modules/uplot/package.json'));
  assert.equal(pkg.version, lock.packages['node_modules/uplot'].version);
});

test('quantile interpolates inside the bucket as histogram_quantile does', () => {
  const bounds = [0.001, 0.002, 0.004];
  // 10 in (0, 1ms], 10 in (1ms, 2ms]: the median is the first bucket's top.
  assert.equal(quantile([10, 10, 0, 0], bounds, 0.5), 0.001);
  assert.equal(quantile([10, 10, 0, 0], bounds, 0.75), 0.0015);
  assert.equal(quantile([0, 0, 4, 0], bounds, 0.99), 0.002 + 0.002 * 0.99);
  // In +Inf: the last finite bound.
  assert.equal(quantile([0, 0, 0, 3], bounds, 0.5), 0.004);
  assert.equal(quantile([0, 0, 0, 0], bounds, 0.5), null);
});

test('opWindow: rates and quantiles of the delta, not of the totals', () => {
  const bounds = [0.001, 0.002, 0.004];
  const before = {completed: 100, bytes: 409600, time_seconds: 0.1,
                  latency_seconds: {counts: [100, 0, 0, 0]}};
  const now = {completed: 300, bytes: 409600 + 200 * 4096, time_seconds: 0.7,
               latency_seconds: {counts: [100, 0, 200, 0]}};
  const w = opWindow(now, before, 2, bounds);
  assert.equal(w.iops, 100);
  assert.ok(Math.abs(w.mibps - 200 * 4096 / 2 / 1048576) < 1e-12);
  assert.ok(Math.abs(w.mean - 0.003) < 1e-12);
  assert.equal(w.p50, 0.003);  // all of the window in (2ms, 4ms]
  // A counter that went backwards (agent restarted) counts from zero.
  assert.equal(opWindow({completed: 5, bytes: 0, time_seconds: 0}, before, 1, null).iops, 5);
});

test('pathWindows walks the tree and keeps health', () => {
  const snap = (t, done) => ({
    collected_at: t, io_source: 'sysfs',
    subsystems: [{name: 's0', controllers: [{name: 'nvme1', traddr: '10.0.0.2', trsvcid: '4420', state: 'live'}],
                  heads: [{name: 'nvme0n1', paths: [{name: 'nvme0c1n1', controller: 'nvme1', transport: 'tcp',
                                                     ana_state: 'optimized', health: 'degraded'}]}]}],
    io: {paths: {nvme0c1n1: {ops: {read: {completed: done, bytes: 0, time_seconds: 0}}}}},
  });
  const {seconds, rows} = pathWindows(snap('2026-01-01T00:00:02Z', 50), snap('2026-01-01T00:00:00Z', 10));
  assert.equal(seconds, 2);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].health, 'degraded');
  assert.equal(rows[0].address, '10.0.0.2:4420');
  assert.equal(rows[0].read.iops, 20);
  assert.equal(rows[0].write.iops, 0);
});
