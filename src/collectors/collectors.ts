/**
 * Which collector reads each job's source, one line each. Adding a job is one collector file,
 * one line here and its detectors' lines in `detectors/registry.ts`.
 */
import type { CollectorContext } from './collector-context.js';
import { collectAttention } from './collect-attention.js';
import { collectBackups } from './collect-backups.js';
import { collectInstallers } from './collect-installers.js';
import { collectMaintenance } from './collect-maintenance.js';
import { collectRuns } from './collect-runs.js';
import { collectServers } from './collect-servers.js';
import { collectUrls } from './collect-urls.js';
import type { Snapshot, SnapshotJob } from './snapshot.js';

/** Reads one source into a complete snapshot, or throws. */
export type Collector = (ctx: CollectorContext) => Promise<Snapshot>;

/**
 * Every collector, by job name, in the order a cycle of every job runs them (`check`, and the
 * daemon's first cycle). Servers come first: a server's alert must be on record before the alerts
 * of its apps and services go out, so that inhibition can hold them under it.
 */
export const COLLECTORS: Readonly<Record<SnapshotJob, Collector>> = {
  servers: collectServers,
  installers: collectInstallers,
  runs: collectRuns,
  attention: collectAttention,
  urls: collectUrls,
  backups: collectBackups,
  maintenance: collectMaintenance,
};

/** The job names, in {@link COLLECTORS} order. */
export const JOB_NAMES = Object.keys(COLLECTORS) as SnapshotJob[];
