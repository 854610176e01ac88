/**
 * The demo's configuration file: an ordinary deploy-watchdog config, written to the demo's temp
 * directory and shown at start, so what the demo runs is what a reader could copy. Secrets are
 * `${VAR}` references filled from the demo's own environment, as in production.
 */
import type { EnvironmentType } from '../../../../src/api/schemas.js';

/** The variables the demo config refers to. */
export const DEMO_ENV = { token: 'DMS_API_TOKEN', webhook: 'SLACK_WEBHOOK_URL' } as const;

/** The demo's channel and policy names, used by its output too. */
export const DEMO_NAMES = {
  slack: 'ops-slack',
  email: 'ops-mail',
  retryPolicy: 'retry-failed-updates',
  mailTo: 'ops@example.com',
  mailFrom: 'watchdog@example.com',
} as const;

/** What the demo config is made from. */
export interface DemoConfigOptions {
  /** The simulator's root URL. */
  baseUrl: string;
  smtp: { host: string; port: number };
  /** How often every job runs, in whole seconds (1 to 5: a divisor of 60 keeps the beat even). */
  jobEverySeconds: number;
  /** The environment type of the app whose failed run the retry policy may retry. */
  retryEnvironment: EnvironmentType;
}

/** The text of the demo config. */
export function demoConfigYaml(o: DemoConfigOptions): string {
  const every = `"*/${o.jobEverySeconds} * * * * *"`;
  return `# deploy-watchdog demo configuration, written by \`deploy-watchdog demo\`.
# Everything points at local stand-ins the demo started: the simulated Deployment Management
# Service, a Slack incoming-webhook stand-in and an SMTP sink. Jobs run every ${o.jobEverySeconds} s (a
# seconds field in the cron expressions) instead of every few minutes, so problems come and go
# within a minute. ${DEMO_ENV.token} and ${DEMO_ENV.webhook} are set by the demo.
api:
  base_url: ${o.baseUrl}
  token: \${${DEMO_ENV.token}}
  # The simulator is local and jobs run every few seconds; a real service keeps the default (10).
  requests_per_second: 100
state:
  path: ./state.db
jobs:
  runs: ${every}
  attention: ${every}
  urls: ${every}
  backups: ${every}
  maintenance: ${every}
  servers: ${every}
  installers: ${every}
  jitter: 0s
checks:
  certificates: { warn_days: 14, critical_days: 3 }
  backups: { max_age: { production: 26h, staging: 8d, development: off } }
  # The attention summary lists much of what the checks above find: its items about a run, URL or
  # backup those checks report are folded into their alerts (one problem, one alert). They wait
  # fold_wait for those checks first: a few of the demo's job beats, where the default is 20m.
  attention:
    min_severity: danger
    fold_wait: ${o.jobEverySeconds * 5}s
alerts:
  for: 1
  repeat_interval: off
  send_resolved: true
notify:
  channels:
    - name: ${DEMO_NAMES.slack}
      type: slack
      webhook_url: \${${DEMO_ENV.webhook}}
      timeout: 5000
    - name: ${DEMO_NAMES.email}
      type: email
      # secure: none is for a local sink only; a real relay uses starttls or tls.
      smtp: { host: ${o.smtp.host}, port: ${o.smtp.port}, secure: none, timeout: 5000 }
      from: ${DEMO_NAMES.mailFrom}
      to: [${DEMO_NAMES.mailTo}]
  routes:
    - { match: { environment_type: production }, channels: [${DEMO_NAMES.slack}, ${DEMO_NAMES.email}] }
    - { channels: [${DEMO_NAMES.slack}] }
  delivery: { interval: 500ms, initial_backoff: 1s, max_backoff: 5s, timeout: 5s }
remediation:
  enabled: true
  dry_run: false
  # A retried run finishes within seconds here; its outcome shows as soon as it is read again.
  poll_interval: ${o.jobEverySeconds}s
  policies:
    - name: ${DEMO_NAMES.retryPolicy}
      action: runs.retry
      match: { environment_type: ${o.retryEnvironment} }
      max_attempts: 1
      backoff: 10s
      now: true
server:
  listen: "off"
log:
  level: warn
`;
}
