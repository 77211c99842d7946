// SPDX-License-Identifier: Apache-2.0
// The live page of an agent in a testbed guest (real NVMe/TCP multipath,
// the eBPF sampler, fio running, a netem delay on one path), in Debian's
// chromium on the host through a forwarded port. Checks:
//   - the tree shows both paths with their transport and address;
//   - the I/O comes from the eBPF sampler and the latency chart plots p99;
//   - both charts hold points for both paths with plausible values: the
//     delayed path's p99 (median over the windows) at least half the delay
//     (room for a bucket's width) and above the other path's, IOPS above 0
//     on both and together not above twice fio's rate limit;
//   - the delayed path is marked degraded (row, badge, summary, chart label)
//     and the other is not;
//   - no script error and no Content-Security-Policy violation.
// Saves a screenshot of the page (docs/images/live-page.png).
//   node live-page-agent.mjs URL SCREENSHOT DELAY_MS FIO_RATE_IOPS HEALTHY=ADDR DELAYED=ADDR
import {ok, fail, openPage, checkResponse, finish} from './browser.mjs';

const [url, shot, delayMs, rateIops, healthySpec, delayedSpec] = process.argv.slice(2);
const [healthy, healthyAddr] = healthySpec.split('=');
const [delayed, delayedAddr] = delayedSpec.split('=');
const delay = Number(delayMs) / 1000;
const rate = Number(rateIops);
// The guest is a TCG VM that also runs the target: generous waits.
const WAIT_MS = 90000;
// Points per path and chart before the values are judged (one a second).
const POINTS = 8;

const median = (xs) => {
  const v = xs.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  return v.length ? v[Math.floor(v.length / 2)] : null;
};
// {label, values} of each path series of a chart (uPlot's own data).
const seriesOf = (page, chart) => page.$eval(`.chart[data-chart="${chart}"]`, (box) => {
  const u = box.uplot;
  return {
    title: box.querySelector('.u-title')?.textContent ?? '',
    series: u.series.slice(1).map((s, i) => ({label: s.label, values: [...u.data[i + 1]]})),
  };
});

