/**
 * A real PostgreSQL for the tests: a throwaway cluster (initdb) in a temp directory, listening on
 * a free loopback port, with a password (so tests see that it never shows), no fsync (nothing
 * here must survive a power cut; a crash of the server itself still loses no commit). Debian's `postgresql` package provides the binaries (`.ci/run`
 * installs it). PostgreSQL refuses to run as root, so as root (CI, containers) the cluster runs
 * as the `postgres` system user through `runuser`.
 *
 * Two kinds: {@link startPostgres} starts a cluster of the caller's own (for the tests that stop,
 * crash or restart the server), and {@link sharedPostgres} joins the one cluster of the whole
 * vitest run, started by the run's global setup (an initdb and a start cost seconds of CPU; paid
 * once per run instead of once per file, and never inside a test's timeout). A file on the shared cluster works in
 * databases of its own, dropped after it.
 *
 * Synchronous on purpose: the store tests open stores synchronously, and a fresh database per test
 * is made the same way (CREATE DATABASE through the project's own synchronous connection).
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Secret } from '../../src/lib/secret.js';
import { PostgresDatabase } from '../../src/state/postgres-database.js';
import { Store } from '../../src/state/store.js';
import { RUN_DIR_VARIABLE } from './run-dir.js';

/** The user and password of every test cluster. */
const USER = 'watchdog';
const PASSWORD = 'pg-test-password-3f9c1e';
/** The database every migration has been applied to, copied by `createDatabase({ migrated: true })`. */
const MIGRATED_TEMPLATE = 'dw_migrated';

/** Where the PostgreSQL server binaries are (the newest version installed), or null when none is. */
export function postgresBinaries(): string | null {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return versions[0] === undefined ? null : path.join(root, versions[0], 'bin');
}

/** A running test cluster. */
export interface PostgresCluster {
  readonly port: number;
  /** The password of the cluster's user: what no output may show. */
  readonly password: string;
  /** With `tls`: the server's self-signed certificate (PEM), the CA to trust. */
  readonly certificate: string | undefined;
  /** The URL of `database` (with the user's password). */
  url(database: string): string;
  /**
   * Creates a new database and returns its name: empty, or with `migrated` a copy of one every
   * migration has been applied to (`CREATE DATABASE … TEMPLATE`: milliseconds, where migrating
   * takes most of a second).
   */
  createDatabase(options?: { migrated?: boolean }): string;
  /** Drops a database, whoever is still connected to it. */
  dropDatabase(name: string): void;
  /** Stops the server (`fast`: sessions told; `immediate`: as a crash would). Not on the shared cluster. */
  stop(mode?: 'fast' | 'immediate'): void;
  /** Starts it again on the same port, with the same data. Not on the shared cluster. */
  start(): void;
  /** Stops it and removes its files; on the shared cluster, drops the databases made here. Harmless twice. */
  close(): void;
}

/** Options of {@link startPostgres}. */
export interface ClusterOptions {
  /** Serve TLS with a self-signed certificate for 127.0.0.1 (its file: {@link PostgresCluster.certificate}). */
  tls?: boolean;
  /** Durable as a production server (fsync and full-page writes on): for the benchmark, which measures commits. */
  durable?: boolean;
  /** Sessions at once; the shared cluster serves every worker's files at once. */
  maxConnections?: number;
}

/** A cluster's files and how to run its programs. */
interface ClusterFiles {
  dir: string;
  data: string;
  log: string;
}

/** Runs a PostgreSQL program, as the `postgres` user when we are root. */
function runTool(dir: string, tool: string, args: string[]): Buffer {
  const bin = postgresBinaries();
  if (!bin) throw new Error('PostgreSQL is not installed here: apt-get install postgresql (.ci/run does)');
  const asRoot = process.getuid?.() === 0;
  return execFileSync(
    asRoot ? 'runuser' : path.join(bin, tool),
    asRoot ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args,
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir },
  );
}

