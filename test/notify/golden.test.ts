/**
 * Rendering as golden files: for each case of `golden-cases.ts`, the Slack payload (as JSON), the
 * email (its subject and own headers with the plain text, and the HTML) and the Alertmanager webhook
 * payload (as JSON) are compared with the files in `test/notify/golden/`. A change of wording shows as a diff of those files in review.
 *
 * To accept a change, write them again and read the diff:
 *
 *     UPDATE_GOLDEN=1 npx vitest run test/notify/golden.test.ts && git diff test/notify/golden
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderEmail, type EmailMessage } from '../../src/notify/channels/email.js';
import { renderWebhook } from '../../src/notify/channels/webhook.js';
import { renderSlack } from '../../src/notify/channels/slack-render.js';
import { NOW } from '../detectors/fixtures.js';
import { v4Problems } from './alertmanager-receiver.js';
import { CONFIG_FILE, goldenCases, LINKS } from './golden-cases.js';

const DIR = path.join(import.meta.dirname, 'golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

const CASES = goldenCases();

/** The email as one text file: the headers we set, a blank line, the plain-text body. */
function emailText(m: EmailMessage): string {
  const headers = [`Subject: ${m.subject}`, ...Object.entries(m.headers).map(([k, v]) => `${k}: ${v}`)];
  return `${headers.join('\n')}\n\n${m.text}\n`;
}

/** Compares `actual` with the golden file `name`, or writes it when UPDATE_GOLDEN=1. */
function expectGolden(name: string, actual: string): void {
  const file = path.join(DIR, name);
  if (UPDATE) {
    fs.mkdirSync(DIR, { recursive: true });
    fs.writeFileSync(file, actual);
    return;
  }
  if (!fs.existsSync(file)) {
    throw new Error(`golden file ${name} is missing: UPDATE_GOLDEN=1 npx vitest run test/notify/golden.test.ts`);
  }
  expect(actual, `${name} differs (UPDATE_GOLDEN=1 to accept, then read the diff)`).toBe(fs.readFileSync(file, 'utf8'));
}

const filesOf = (name: string) => [
  `${name}.slack.json`,
  `${name}.email.txt`,
  `${name}.email.html`,
  `${name}.webhook.json`,
];

describe('golden messages', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s: the Slack payload', (name, c) => {
    const m = renderSlack(c.notification, {
      now: NOW,
      channelName: 'ops-slack',
      mention: { critical: '<!subteam^S0ONCALL>', environment_types: ['production'] },
      commandConfigFile: CONFIG_FILE,
      links: LINKS,
    });
    expectGolden(`${name}.slack.json`, `${JSON.stringify(m, null, 2)}\n`);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s: the email', (name, c) => {
    const m = renderEmail(c.notification, {
      now: NOW,
      channelName: 'ops-mail',
      subject_prefix: '[deploy-watchdog]',
      commandConfigFile: CONFIG_FILE,
      links: LINKS,
    });
    expectGolden(`${name}.email.txt`, emailText(m));
    expectGolden(`${name}.email.html`, m.html);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s: the Alertmanager webhook payload', (name, c) => {
    const m = renderWebhook(c.notification, {
      now: NOW,
      channelName: 'oncall',
      externalUrl: 'https://watchdog.example.com',
      maxAlerts: 0,
      commandConfigFile: CONFIG_FILE,
      links: LINKS,
    });
    const json = `${JSON.stringify(m, null, 2)}\n`;
    expect(v4Problems(JSON.parse(json))).toEqual([]);
    expectGolden(`${name}.webhook.json`, json);
  });

  it.skipIf(UPDATE)('has no golden file that no case writes', () => {
    const expected = CASES.flatMap((c) => filesOf(c.name)).sort();
    expect(fs.readdirSync(DIR).sort()).toEqual(expected);
  });
});
