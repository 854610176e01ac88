/**
 * Docker has no engine on the build machines, so the Dockerfile is proven in two parts: this lint
 * (syntax via dockerfile-utils, plus the image rules we promise), and the runtime-stage test that
 * performs the runtime stage's steps on the host.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validate } from 'dockerfile-utils';

const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));

function stage(name: string): string[] {
  const start = instructions.findIndex((l) => new RegExp(`^FROM .* AS ${name}$`, 'i').test(l));
  if (start < 0) return [];
  const end = instructions.findIndex((l, i) => i > start && /^FROM /i.test(l));
  return instructions.slice(start, end < 0 ? undefined : end);
}

describe('Dockerfile', () => {
  it('has no syntax or semantic problem', () => {
    const problems = validate(dockerfile).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
    expect(problems).toEqual([]);
  });

  it('is multi-stage, on an official slim Node LTS image, never `latest`', () => {
    expect(instructions.filter((l) => /^FROM /i.test(l))).toHaveLength(2);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:20[\d.]*-[a-z]+-slim$/m);
    expect(dockerfile).not.toMatch(/:latest\b/);
  });

  it.each([
    ['runs as a non-root user', /^USER node$/],
    ['keeps config and state on the /data volume', /^VOLUME \["\/data"\]$/],
    ['reads the config from /data', /^ENV DEPLOY_WATCHDOG_CONFIG=\/data\/config\.yaml$/],
    ['lets the non-root user write /data', /^RUN mkdir -p \/data && chown node:node \/data /],
    ['puts the command on PATH', /ln -s \/app\/dist\/cli\/bin\.js \/usr\/local\/bin\/deploy-watchdog/],
    // The health check reads the port from the config, so a config on another port is still checked.
    ['checks health with the healthcheck command', /^HEALTHCHECK .*CMD \["deploy-watchdog", "healthcheck"\]$/],
    [
      "enters through the compiled CLI, with the daemon's node options",
      /^ENTRYPOINT \["node", (?:"--[a-z-]+(?:=\w+)?", )+"dist\/cli\/bin\.js"\]$/,
    ],
    ['runs the daemon with the config $DEPLOY_WATCHDOG_CONFIG names', /^CMD \["run"\]$/],
    ['copies only production dependencies and compiled output', /^COPY --from=build .*\/app\/dist/],
    ['copies the default message templates the channels render with', /^COPY --from=build .*\/app\/templates/],
  ])('runtime stage %s', (_what, pattern) => {
    expect(stage('runtime').some((l) => pattern.test(l))).toBe(true);
  });

  it('hard-codes no port in the health check', () => {
    expect(stage('runtime').filter((l) => /^HEALTHCHECK /.test(l) && /\d{4,5}/.test(l.replace(/--\S+/g, '')))).toEqual(
      [],
    );
  });

  it('prunes dev dependencies, and the compiler, before the runtime stage copies node_modules', () => {
    expect(stage('build').some((l) => /npm prune --omit=dev\s+&&\s+rm -rf node_modules\/typescript /.test(l))).toBe(
      true,
    );
    expect(stage('runtime').some((l) => /^RUN npm (ci|install)/.test(l))).toBe(false);
  });

  it('keeps sources and local state out of the build context', () => {
    const ignored = readFileSync(new URL('../../.dockerignore', import.meta.url), 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist', '.git', '*.db']) expect(ignored).toContain(entry);
  });
});
