import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../../src/alerts/alert-event.js';
import { renderEmail } from '../../../src/notify/channels/email.js';
import { alertEvent, alerts, NOW } from './fixtures.js';

const options = { now: NOW, channelName: 'ops-mail', subject_prefix: '[deploy-watchdog]' };

describe('renderEmail', () => {
  it('builds the subject from severity, count, what and where', () => {
    const m = renderEmail(alerts([alertEvent(), alertEvent({ id: 2 }), alertEvent({ id: 3 })]), options);
    expect(m.subject).toBe('[deploy-watchdog] CRITICAL 3 failed runs (production)');
  });

  it.each([
    [
      'a warning',
      [alertEvent({ severity: 'warning' })],
      0,
      '[deploy-watchdog] WARNING 1 failed run · shop (production)',
    ],
    [
      'a resolved alert',
      [alertEvent({ kind: 'resolved', endsAt: '2026-11-01T11:00:00Z' })],
      0,
      '[deploy-watchdog] RESOLVED 1 failed run · shop (production)',
    ],
    ['one shown, four omitted', [alertEvent()], 4, '[deploy-watchdog] CRITICAL 5 failed runs (production)'],
  ])('subject of %s is %s', (_name, events, omitted, subject) => {
    expect(renderEmail(alerts(events, omitted), options).subject).toBe(subject);
  });

  it('has the same facts in the text and HTML bodies', () => {
    const m = renderEmail(alerts([alertEvent()], 2), options);
    expect(m.text).toContain('CRITICAL · Update of shop (production) failed at step install');
    expect(m.html).toContain('<b>🔴 CRITICAL</b> · Update of shop (production) failed at step install');
    for (const fact of [
      'production',
      'webshop',
      'acme',
      'install',
      'exit code 1',
      '2026-11-01 10:00 UTC (2h ago)',
      '…and 2 more not shown.',
    ]) {
      expect(m.text).toContain(fact);
      expect(m.html).toContain(fact);
    }
    expect(m.text).toMatch(/\n {2}App: +shop {2}<https:\/\/shop\.example\.com\/>\n/);
    expect(m.html).toContain('<a href="https://shop.example.com/">shop</a>');
  });

  it('one firing event: the plain text in full, values in one column', () => {
    const m = renderEmail(
      alerts([alertEvent({ details: { run: '#123', workflow: 'Update', step: 'install', reason: 'exit code 1' } })]),
      options,
    );
    expect(m.text).toBe(
      [
        'CRITICAL 1 failed run · shop (production)',
        '',
        'CRITICAL · Update of shop (production) failed at step install',
        '  App:       shop  <https://shop.example.com/>',
        '  Project:   webshop',
        '  Namespace: acme',
        '  Run:       #123',
        // Not "Step: install": the summary says it already.
        '  Reason:    exit code 1',
        '  Since:     2026-11-01 10:00 UTC (2h ago)',
        '',
        "Next step: Read the failed step's log, fix the cause, then retry the run.",
        '',
        '-- ',
        "To silence: deploy-watchdog silence --match check=failed_runs --match app=shop --for 2h --reason '…'",
        'deploy-watchdog · ops-mail',
      ].join('\n'),
    );
  });

  it('shows the silence line as it is: the same in the text and, escaped, in a code element keeping its spaces', () => {
    const event = alertEvent({ labels: { check: 'failed_runs', environment_type: 'production', app: 's`<b>  &' } });
    const m = renderEmail(alerts([event]), { ...options, commandConfigFile: '/srv/ops/watchdog.yaml' });
    const line = `deploy-watchdog silence --config /srv/ops/watchdog.yaml --match check=failed_runs --match 'app="s\`<b>  &"' --for 2h --reason '…'`;
    expect(m.text.split('\n')).toContain(`To silence: ${line}`);
    expect(m.html).toContain(
      'To silence: <code style="white-space:pre-wrap">deploy-watchdog silence --config /srv/ops/watchdog.yaml --match check=failed_runs ' +
        '--match &#39;app=&quot;s`&lt;b&gt;  &amp;&quot;&#39; --for 2h --reason &#39;…&#39;</code>',
    );
  });

  it('leaves out the silence line when it cannot be shown whole, never cutting or changing it', () => {
    const m = renderEmail(
      alerts([alertEvent({ labels: { check: 'failed_runs', environment_type: 'production', app: 'x'.repeat(600) } })]),
      options,
    );
    expect(m.text).not.toContain('To silence');
    expect(m.html).not.toContain('To silence');
  });

  it.each<[string, Record<string, string>, string[]]>([
    ['short labels', { step: 'migrate' }, ['  App:       shop  <https://shop.example.com/>', '  Step:      migrate']],
    [
      'a long label',
      { state: 'running', running_for: '3h', step_running_for: '2h' },
      ['  App:              shop  <https://shop.example.com/>', '  Step running for: 2h'],
    ],
  ])('aligns the values whatever the labels: %s', (_name, details, lines) => {
    const check = 'step_running_for' in details ? 'stuck_runs' : 'failed_runs';
    const text = renderEmail(alerts([alertEvent({ check, details })]), options).text.split('\n');
    for (const line of lines) expect(text).toContain(line);
    const rows = text.filter((l) => /^ {2}\S[^:]*: /.test(l));
    expect(new Set(rows.map((l) => l.search(/: +\S/) + l.slice(l.search(/: +\S/)).search(/[^: ]/))).size).toBe(1);
  });

  it('says RESOLVED with how long it lasted, what was wrong as over, and nothing else', () => {
    const m = renderEmail(alerts([alertEvent({ kind: 'resolved', endsAt: '2026-11-01T10:30:00Z' })]), options);
    expect(m.text.split('\n').slice(0, 5)).toEqual([
      'RESOLVED 1 failed run · shop (production)',
      '',
      'RESOLVED after 30m · was: Update of shop (production) failed at step install',
      '  App: shop  <https://shop.example.com/>',
      '',
    ]);
    expect(m.text).not.toContain('Reason');
    expect(m.text).not.toContain('To silence');
    expect(m.text).not.toContain('Next step');
  });

  it('says why a resolved alert is over, where the event says', () => {
    const m = renderEmail(
      alerts([alertEvent({ kind: 'resolved', endsAt: '2026-11-01T10:30:00Z', resolution: 'run #5981 succeeded' })]),
      options,
    );
    expect(m.text).toContain('  Why: run #5981 succeeded');
    expect(m.html).toContain(
      '<th align="left" style="padding:2px 12px 2px 0;color:#555;font-weight:normal">Why</th><td style="padding:2px 0">run #5981 succeeded</td>',
    );
  });

  it.each<[string, AlertEvent[], string]>([
    [
      'mixed',
      [alertEvent(), alertEvent({ id: 2, kind: 'resolved' })],
      '[deploy-watchdog] CRITICAL 1 failed run, 1 resolved (production)',
    ],
    [
      'all resolved',
      [alertEvent({ kind: 'resolved' }), alertEvent({ id: 2, kind: 'resolved' })],
      '[deploy-watchdog] RESOLVED 2 failed runs (production)',
    ],
  ])('subject of a %s group: %s', (_name, events, subject) => {
    expect(renderEmail(alerts(events), options).subject).toBe(subject);
  });

  it('more than three events: one line each, shared labels once, no raw ISO times', () => {
    const events = [1, 2, 3, 4].map((i) =>
      alertEvent({
        id: i,
        labels: {
          check: 'failed_runs',
          namespace: 'acme',
          project: 'webshop',
          environment_type: 'production',
          app: `app-${i}`,
        },
        details: { step: 'restart', reason: 'database connection refused', since: '2026-11-01T11:13:00.000Z' },
        since: '2026-11-01T11:13:00.000Z',
      }),
    );
    const m = renderEmail(alerts(events), options);
    expect(m.text.split('\n').slice(0, 8)).toEqual([
      'CRITICAL 4 failed runs (production)',
      '  Project:   webshop',
      '  Namespace: acme',
      '',
      '- CRITICAL  app-1 · step restart: database connection refused · for 47m',
      '- CRITICAL  app-2 · step restart: database connection refused · for 47m',
      '- CRITICAL  app-3 · step restart: database connection refused · for 47m',
      '- CRITICAL  app-4 · step restart: database connection refused · for 47m',
    ]);
    expect(m.html).toContain(
      '<a href="https://shop.example.com/">app-1</a> · step restart: database connection refused · for 47m',
    );
    expect(m.text + m.html).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
  });

  it('escapes API text in the HTML body and refuses unsafe links', () => {
    const m = renderEmail(
      alerts([
        alertEvent({
          summary: '<script>alert(1)</script>',
          labels: { check: 'failed_runs', app: '<img src=x onerror=alert(1)>', environment_type: 'production' },
          details: { reason: '"quoted" & \'single\'' },
          url: 'javascript:alert(1)',
        }),
      ]),
      options,
    );
    expect(m.html).not.toMatch(/<script|<img|javascript:/);
    expect(m.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(m.html).toContain('&quot;quoted&quot; &amp; &#39;single&#39;');
  });

  it.each(['production\r\nBcc: victim@evil.example', 'prod\nX-Injected: 1', 'prod\u2028X: 1', 'prod\u0000\u001b[31m'])(
    'keeps the subject on one line when the scope is %j',
    (env) => {
      const m = renderEmail(
        { type: 'alerts', group: { check: 'failed_runs', environment_type: env }, events: [alertEvent()], omitted: 0 },
        options,
      );
      // eslint-disable-next-line no-control-regex -- no control character may reach a header
      expect(m.subject).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
      expect(m.subject.startsWith('[deploy-watchdog] CRITICAL 1 failed run · shop (')).toBe(true);
    },
  );

  it('cuts a long scope in the subject', () => {
    const m = renderEmail(
      { type: 'alerts', group: { environment_type: 'e'.repeat(500) }, events: [alertEvent()], omitted: 0 },
      options,
    );
    expect(m.subject.length).toBeLessThanOrEqual(200);
    expect(m.subject).toContain('…');
  });

  it('renders a notice with fields, lines and link', () => {
    const m = renderEmail(
      {
        type: 'notice',
        topic: 'test',
        title: 'Test message\r\nBcc: x@evil.example',
        severity: 'ok',
        fields: [{ label: 'Channel', value: 'ops-mail' }],
        lines: ['If you can read this, the channel works.'],
        url: 'https://manage.example.com/',
      },
      options,
    );
    expect(m.subject).toBe('[deploy-watchdog] OK Test message Bcc: x@evil.example');
    expect(m.text).toMatch(/\nChannel: ops-mail\n/);
    expect(m.text).toContain('If you can read this, the channel works.');
    expect(m.text).toContain('https://manage.example.com/');
    expect(m.html).toContain('<a href="https://manage.example.com/">');
    expect(m.text).toContain('deploy-watchdog · ops-mail · test');
  });
});
