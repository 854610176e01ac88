/** Which suspension stops a policy on an app of an environment, and how a refusal's reach becomes a scope. */
import { describe, expect, it } from 'vitest';
import {
  scopeOf,
  suspensionCovering,
  suspensionText,
  type Suspension,
  type SuspensionScope,
} from '../../src/remediation/suspension.js';

const at = (policy: string, scope: SuspensionScope): Suspension => ({
  policy,
  action: 'runs.retry',
  code: 'access_denied',
  message: 'no',
  at: 0,
  scope,
});
const DEV = at('retry-nonprod', { kind: 'environment', environment: 'development' });
const NONE = at('retry-nonprod', { kind: 'environment', environment: null });
const WHOLE = at('backup', { kind: 'policy' });
const WHOLE_AND_DEV = [
  at('retry-nonprod', { kind: 'environment', environment: 'development' }),
  at('retry-nonprod', { kind: 'policy' }),
];

describe('suspensionCovering', () => {
  it.each<[string, Suspension[], string, string | null, Suspension | undefined]>([
    ['the paused environment', [DEV, NONE, WHOLE], 'retry-nonprod', 'development', DEV],
    ['another environment of the same policy', [DEV, NONE, WHOLE], 'retry-nonprod', 'staging', undefined],
    ['outside any environment: its own scope', [DEV, NONE, WHOLE], 'retry-nonprod', null, NONE],
    ['outside any environment, not paused', [DEV], 'retry-nonprod', null, undefined],
    ['a whole policy, any environment', [DEV, NONE, WHOLE], 'backup', 'production', WHOLE],
    ['a whole policy, outside any environment', [WHOLE], 'backup', null, WHOLE],
    ['another policy', [DEV, WHOLE], 'other', 'development', undefined],
    ['the whole policy first when both hold', WHOLE_AND_DEV, 'retry-nonprod', 'development', WHOLE_AND_DEV[1]],
  ])('%s', (_what, suspensions, policy, environment, expected) => {
    expect(suspensionCovering(suspensions, policy, environment)).toBe(expected);
  });
});

describe('scopeOf', () => {
  it.each<[string, Parameters<typeof scopeOf>, SuspensionScope, string]>([
    [
      'environment reach: the app’s environment',
      ['environment', { environment_type: 'development' }],
      { kind: 'environment', environment: 'development' },
      'paused for development',
    ],
    [
      'environment reach, no environment',
      ['environment', {}],
      { kind: 'environment', environment: null },
      'paused for apps outside any environment',
    ],
    [
      'policy reach: whatever the environment',
      ['policy', { environment_type: 'staging' }],
      { kind: 'policy' },
      'suspended in every environment',
    ],
  ])('%s', (_what, args, scope, text) => {
    expect(scopeOf(...args)).toEqual(scope);
    expect(suspensionText(scope)).toBe(text);
  });
});
