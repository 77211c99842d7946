// SPDX-License-Identifier: Apache-2.0
// Drives the agent's live page in Debian's chromium (headless, through
// puppeteer-core) and checks what an on-call engineer relies on:
//   - the tree shows every path of the fixture under its head;
//   - the latency and IOPS charts receive points from successive polls;
//   - the slow path is marked degraded: row class, badge text, colour;
//   - no empty-host ("no NVMe multipath subsystems") banner;
//   - no script error and no Content-Security-Policy violation;
//   - it all works behind basic auth (same-origin fetches).
// Saves a screenshot of the page.
//   node live-page.mjs URL USER PASSWORD SCREENSHOT.png
import {ok, fail, openPage, checkResponse, finish} from './browser.mjs';

const [url, user, password, shot] = process.argv.slice(2);
const {browser, page, resp, problems} = await openPage(url, {username: user, password});
try {
  checkResponse(resp, ' behind basic auth');

  try {
    await page.waitForSelector('tr.path[data-path="nvme0c0n1"]', {timeout: 10000});
    await page.waitForSelector('tr.path[data-path="nvme0c1n1"]', {timeout: 10000});
    const rows = await page.$$eval('details.head tr.path', (trs) =>
      trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    const tree = await page.$eval('#tree', (e) => e.textContent);
    if (rows.length === 2 && tree.includes('nvme-subsys0') && tree.includes('nvme0n1') &&
        rows[0][3].startsWith('nvme0 (live)') && rows[0][4] === 'tcp' &&
        rows[0][5] === '10.77.0.2:4420' && rows[1][5] === '10.77.1.2:4420' &&
        rows[0][2] === 'optimized') {
      ok(`tree: nvme-subsys0 > nvme0n1 > ${rows.map((r) => r[0]).join(', ')}`);
    } else {
      fail(`tree rows: ${JSON.stringify(rows)}`);
    }
  } catch (e) {
    fail(`tree: ${e.message}: ${await page.$eval('body', (b) => b.innerText)}`);
  }

  try {
    await page.waitForFunction(() => {
      const c = [...document.querySelectorAll('.chart[data-points]')];
      return c.length === 2 && c.every((e) => Number(e.dataset.points) >= 8);
    }, {timeout: 20000});
    const pts = await page.$$eval('.chart', (cs) => cs.map((c) => `${c.dataset.chart} ${c.dataset.points}`));
    ok(`charts receive points: ${pts.join(', ')}`);
  } catch (e) {
    fail(`charts: ${e.message}: ${await page.$$eval('.chart', (cs) => cs.map((c) => c.outerHTML.slice(0, 200)).join('\n'))}`);
  }
  // The fixture's writer makes 400 read + 100 write IOPS on nvme0c0n1.
  // One window can be short when a loaded host delays the writer (the next
  // catches up), so the table's read IOPS must be above 0 and the IOPS
  // chart's mean over its windows (uPlot's own data) about 500.
  const iops = await page.evaluate(() => {
    const u = document.querySelector('.chart[data-chart="iops"]').uplot;
    const i = u.series.findIndex((s) => s.label === 'nvme0c0n1');
    const v = i > 0 ? u.data[i].filter((x) => x !== null) : [];
    const read = Number(document.querySelector('tr.path[data-path="nvme0c0n1"]').cells[6].textContent);
    return {read, mean: v.reduce((a, b) => a + b, 0) / v.length, n: v.length};
  });
  if (iops.read > 0 && iops.mean > 250 && iops.mean < 875) {
    ok(`nvme0c0n1 read IOPS ${iops.read}, chart mean ${iops.mean.toFixed(0)} over ${iops.n} windows (writer: 400 + 100/s)`);
  } else {
    fail(`nvme0c0n1 IOPS ${JSON.stringify(iops)}, want a chart mean of about 500`);
  }

  try {
    await page.waitForSelector('tr.path.health-degraded[data-path="nvme0c1n1"]', {timeout: 20000});
    const m = await page.$eval('tr.path[data-path="nvme0c1n1"]', (tr) => ({
      badge: tr.querySelector('.badge').textContent,
      bg: getComputedStyle(tr).backgroundColor,
      other: getComputedStyle(document.querySelector('tr.path[data-path="nvme0c0n1"]')).backgroundColor,
      otherClass: document.querySelector('tr.path[data-path="nvme0c0n1"]').className,
      summary: document.getElementById('summary').textContent,
    }));
    if (m.badge.includes('DEGRADED') && m.bg !== m.other && !m.otherClass.includes('degraded') &&
        m.summary.includes('1 of 2 paths need attention') && m.summary.includes('nvme0c1n1')) {
      ok(`degraded path marked: badge "${m.badge}", background ${m.bg} (healthy: ${m.other}), summary names it`);
    } else {
      fail(`degraded marking: ${JSON.stringify(m)}`);
    }
  } catch (e) {
    fail(`no degraded mark on nvme0c1n1: ${e.message}: ${await page.$eval('#tree', (t) => t.innerText)}`);
  }
  // A multipath host has no "no NVMe multipath" banner: the summary is an
  // alert (the degraded path) or green, never the empty host's neutral.
  const summary = await page.$eval('#summary', (e) => ({cls: e.className, text: e.textContent}));
  if (!summary.cls.includes('neutral') && !summary.text.includes('no NVMe multipath')) {
    ok(`no empty-host banner on a multipath host (summary class "${summary.cls}")`);
  } else {
    fail(`empty-host banner on a multipath host: ${JSON.stringify(summary)}`);
  }
  // A few more points so the charts show a trend in the screenshot.
  await new Promise((r) => setTimeout(r, 3000));
} catch (e) {
  fail(`unexpected: ${e.stack}`);
}
await finish(browser, page, problems, shot);
