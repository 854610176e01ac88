/**
 * A real PostgreSQL for the tests: a throwaway cluster (initdb) in a temp directory, listening on
 * a free loopback port, with a password (so tests see that it never shows), no fsync (nothing
 * here must survive a power cut; a crash of the server itself still loses no commit). Debian's `postgresql` package provides the binaries (`.ci/run`
 * installs it). PostgreSQL refuses to run as root, so as root (CI, containers) the cluster runs
 * as the `postgres` system user through `runuser`.
 *
 * Synchronous on purpose: the store tests open stores synchronously, and a fresh database per test
 * is made the same way (CREATE DATABASE through the project's own synchronous connection).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Secret } from '../../src/config/secret.js';
import { PostgresDatabase } from '../../src/state/postgres-database.js';

/** The user and password of every test cluster. */
const USER = 'watchdog';
const PASSWORD = 'pg-test-password-3f9c1e';

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
  /** Creates a new empty database and returns its name. */
  createDatabase(): string;
  /** Drops a database, whoever is still connected to it. */
  dropDatabase(name: string): void;
  /** Stops the server (`fast`: sessions told; `immediate`: as a crash would). */
  stop(mode?: 'fast' | 'immediate'): void;
  /** Starts it again on the same port, with the same data. */
  start(): void;
  /** Stops it and removes its files. */
  close(): void;
}

/** Options of {@link startPostgres}. */
export interface ClusterOptions {
  /** Serve TLS with a self-signed certificate for 127.0.0.1 (its file: {@link PostgresCluster.certificate}). */
  tls?: boolean;
  /** Durable as a production server (fsync and full-page writes on): for the benchmark, which measures commits. */
  durable?: boolean;
}

/** Starts a new cluster (see the file's comment); throws when PostgreSQL is not installed. */
export function startPostgres(options: ClusterOptions = {}): PostgresCluster {
  const bin = postgresBinaries();
  if (!bin) throw new Error('PostgreSQL is not installed here: apt-get install postgresql (.ci/run does)');
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-pg-'));
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  const run = (tool: string, args: string[]) =>
    execFileSync(
      asRoot ? 'runuser' : path.join(bin, tool),
      asRoot ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args,
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        cwd: dir,
      },
    );
  fs.writeFileSync(path.join(dir, 'password'), PASSWORD);
  if (asRoot) execFileSync('chown', ['-R', 'postgres', dir]);
  run('initdb', [
    '-D',
    data,
    '-U',
    USER,
    `--pwfile=${path.join(dir, 'password')}`,
    '--auth=scram-sha-256',
    '--no-locale',
    '--encoding=UTF8',
    '--no-sync',
  ]);
  fs.appendFileSync(
    path.join(data, 'postgresql.conf'),
    [
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      ...(options.durable ? [] : ['fsync = off', 'full_page_writes = off']),
      'max_connections = 100',
      ...(options.tls ? tlsSettings(dir, asRoot) : []),
      '',
    ].join('\n'),
  );

  let port = 0;
  const start = () => run('pg_ctl', ['-D', data, '-l', log, '-o', `-p ${port}`, '-w', '-t', '30', 'start']);
  // A port that was free a moment ago may be taken by the time the server binds it: try another.
  for (let attempt = 0; ; attempt += 1) {
    port = 20_000 + Math.floor(Math.random() * 40_000);
    try {
      start();
      break;
    } catch (err) {
      if (attempt >= 5) throw new Error(`cannot start PostgreSQL: ${fs.readFileSync(log, 'utf8')}`, { cause: err });
    }
  }

  let databases = 0;
  let running = true;
  let admin: PostgresDatabase | undefined;
  const url = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  /** One connection to the `postgres` database for CREATE and DROP DATABASE, kept: a connection costs a worker thread. */
  const adminExec = (sql: string) => {
    admin ??= PostgresDatabase.open({
      url: new Secret(url('postgres')),
      connectTimeoutMs: 10_000,
      statementTimeoutMs: 60_000,
      busyTimeoutMs: 5_000,
    });
    admin.exec(sql);
  };
  const stop = (mode: 'fast' | 'immediate' = 'fast') => {
    if (!running) return;
    run('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
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
    certificate: options.tls ? path.join(dir, 'server.crt') : undefined,
    url,
    createDatabase() {
      const name = `test_${process.pid}_${++databases}`;
      adminExec(`CREATE DATABASE ${name}`);
      return name;
    },
    dropDatabase(name) {
      adminExec(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
    stop,
    start() {
      if (running) return;
      start();
      running = true;
    },
    close() {
      process.off('exit', onExit);
      admin?.close();
      stop('immediate');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
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
