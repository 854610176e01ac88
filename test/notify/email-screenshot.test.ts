/**
 * The HTML email as a reader sees it: rendered by a real browser (Debian's chromium, headless,
 * driven by playwright-core) at a phone's width, with scripts allowed, so text from the service
 * that tried to be markup or script would show here. What is asserted is what a person gets: the
 * links and where they go, the visible text, nothing run, nothing wider than the screen. A
 * screenshot of each is written to the temp directory for a look (the test names the file).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderEmail } from '../../src/notify/channels/email.js';
import { NOW } from '../detectors/fixtures.js';
import { CONFIG_FILE, goldenCases, HOSTILE, LINKS } from './golden-cases.js';

/** Debian's chromium, which CI installs (`.ci/run`). */
const CHROMIUM = '/usr/bin/chromium';
/** A phone held upright: a mail client gives the message about this much. */
const WIDTH = 390;

const SHOTS = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-email-shots-'));

let browser: Browser;

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
});

/** The case's email opened in a page of its own; `dialogs` counts any alert() a script managed. */
async function open(name: string): Promise<{ page: Page; dialogs: string[]; shot: string }> {
  const c = goldenCases().find((k) => k.name === name)!;
  const { html } = renderEmail(c.notification, {
    now: NOW,
    channelName: 'ops-mail',
    subject_prefix: '[deploy-watchdog]',
    commandConfigFile: CONFIG_FILE,
    links: LINKS,
  });
  const page = await browser.newPage({ viewport: { width: WIDTH, height: 800 }, javaScriptEnabled: true });
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  // No network: an <img> or a stylesheet from the service could not be fetched anyway.
  await page.route('**/*', (route) => route.abort());
  await page.setContent(html, { waitUntil: 'load' });
  const shot = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: shot, fullPage: true });
  return { page, dialogs, shot };
}

/** Every link's target and text, in order. */
const linksOf = (page: Page) =>
  page.$$eval('a', (as) => as.map((a) => ({ href: a.href, text: (a.textContent ?? '').trim() })));

/**
 * What could run or load: scripts, images, frames, styles, handlers, and the mark a script would
 * leave. Written as page-side source: the project's types have no DOM.
 */
const activeContent = (page: Page) =>
  page.evaluate(`({
    elements: document.querySelectorAll('script, img, iframe, object, embed, svg, style, link').length,
    handlers: [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
    pwned: window.__pwned ?? null,
  })`);

/** How wide the page's content is: wider than the viewport scrolls sideways on a phone. */
const contentWidth = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth');

describe('the HTML email in a real browser', () => {
  it('a failed run: its links, what to do next, how to silence, within a phone’s width', async () => {
    const { page, dialogs, shot } = await open('failed-run');
    expect(await linksOf(page)).toEqual([
      { href: 'https://shop.example.com/', text: 'shop-prod' },
      { href: 'https://manage.example.com/runs/5981', text: 'https://manage.example.com/runs/5981' },
      { href: 'https://wiki.example.com/oncall/production', text: 'Runbook: prod-oncall' },
      { href: 'https://wiki.example.com/runbooks/failed-runs', text: 'Runbook: failed runs' },
    ]);
    const text = await page.innerText('body');
    expect(text).toContain('🔴 CRITICAL 1 failed run · shop-prod (production)');
    expect(text).toContain("Next step: Read the failed step's log, fix the cause, then retry the run.");
    // The command as it runs, copied from the page: spaces and quotes as written.
    expect(text).toContain(
      "To silence: deploy-watchdog silence --config /etc/deploy-watchdog/config.yaml --match check=failed_runs --match app=shop-prod --for 2h --reason '…'",
    );
    expect(await activeContent(page)).toEqual({ elements: 0, handlers: 0, pwned: null });
    expect(dialogs).toEqual([]);
    expect(await contentWidth(page)).toBeLessThanOrEqual(WIDTH);
    expect(fs.statSync(shot).size).toBeGreaterThan(1000);
    await page.close();
  });

  it("a failed update's context: its restore point and its log lines, wrapped within a phone's width", async () => {
    const { page, dialogs, shot } = await open('failed-update-context');
    const text = await page.innerText('body');
    expect(text).toMatch(/Restore point\s+#412 kept: the change failed and the app was left as before/);
    expect(text).toMatch(/Backup first\s+shop-prod-20261101-1108\.zip \(#77\), verified/);
    expect(text).toContain('Log (setup): 6 lines around the failure, errors first');
    // Errors first, one line each as logged (wrapped by the screen's width, not broken by us).
    const log = await page.innerText('pre');
    expect(log.split('\n')[0]).toBe('11:13:00  ERROR: No matching distribution found for odoo-addon-x');
    expect(log.split('\n')).toHaveLength(6);
    expect(await activeContent(page)).toEqual({ elements: 0, handlers: 0, pwned: null });
    expect(dialogs).toEqual([]);
    expect(await contentWidth(page)).toBeLessThanOrEqual(WIDTH);
    expect(fs.statSync(shot).size).toBeGreaterThan(1000);
    await page.close();
  });

  it('hostile text from the service stays text: no markup, no script, no unsafe link, nothing reordered or hidden', async () => {
    const { page, dialogs, shot } = await open('hostile-text');
    // The app's javascript: URL is no link at all; only our own links remain.
    expect((await linksOf(page)).map((l) => l.href)).toEqual([
      'https://manage.example.com/runs/5981',
      'https://wiki.example.com/oncall/production',
      'https://wiki.example.com/runbooks/failed-runs',
    ]);
    expect(await activeContent(page)).toEqual({ elements: 0, handlers: 0, pwned: null });
    expect(dialogs).toEqual([]);
    expect(await page.$$eval('b', (bs) => bs.map((b) => b.textContent))).not.toContain('shop');

    const text = await page.innerText('body');
    // Shown as the characters it is, on one line where our layout has one.
    expect(text).toContain(HOSTILE.summary.replace('\n', ' '));
    expect(text).toContain('<img src=x onerror="window.__pwned=1"> <https://evil.example|click> & `rm -rf /`');
    expect(text).toContain('install <html>');
    // The long word is all there, broken across lines rather than widening the page.
    expect(text.replace(/\s+/g, '')).toContain(HOSTILE.file);
    // The override and the zero-width space are written out, not obeyed.
    expect(text).toContain('shop\\u{202e}gnp.exe');
    expect(text).toContain('sh\\u{200b}op');
    expect(text).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b-\u200f]/);
    // Its log lines too: markup and a mention as characters, the long path wrapped.
    const log = await page.innerText('pre');
    expect(log).toContain(`ERROR ${HOSTILE.summary.replace('\n', ' ')}`);
    expect(log).toContain('Set-Cookie: x=1');
    expect(await contentWidth(page)).toBeLessThanOrEqual(WIDTH);
    expect(fs.statSync(shot).size).toBeGreaterThan(1000);
    await page.close();
  });
});
