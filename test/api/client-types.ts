/**
 * Compile-time checks of the client's types, verified by `tsc -p tsconfig.json` (this file is not
 * a test file and never runs): every `@ts-expect-error` below must be an error, or tsc fails.
 */
import type { ApiClient } from '../../src/api/client.js';

/** Calls the client could be written with, and those it must refuse to compile. */
export function clientTypeChecks(c: ApiClient): void {
  // Correct calls compile.
  void c.apps.list({ environment_type: 'production', limit: 10 });
  void c.apps.maintenance(1, { on: true }, { idempotencyKey: 'k' });
  void c.runs.listAll({ app_id: 3 }, { until: (run) => run.created_at === null });
  void c.restorePoints(1).listAll();

  // @ts-expect-error "colour" is not a parameter of apps.list
  void c.apps.list({ colour: 'red' });
  // @ts-expect-error environment_type takes production, staging or development
  void c.apps.list({ environment_type: 'prod' });
  // @ts-expect-error a change needs an idempotency key
  void c.apps.restart(1, {});
  // @ts-expect-error apps.maintenance needs `on`
  void c.apps.maintenance(1, {}, { idempotencyKey: 'k' });
  // @ts-expect-error a list walk sets limit and offset itself
  void c.runs.listAll({ limit: 5 });
  // @ts-expect-error urls have no get
  void c.urls.get(1);
  // @ts-expect-error the answer is typed: a run has no `colour`
  void c.runs.get(1).then((run) => run.colour);
}
