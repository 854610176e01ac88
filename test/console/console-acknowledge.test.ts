/**
 * Acknowledging in the console, over HTTP against a real daemon: the alert's page and the list
 * offer it for a firing alert; a form without its CSRF token, or from another origin or site, is
 * refused and writes nothing; a good one records console@loopback, the surface and the comment,
 * shows "acknowledged by" in the delivery state and the timeline, and is routed at once (the console wakes
 * the delivery loop).
 * A click the alert has gone past (resolved, or taken meanwhile) answers politely and changes
 * nothing; giving it back works the same way. Hostile text in a comment stays text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOfAlert, alertStoreOf } from '../../src/alerts/alert-store.js';
import { call, csrfIn, startConsoleDaemon, type ConsoleDaemon } from './console-fixture.js';

let daemon: ConsoleDaemon;
beforeAll(async () => {
  daemon = await startConsoleDaemon();
});
afterAll(() => daemon?.close());

let nextApp = 1;

/** A failed update of an app of its own, seen by a cycle: its fingerprint. */
async function firingAlert(): Promise<{ fingerprint: string; runId: number }> {
  const run = daemon.sim.control.addRun({
    appId: nextApp++,
    action: 'update',
    state: 'error',
    failedStep: 'build_image',
    reason: 'pip install failed',
  });
  daemon.clock.advance(60_000);
  await daemon.wd.runOnce(['runs']);
  const fingerprint = `failed_runs/run/${run.id}`;
  expect(alertStoreOf(daemon.wd.store).get(fingerprint)?.status).toBe('firing');
  return { fingerprint, runId: run.id };
}

const alertUrl = (fp: string) => `/alert?fp=${encodeURIComponent(fp)}`;

/** Everything a refused or stale form must leave as it was. */
function recordOf(fp: string) {
  return { alert: alertStoreOf(daemon.wd.store).get(fp), events: eventsOfAlert(daemon.wd.store, fp).map((e) => e.id) };
}

async function post(path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return call(daemon, path, { form, headers });
}

