/**
 * The words of @slack/web-api that our code compares with, as the library spells them: its error
 * codes and the log level its loggers answer. Spelled here so that only a daemon with a Slack app
 * channel loads the library (its client, with its HTTP stack, is a few MB of heap the 10,000-app
 * budget has no room for); `satisfies` keeps them in step with the library's own enums.
 */
import type { ErrorCode, LogLevel } from '@slack/web-api';

/** `ErrorCode` of @slack/web-api: what kind of failure a call threw. */
export const SLACK_ERROR = {
  RequestError: 'slack_webapi_request_error',
  HTTPError: 'slack_webapi_http_error',
  PlatformError: 'slack_webapi_platform_error',
  RateLimitedError: 'slack_webapi_rate_limited_error',
} as const satisfies Partial<Record<keyof typeof ErrorCode, `${ErrorCode}`>>;

/** `LogLevel.WARN` of @slack/logger, the level our logger for Slack's libraries answers. */
export const SLACK_LOG_WARN = 'warn' as LogLevel.WARN;
