import { describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../src/config/load-config.js';
import type { AlertDefaults, NotifySettings } from '../../src/notify/notify-settings.js';

describe('NotifySettings', () => {
  it('is what config.notify and config.alerts parse to', () => {
    const config: Config = parseConfig(
      ['api: { base_url: "http://127.0.0.1:1", token: t }', 'notify:', '  channels: [{ name: l, type: log }]'].join(
        '\n',
      ),
      {},
      'inline',
    );
    // The assignments are the test: they stop compiling if the config shape drifts from the pipeline's.
    const notify: NotifySettings = config.notify;
    const alerts: AlertDefaults = config.alerts;
    expect(notify.group_by).toEqual(['check', 'environment_type']);
    expect(alerts).toMatchObject({ repeat_interval: 4 * 3600_000, send_resolved: true });
  });
});
