import type { Logger as SlackLogger } from '@slack/web-api';
import { Secret } from '../../lib/secret.js';
import type { LineLogger } from '../../lib/repeated-log.js';
import { SLACK_LOG_WARN } from './slack-web-api-words.js';

/**
 * The logger given to Slack's own libraries (`@slack/web-api`, `@slack/socket-mode`): their
 * warnings and errors into ours, scrubbed of the tokens (a second belt: they redact the
 * Authorization header themselves), their info and debug lines dropped (they hold whole requests,
 * answers and Socket Mode frames, with response URLs and connection tickets).
 */
export function slackLibraryLogger(log: LineLogger, secrets: readonly Secret[], library: string): SlackLogger {
  // Only their words: they log Slack's warnings with `forEach`, which adds the index and the array.
  const text = (parts: unknown[]) =>
    Secret.scrub(parts.filter((p): p is string => typeof p === 'string').join(' '), secrets);
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: (...parts: unknown[]) => log.warn({ library }, text(parts)),
    error: (...parts: unknown[]) => log.error({ library }, text(parts)),
    setLevel: () => undefined,
    getLevel: () => SLACK_LOG_WARN,
    setName: () => undefined,
  };
}
