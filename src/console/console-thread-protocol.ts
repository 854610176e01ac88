/**
 * What the main thread and the console's thread (`console-worker.ts`) say to each other. The
 * console answers pages on a thread of its own, with its own state connection, so a page never
 * waits on the main thread's statements; what only the running daemon knows is published to it
 * here. Nothing here runs.
 */
import type { RemediationRequest } from '../remediation/remediator.js';
import type { RelayTarget } from '../server/front-door-protocol.js';
import type { WriteFence } from '../state/write-fence.js';
import type { DaemonFigures } from './pages/sources-page.js';

/** What the running daemon publishes to the console; each part absent when unchanged. */
export interface ConsolePublication {
  /** The configuration in force, its secrets packed (`secretTransfer`): a reload sends it again. */
  config?: unknown;
  /** The enabled jobs with their schedule. */
  jobs?: [string, string][];
  /** Whether the running configuration has a remediator (it decides the console's requests). */
  remediation?: boolean;
  /** What the leader's write guard does now, so the console's writes are fenced as the main thread's. */
  fence?: WriteFence;
}

/**
 * What the console's thread is started with (`workerData.console`): the unix socket to listen on
 * (in a private directory) and the relay token the front door sends, and the following.
 */
export interface ConsoleThreadData extends RelayTarget {
  /**
   * The daemon's time: slot 1 is 0 on a clock that runs with the system's (the thread reads
   * Date.now()); 1 on a clock that jumps (a test's ManualClock), whose time is slot 0, written at
   * each jump. A page's time and a form's are then the same instant the main thread sees.
   */
  clock: BigInt64Array;
  /** The daemon's log level: lines below it are not sent over. */
  logLevel: string;
  /** The first publication, whole. */
  first: Required<ConsolePublication>;
}

/** What the main thread tells the console's thread, beside `end` (`ThreadEnd`). */
export type ToConsole =
  | { type: 'publish'; publication: ConsolePublication }
  /** The sources page's figures, judged by the main thread when asked. */
  | { type: 'figures'; id: number; figures: DaemonFigures }
  | { type: 'remediated'; id: number; result?: RemediationRequest; error?: string };

/** What the console's thread tells the main thread, beside what every thread says (`ThreadSays`). */
export type FromConsole =
  /** It listens. */
  | { type: 'ready' }
  /** A write that the delivery loop should route now (an acknowledgement). */
  | { type: 'wake' }
  | { type: 'figures'; id: number }
  /** A person asked for a remediation: decided by the running remediator (`Remediator.request`). */
  | { type: 'remediate'; id: number; fingerprint: string; asker: string; now: number };
