// Drives the agent's live page in Debian's chromium (headless, through
// puppeteer-core) and checks what an on-call engineer relies on:
//   - the tree shows every path of the fixture under its head;
//   - the latency and IOPS charts receive points from successive polls;
//   - the slow path is marked degraded: row class, badge text, colour;
//   - no script error and no Content-Security-Policy violation;
//   - it all works behind basic auth (same-origin fetches).
// Saves a screenshot of the page.
//   node live-page.mjs URL USER PASSWORD SCREENSHOT.png
import puppeteer from 'puppeteer-core';

const [url, user, password, shot] = process.argv.slice(2);
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
let fails = 0;
const ok = (m) => console.log(`ok: ${m}`);
const fail = (m) => { console.error(`FAIL: ${m}`); fails++; };

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  // Root in a test: chromium's sandbox needs an unprivileged user.
  args: ['--no-sandbox', '--disable-gpu', '--force-device-scale-factor=1'],
});
try {
  const page = await browser.newPage();
  await page.setViewport({width: 1500, height: 1000});
  const errors = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  await page.evaluateOnNewDocument(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation',
        (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.authenticate({username: user, password});
  const resp = await page.goto(url, {waitUntil: 'load'});
  if (resp.status() === 200 && resp.headers()['content-security-policy']) {
    ok(`page 200 behind basic auth, CSP: ${resp.headers()['content-security-policy']}`);
  } else {
    fail(`page: HTTP ${resp.status()}, headers ${JSON.stringify(resp.headers())}`);
  }

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
  // The fixture's writer makes 400 read IOPS on nvme0c0n1.
  const riops = await page.$eval('tr.path[data-path="nvme0c0n1"]', (tr) => Number(tr.cells[6].textContent));
  if (riops > 200 && riops < 700) ok(`nvme0c0n1 read IOPS ${riops} (writer: 400/s)`);
  else fail(`nvme0c0n1 read IOPS ${riops}, want about 400`);

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
  // A few more points so the charts show a trend in the screenshot.
  await new Promise((r) => setTimeout(r, 3000));
  const csp = await page.evaluate(() => window.__csp);
  if (csp.length === 0 && errors.length === 0) ok('no script error, no CSP violation');
  else fail(`errors: ${JSON.stringify([...errors, ...csp])}`);
  await page.screenshot({path: shot, fullPage: true});
  ok(`screenshot ${shot}`);
} finally {
  await browser.close();
}
if (fails) {
  console.error(`${fails} check(s) failed`);
  process.exit(1);
}
console.log('all live page checks passed');
