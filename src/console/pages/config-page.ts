/**
 * `/config`: the configuration in force, as the daemon parsed it (every default filled in), with
 * every secret shown as `<secret>`: the API token, webhook and heartbeat URLs, the SMTP password,
 * the console's own token or password. Secrets say so themselves when serialised (`Secret`); the
 * text is then scrubbed of their values as well, so a secret that reached a plain string by some
 * other way is still not shown.
 */
import { stringify } from 'yaml';
import type { Config } from '../../config/load-config.js';
import { secretsIn } from '../../config/secret.js';
import { Secret } from '../../lib/secret.js';
import { html, whole, type SafeHtml } from '../html.js';
import { page, type PageContext } from '../layout.js';

/** The config page. */
export function configPage(ctx: PageContext): SafeHtml {
  const body = html` <h1>Configuration in force</h1>
    <p class="hint">
      As parsed, defaults included: durations in milliseconds, <code>off</code> or <code>null</code> where something is
      off, secrets as <code>&lt;secret&gt;</code>. A reload (SIGHUP) replaces it.
    </p>
    <pre class="config">${whole(redactedConfigText(ctx.config))}</pre>`;
  return page({ title: 'Config', current: '/config', ctx, body });
}

/** The config as YAML with every secret redacted. */
function redactedConfigText(config: Config): string {
  // JSON first: each Secret's toJSON says <secret>; Infinity (a limit that is off) would say null.
  const plain = JSON.parse(JSON.stringify(config, (_key, value: unknown) => (value === Infinity ? 'off' : value)));
  return Secret.scrub(stringify(plain, { lineWidth: 0 }), secretsIn(config));
}
