/**
 * The Dockerfile's runtime stage, performed on the host (no Docker engine on the build machines):
 * compile as the build stage does, keep production dependencies only (`npm prune --omit=dev` on the
 * build stage's node_modules, then the compiler removed), then start the compiled entry point
 * exactly as the image's ENTRYPOINT/CMD would, with the image's environment, as a user other than
 * root (`nobody` where the test runs as root, as the image's `node` user is), with the README's
 * minimal config in a directory standing for the image's /data volume, against the simulator; and
 * ask it the image's HEALTHCHECK.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { dockerfileEnv, dockerfileInstruction } from '../helpers/dockerfile.js';
import { freePort } from '../helpers/free-port.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

/** Root runs the image's commands as `nobody`; anyone else is already not root. */
const AS_ROOT = process.getuid?.() === 0;
const NOBODY = { uid: 65534, gid: 65534 };
/** The command line that runs `argv` as the image's non-root user (setpriv keeps the environment as given). */
const asImageUser = (argv: string[]): string[] =>
  AS_ROOT ? ['setpriv', `--reuid=${NOBODY.uid}`, `--regid=${NOBODY.gid}`, '--clear-groups', '--', ...argv] : argv;

/**
 * `from` rebuilt at `to`: its folders made anew, its symbolic links as they are, its files hard
 * links to the same contents (copied where no link can be made, across filesystems). Copying the
 * checkout's 180 MB and 10,000 files of node_modules, then deleting them, took 20 s of the file's
 * CPU; a link costs a fraction of that. What the prune does to the tree is unchanged: it removes
 * folders (a removed link leaves the checkout's file alone) and writes no package's files, only
 * its hidden lockfile, which is a copy of its own here so that write stays in the image's tree.
 */
function linkTree(from: string, to: string): void {
  mkdirSync(to);
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) linkTree(source, target);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else if (entry.name === '.package-lock.json') copyFileSync(source, target);
    else {
      try {
        linkSync(source, target);
      } catch {
        copyFileSync(source, target);
      }
    }
  }
}

