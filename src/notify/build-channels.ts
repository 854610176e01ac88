/**
 * Builds the configured channels through the channel registry, by name. Used by the composition
 * root and `notify-test`; the pipeline itself only ever sees the resulting `Channel`s.
 */
import type { Channel, ChannelDeps, ChannelKind } from './channels/channel.js';
import { CHANNEL_KINDS, type ChannelConfig } from './channels/registry.js';
import { channelTemplates } from './channels/template-config.js';

/** Every channel of `notify.channels`, keyed by name, in config order. */
export function buildChannels(configs: readonly ChannelConfig[], deps: ChannelDeps): Map<string, Channel> {
  const out = new Map<string, Channel>();
  for (const config of configs) {
    // The config was validated by this kind's own schema (a discriminated union on `type`), so
    // the kind found by `type` accepts it; TypeScript cannot follow that link through the map.
    const kind = CHANNEL_KINDS[config.type] as unknown as ChannelKind<ChannelConfig>;
    const given = (config as { template?: Readonly<Record<string, string | undefined>> }).template;
    const templates = kind.templateParts ? channelTemplates({}, kind.templateParts, given) : undefined;
    out.set(config.name, kind.create(config, { ...deps, templates }));
  }
  return out;
}

/** Closes every channel's connections; errors are ignored (shutting down anyway). */
export async function closeChannels(channels: Iterable<Channel>): Promise<void> {
  await Promise.all([...channels].map((c) => c.close?.().catch(() => undefined)));
}
