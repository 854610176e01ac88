/**
 * What every remediation policy in `remediation.policies` has, whatever its action: a name, the
 * labels of the alerts it acts on, and a dry-run override. Each action adds its own fields in its
 * module (`src/remediation/actions/`) with {@link policySchema}; the registry there joins them into
 * the `policies` schema, discriminated on `action`.
 */
import { z } from 'zod';
import { durationSchema } from './duration.js';
import { matchValueSchema, nameSchema, regexSchema, wholeNumberSchema } from './schema-blocks.js';

/** The labels a remediation policy may match on. */
export const POLICY_LABELS = [
  'check',
  'namespace',
  'project',
  'environment_type',
  'app',
  'server',
  'workflow',
  'action',
  'step',
  'reason',
] as const;

type PolicyLabel = (typeof POLICY_LABELS)[number];

/** One optional field per policy label, each of schema `value`. */
function perLabel<S extends z.ZodType>(value: S) {
  return z.strictObject(
    Object.fromEntries(POLICY_LABELS.map((l) => [l, value.optional()])) as Record<PolicyLabel, z.ZodOptional<S>>,
  );
}

const policyCommon = {
  name: nameSchema,
  match: perLabel(matchValueSchema)
    .default({})
    .describe('Labels of the alert; production is acted on only when named here explicitly.'),
  match_re: perLabel(regexSchema).default({}),
  dry_run: z.boolean().optional().describe('Overrides remediation.dry_run for this policy.'),
  max_attempts: wholeNumberSchema(1, 10).default(1),
  automatic: z
    .boolean()
    .default(true)
    .describe(
      "false: the policy never acts by itself, only when a person asks (the Slack app's Retry now button); max_attempts, backoff, dry_run and the hourly limit hold all the same.",
    ),
};

/**
 * The schema of the policies of one action: the common fields, `action: <name>`, `backoff` (the
 * wait between attempts on one alert, defaulting to what suits the action) and the action's own.
 */
export function policySchema<A extends string, F extends z.ZodRawShape>(action: A, backoff: string, fields: F) {
  return z.strictObject({
    ...policyCommon,
    action: z.literal(action),
    backoff: durationSchema.prefault(backoff).describe('Wait between attempts on the same alert.'),
    ...fields,
  });
}

/** What every parsed policy has, whatever its action (what the remediator reads of any policy). */
export type PolicyBase = z.output<ReturnType<typeof policySchema<string, Record<never, never>>>>;
