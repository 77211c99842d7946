// SPDX-License-Identifier: Apache-2.0
// The live page of an agent on a host without NVMe multipath: a neutral
// banner (not the green "none degraded" of a healthy host, not an alert)
// that says what was found and what to check:
//   "no NVMe multipath subsystems: is nvme_core loaded with multipath=Y?"
// and no topology tree.
//   node live-page-empty.mjs URL FOUND SCREENSHOT.png
// FOUND: text the banner must also hold (what the agent found instead).
import {ok, fail, openPage, checkResponse, finish} from './browser.mjs';

const [url, found, shot] = process.argv.slice(2);
const WANT = 'no NVMe multipath subsystems: is nvme_core loaded with multipath=Y?';
const {browser, page, resp, problems} = await openPage(url);
try {
  checkResponse(resp, '');
  try {
    await page.waitForFunction(
        () => document.getElementById('summary').textContent.length > 0,
        {timeout: 20000});
    const s = await page.$eval('#summary', (e) => {
      const probe = document.createElement('section');
      probe.className = 'summary ok';
      document.body.append(probe);
      const green = getComputedStyle(probe).backgroundColor;
      probe.remove();
      return {text: e.textContent, cls: e.className,
              bg: getComputedStyle(e).backgroundColor, green,
              tree: document.getElementById('tree').children.length};
    });
    if (s.text.includes(WANT) && s.text.includes(found)) {
      ok(`banner: "${s.text}"`);
    } else {
      fail(`banner text "${s.text}", want "${WANT}" and "${found}"`);
    }
    if (s.cls === 'summary neutral' && s.bg !== s.green && !s.text.includes('none degraded')) {
      ok(`banner is neutral: class "${s.cls}", background ${s.bg} (a healthy host's: ${s.green})`);
    } else {
      fail(`banner not neutral: class "${s.cls}", background ${s.bg}, green ${s.green}`);
    }
    if (s.tree === 0) ok('no topology tree');
    else fail(`a tree of ${s.tree} subsystems on an empty host`);
  } catch (e) {
    fail(`banner: ${e.message}: ${await page.$eval('body', (b) => b.innerText)}`);
  }
} catch (e) {
  fail(`unexpected: ${e.stack}`);
}
await finish(browser, page, problems, shot);
