/**
 * What a Discord webhook takes: the message both the rendering (`discord.ts`) and the living
 * message (`discord-living.ts`, which posts and edits it) speak of, in a leaf of its own so neither
 * imports the other for it.
 */

/** One embed. */
export interface DiscordEmbed {
  title: string;
  description?: string;
  url?: string;
  color: number;
  footer?: { text: string };
}

/** Who a message may ping: nobody unless configured (`parse` is always empty: no @everyone, no name found in text). */
export interface AllowedMentions {
  parse: [];
  users?: string[];
  roles?: string[];
}

/** What a Discord webhook takes. */
export interface DiscordMessage {
  content: string;
  embeds: DiscordEmbed[];
  allowed_mentions: AllowedMentions;
  username?: string;
  avatar_url?: string;
}
