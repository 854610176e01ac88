import type { KeyPath, KeyPathProblem } from './yaml-lines.js';
import { valueAt } from '../lib/value-at.js';
import { CHECK_NAMES } from '../detectors/registry.js';
import { environmentTypeSchema } from '../api/schemas.js';

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * The labels whose every value is known before any alert: the check, and the environment type
 * (the reference's three, any other word the service says mapped to one by `api.extra_values`).
 */
const FIXED_LABEL_VALUES: Readonly<Record<string, readonly string[]>> = {
  check: CHECK_NAMES,
  environment_type: environmentTypeSchema.options,
};

/**
 * Checks what the schema cannot see one field at a time: names are unique (channels, routes, mute
 * windows, policies), routes, their escalations and the digest name existing channels and mute
 * windows, a `check` or
 * `environment_type` that a route or a policy matches is one alerts can carry (else it would never
 * match anything), and
 * remediation that is on has something to do, and a Slack app receiving its clicks over HTTP has a
 * listener to receive them on. It reads the raw (substituted) document, skipping
 * what is malformed, so its problems are reported together with the schema's.
 *
 * `remediation.enabled: true` with no policy is refused: it can only be a mistake (the operator
 * believes something will be remediated). Touching production is not checked here: a policy acts
 * on production only when its `match` names production, which remediation enforces at run time.
 */
export function checkReferences(raw: unknown): KeyPathProblem[] {
  const problems: KeyPathProblem[] = [];
  const notify = valueAt(raw, ['notify']);

  const channelNames = uniqueNames(raw, ['notify', 'channels'], 'channel', problems);
  const windowNames = uniqueNames(raw, ['notify', 'mute_windows'], 'mute window', problems);
  uniqueNames(raw, ['notify', 'routes'], 'route', problems);

  // Each name a route or the digest gives must be one the section defines; each reads its list
  // from the document at the path it reports.
  const unknown = (name: string, at: KeyPath, known: Set<string>, what: string) => {
    const knownText = known.size === 0 ? `no ${what}s are defined` : `known ${what}s: ${[...known].join(', ')}`;
    problems.push({ path: at, message: `unknown ${what} "${name}" (${knownText})` });
  };
  const mustBeKnown = (at: KeyPath, known: Set<string>, what: string) =>
    list(valueAt(raw, at)).forEach((name, i) => {
      if (typeof name === 'string' && !known.has(name)) unknown(name, [...at, i], known, what);
    });
  // A `match` value of a label whose values are fixed (one or a list) must be one alerts can carry.
  const mustMatchSomething = (match: KeyPath) => {
    for (const [label, values] of Object.entries(FIXED_LABEL_VALUES)) {
      const at = [...match, label];
      const given = valueAt(raw, at);
      const known = new Set<string>(values);
      if (typeof given === 'string' && !known.has(given)) unknown(given, at, known, label.replace('_', ' '));
      else mustBeKnown(at, known, label.replace('_', ' '));
    }
  };
  list(valueAt(notify, ['routes'])).forEach((_, r) => {
    mustBeKnown(['notify', 'routes', r, 'channels'], channelNames, 'channel');
    mustBeKnown(['notify', 'routes', r, 'escalate_to'], channelNames, 'channel');
    mustBeKnown(['notify', 'routes', r, 'mute_windows'], windowNames, 'mute window');
    mustMatchSomething(['notify', 'routes', r, 'match']);
  });
  mustBeKnown(['notify', 'digest', 'channels'], channelNames, 'channel');

  // Slack posts the clicks to server.listen: with the listener off nothing would ever receive them.
  if (valueAt(raw, ['server', 'listen']) === 'off') {
    list(valueAt(notify, ['channels'])).forEach((channel, c) => {
      if (valueAt(channel, ['interactions', 'mode']) === 'http') {
        problems.push({
          path: ['notify', 'channels', c, 'interactions', 'mode'],
          message:
            'is http, but server.listen is off: Slack posts the clicks to /slack/interactions there; set server.listen, or use mode: socket',
        });
      }
    });
  }

  const remediation = valueAt(raw, ['remediation']);
  const policies = list(valueAt(remediation, ['policies']));
  uniqueNames(raw, ['remediation', 'policies'], 'policy', problems);
  policies.forEach((_, i) => mustMatchSomething(['remediation', 'policies', i, 'match']));
  if (valueAt(remediation, ['enabled']) === true && policies.length === 0) {
    problems.push({
      path: ['remediation', 'enabled'],
      message:
        'is true but remediation.policies is empty, so nothing would ever be done: add a policy or set enabled: false',
    });
  }
  return problems;
}

/** Collects the `name` of each entry of the list at `at`, reporting the second and later use of a name. */
function uniqueNames(raw: unknown, at: [string, string], what: string, problems: KeyPathProblem[]): Set<string> {
  const first = new Map<string, number>();
  list(valueAt(raw, at)).forEach((entry, i) => {
    const name = valueAt(entry, ['name']);
    if (typeof name !== 'string') return;
    const seen = first.get(name);
    if (seen === undefined) {
      first.set(name, i);
    } else {
      problems.push({
        path: [...at, i, 'name'],
        message: `duplicate ${what} name "${name}" (first used at index ${seen})`,
      });
    }
  });
  return new Set(first.keys());
}
