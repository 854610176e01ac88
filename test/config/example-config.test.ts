import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configJsonSchemaText } from '../../src/cli/schema.js';
import { configJsonSchema } from '../../src/config/config-json-schema.js';
import { POLICY_LABELS } from '../../src/config/policy-schema.js';
import { loadConfig } from '../../src/config/load-config.js';
import { parse } from 'yaml';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const EXAMPLE = path.join(ROOT, 'config.example.yaml');
const ENV = { DMS_API_TOKEN: 'tok-example', SLACK_WEBHOOK_URL: 'https://hooks.example/x', SMTP_PASSWORD: 'pw-example' };

/** Every property name in a JSON Schema, with its dotted path, walking objects, arrays and unions. */
function propertyPaths(node: Record<string, unknown>, at = ''): string[] {
  const out: string[] = [];
  for (const alt of (node.anyOf ?? node.oneOf ?? []) as Record<string, unknown>[]) out.push(...propertyPaths(alt, at));
  for (const kind of (node.allOf ?? []) as { then?: Record<string, unknown> }[]) {
    if (kind.then) out.push(...propertyPaths(kind.then, at));
  }
  if (node.items) out.push(...propertyPaths(node.items as Record<string, unknown>, `${at}[]`));
  for (const [key, child] of Object.entries((node.properties ?? {}) as Record<string, Record<string, unknown>>)) {
    const here = at ? `${at}.${key}` : key;
    out.push(here, ...propertyPaths(child, here));
  }
  return [...new Set(out)];
}

describe('config.example.yaml', () => {
  it('starts with the schema line for editors', () => {
    expect(fs.readFileSync(EXAMPLE, 'utf8').split('\n')[0]).toBe(
      '# yaml-language-server: $schema=./config.schema.json',
    );
  });

  it('is a valid configuration once its variables are set', () => {
    const config = loadConfig(EXAMPLE, ENV);
    expect(config.notify.channels.map((c) => c.type)).toEqual(['slack', 'email', 'log']);
    expect(config.remediation.policies.map((p) => p.action)).toEqual([
      'runs.retry',
      'apps.backup',
      'apps.backup',
      'apps.restart',
      'apps.maintenance',
    ]);
    expect(config.notify.mute_windows[0]?.weekdays).toEqual(['mon:fri']);
  });

  it('mentions every key of the schema (set or commented)', () => {
    const text = fs.readFileSync(EXAMPLE, 'utf8');
    // Policy match labels are listed once in a comment rather than each written out.
    expect(text).toContain(`# Match keys: ${POLICY_LABELS.join(', ')}.`);
    const missing = propertyPaths(configJsonSchema()).filter((p) => {
      if (/\.match(_re)?\./.test(p)) return false;
      const key = p.split('.').at(-1)!.replace('[]', '');
      return !new RegExp(`(^|[\\s{,#])${key}:`, 'm').test(text);
    });
    expect(missing).toEqual([]);
  });
});

/** The YAML files the project ships, and the YAML blocks of the README, by where they are. */
function shippedYaml(): [string, string][] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/^( *)```yaml\n([\s\S]*?)^\1```$/gm)].map((m, i): [string, string] => [
    `README.md yaml block ${i + 1}`,
    m[2]!.replace(new RegExp(`^${m[1]}`, 'gm'), ''),
  ]);
  return [
    ['config.example.yaml', fs.readFileSync(EXAMPLE, 'utf8')],
    ['examples/simulator.yaml', fs.readFileSync(path.join(ROOT, 'examples', 'simulator.yaml'), 'utf8')],
    ...blocks,
  ];
}

describe('YAML 1.1 tools (yamllint, PyYAML, Ansible)', () => {
  it.each(shippedYaml())(
    'read %s as deploy-watchdog does (a bare off, on, yes or no would be a boolean)',
    (_where, text) => {
      expect(parse(text, { version: '1.1' })).toEqual(parse(text, { merge: true }));
    },
  );

  it('would read a bare off differently (so the comparison can fail)', () => {
    expect(parse('development: off', { version: '1.1' })).not.toEqual(parse('development: off'));
  });

  it('finds the README blocks it compares', () => {
    expect(shippedYaml().filter(([where]) => where.startsWith('README')).length).toBeGreaterThanOrEqual(2);
  });
});

describe('config.schema.json', () => {
  it('is up to date (regenerate with `npx tsx src/cli/bin.ts schema --out config.schema.json`)', () => {
    expect(fs.readFileSync(path.join(ROOT, 'config.schema.json'), 'utf8')).toBe(configJsonSchemaText());
  });

  it('describes the input side: durations and secrets as strings, defaults as written', () => {
    const schema = configJsonSchema() as { properties: Record<string, any>; required: string[] };
    expect(schema.required).toEqual(['api']);
    expect(schema.properties.api.properties.timeout).toMatchObject({ type: 'string', default: '30s' });
    expect(schema.properties.api.properties.token).toMatchObject({ type: 'string' });
    expect(schema.properties.state.properties.retention.default).toBe('30d');
    expect(schema.properties.api.additionalProperties).toBe(false);
  });
});