/** A new cluster's files (initdb and its settings), not yet started. */
function initCluster(options: ClusterOptions): ClusterFiles {
  if (!postgresBinaries())
    throw new Error('PostgreSQL is not installed here: apt-get install postgresql (.ci/run does)');
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-pg-'));
  const files = { dir, data: path.join(dir, 'data'), log: path.join(dir, 'server.log') };
  fs.writeFileSync(path.join(dir, 'password'), PASSWORD);
  if (asRoot) execFileSync('chown', ['-R', 'postgres', dir]);
  runTool(dir, 'initdb', [
    '-D',
    files.data,
    '-U',
    USER,
    `--pwfile=${path.join(dir, 'password')}`,
    '--auth=scram-sha-256',
    '--no-locale',
    '--encoding=UTF8',
    '--no-sync',
  ]);
  fs.appendFileSync(
    path.join(files.data, 'postgresql.conf'),
    [
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      ...(options.durable ? [] : ['fsync = off', 'full_page_writes = off']),
      `max_connections = ${options.maxConnections ?? 100}`,
      ...(options.tls ? tlsSettings(dir, asRoot) : []),
      '',
    ].join('\n'),
  );
  return files;
}

/** Starts the server on `port`. */
function startServer(files: ClusterFiles, port: number): void {
  runTool(files.dir, 'pg_ctl', ['-D', files.data, '-l', files.log, '-o', `-p ${port}`, '-w', '-t', '30', 'start']);
}

/** Starts the server on a free port (a port that was free a moment ago may be taken by the time the server binds it: then another); the port. */
function startOnFreePort(files: ClusterFiles): number {
  for (let attempt = 0; ; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    try {
      startServer(files, port);
      return port;
    } catch (err) {
      if (attempt >= 5)
        throw new Error(`cannot start PostgreSQL: ${fs.readFileSync(files.log, 'utf8')}`, { cause: err });
    }
  }
}

function stopServer(files: ClusterFiles, mode: 'fast' | 'immediate'): void {
  runTool(files.dir, 'pg_ctl', ['-D', files.data, '-m', mode, '-w', 'stop']);
}

/**
 * Databases on a cluster at `port`: made and dropped through one connection to the `postgres`
 * database, kept (a connection costs a worker thread). `lock` runs what must not race with
 * another process on the same cluster (making the migrated template).
 */
