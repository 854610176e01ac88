/**
 * The console in a real browser, as an on-call engineer uses it: the alert list, one alert's page,
 * a silence made from the preview, the alert shown as silenced, the silence ended; an alert
 * acknowledged on its page and given back from the list. Against a real
 * daemon reading the simulator; chromium launched once for the file. With CONSOLE_SCREENSHOT set
 * (`npm run screenshot`), the alert list with the silence in force is written there as a PNG: the
 * README's picture.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { getSilence, listSilences } from '../../src/alerts/silences.js';
import { launchChromium, startConsoleDaemon, type ConsoleDaemon } from './console-fixture.js';

let daemon: ConsoleDaemon;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startConsoleDaemon(), launchChromium()]);
  page = await browser.newPage({ viewport: { width: 1360, height: 860 } });
  // A step that cannot happen fails within seconds, naming the step, instead of at the test's time limit.
  page.setDefaultTimeout(5_000);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
});

describe('the console in a browser', () => {
  it('lists the open alerts, opens one, silences it from the preview, shows it silenced, and ends the silence', async () => {
    const open = alertStoreOf(daemon.wd.store).open();
    expect(open.length).toBeGreaterThan(3);
    const target = open.find((a) => a.status === 'firing' && a.labels.app && a.check !== 'attention')!;
    expect(target).toBeDefined();
    const row = page.locator(`tr[data-fingerprint="${target.fingerprint}"]`);

    // The list: every open alert, grouped by check, with its severity and labels.
    await page.goto(`${daemon.base}/`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Open alerts');
    expect(await page.locator('tr.alert').count()).toBe(open.length);
    expect(await row.locator('.sev').textContent()).toBe(target.severity);
    expect(await row.textContent()).toContain(`app=${target.labels.app}`);
    expect(await row.locator('.delivery-state').textContent()).toContain('console: firing sent');

    // Its page: the timeline says when it fired and what each channel was told.
    await row.locator('a.summary').click();
    await page.waitForURL(/\/alert\?fp=/);
    expect(await page.locator('h1').textContent()).toContain(target.summary);
    const firing = page.locator('.timeline li.event-firing');
    expect(await firing.locator('.notifications td').first().textContent()).toBe('console');
    expect(await firing.locator('.notifications').textContent()).toContain('deliver');

    // Silence… opens the form filled in with its check and app, previewing what it covers.
    await page.getByRole('link', { name: 'Silence…' }).click();
    await page.waitForURL(/\/silences\/new\?/);
    expect(await page.locator('textarea[name="matchers"]').inputValue()).toBe(
      `check=${target.check}\napp=${target.labels.app}`,
    );
    expect(await page.locator(`.preview li[data-fingerprint="${target.fingerprint}"]`).count()).toBe(1);
    await page.locator('input[name="duration"]').fill('3h');
    await page.locator('textarea[name="comment"]').fill('deploy under way, Alice watches it');
    await page.getByRole('button', { name: 'Create silence' }).click();
    await page.waitForURL(/\/silences\?created=/);
    const id = new URL(page.url()).searchParams.get('created')!;
    expect(await page.locator('.notice-ok').textContent()).toContain(id);
    const silence = getSilence(daemon.wd.store, id)!;
    expect(silence).toMatchObject({ createdBy: 'console@loopback', reason: 'deploy under way, Alice watches it' });
    expect(silence.endsAt - silence.startsAt).toBe(3 * 3_600_000);

    // The list shows it silenced, by that silence (a while later, so ages read as ages).
    daemon.clock.advance(42 * 60_000);
    await page.goto(`${daemon.base}/`);
    expect(await row.getAttribute('class')).toContain('silenced');
    expect(await row.locator('.why.silenced').textContent()).toContain(`silenced by ${id}`);
    const screenshot = process.env.CONSOLE_SCREENSHOT;
    if (screenshot) await page.screenshot({ path: screenshot });

    // Ended from the silences page, with who and why recorded; the alert is no longer silenced.
    await page.goto(`${daemon.base}/silences`);
    const silenceRow = page.locator(`tr[data-silence="${id}"]`);
    await silenceRow.locator('input[name="comment"]').fill('deploy finished');
    await silenceRow.getByRole('button', { name: 'Expire' }).click();
    await page.waitForURL(/\/silences\?expired=/);
    expect(getSilence(daemon.wd.store, id)).toMatchObject({
      expiredBy: 'console@loopback',
      expireReason: 'deploy finished',
    });
    expect(listSilences(daemon.wd.store, { now: daemon.clock.now() })).toEqual([]);
    await page.goto(`${daemon.base}/`);
    expect(await row.getAttribute('class')).not.toContain('silenced');
  });

  it('acknowledges an alert on its page with a comment, shows who has it, and gives it back from the list', async () => {
    const target = alertStoreOf(daemon.wd.store)
      .open()
      .findLast((a) => a.status === 'firing' && !a.acknowledgement)!;
    expect(target).toBeDefined();
    await page.goto(`${daemon.base}/alert?fp=${encodeURIComponent(target.fingerprint)}`);
    await page.locator('form.acknowledge input[name="comment"]').fill('Alice is rolling it back');
    await page.getByRole('button', { name: 'Acknowledge', exact: true }).click();
    await page.waitForURL(/done=acknowledged/);
    expect(await page.locator('.notice-ok').textContent()).toContain('You acknowledged it');
    expect(await page.locator('.why.acknowledged').textContent()).toContain('Alice is rolling it back');
    expect(await page.locator('.timeline li.event-acknowledged').textContent()).toContain(
      'acknowledged by console@loopback (console)',
    );

    await page.goto(`${daemon.base}/`);
    const row = page.locator(`tr[data-fingerprint="${target.fingerprint}"]`);
    expect(await row.getAttribute('class')).toContain('acknowledged');
    await row.getByRole('button', { name: 'Unacknowledge' }).click();
    await page.waitForURL(/done=unacknowledged/);
    expect(await page.locator('.notice-ok').textContent()).toContain('You gave the acknowledgement back');
    expect(await row.getAttribute('class')).not.toContain('acknowledged');
    expect(alertStoreOf(daemon.wd.store).get(target.fingerprint)?.acknowledgement).toBeNull();
  });

  it('refuses to create what was not previewed: matchers edited after the preview are previewed again', async () => {
    const before = listSilences(daemon.wd.store, { now: daemon.clock.now(), includeExpired: true }).length;
    await page.goto(`${daemon.base}/silences/new?matchers=${encodeURIComponent('check=backups')}`);
    await page.locator('textarea[name="matchers"]').fill('check=certificates');
    await page.locator('textarea[name="comment"]').fill('renewal under way');
    await page.getByRole('button', { name: 'Create silence' }).click();
    expect(await page.locator('.notice-error').textContent()).toContain('changed since the preview');
    expect(listSilences(daemon.wd.store, { now: daemon.clock.now(), includeExpired: true })).toHaveLength(before);
    // The page previews the edited matchers now; creating them is one click.
    expect(await page.locator('.preview').textContent()).toContain('cover');
    await page.getByRole('button', { name: 'Create silence' }).click();
    await page.waitForURL(/\/silences\?created=/);
  });

  it.each([
    ['no comment', 'check=backups', '2h', '', 'say why in the comment'],
    ['longer than server.console.max_silence', 'check=backups', '8d', 'long holiday', 'at most 7d'],
    ['a matcher that does not parse', 'check', '2h', 'why', 'invalid matcher'],
  ])('refuses a silence with %s and saves nothing', async (_name, matchers, duration, comment, message) => {
    const before = listSilences(daemon.wd.store, { now: daemon.clock.now(), includeExpired: true }).length;
    await page.goto(`${daemon.base}/silences/new`);
    await page.locator('textarea[name="matchers"]').fill(matchers);
    await page.locator('input[name="duration"]').fill(duration);
    await page.locator('textarea[name="comment"]').fill(comment);
    await page.getByRole('button', { name: 'Preview' }).click();
    const create = page.getByRole('button', { name: 'Create silence' });
    if ((await create.count()) > 0) {
      // The browser would refuse an empty required comment itself: send the form as a script could.
      await page.locator('textarea[name="comment"]').evaluate((e) => e.removeAttribute('required'));
      await create.click();
    }
    expect(await page.locator('main').textContent()).toContain(message);
    expect(listSilences(daemon.wd.store, { now: daemon.clock.now(), includeExpired: true })).toHaveLength(before);
  });

  it('groups the list by another label: at once with the script, by the form button without it', async () => {
    const byEnvironment = async (p: Page) => {
      const groups = await p.locator('section.group h2 .group-label').allTextContents();
      expect(groups.length).toBeGreaterThan(1);
      expect(new Set(groups)).toEqual(new Set(['environment_type']));
    };
    await page.goto(`${daemon.base}/`);
    await page.locator('select[name="group"]').selectOption('environment_type');
    await page.waitForURL(/group=environment_type/);
    await byEnvironment(page);

    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      const plain = await context.newPage();
      plain.setDefaultTimeout(5_000);
      await plain.goto(`${daemon.base}/`);
      await plain.locator('select[name="group"]').selectOption('environment_type');
      expect(plain.url()).toBe(`${daemon.base}/`);
      await plain.getByRole('button', { name: 'Group' }).click();
      await plain.waitForURL(/group=environment_type/);
      await byEnvironment(plain);
      // Silencing needs no script either.
      await plain.goto(`${daemon.base}/silences/new?matchers=${encodeURIComponent('check=maintenance')}`);
      await plain.locator('textarea[name="comment"]').fill('no script needed');
      await plain.getByRole('button', { name: 'Create silence' }).click();
      await plain.waitForURL(/\/silences\?created=/);
    } finally {
      await context.close();
    }
  });

  it('shows the remediation audit, the sources and the config pages', async () => {
    await page.goto(`${daemon.base}/actions`);
    expect(await page.locator('h1').textContent()).toBe('Remediation audit');
    await page.goto(`${daemon.base}/sources`);
    expect(await page.locator('tr[data-job="runs"]').textContent()).toContain('*/1 * * * *');
    expect(await page.locator('tr[data-channel="console"]').textContent()).toContain('log');
    await page.goto(`${daemon.base}/config`);
    expect(await page.locator('pre.config').textContent()).toContain('token: <secret>');
  });
});
