/**
 * An on-call tool's webhook that arrives while the state cannot be written (SQLite read-only for a
 * moment, PostgreSQL down): it is answered 500, and the tool's retry of the same post is taken
 * then, not ignored as a replay of one that was never carried out.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { applyFindings } from '../../src/alerts/lifecycle.js';
import { parseConfig } from '../../src/config/load-config.js';
import { onCallWebhookHandler } from '../../src/interactions/on-call-webhook.js';
import { OPSGENIE_TOKEN_HEADER } from '../../src/interactions/opsgenie-webhook.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { Store } from '../../src/state/store.js';
import { finding, HOUR, tempState, type TempState } from '../alerts/fixtures.js';
import { postWebhook } from '../helpers/fake-service.js';

const TOKEN = 'og-SECRET-webhook-token-0123456789';
const CONFIG = `
api: { base_url: "http://127.0.0.1:9", token: test-token }
notify:
  channels:
    - { name: oncall, type: opsgenie, api_key: og-api-key-0123456789, webhook: { token: "${TOKEN}" } }
  routes:
    - { channels: [oncall] }
`;

let state: TempState;
let store: Store;
let server: Server;
let url: string;

beforeEach(async () => {
  state = tempState();
  store = state.open();
  const clock = new ManualClock();
  store.transaction(() =>
    applyFindings(
      store,
      { job: 'runs', findings: [finding('fp/1')], now: clock.now() },
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
    ),
  );
  const config = parseConfig(CONFIG, {}, 'test.yaml', { baseDir: state.dir });
  const handler = onCallWebhookHandler({ config: () => config, store, clock, logger: silentLogger });
  server = createServer((req, res) => {
    if (!handler(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/opsgenie/oncall`;
});
afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  state.cleanup();
});

describe('an Opsgenie acknowledgement while the state cannot be written', () => {
  it('is answered 500, and the same post sent again is taken', async () => {
    const post = {
      headers: { [OPSGENIE_TOKEN_HEADER]: TOKEN },
      body: JSON.stringify({ action: 'Acknowledge', alert: { alias: 'fp/1', username: 'bob' } }),
    };
    store.db.exec('PRAGMA query_only = ON');
    expect(await postWebhook(url, post)).toBe(500);
    expect(alertStoreOf(store).get('fp/1')?.acknowledgement).toBeNull();

    store.db.exec('PRAGMA query_only = OFF');
    expect(await postWebhook(url, post)).toBe(200);
    expect(alertStoreOf(store).get('fp/1')?.acknowledgement).toMatchObject({ by: 'bob', via: 'opsgenie' });
  });
});