function databases(port: number, lock: <T>(fn: () => T) => T) {
  const url = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  let admin: PostgresDatabase | undefined;
  const connection = () =>
    (admin ??= PostgresDatabase.open({
      url: new Secret(url('postgres')),
      connectTimeoutMs: 10_000,
      statementTimeoutMs: 60_000,
      busyTimeoutMs: 5_000,
    }));
  let templateReady = false;
  const ensureTemplate = () => {
    if (templateReady) return;
    lock(() => {
      const db = connection();
      if (db.prepare('SELECT 1 FROM pg_database WHERE datname = ?').get(MIGRATED_TEMPLATE)) return;
      // Made under another name and renamed when complete: a process that died half-way leaves no half template.
      const making = `${MIGRATED_TEMPLATE}_${process.pid}`;
      db.exec(`DROP DATABASE IF EXISTS ${making}`);
      db.exec(`CREATE DATABASE ${making}`);
      Store.openPostgres({
        url: new Secret(url(making)),
        connectTimeoutMs: 10_000,
        statementTimeoutMs: 60_000,
      }).close();
      db.exec(`ALTER DATABASE ${making} RENAME TO ${MIGRATED_TEMPLATE}`);
    });
    templateReady = true;
  };
  // Unique on the cluster across processes (several files share it) and still `test_<digits>_<digits>`.
  let made = crypto.randomInt(1_000_000) * 1_000;
  const created = new Set<string>();
  return {
    url,
    createDatabase(options: { migrated?: boolean } = {}): string {
      if (options.migrated) ensureTemplate();
      const name = `test_${process.pid}_${++made}`;
      connection().exec(`CREATE DATABASE ${name}${options.migrated ? ` TEMPLATE ${MIGRATED_TEMPLATE}` : ''}`);
      created.add(name);
      return name;
    },
    dropDatabase(name: string): void {
      connection().exec(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      created.delete(name);
    },
    /** Drops every database made here and not dropped yet. */
    dropCreated(): void {
      for (const name of created) this.dropDatabase(name);
    },
    close(): void {
      admin?.close();
      admin = undefined;
      templateReady = false;
    },
  };
}

/** Starts a new cluster of the caller's own (see the file's comment); throws when PostgreSQL is not installed. */
export function startPostgres(options: ClusterOptions = {}): PostgresCluster {
  const files = initCluster(options);
  const port = startOnFreePort(files);
  let running = true;
  let closed = false;
  const dbs = databases(port, (fn) => fn());
  const stop = (mode: 'fast' | 'immediate' = 'fast') => {
    if (!running) return;
    stopServer(files, mode);
    running = false;
  };
  // A test that fails before its afterAll must not leave a server behind.
  const onExit = () => {
    try {
      stop('immediate');
    } catch {
      // already gone
    }
  };
  process.once('exit', onExit);
  return {
    port,
    password: PASSWORD,
    certificate: options.tls ? path.join(files.dir, 'server.crt') : undefined,
    url: dbs.url,
    createDatabase: (o) => dbs.createDatabase(o),
    dropDatabase: (name) => dbs.dropDatabase(name),
    stop,
    start() {
      if (running) return;
      startServer(files, port);
      running = true;
    },
    close() {
      if (closed) return;
      closed = true;
      process.off('exit', onExit);
      dbs.close();
      stop('immediate');
      fs.rmSync(files.dir, { recursive: true, force: true });
    },
  };
}

/** Where the shared cluster of the run in `runDir` is: written by the file that started it. */
interface SharedClusterRecord extends ClusterFiles {
  port: number;
}

const recordFile = (runDir: string) => path.join(runDir, 'postgres.json');

/** The run's shared cluster, started now if no process has yet (under the run's lock). */
function sharedCluster(runDir: string): SharedClusterRecord {
  return withLock(path.join(runDir, 'postgres.lock'), () => {
    if (fs.existsSync(recordFile(runDir))) return JSON.parse(fs.readFileSync(recordFile(runDir), 'utf8'));
    const files = initCluster({ maxConnections: 300 });
    const started = { ...files, port: startOnFreePort(files) };
    fs.writeFileSync(recordFile(runDir), JSON.stringify(started));
    return started;
  });
}

/**
 * Starts the run's shared cluster before any test file runs (the global setup), where PostgreSQL is
 * installed: otherwise the first file to ask paid for initdb and the start inside its first test's
 * timeout, a flake on a loaded machine.
 */
export function startSharedPostgres(runDir: string): void {
  if (postgresBinaries() !== null) sharedCluster(runDir);
}

/**
 * Joins the vitest run's shared cluster (see the file's comment), starting it if no file has yet;
 * a cluster of its own when the run has no folder ({@link RUN_DIR_VARIABLE}: a test's child
 * process started without it). Its `close` drops this process's databases; the run's global
 * teardown stops the server ({@link stopSharedPostgres}).
 */
export function sharedPostgres(): PostgresCluster {
  const runDir = process.env[RUN_DIR_VARIABLE];
  if (!runDir) return startPostgres();
  const lock = <T>(fn: () => T): T => withLock(path.join(runDir, 'postgres.lock'), fn);
  const record = sharedCluster(runDir);
  const dbs = databases(record.port, lock);
  const notYours = () => {
    throw new Error(
      'the shared PostgreSQL serves every test file: a test that stops it starts its own (startPostgres)',
    );
  };
  return {
    port: record.port,
    password: PASSWORD,
    certificate: undefined,
    url: dbs.url,
    createDatabase: (o) => dbs.createDatabase(o),
    dropDatabase: (name) => dbs.dropDatabase(name),
    stop: notYours,
    start: notYours,
    close() {
      dbs.dropCreated();
      dbs.close();
    },
  };
}

/** Stops the shared cluster of the run in `runDir`, if a file started one, and removes its files. */
export function stopSharedPostgres(runDir: string): void {
  if (!fs.existsSync(recordFile(runDir))) return;
  const record = JSON.parse(fs.readFileSync(recordFile(runDir), 'utf8')) as SharedClusterRecord;
  try {
    stopServer(record, 'immediate');
  } finally {
    fs.rmSync(record.dir, { recursive: true, force: true });
  }
}

/** Runs `fn` holding the lock `lockDir` (a folder: made by one process at a time), waiting up to two minutes for it. */
function withLock<T>(lockDir: string, fn: () => T): T {
  const wait = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (Date.now() > deadline) throw new Error(`${lockDir} held for two minutes: a test process died holding it?`);
      Atomics.wait(wait, 0, 0, 50);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmdirSync(lockDir);
  }
}

/** A self-signed certificate for 127.0.0.1 in `dir` (owned by the server's user), and the settings that serve it. */
function tlsSettings(dir: string, asRoot: boolean): string[] {
  const crt = path.join(dir, 'server.crt');
  const key = path.join(dir, 'server.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      crt,
    ],
    { stdio: 'ignore' },
  );
  fs.chmodSync(key, 0o600);
  if (asRoot) execFileSync('chown', ['postgres', key, crt]);
  return ['ssl = on', `ssl_cert_file = '${crt}'`, `ssl_key_file = '${key}'`];
}
