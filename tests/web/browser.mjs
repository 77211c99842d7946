// SPDX-License-Identifier: Apache-2.0
// What the live page's browser tests share: Debian's chromium, headless,
// through puppeteer-core, with every script error, failed request and
// Content-Security-Policy violation of the page recorded, and pass/fail
// lines.
import puppeteer from 'puppeteer-core';

let fails = 0;
export const ok = (m) => console.log(`ok: ${m}`);
export const fail = (m) => { console.error(`FAIL: ${m}`); fails++; };

// Opens URL (basic auth when `auth` has a username) in a 1500x1000
// viewport. Returns {browser, page, resp, problems()}: problems() lists the
// errors and CSP violations seen so far.
export async function openPage(url, auth) {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // Root in a test: chromium's sandbox needs an unprivileged user.
    args: ['--no-sandbox', '--disable-gpu', '--force-device-scale-factor=1'],
  });
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
  if (auth && auth.username) await page.authenticate(auth);
  const resp = await page.goto(url, {waitUntil: 'load'});
  const problems = async () => [...errors, ...await page.evaluate(() => window.__csp)];
  return {browser, page, resp, problems};
}

// Checks the page's status and CSP header.
export function checkResponse(resp, what) {
  if (resp.status() === 200 && resp.headers()['content-security-policy']) {
    ok(`page 200${what}, CSP: ${resp.headers()['content-security-policy']}`);
  } else {
    fail(`page: HTTP ${resp.status()}, headers ${JSON.stringify(resp.headers())}`);
  }
}

// The end: no script error or CSP violation, the screenshot, the verdict.
export async function finish(browser, page, problems, shot) {
  try {
    const p = await problems();
    if (p.length === 0) ok('no script error, no CSP violation');
    else fail(`errors: ${JSON.stringify(p)}`);
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
}
