/**
 * What the README tells a new user to paste for the container and the server install, read as
 * Compose and a shell would (no Docker engine on the build machines): the compose snippet publishes
 * a port only where the README's minimal config listens beyond the container's loopback; the reload
 * line names the Compose service, not a container name Compose never gives; and the PATH line links
 * the executable the install builds, so `deploy-watchdog` runs from any directory.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.js';
import { parseListen } from '../../src/config/parse-listen.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The fenced block of `lang` whose first line is `first`. */
function block(lang: string, first: string): string {
  const m = new RegExp('```' + lang + '\\n(' + first.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '[\\s\\S]*?)\\n```').exec(
    README,
  );
  if (!m) throw new Error(`README.md has no ${lang} block starting ${first}`);
  return m[1]!;
}

/** The README's "smallest useful" config, as the README shows it. */
function minimalConfig(): string {
  const m = /The smallest useful one:\n\n( *)```yaml\n([\s\S]*?)\n\1```/.exec(README);
  if (!m) throw new Error("README.md has no block after 'The smallest useful one:'");
  return `${m[2]!.replace(new RegExp(`^${m[1]}`, 'gm'), '')}\n`;
}

const compose = parse(block('yaml', '# docker-compose.yml')) as {
  services: Record<string, { ports?: string[] }>;
};

describe("the README's compose snippet", () => {
  it('publishes no port the minimal config does not listen on from outside the container', () => {
    const config = parseConfig(
      minimalConfig(),
      { DMS_API_TOKEN: 't', SLACK_WEBHOOK_URL: 'https://h.example/x' },
      'x.yaml',
    );
    const listen = config.server.listen === null ? null : parseListen(config.server.listen);
    for (const service of Object.values(compose.services)) {
      for (const port of service.ports ?? []) {
        const inside = Number(port.split(':').at(-1));
        expect(listen, `published ${port}, but server.listen is off`).not.toBeNull();
        expect(listen!.port).toBe(inside);
        expect(['127.0.0.1', '::1', 'localhost']).not.toContain(listen!.host);
      }
    }
  });

  it('reloads with a command that names the Compose service', () => {
    const reloads = [...README.matchAll(/`(docker[^`]*kill -s HUP[^`]*)`/g)].map((m) => m[1]!);
    expect(reloads.length).toBeGreaterThan(0);
    for (const line of reloads) {
      const words = line.split(/\s+/);
      expect(words.slice(0, 3), line).toEqual(['docker', 'compose', 'kill']);
      expect(Object.keys(compose.services)).toContain(words.at(-1));
    }
  });
});

describe("the README's PATH line", () => {
  it('links the executable the install builds, and the command runs from any directory', () => {
    const line = README.split('\n').find((l) => /^sudo ln -s \S+ \S+\/deploy-watchdog$/.test(l));
    expect(line, 'a `sudo ln -s … /usr/local/bin/deploy-watchdog` line').toBeDefined();
    const [, , , target, link] = line!.split(' ');
    expect(target).toBe('/opt/deploy-watchdog/dist/cli/bin.js');
    expect(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).bin).toEqual({
      'deploy-watchdog': 'dist/cli/bin.js',
    });
    // The same link to this checkout's sources (dist/ is built by the install): a file that starts
    // with its own interpreter line runs through a symlink from elsewhere.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-path-'));
    try {
      const shim = path.join(dir, 'bin.js');
      fs.writeFileSync(shim, `#!/usr/bin/env node\nconsole.log('deploy-watchdog from', process.argv[1]);\n`, {
        mode: 0o755,
      });
      const bin = path.join(dir, 'bin');
      fs.mkdirSync(bin);
      fs.symlinkSync(shim, path.join(bin, path.basename(link!)));
      const out = execFileSync('sh', ['-c', 'cd / && deploy-watchdog'], {
        env: { PATH: `${bin}:${path.dirname(process.execPath)}:/usr/bin:/bin` },
        encoding: 'utf8',
      });
      expect(out).toContain('deploy-watchdog from');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const src = fs.readFileSync(path.join(ROOT, 'src', 'cli', 'bin.ts'), 'utf8');
    expect(src.startsWith('#!/usr/bin/env node\n')).toBe(true);
  });
});
