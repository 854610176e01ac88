/**
 * The web console's addresses: where its pages are, so the console's own links and the messages
 * that link to an alert's page (`notify/channels/console-link.ts`) build them alike, without a
 * message importing the console.
 */

/** A console path with its query, each value encoded. */
export function consolePath(path: string, query: Record<string, string | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** The page of one alert. */
export function alertPath(fingerprint: string): string {
  return consolePath('/alert', { fp: fingerprint });
}
