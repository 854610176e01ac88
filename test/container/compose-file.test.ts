/**
 * deploy/compose.yaml, without a Docker engine (none on the build machines): read as Compose reads
 * it (YAML with merge keys, `${VAR}` from .env) and checked against what it runs. Two replicas of
 * the image built from this repository and one PostgreSQL; each replica gets every variable
 * deploy/config.yaml reads, mounted where the image looks for it, the URL of that PostgreSQL as
 * state.url, its health port published and checked by the image's own health check; secrets only
 * from .env (each required, each listed in .env.example); the replicas locked down.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig, loadConfigWithUnset } from '../../src/config/load-config.js';
import { parseListen } from '../../src/config/parse-listen.js';
import { runCli } from '../helpers/cli-harness.js';
import { dockerfileEnv, dockerfileInstruction } from '../helpers/dockerfile.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEPLOY = path.join(ROOT, 'deploy');
const CONFIG = path.join(DEPLOY, 'config.yaml');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** What of a Compose service these tests read. */
interface Service {
  build?: { context: string };
  image?: string;
  command?: unknown;
  entrypoint?: unknown;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  read_only?: boolean;
  cap_drop?: string[];
  security_opt?: string[];
  restart?: string;
  mem_limit?: string;
}

const compose = parse(fs.readFileSync(path.join(DEPLOY, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const services = compose.services;
/** The services that run the image built from this repository. */
const replicas = Object.entries(services).filter(([, s]) => s.build !== undefined);

/** The variables `.env.example` lists, with the value given there (empty: to fill in). */
const envExample = Object.fromEntries(
  fs
    .readFileSync(path.join(DEPLOY, '.env.example'), 'utf8')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => l.split('=', 2) as [string, string]),
);

/** Every `${VAR}` the config file reads (the names `validate` reports unset with no environment). */
function configVariables(): string[] {
  return loadConfigWithUnset(CONFIG, {})
    .unset.map((p) => p.unsetVariable!)
    .sort();
}

/** A value as Compose fills it from .env: `${VAR}`, `${VAR:?message}`, `${VAR:-default}`. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\{([A-Z_][A-Z0-9_]*)(?::[?-][^}]*)?\}/g, (_m, name: string) => env[name] ?? '');
}

/** Every `${VAR}` of the file, with how it is written. */
const interpolations = [
  ...fs.readFileSync(path.join(DEPLOY, 'compose.yaml'), 'utf8').matchAll(/\$\{([A-Z_][A-Z0-9_]*)([^}]*)\}/g),
].map((m) => ({ name: m[1]!, rest: m[2]! }));

describe('deploy/compose.yaml', () => {
  it('runs two replicas of the image built from this repository, and PostgreSQL', () => {
    expect(replicas.map(([name]) => name)).toEqual(['watchdog-1', 'watchdog-2']);
    for (const [, s] of replicas) {
      expect(fs.existsSync(path.join(DEPLOY, s.build!.context, 'Dockerfile'))).toBe(true);
      expect(s.image).toBe(`deploy-watchdog:${VERSION}`);
      expect(s.restart).toBe('unless-stopped');
    }
    expect(services.postgres?.image).toMatch(/^postgres:\d+[\w.-]*$/);
    expect(Number(/^postgres:(\d+)/.exec(services.postgres!.image!)![1])).toBeGreaterThanOrEqual(13);
  });

  it.each(replicas)(
    "%s runs the image's own command: its ENTRYPOINT (the daemon's node options) and CMD (run)",
    (_name, s) => {
      expect(s.entrypoint).toBeUndefined();
      expect(s.command ?? dockerfileInstruction('CMD')).toEqual(['run']);
    },
  );

  it.each(replicas)('%s gets every variable deploy/config.yaml reads, and no other', (_name, s) => {
    expect(Object.keys(s.environment ?? {}).sort()).toEqual(configVariables());
  });

  it.each(replicas)(
    '%s reads deploy/config.yaml where the image looks for it ($DEPLOY_WATCHDOG_CONFIG), read-only',
    (_name, s) => {
      expect(s.volumes).toContain(`./config.yaml:${dockerfileEnv().DEPLOY_WATCHDOG_CONFIG}:ro`);
    },
  );

  it.each(replicas)("%s reaches the compose file's PostgreSQL, once it is healthy", (_name, s) => {
    const pg = services.postgres!;
    const url = new URL(interpolate(s.environment!.DATABASE_URL!, { POSTGRES_PASSWORD: 'pw' }));
    expect(url.protocol).toBe('postgres:');
    expect(url.hostname).toBe('postgres');
    expect(url.port).toBe('5432');
    expect(url.username).toBe(pg.environment!.POSTGRES_USER);
    expect(url.pathname).toBe(`/${pg.environment!.POSTGRES_DB}`);
    // The same password PostgreSQL was given, from the same variable.
    expect(s.environment!.DATABASE_URL).toContain(`:${pg.environment!.POSTGRES_PASSWORD}@`);
    expect(s.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(pg.healthcheck?.test).toEqual(['CMD', 'pg_isready', '--username=watchdog', '--dbname=watchdog']);
  });

  it.each(replicas)(
    "%s checks its health as the image does, and publishes the config's health port on loopback",
    (_name, s) => {
      expect(s.healthcheck?.test).toEqual(['CMD', ...dockerfileInstruction('HEALTHCHECK')]);
      const listen = loadConfigWithUnset(CONFIG, {}).config.server.listen!;
      expect(s.ports).toHaveLength(1);
      expect(s.ports![0]).toMatch(new RegExp(`^127\\.0\\.0\\.1:\\d+:${parseListen(listen).port}$`));
    },
  );

  it('publishes each replica on a host port of its own', () => {
    const hostPorts = replicas.map(([, s]) => s.ports![0]!.split(':')[1]);
    expect(new Set(hostPorts).size).toBe(replicas.length);
  });

  it.each(replicas)('%s runs locked down: read-only root, no capabilities, no privileges gained', (_name, s) => {
    expect(s.read_only).toBe(true);
    expect(s.cap_drop).toEqual(['ALL']);
    expect(s.security_opt).toContain('no-new-privileges:true');
    expect(s.mem_limit).toMatch(/^\d+m$/);
  });

  it('takes every secret from .env, required (a missing one stops `up`), each listed in .env.example', () => {
    expect(interpolations.length).toBeGreaterThan(0);
    for (const { name, rest } of interpolations) {
      expect(rest, name).toMatch(/^:\?set [A-Z_]+ in \.env$/);
      expect(Object.keys(envExample), name).toContain(name);
      expect(envExample[name], `${name} has no value in .env.example`).toBe('');
    }
    // Nothing the replicas are given is written in the file itself, but the PostgreSQL URL's parts.
    for (const [, s] of replicas) {
      for (const [name, value] of Object.entries(s.environment!)) {
        expect(value.replace(/\$\{[^}]*\}/g, ''), name).toMatch(/^(|postgres:\/\/watchdog:@postgres:5432\/watchdog)$/);
      }
    }
  });

  it('with .env filled in, makes deploy/config.yaml load as the replicas will read it', () => {
    const dotEnv = {
      DMS_API_TOKEN: 'a-token',
      POSTGRES_PASSWORD: 'b4d5e6f7a8b9',
      SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/x',
      HEARTBEAT_URL: 'https://hc-ping.com/0000',
      CONSOLE_TOKEN: '0123456789abcdef',
    };
    expect(Object.keys(dotEnv).sort()).toEqual(Object.keys(envExample).sort());
    const [, replica] = replicas[0]!;
    const env = Object.fromEntries(Object.entries(replica.environment!).map(([k, v]) => [k, interpolate(v, dotEnv)]));
    const config = loadConfig(CONFIG, env);
    expect(config.state.url?.reveal()).toBe('postgres://watchdog:b4d5e6f7a8b9@postgres:5432/watchdog');
    expect(config.state.path).toBeUndefined();
  });

  it('gives deploy/config.yaml that `validate` passes without any secret', async () => {
    const result = await runCli(['validate', '--config', CONFIG]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/: OK but for 5 variables not set here \(DMS_API_TOKEN, DATABASE_URL, /);
  });

  it('keeps .env out of git and out of the image build context', () => {
    expect(fs.readFileSync(path.join(ROOT, '.gitignore'), 'utf8').split('\n')).toContain('deploy/.env');
    expect(fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n')).toContain('deploy');
  });
});
