import { describe, expect, it } from 'vitest';
import { actorLabel, clickOf, unknownButtonResponseUrl } from '../../src/interactions/slack-click.js';

/** A block_actions payload as Slack sends one for a button in a message's attachment. */
function payload(
  over: Record<string, unknown> = {},
  action: Record<string, unknown> = { value: 'acknowledge:1a2b3c4d' },
) {
  return {
    type: 'block_actions',
    user: { id: 'U0ALICE', username: 'alice', name: 'alice', team_id: 'T0' },
    container: {
      type: 'message_attachment',
      message_ts: '1700000000.000100',
      channel_id: 'C0ALERTS',
      attachment_id: 1,
    },
    channel: { id: 'C0ALERTS', name: 'alerts' },
    message: { ts: '1700000000.000100', text: '…' },
    response_url: 'https://hooks.slack.com/actions/T0/1/abc',
    actions: [{ type: 'button', action_id: 'dw.acknowledge.1a2b3c4d', block_id: 'b', ...action }],
    ...over,
  };
}

describe('clickOf', () => {
  it('reads a button: who, which message, what, which alert, where to answer', () => {
    expect(clickOf(payload())).toEqual({
      actor: { id: 'U0ALICE', name: 'alice' },
      slackChannel: 'C0ALERTS',
      ts: '1700000000.000100',
      action: 'acknowledge',
      alertId: '1a2b3c4d',
      responseUrl: 'https://hooks.slack.com/actions/T0/1/abc',
    });
  });

  it.each([
    [
      'an option of a menu',
      payload({}, { type: 'overflow', selected_option: { value: 'silence_4h:1a2b3c4d' } }),
      'silence_4h',
    ],
    ['a message in the channel itself (no container)', payload({ container: undefined }), 'acknowledge'],
    ['a link button (no value)', payload({}, { type: 'button', url: 'https://x' }), undefined],
    ['Open in console from a menu', payload({}, { selected_option: { value: 'console:1a2b3c4d' } }), undefined],
    ['a value made by something else', payload({}, { value: 'acknowledge:failed_runs/run/1' }), undefined],
    ['another kind of interaction', payload({ type: 'view_submission' }), undefined],
    ['no actions', payload({ actions: [] }), undefined],
    ['no user', payload({ user: undefined }), undefined],
    ['not an object', 'payload', undefined],
  ])('%s', (_what, p, action) => {
    expect(clickOf(p)?.action).toBe(action);
  });

  it.each([
    ['a value this version never made', payload({}, { value: 'silence_3650d:1a2b3c4d' }), true],
    ['a click we read', payload(), false],
    ['Open in console from a menu', payload({}, { selected_option: { value: 'console:1a2b3c4d' } }), false],
    ['a link button', payload({}, { url: 'https://x' }), false],
    ["another app's button", payload({}, { action_id: 'other.tool', value: 'whatever' }), false],
  ])('answers %s: %s', (_what, p, answered) => {
    expect(unknownButtonResponseUrl(p) !== undefined).toBe(answered);
  });

  it("writes out the control and hidden characters of a user's name, and cuts it", () => {
    const click = clickOf(payload({ user: { id: 'U0EVE', username: `eve\u202e\n${'x'.repeat(200)}` } }));
    expect(click?.actor.name).toMatch(/^eve\\u\{202e\}\\u\{a\}x+$/);
    expect(click?.actor.name?.length).toBe(80);
  });

  it.each([
    [{ id: 'U0ALICE', name: 'alice' }, 'alice (U0ALICE)'],
    [{ id: 'U0ALICE', name: null }, 'U0ALICE'],
  ])('labels %o as %s', (actor, label) => {
    expect(actorLabel(actor)).toBe(label);
  });
});