const {browser, page, resp, problems} = await openPage(url);
try {
  checkResponse(resp, ' from the guest agent through the forwarded port');

  try {
    await page.waitForSelector(`tr.path[data-path="${healthy}"]`, {timeout: WAIT_MS});
    await page.waitForSelector(`tr.path[data-path="${delayed}"]`, {timeout: WAIT_MS});
    const rows = await page.$$eval('details.head tr.path', (trs) =>
      trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    const row = (p) => rows.find((r) => r[0] === p) || [];
    if (rows.length === 2 && row(healthy)[4] === 'tcp' && row(delayed)[4] === 'tcp' &&
        row(healthy)[5] === healthyAddr && row(delayed)[5] === delayedAddr &&
        row(healthy)[3].includes('(live)') && row(delayed)[3].includes('(live)')) {
      ok(`tree: ${rows.map((r) => `${r[0]} ${r[3]} ${r[4]} ${r[5]} ANA ${r[2]}`).join(', ')}`);
    } else {
      fail(`tree rows: ${JSON.stringify(rows)}, want ${healthy} at ${healthyAddr} and ${delayed} at ${delayedAddr}`);
    }
  } catch (e) {
    fail(`tree: ${e.message}: ${await page.$eval('body', (b) => b.innerText)}`);
  }

  try {
    await page.waitForFunction((n) => {
      const c = [...document.querySelectorAll('.chart')];
      return c.length === 2 && c.every((box) => box.uplot &&
        box.uplot.data.slice(1).every((s) => s.filter((v) => v !== null).length >= n));
    }, {timeout: WAIT_MS}, POINTS);
    ok(`both charts hold >= ${POINTS} points per path`);
  } catch (e) {
    fail(`charts: ${e.message}: ${await page.$$eval('.chart', (cs) => cs.map((c) => `${c.dataset.chart} ${c.dataset.points}`).join(', '))}`);
  }

  try {
    await page.waitForSelector(`tr.path.health-degraded[data-path="${delayed}"]`, {timeout: WAIT_MS});
    // The charts are rebuilt with the new labels at the next poll.
    await page.waitForFunction((p) => {
      const box = document.querySelector('.chart[data-chart="latency"]');
      return box && box.uplot && box.uplot.series.some((s) => s.label === `${p} (degraded)`);
    }, {timeout: 10000}, delayed);
    const m = await page.evaluate((d, h) => ({
      badge: document.querySelector(`tr.path[data-path="${d}"] .badge`).textContent,
      otherClass: document.querySelector(`tr.path[data-path="${h}"]`).className,
      summary: document.getElementById('summary').textContent,
    }), delayed, healthy);
    if (m.badge.includes('DEGRADED') && !m.otherClass.includes('degraded') &&
        m.summary.includes('1 of 2 paths need attention') && m.summary.includes(delayed)) {
      ok(`${delayed} (delayed) marked degraded: badge "${m.badge}", summary names it, chart label "(degraded)"; ${healthy} is not`);
    } else {
      fail(`degraded marking: ${JSON.stringify(m)}`);
    }
  } catch (e) {
    fail(`no degraded mark on ${delayed}: ${e.message}: ${await page.$eval('#tree', (t) => t.innerText)}`);
  }

  // A few more points so the charts show a trend in the screenshot.
  await new Promise((r) => setTimeout(r, 3000));
  const summary = await page.$eval('#summary', (e) => e.textContent);
  if (summary.includes('io source bpf')) ok('the I/O comes from the eBPF sampler');
  else fail(`io source: ${summary}`);

  const lat = await seriesOf(page, 'latency');
  const iops = await seriesOf(page, 'iops');
  const by = (c, p) => c.series.find((s) => s.label === p || s.label.startsWith(`${p} (`));
  const lh = by(lat, healthy), ld = by(lat, delayed), ih = by(iops, healthy), id = by(iops, delayed);
  if (!lh || !ld || !ih || !id) {
    fail(`chart series: latency ${JSON.stringify(lat.series.map((s) => s.label))}, iops ${JSON.stringify(iops.series.map((s) => s.label))}`);
  } else {
    const [mh, md, nh, nd] = [lh, ld, ih, id].map((s) => median(s.values));
    const all = [...lh.values, ...ld.values].filter((v) => v !== null);
    console.log(`latency chart "${lat.title}": median p99 ${healthy} ${mh} s, ${delayed} ${md} s; ` +
      `IOPS chart: median ${healthy} ${nh}, ${delayed} ${nd} (fio --rate_iops=${rate})`);
    if (!lat.title.includes('p99')) fail(`latency chart title "${lat.title}": not p99 from the histograms`);
    if (all.every((v) => v > 0 && v < 10) && md >= delay / 2 && md > mh) {
      ok(`latency: ${delayed} p99 ${(md * 1e3).toFixed(1)} ms >= ${delayMs} ms / 2 and above ${healthy}'s ${(mh * 1e3).toFixed(1)} ms`);
    } else {
      fail(`latency series: ${JSON.stringify({healthy: lh.values, delayed: ld.values})}`);
    }
    // fio is rate-limited: the paths together cannot sustain much more.
    if (nh > 0 && nd > 0 && nh + nd <= 2 * rate) {
      ok(`IOPS: ${healthy} ${nh.toFixed(1)}, ${delayed} ${nd.toFixed(1)} (both > 0, sum <= 2 x ${rate})`);
    } else {
      fail(`IOPS series: ${JSON.stringify({healthy: ih.values, delayed: id.values})}`);
    }
  }
} catch (e) {
  fail(`unexpected: ${e.stack}`);
}
await finish(browser, page, problems, shot);
