/**
 * What the service says is text, in a real browser: an app named with markup and script, and a
 * `javascript:` URL, both from the simulator, go through the daemon's alert into every console
 * page that shows them. No dialog opens, no script of theirs runs, no link made of them can run
 * script, and the text itself is there to read. And a form posted to the console from another
 * origin, as an attacker's page would, is refused and writes nothing.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { listSilences } from '../../src/alerts/silences.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { freePort, launchChromium, startConsoleDaemon, type ConsoleDaemon } from './console-fixture.js';

const NAME = `shop"><script>window.pwned='script'</script><img src=x onerror="window.pwned='img';alert(1)">`;
const URL_TEXT = `javascript:window.pwned='link';alert(2)`;
/** A name with a right-to-left override: shown written out, `shop\u{202e}gnp.exe`. */
const BIDI_NAME = 'shop\u202egnp.exe';

let daemon: ConsoleDaemon;
let browser: Browser;
let page: Page;
const dialogs: string[] = [];

/** Renames an app that has a primary URL and puts it in a bad state, so app_state reports it. */
function hostileApp(sim: RunningSimulator): void {
  const { apps, urls } = sim.control.state;
  const app = [...apps.values()].find((a) => a.urlIds.some((id) => urls.get(id)?.primary))!;
  sim.control.renameApp(app.id, { name: NAME, url: URL_TEXT });
  sim.control.checks.app_state.set(app.id, 'error');
  const other = [...apps.values()].find((a) => a.id !== app.id)!;
  sim.control.renameApp(other.id, { name: BIDI_NAME });
  sim.control.checks.app_state.set(other.id, 'error');
}

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startConsoleDaemon({ prepare: hostileApp }), launchChromium()]);
  page = await browser.newPage();
  page.setDefaultTimeout(5_000);
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
});

/** Nothing of the service's text ran on the page now shown. */
async function expectInert(): Promise<void> {
  expect(dialogs).toEqual([]);
  expect(await page.evaluate(() => (globalThis as { pwned?: string }).pwned)).toBeUndefined();
  expect(await page.locator('a[href^="javascript:" i]').count()).toBe(0);
  expect(await page.locator('main script, main img').count()).toBe(0);
}

describe('hostile text from the service', () => {
  it('stays text on the alert list, the alert page, the silence preview and the silences page', async () => {
    const alert = alertStoreOf(daemon.wd.store)
      .open()
      .find((a) => a.check === 'app_state' && a.labels.app === NAME)!;
    expect(alert).toBeDefined();
    expect(alert.url).toBe(URL_TEXT);

    await page.goto(`${daemon.base}/`);
    const row = page.locator(`tr[data-fingerprint="${alert.fingerprint}"]`);
    expect(await row.locator('a.summary').textContent()).toBe(alert.summary);
    expect(alert.summary).toContain(NAME);
    expect(await row.locator('.labels').textContent()).toContain(`app=${NAME}`);
    await expectInert();

    await row.locator('a.summary').click();
    await page.waitForURL(/\/alert\?fp=/);
    expect(await page.locator('h1').textContent()).toContain(NAME);
    expect(await page.locator('.meta .url').textContent()).toBe(URL_TEXT);
    await expectInert();

    await page.getByRole('link', { name: 'Silence…' }).click();
    await page.waitForURL(/\/silences\/new\?/);
    expect(await page.locator('textarea[name="matchers"]').inputValue()).toBe(
      `check=app_state\napp=${JSON.stringify(NAME)}`,
    );
    expect(await page.locator(`.preview li[data-fingerprint="${alert.fingerprint}"]`).textContent()).toContain(NAME);
    await expectInert();

    // A comment is the visitor's text, shown to every later visitor: text as well.
    await page.locator('textarea[name="comment"]').fill(`</td><script>window.pwned='comment'</script>`);
    await page.getByRole('button', { name: 'Create silence' }).click();
    await page.waitForURL(/\/silences\?created=/);
    expect(await page.locator('tr.silence').first().textContent()).toContain(`<script>window.pwned='comment'</script>`);
    await expectInert();

    await page.goto(`${daemon.base}/`);
    expect(await row.locator('.why.silenced').textContent()).toContain(`window.pwned='comment'`);
    await expectInert();
  });

  it('silences an alert whose label holds a hidden character from its Silence… button', async () => {
    const alert = alertStoreOf(daemon.wd.store)
      .open()
      .find((a) => a.labels.app === BIDI_NAME)!;
    await page.goto(`${daemon.base}/alert?fp=${encodeURIComponent(alert.fingerprint)}`);
    await page.getByRole('link', { name: 'Silence…' }).click();
    await page.waitForURL(/\/silences\/new\?/);
    // Written out where a person reads it, and read back as the character it stands for.
    expect(await page.locator('textarea[name="matchers"]').inputValue()).toContain('app="shop\\u202egnp.exe"');
    expect(await page.locator(`.preview li[data-fingerprint="${alert.fingerprint}"]`).count()).toBe(1);
    await page.locator('textarea[name="comment"]').fill('a name that plays tricks');
    await page.getByRole('button', { name: 'Create silence' }).click();
    await page.waitForURL(/\/silences\?created=/);
    const made = listSilences(daemon.wd.store, { now: daemon.clock.now() }).find(
      (x) => x.reason === 'a name that plays tricks',
    );
    expect(made?.matchers).toContainEqual({ name: 'app', op: '=', value: BIDI_NAME });
  });

  it('refuses a form posted to the console from another origin, writing nothing', async () => {
    const port = await freePort();
    // An attacker's page on another origin that posts a silence of everything to the console.
    const attacker: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<form method="post" action="${daemon.base}/silences">
<input name="intent" value="create"><input name="matchers" value="check=~.*">
<input name="previewed" value='["check=~.*"]'><input name="duration" value="7d">
<input name="comment" value="gotcha"><input name="csrf" value="guessed"></form>
<script>document.forms[0].submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(port, '127.0.0.1', resolve));
    try {
      const before = listSilences(daemon.wd.store, { now: daemon.clock.now(), includeExpired: true }).length;
      const answered = page.waitForResponse((r) => r.url() === `${daemon.base}/silences`);
      // localhost is another origin than 127.0.0.1 to the browser, with no need for a name to resolve.
      await page.goto(`http://localhost:${port}/`);
      const response = await answered;
      expect(response.status()).toBe(403);
      expect(await page.locator('main').textContent()).toContain('another site');
      expect(listSilences(daemon.wd.store, { now: daemon.clock.now(), includeExpired: true })).toHaveLength(before);
    } finally {
      await new Promise<void>((resolve) => attacker.close(() => resolve()));
    }
  });
});