describe('container runtime stage', () => {
  let app: string;
  let data: string;
  let sim: RunningSimulator;
  let hook: WebhookReceiver;
  let daemon: ChildProcess | undefined;

  beforeAll(async () => {
    app = mkdtempSync(path.join(tmpdir(), 'dw-image-'));
    // Readable by the non-root user, as the image's /app is (root-owned, world-readable).
    chmodSync(app, 0o755);
    // Build stage: the sources compiled as the package's build script does, and its node_modules.
    await run(process.execPath, [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(ROOT, 'tsconfig.build.json'),
      '--noCheck',
      '--outDir',
      path.join(app, 'dist'),
    ]);
    // The simulator's manifest only, as the Dockerfile copies it: npm must see the workspace.
    mkdirSync(path.join(app, 'packages', 'simulator'), { recursive: true });
    for (const file of ['package.json', 'package-lock.json', 'packages/simulator/package.json']) {
      cpSync(path.join(ROOT, file), path.join(app, file));
    }
    // `COPY templates ./templates`: the default message templates the channels render with.
    cpSync(path.join(ROOT, 'templates'), path.join(app, 'templates'), { recursive: true });
    // The real folder, never a link to it: the prune below must not reach the checkout's own.
    linkTree(realpathSync(path.join(ROOT, 'node_modules')), path.join(app, 'node_modules'));
    // `npm prune --omit=dev`, then the compiler removed, as the build stage ends: what the runtime
    // stage copies.
    await run('npm', ['prune', '--omit=dev', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: app });
    for (const tool of [
      'node_modules/typescript',
      'node_modules/.bin/tsc',
      'node_modules/.bin/tsserver',
      'node_modules/@deploy-watchdog',
    ]) {
      rmSync(path.join(app, tool), { recursive: true, force: true });
    }
    // `RUN mkdir -p /data && chown node:node /data`.
    data = path.join(app, 'data');
    mkdirSync(data);
    if (AS_ROOT) chownSync(data, NOBODY.uid, NOBODY.gid);
    sim = await startSimulator({ apps: 10, seed: 3 });
    hook = await startWebhookReceiver();
  }, 180_000);

  afterAll(async () => {
    if (daemon && daemon.exitCode === null) daemon.kill('SIGKILL');
    await sim?.close();
    await hook?.close();
    if (app) rmSync(app, { recursive: true, force: true });
  });

  /** The image's environment, its /data standing for the test's data directory, plus `extra`. */
  function imageEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    const env = Object.fromEntries(
      Object.entries(dockerfileEnv()).map(([k, v]) => [k, v.replace(/^\/data\//, `${data}/`)]),
    );
    return { PATH: process.env.PATH, ...env, ...extra };
  }

  /** Runs one command of the image's CLI as its user, as `docker exec <container> deploy-watchdog …` does. */
  async function imageCommand(args: string[], env: NodeJS.ProcessEnv) {
    const [node, ...entrypoint] = dockerfileInstruction('ENTRYPOINT');
    expect(node).toBe('node');
    const [command, ...rest] = asImageUser([process.execPath, ...entrypoint, ...args]);
    return run(command!, rest, { cwd: app, env }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
  }

  it('keeps production dependencies only, without the compiler', () => {
    for (const dev of ['typescript', 'vitest', 'tsx', 'dockerfile-utils', 'smtp-server', 'mailparser']) {
      expect(existsSync(path.join(app, 'node_modules', dev)), `${dev} should be pruned`).toBe(false);
    }
    for (const prod of ['better-sqlite3', 'undici', 'pino', 'zod', 'node-cron']) {
      expect(existsSync(path.join(app, 'node_modules', prod)), `${prod} should be kept`).toBe(true);
    }
  });

  it('has neither the simulator nor the demo, and says where they are', async () => {
    expect(existsSync(path.join(app, 'dist', 'simulator'))).toBe(false);
    expect(existsSync(path.join(app, 'dist', 'demo'))).toBe(false);
    const lines = { demo: ['demo', '--duration', '5s'], simulator: ['simulator', '--port', '0', '--apps', '1'] };
    for (const [command, line] of Object.entries(lines)) {
      const answer = await imageCommand(line, imageEnv());
      expect(answer.code).toBe(2);
      expect(answer.stderr).toMatch(
        new RegExp(
          `^deploy-watchdog ${command} comes with a clone of the repository, not with this build: .*\\nFrom a clone: npm ci && npx deploy-watchdog ${command}\\n$`,
          's',
        ),
      );
    }
  });

  it("runs the README's minimal config from /data as a non-root user: state beside it, health checked on its port, SIGTERM stops it", async () => {
    const port = await freePort();
    // The README's minimal config as written, pointed at the simulator, plus the server line its
    // container section adds, on a port of its own: the health check must follow the config.
    const config = `${readmeMinimalConfig().replace('https://manage.example.com', sim.baseUrl)}server:\n  listen: 127.0.0.1:${port}\n`;
    writeFileSync(path.join(data, 'config.yaml'), config, { mode: 0o644 });
    const env = imageEnv({ DMS_API_TOKEN: sim.adminToken, SLACK_WEBHOOK_URL: hook.url });

    // validate, as the image's user, says OK and warns of nothing (the state file can be made).
    const validated = await imageCommand(['validate'], env);
    expect(validated).toMatchObject({ code: 0, stderr: '' });
    expect(validated.stdout).toMatch(new RegExp(`^${data}/config\\.yaml: OK, 1 channel \\(ops-slack:slack\\)`));

    // ENTRYPOINT + CMD, with the image's ENV.
    const [node, ...entrypoint] = dockerfileInstruction('ENTRYPOINT');
    expect(node).toBe('node');
    const [command, ...args] = asImageUser([process.execPath, ...entrypoint, ...dockerfileInstruction('CMD')]);
    const output: string[] = [];
    daemon = spawn(command!, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    daemon.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    daemon.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    const exited = new Promise<number | null>((resolve) => daemon?.once('exit', (code) => resolve(code)));
    await waitFor(() => output.join('').includes('listener started') || daemon?.exitCode !== null, 60_000);
    expect(output.join('')).toContain('listener started');

    // The HEALTHCHECK, as Docker runs it inside the container.
    const [healthcheck, ...checkArgs] = dockerfileInstruction('HEALTHCHECK');
    expect(healthcheck).toBe('deploy-watchdog');
    const checked = await imageCommand(checkArgs, env);
    expect(checked.code).toBe(0);
    expect(checked.stdout).toContain(`http://127.0.0.1:${port}/healthz: 200`);

    // The state file, made by the image's user beside the config: the default state.path.
    const state = statSync(path.join(data, 'deploy-watchdog.db'));
    expect(state.mode & 0o777).toBe(0o600);
    if (AS_ROOT) expect(state.uid).toBe(NOBODY.uid);

    // A printed "To silence" line's neighbours run in the container without the secrets.
    const listed = await imageCommand(['alerts'], imageEnv());
    expect(listed.code, listed.stderr).toBe(0);

    daemon.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output.join('')).not.toContain(sim.adminToken);
    expect(output.join('')).not.toContain(hook.url);
  }, 90_000);

  it.skipIf(!AS_ROOT)(
    'with a state.path the image user cannot write, validate warns and run stops with a clear error',
    async () => {
      // The README's config before: a state path outside /data, which the image's user cannot create.
      const blocked = path.join(app, 'root-only');
      mkdirSync(blocked, { mode: 0o755 });
      const file = path.join(data, 'elsewhere.yaml');
      const config = `${readmeMinimalConfig().replace('https://manage.example.com', sim.baseUrl)}state:\n  path: ${blocked}/state.db\nserver:\n  listen: "off"\n`;
      writeFileSync(file, config);
      const env = imageEnv({
        DEPLOY_WATCHDOG_CONFIG: file,
        DMS_API_TOKEN: sim.adminToken,
        SLACK_WEBHOOK_URL: hook.url,
      });
      const validated = await imageCommand(['validate'], env);
      expect(validated.code).toBe(0);
      expect(validated.stderr).toBe(
        `${file} state.path: warning: ${blocked} is not writable by this user (uid ${NOBODY.uid}), so the daemon run as this user cannot create state.db in it\n`,
      );
      const started = await imageCommand(dockerfileInstruction('CMD'), env);
      expect(started.code).toBe(1);
      expect(started.stdout).toContain('cannot open the state file');
      expect(started.stdout).toContain(`${blocked}/state.db`);
    },
    60_000,
  );
});

/** The YAML of the README's "smallest useful" config, as the README shows it. */
function readmeMinimalConfig(): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const m = /The smallest useful one:\n\n( *)```yaml\n([\s\S]*?)\n\1```/.exec(readme);
  if (!m) throw new Error("README.md has no block after 'The smallest useful one:'");
  return `${m[2]!.replace(new RegExp(`^${m[1]}`, 'gm'), '')}\n`;
}

async function waitFor(probe: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > until) throw new Error('timed out waiting for the daemon');
    await new Promise((r) => setTimeout(r, 100));
  }
}
