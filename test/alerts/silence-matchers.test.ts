import { describe, expect, it } from 'vitest';
import { formatMatcher } from '../../src/alerts/matchers.js';
import { silenceMatchersFor } from '../../src/alerts/silence-matchers.js';
import type { Labels, Subject } from '../../src/lib/alert-vocabulary.js';

const line = (check: string, labels: Labels, subject?: Subject) =>
  silenceMatchersFor({ check, labels, subject })?.map(formatMatcher).join(' ') ?? null;

describe('the matchers that silence one alert and as little else as possible', () => {
  it.each([
    [
      'a failed run: its app',
      'failed_runs',
      { app: 'shop', server: 's1' },
      { type: 'run', id: 5 },
      'check=failed_runs app=shop',
    ],
    ['a server: the server', 'servers', { server: 's1' }, { type: 'server', id: 1 }, 'check=servers server=s1'],
    [
      'a marketplace service: the service, not its app or server',
      'installers',
      { installer: 'redis-7', app: 'shop', server: 's1' },
      { type: 'installer', id: 3 },
      'check=installers installer=redis-7',
    ],
    [
      'a marketplace service in a namespace: the service of that namespace (another team may run one of that name)',
      'installers',
      { namespace: 'acme', installer: 'redis-7', app: 'shop' },
      { type: 'installer', id: 3 },
      'check=installers installer=redis-7 namespace=acme',
    ],
    [
      'an app in a namespace: its app alone, as before',
      'failed_runs',
      { namespace: 'acme', app: 'shop' },
      { type: 'run', id: 5 },
      'check=failed_runs app=shop',
    ],
    ['a source: the source', 'watchdog', { source: 'runs' }, { type: 'source' }, 'check=watchdog source=runs'],
    ['an app record without its app label: none', 'backups', { server: 's1' }, { type: 'app', id: 2 }, null],
  ] as const)('%s', (_what, check, labels, subject, expected) => {
    expect(line(check, { check, ...labels }, subject as Subject)).toBe(expected);
  });
});
