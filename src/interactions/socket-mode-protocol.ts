/**
 * What the main thread and the Socket Mode thread (`socket-mode-worker.ts`) say to each other.
 * Nothing here runs. An app-level token crosses only in `open`, which neither side ever logs; what
 * the thread says back (`log`) is scrubbed of every token it holds before it is posted.
 */

/**
 * What the main thread tells the Socket Mode thread, beside `end` (`ThreadEnd`: close every
 * connection, say `ended` and leave nothing running).
 */
export type ToSocketThread =
  /** Keep a connection up with this app-level token, numbered `id`, until told to close it. */
  { type: 'open'; id: number; appToken: string; apiUrl: string; channels: string[] } | { type: 'close'; id: number };

/** What the Socket Mode thread tells the main thread, beside what every thread says (`ThreadSays`). */
export type FromSocketThread =
  /** It takes `open`. */
  | { type: 'ready' }
  /** An interaction received on connection `id`, its envelope already acknowledged to Slack. */
  | { type: 'interaction'; id: number; payload: unknown }
  | { type: 'closed'; id: number };
