/**
 * deploy/kubernetes/, without a cluster (none on the build machines): the manifests read as YAML
 * and checked against the code they run. The ConfigMap holds deploy/config.yaml as it is, which
 * `validate` passes without any secret; the Deployment runs two replicas of the image's own
 * command, hands every variable that config reads from the Secret, mounts the config where the
 * image looks, probes /healthz and /readyz on the port of its server.listen, runs as the image's
 * non-root user on a read-only root, with resources that cover the benchmark's peak. And a daemon
 * started with the ConfigMap's config and the Secret's variables (against the simulator and a real
 * PostgreSQL) answers those probes on that port.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, loadConfigWithUnset } from '../../src/config/load-config.js';
import { parseListen } from '../../src/config/parse-listen.js';
import { startSimulator } from '../../packages/simulator/src/index.js';
import { runCli } from '../helpers/cli-harness.js';
import { dockerfileEnv, dockerfileInstruction } from '../helpers/dockerfile.js';
import { freePort } from '../helpers/free-port.js';
import { testCluster } from '../helpers/state-backends.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { until } from '../cli/daemon-fixture.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const KUBERNETES = path.join(ROOT, 'deploy', 'kubernetes');
const CONFIG = path.join(ROOT, 'deploy', 'config.yaml');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** The image's user: `node` of the official Node images, uid and gid 1000 (the Dockerfile's `USER node`). */
const IMAGE_UID = 1000;
/** The leader's peak RSS at 10,000 apps on PostgreSQL, the highest of the benchmark's runs (docs/benchmarks.md), in MB. */
const PEAK_MB = 162.9;

/** One manifest, as far as these tests read it. */
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface Probe {
  httpGet: { path: string; port: string | number };
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports: { name: string; containerPort: number }[];
  env: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[];
  livenessProbe: Probe;
  readinessProbe: Probe;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: Record<string, unknown> & { capabilities: { drop: string[] } };
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
}

interface PodSpec {
  securityContext: Record<string, unknown>;
  containers: Container[];
  volumes: { name: string; configMap?: { name: string } }[];
}

const kustomization = parseAllDocuments(
  fs.readFileSync(path.join(KUBERNETES, 'kustomization.yaml'), 'utf8'),
)[0]!.toJS() as {
  resources: string[];
};
const manifests: Manifest[] = kustomization.resources.flatMap((file) =>
  parseAllDocuments(fs.readFileSync(path.join(KUBERNETES, file), 'utf8')).map((d) => d.toJS() as Manifest),
);

function only(kind: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
}

const deployment = only('Deployment') as Manifest & {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    strategy: { type: string; rollingUpdate: { maxSurge: number; maxUnavailable: number } };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
};
const pod = deployment.spec.template.spec;
const container = pod.containers[0]!;
const secret = only('Secret') as Manifest & { stringData: Record<string, string> };
const configMap = only('ConfigMap') as Manifest & { data: Record<string, string> };
const budget = only('PodDisruptionBudget') as Manifest & {
  spec: {
    minAvailable: number;
    selector: { matchLabels: Record<string, string> };
    unhealthyPodEvictionPolicy?: string;
  };
};

/** The config the ConfigMap holds, as the file the replicas read. */
function configMapFile(dir: string): string {
  const mount = container.volumeMounts.find((m) => pod.volumes.find((v) => v.name === m.name)?.configMap)!;
  const file = path.join(dir, path.relative(mount.mountPath, dockerfileEnv().DEPLOY_WATCHDOG_CONFIG!));
  fs.writeFileSync(file, configMap.data[path.basename(file)]!);
  return file;
}

/** Every `${VAR}` deploy/config.yaml reads (the names `validate` reports unset with no environment). */
function configVariables(): string[] {
  return loadConfigWithUnset(CONFIG, {})
    .unset.map((p) => p.unsetVariable!)
    .sort();
}

/** The environment the Deployment gives the container, each variable from the Secret's `values`. */
function containerEnv(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    container.env.map((e) => [e.name, e.value ?? values[e.valueFrom!.secretKeyRef.key]!] as [string, string]),
  );
}

