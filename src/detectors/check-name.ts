/**
 * The name of a check: one the registry lists (`registry.ts`), or `watchdog`. A leaf that imports
 * nothing, so a module that speaks of checks by name (`finding.ts`, which every check imports)
 * does not import the registry, which imports every check. The registry fills the name in
 * ({@link RegisteredChecks}, by declaration merging): it stays derived from `CHECKS`, and adding a
 * check is still its module and one line there.
 */

/**
 * Filled in by `registry.ts` with `{ name: <the union of the checks' names> }`. Empty here on
 * purpose: this module cannot name the checks without importing them.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merged into by registry.ts
export interface RegisteredChecks {}

/** The checks deploy-watchdog runs, and `watchdog` (its own trouble): every finding belongs to one. */
export type CheckName = RegisteredChecks extends { name: infer N extends string } ? N : string;
