/**
 * Which collector reads each job's source, one line each. Adding a job is one collector file,
 * one line here and its detectors' lines in `detectors/registry.ts`.
 */
import type { CollectorContext } from './collector-context.js';
import { collectAttention } from './collect-attention.js';
import { collectBackups } from './collect-backups.js';
import { collectMaintenance } from './collect-maintenance.js';
import { collectRuns } from './collect-runs.js';
import { collectServers } from './collect-servers.js';
import { collectUrls } from './collect-urls.js';
import type { Snapshot, SnapshotJob } from './snapshot.js';

/** Reads one source into a complete snapshot, or throws. */
export type Collector = (ctx: CollectorContext) => Promise<Snapshot>;

/** Every collector, by job name, in the order jobs are run by `check`. */
export const COLLECTORS: Readonly<Record<SnapshotJob, Collector>> = {
  runs: collectRuns,
  attention: collectAttention,
  urls: collectUrls,
  backups: collectBackups,
  maintenance: collectMaintenance,
  servers: collectServers,
};

/** The job names, in {@link COLLECTORS} order. */
export const JOB_NAMES = Object.keys(COLLECTORS) as SnapshotJob[];