describe('acknowledging in the console', () => {
  it('offers the form on a firing alert, records who, where and why, and shows it', async () => {
    const { fingerprint } = await firingAlert();
    const page = await call(daemon, alertUrl(fingerprint));
    expect(page.text).toContain('action="/alerts/acknowledge"');
    const csrf = csrfIn(page.text);

    const res = await post('/alerts/acknowledge', { csrf, fp: fingerprint, comment: 'rolling back the deploy' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/alert?fp=${encodeURIComponent(fingerprint)}&done=acknowledged`);
    expect(alertStoreOf(daemon.wd.store).get(fingerprint)?.acknowledgement).toMatchObject({
      by: 'console@loopback',
      via: 'console',
      comment: 'rolling back the deploy',
    });

    const after = await call(daemon, res.headers.location as string);
    expect(after.text).toContain('You acknowledged it: its repeats stop until it resolves or gets worse.');
    expect(after.text).toMatch(
      /acknowledged by console@loopback at 20\d\d-[^<]* UTC \(console: rolling back the deploy\)/,
    );
    expect(after.text).toContain('acknowledged by console@loopback (console)');
    expect(after.text).toContain('action="/alerts/unacknowledge"');
    expect(after.text).toContain('acknowledgement_not_sent');

    // The console woke the delivery loop, which routed it at once; the log channel does not show
    // acknowledgements.
    const rows = daemon.wd.store.db
      .prepare(`SELECT channel, decision FROM outbox WHERE fingerprint = ? AND kind = 'acknowledged'`)
      .all(fingerprint);
    expect(rows).toEqual([{ channel: 'console', decision: 'acknowledgement_not_sent' }]);
  });

  it.each<[string, (csrf: string) => Record<string, string>, Record<string, string>, string]>([
    ['without its CSRF token', () => ({}), {}, 'no CSRF token'],
    ['with a wrong CSRF token', () => ({ csrf: 'forged-token' }), {}, 'stale'],
    ['from another origin', (csrf) => ({ csrf }), { origin: 'http://attacker.example' }, 'another origin'],
    ['from another site', (csrf) => ({ csrf }), { 'sec-fetch-site': 'cross-site' }, 'another site'],
  ])('refuses a form %s (403) and writes nothing', async (_name, token, headers, message) => {
    const { fingerprint } = await firingAlert();
    const csrf = csrfIn((await call(daemon, alertUrl(fingerprint))).text);
    const before = recordOf(fingerprint);
    for (const path of ['/alerts/acknowledge', '/alerts/unacknowledge']) {
      const res = await post(path, { ...token(csrf), fp: fingerprint }, headers);
      expect(res.status).toBe(403);
      expect(res.text).toContain(message);
    }
    expect(recordOf(fingerprint)).toEqual(before);
  });

  it('answers a click on an alert resolved meanwhile politely (409), changing nothing', async () => {
    const { fingerprint, runId } = await firingAlert();
    const csrf = csrfIn((await call(daemon, alertUrl(fingerprint))).text);
    daemon.sim.control.setRunState(runId, { state: 'done' });
    daemon.clock.advance(60_000);
    await daemon.wd.runOnce(['runs']);
    const before = recordOf(fingerprint);
    expect(before.alert?.status).toBe('resolved');

    const res = await post('/alerts/acknowledge', { csrf, fp: fingerprint, comment: 'on it' });
    expect(res.status).toBe(409);
    expect(res.text).toMatch(/It was resolved at 20\d\d-[^<]* UTC: nothing to acknowledge, nothing changed\./);
    // The alert's page, as it stands now: resolved, no form.
    expect(res.text).toContain('status-resolved');
    expect(res.text).not.toContain('action="/alerts/acknowledge"');
    expect(recordOf(fingerprint)).toEqual(before);
  });

  it('answers a second acknowledgement with who has it already (409), changing nothing', async () => {
    const { fingerprint } = await firingAlert();
    const csrf = csrfIn((await call(daemon, alertUrl(fingerprint))).text);
    expect((await post('/alerts/acknowledge', { csrf, fp: fingerprint })).status).toBe(303);
    const before = recordOf(fingerprint);
    const again = await post('/alerts/acknowledge', { csrf, fp: fingerprint, comment: 'me too' });
    expect(again.status).toBe(409);
    expect(again.text).toMatch(/Already acknowledged by console@loopback \(console, [^)]*\): nothing changed\./);
    expect(recordOf(fingerprint)).toEqual(before);
  });

  it('gives an acknowledgement back, and says so when there was none', async () => {
    const { fingerprint } = await firingAlert();
    const csrf = csrfIn((await call(daemon, alertUrl(fingerprint))).text);
    expect((await post('/alerts/unacknowledge', { csrf, fp: fingerprint })).status).toBe(409);
    await post('/alerts/acknowledge', { csrf, fp: fingerprint });
    const res = await post('/alerts/unacknowledge', {
      csrf,
      fp: fingerprint,
      comment: 'handing over to the day shift',
    });
    expect(res.status).toBe(303);
    expect(res.headers.location).toContain('done=unacknowledged');
    expect(alertStoreOf(daemon.wd.store).get(fingerprint)?.acknowledgement).toBeNull();
    const events = eventsOfAlert(daemon.wd.store, fingerprint);
    expect(events.map((e) => e.kind)).toEqual(['firing', 'acknowledged', 'unacknowledged']);
    expect(events[2]?.acknowledgement).toMatchObject({
      by: 'console@loopback',
      comment: 'handing over to the day shift',
    });
  });

  it('acknowledges from the list and comes back to it, with the alert counted and marked', async () => {
    const { fingerprint } = await firingAlert();
    const list = await call(daemon, '/');
    expect(list.text).toContain(`name="fp" value="${fingerprint}"`);
    const res = await post('/alerts/acknowledge', { csrf: csrfIn(list.text), fp: fingerprint, back: 'list' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/?done=acknowledged&fp=${encodeURIComponent(fingerprint)}`);
    const after = await call(daemon, res.headers.location as string);
    expect(after.text).toContain('You acknowledged it');
    expect(after.text).toMatch(/\d+ acknowledged/);
    expect(after.text).toMatch(new RegExp(`<tr class="alert acknowledged" data-fingerprint="${fingerprint}"`));
  });

  it('comes back to the list as it was shown: the search, the grouping and the page', async () => {
    const { fingerprint } = await firingAlert();
    const shown = '/?q=pip+install&group=app&from=0&size=50';
    const list = await call(daemon, shown);
    const form = /<form[^>]*action="\/alerts\/acknowledge"[^>]*>([\s\S]*?)<\/form>/.exec(list.text)?.[1] ?? '';
    const fields = Object.fromEntries([...form.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    expect(fields).toMatchObject({ back: 'list', q: 'pip install', group: 'app', size: '50' });
    const res = await post('/alerts/acknowledge', { ...fields, fp: fingerprint });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(
      `/?q=pip+install&group=app&from=0&size=50&done=acknowledged&fp=${encodeURIComponent(fingerprint)}`,
    );
  });

  it.each<[string, Record<string, string>, number, string]>([
    ['an alert that does not exist', { fp: 'failed_runs/run/999999' }, 404, 'There is no alert failed_runs/run/999999'],
    ['a comment too long', { comment: 'x'.repeat(1001) }, 400, 'Nothing changed: the comment is 1001 characters long'],
  ])('refuses %s, saying why', async (_name, fields, status, text) => {
    const { fingerprint } = await firingAlert();
    const csrf = csrfIn((await call(daemon, alertUrl(fingerprint))).text);
    const before = recordOf(fingerprint);
    const res = await post('/alerts/acknowledge', { csrf, fp: fingerprint, ...fields });
    expect(res.status).toBe(status);
    expect(res.text).toContain(text);
    expect(recordOf(fingerprint)).toEqual(before);
  });

  it('shows a hostile comment as text', async () => {
    const { fingerprint } = await firingAlert();
    const csrf = csrfIn((await call(daemon, alertUrl(fingerprint))).text);
    const comment = '<script>alert(1)</script><img src=x onerror=alert(2)>';
    await post('/alerts/acknowledge', { csrf, fp: fingerprint, comment });
    const page = await call(daemon, alertUrl(fingerprint));
    expect(page.text).not.toContain('<script>alert(1)');
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});