/** A Kubernetes memory quantity in MiB. */
function mebibytes(quantity: string): number {
  const m = /^(\d+)(Mi|Gi|M|G)$/.exec(quantity);
  if (!m) throw new Error(`unexpected quantity ${quantity}`);
  const n = Number(m[1]);
  return { Mi: n, Gi: n * 1024, M: (n * 1e6) / 2 ** 20, G: (n * 1e9) / 2 ** 20 }[m[2] as 'Mi' | 'Gi' | 'M' | 'G'];
}

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-kube-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('deploy/kubernetes', () => {
  it('lists a Secret, a ConfigMap, a Deployment and a PodDisruptionBudget, each of the API group it names', () => {
    expect(manifests.map((m) => `${m.apiVersion} ${m.kind}`).sort()).toEqual([
      'apps/v1 Deployment',
      'policy/v1 PodDisruptionBudget',
      'v1 ConfigMap',
      'v1 Secret',
    ]);
  });

  it('holds deploy/config.yaml in the ConfigMap, as it is', () => {
    expect(configMap.data['config.yaml']).toBe(fs.readFileSync(CONFIG, 'utf8'));
  });

  it('mounts the ConfigMap where the image reads its config, and `validate` passes it without any secret', async () => {
    const file = configMapFile(tempDir());
    expect(path.basename(file)).toBe('config.yaml');
    const result = await runCli(['validate', '--config', file]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`OK but for ${configVariables().length} variables not set here`);
  });

  it('runs two replicas, replaced one at a time with the new one up first, one at least kept through a drain', () => {
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
    expect(deployment.spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
    });
    expect(deployment.spec.template.metadata.labels).toMatchObject(budget.spec.selector.matchLabels);
    expect(budget.spec.minAvailable).toBe(1);
    // Both not ready in an outage of the API or PostgreSQL: a drain must not wait for its end.
    expect(budget.spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
  });

  it("runs the image of this version with the image's own command: its ENTRYPOINT and CMD", () => {
    expect(container.image).toMatch(new RegExp(`/deploy-watchdog:${VERSION.replaceAll('.', '\\.')}$`));
    expect(container.command).toBeUndefined();
    expect(container.args).toEqual(dockerfileInstruction('CMD'));
  });

  it('hands every variable the config reads from the Secret, and nothing else', () => {
    expect(container.env.map((e) => e.name).sort()).toEqual(configVariables());
    for (const e of container.env) {
      expect(e.value, e.name).toBeUndefined();
      expect(e.valueFrom?.secretKeyRef.name, e.name).toBe(secret.metadata.name);
      expect(Object.keys(secret.stringData), e.name).toContain(e.valueFrom!.secretKeyRef.key);
    }
  });

  it("makes a config that loads from the Secret's values, and takes none of them from the ConfigMap", () => {
    const config = loadConfig(CONFIG, containerEnv(secret.stringData));
    expect(config.state.url?.reveal()).toBe(secret.stringData['database-url']);
    for (const value of Object.values(secret.stringData)) expect(configMap.data['config.yaml']).not.toContain(value);
  });

  it('probes /healthz (liveness) and /readyz (readiness) on the port of server.listen', () => {
    const listen = loadConfigWithUnset(CONFIG, {}).config.server.listen!;
    const port = container.ports.find((p) => p.name === 'health');
    expect(port?.containerPort).toBe(parseListen(listen).port);
    expect(parseListen(listen).host).toBe('0.0.0.0');
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
    // The image's health check asks the same path.
    expect(dockerfileInstruction('HEALTHCHECK')).toEqual(['deploy-watchdog', 'healthcheck']);
  });

  it("runs as the image's non-root user, on a read-only root, without privileges or capabilities", () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: IMAGE_UID, runAsGroup: IMAGE_UID });
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    // Nothing else is written: the state is in PostgreSQL, the config is read-only.
    expect(container.volumeMounts.map((m) => [m.mountPath, m.readOnly ?? false])).toEqual([
      [path.dirname(dockerfileEnv().DEPLOY_WATCHDOG_CONFIG!), true],
      ['/tmp', false],
    ]);
  });

  it("asks for memory enough for the leader's peak, and limits it above that", () => {
    const request = mebibytes(container.resources.requests.memory!);
    const limit = mebibytes(container.resources.limits.memory!);
    expect((request * 2 ** 20) / 1e6).toBeGreaterThanOrEqual(PEAK_MB);
    expect(limit).toBeGreaterThan(request);
    expect(container.resources.requests.cpu).toMatch(/^\d+m$/);
  });

  it.skipIf(!hasKubectl())('renders with kubectl kustomize', () => {
    const rendered = parseAllDocuments(execFileSync('kubectl', ['kustomize', KUBERNETES], { encoding: 'utf8' })).map(
      (d) => (d.toJS() as Manifest).kind,
    );
    expect(rendered.sort()).toEqual(['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Secret']);
  });

  it("answers the Deployment's probes: a daemon run with the ConfigMap's config and the Secret's variables", async () => {
    const pg = testCluster();
    const sim = await startSimulator({ apps: 10, seed: 3 });
    const hook = await startWebhookReceiver();
    const stop = new AbortController();
    try {
      const port = await freePort();
      const file = configMapFile(tempDir());
      // The cluster's addresses for this machine's: the simulator's API, a port of its own.
      fs.writeFileSync(
        file,
        fs
          .readFileSync(file, 'utf8')
          .replace('https://manage.example.com', sim.baseUrl)
          .replace('listen: 0.0.0.0:9464', `listen: 127.0.0.1:${port}`),
      );
      const env = containerEnv({
        'dms-api-token': sim.adminToken,
        'database-url': pg.url(pg.createDatabase()),
        'slack-webhook-url': hook.url,
        'heartbeat-url': hook.url,
        'console-token': 'console-token-0123456789',
      });
      let output = '';
      const daemon = runCli(['run', '--config', file], { env, signal: stop.signal, onOutput: (o) => (output = o) });
      const probe = async (probePath: string) =>
        (await fetch(`http://127.0.0.1:${port}${probePath}`).catch(() => undefined))?.status;
      await until(
        'liveness',
        async () => (await probe(container.livenessProbe.httpGet.path)) === 200,
        () => output,
      );
      await until(
        'readiness',
        async () => (await probe(container.readinessProbe.httpGet.path)) === 200,
        () => output,
      );
      // Ready as a follower first, then alone on its database it takes the lease, and says so
      // where the probe and Prometheus look.
      const role = async () =>
        ((await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { role?: string }).role;
      await until(
        'the lead',
        async () => (await role()) === 'leader',
        () => output,
      );
      // The exposition is the one published last (each second): it says so within a second or two.
      await until(
        'the metrics to say it leads',
        async () => /^deploy_watchdog_leader 1$/m.test(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()),
        () => output,
      );
      stop.abort(new Error('test over'));
      expect((await daemon).code).toBe(0);
      for (const value of Object.values(env)) expect(output).not.toContain(value);
    } finally {
      stop.abort(new Error('test over'));
      await hook.close();
      await sim.close();
    }
  }, 90_000);
});

function hasKubectl(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
