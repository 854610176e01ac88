import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlackResponder } from '../../src/interactions/slack-responder.js';

let server: Server;
let origin: string;
const received: { path: string; body: string }[] = [];

beforeEach(async () => {
  received.length = 0;
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body });
      res.writeHead(req.url?.startsWith('/gone') ? 404 : 200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('SlackResponder', () => {
  it('answers the person who clicked alone, the words escaped as any text in Slack', async () => {
    const responder = new SlackResponder([`${origin}/api/`], 5_000);
    expect(await responder.answer(`${origin}/actions/T0/1/SECRETPATH`, 'Silenced by <@U0> & co')).toEqual({ ok: true });
    expect(received).toEqual([{ path: '/actions/T0/1/SECRETPATH', body: expect.any(String) }]);
    expect(JSON.parse(received[0]!.body)).toEqual({
      response_type: 'ephemeral',
      replace_original: false,
      text: 'Silenced by &lt;@U0&gt; &amp; co',
    });
  });

  it.each([
    ['a host that is neither Slack nor the Web API root', 'http://127.0.0.1:9/actions/1', 'does not point at Slack'],
    ['Slack on plain http', 'http://hooks.slack.com/actions/1', 'does not point at Slack'],
    ['not a URL', 'hooks.slack.com/actions/1', 'not a URL'],
    ['none', undefined, 'without a response_url'],
  ])('does not post to %s', async (_what, url, reason) => {
    const responder = new SlackResponder([`${origin}/api/`], 5_000);
    expect(await responder.answer(url, 'hello')).toEqual({ ok: false, reason: expect.stringContaining(reason) });
    expect(received).toEqual([]);
  });

  it("says what Slack answered when it refuses, never the URL's path", async () => {
    const responder = new SlackResponder([`${origin}/api/`], 5_000);
    const result = await responder.answer(`${origin}/gone/SECRETPATH`, 'hello');
    expect(result).toEqual({ ok: false, reason: 'Slack answered HTTP 404' });
  });
});
