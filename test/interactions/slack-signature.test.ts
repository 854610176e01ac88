import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { slackSignature, verifySlackRequest } from '../../src/interactions/slack-signature.js';

// The worked example of Slack's "Verifying requests from Slack" (a slash command's body).
const DOC_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const DOC_TIMESTAMP = '1531420618';
const DOC_BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const DOC_SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';
const AT = Number(DOC_TIMESTAMP) * 1000;
const secrets = [new Secret(DOC_SECRET)];

describe("Slack's request signature", () => {
  it("is Slack's documented test vector", () => {
    expect(slackSignature(DOC_SECRET, DOC_TIMESTAMP, DOC_BODY)).toBe(DOC_SIGNATURE);
    expect(
      verifySlackRequest({ timestamp: DOC_TIMESTAMP, signature: DOC_SIGNATURE, body: DOC_BODY }, secrets, AT),
    ).toEqual({
      ok: true,
      index: 0,
    });
  });

  it('names which of several apps signed it', () => {
    const two = [new Secret('another-apps-secret-0000'), new Secret(DOC_SECRET)];
    const request = { timestamp: DOC_TIMESTAMP, signature: DOC_SIGNATURE, body: DOC_BODY };
    expect(verifySlackRequest(request, two, AT)).toEqual({ ok: true, index: 1 });
  });

  it.each([
    ['a body changed after signing', { body: DOC_BODY.replace('roadrunner', 'coyote') }, AT, 'bad_signature'],
    ['another secret', { signature: slackSignature('not-the-secret', DOC_TIMESTAMP, DOC_BODY) }, AT, 'bad_signature'],
    ['a timestamp changed after signing', { timestamp: '1531420619' }, AT, 'bad_signature'],
    ['a signature cut short', { signature: DOC_SIGNATURE.slice(0, 20) }, AT, 'bad_signature'],
    ['a signature of another version', { signature: DOC_SIGNATURE.replace('v0=', 'v1=') }, AT, 'bad_signature'],
    ['more than 5 minutes old', {}, AT + 5 * 60_000 + 1_000, 'stale_timestamp'],
    ['more than 5 minutes ahead', {}, AT - 5 * 60_000 - 1_000, 'stale_timestamp'],
    ['a timestamp that is not seconds', { timestamp: '1531420618.5' }, AT, 'stale_timestamp'],
    ['no signature', { signature: undefined }, AT, 'unsigned'],
    ['no timestamp', { timestamp: undefined }, AT, 'unsigned'],
  ])('refuses %s', (_what, change, now, reason) => {
    const request = { timestamp: DOC_TIMESTAMP, signature: DOC_SIGNATURE, body: DOC_BODY, ...change };
    const check = verifySlackRequest(request, secrets, now);
    expect(check).toMatchObject({ ok: false, reason });
    expect(JSON.stringify(check)).not.toContain(DOC_SECRET);
  });

  it('takes one just within 5 minutes, either way', () => {
    const request = { timestamp: DOC_TIMESTAMP, signature: DOC_SIGNATURE, body: DOC_BODY };
    expect(verifySlackRequest(request, secrets, AT + 5 * 60_000).ok).toBe(true);
    expect(verifySlackRequest(request, secrets, AT - 5 * 60_000).ok).toBe(true);
  });
});
