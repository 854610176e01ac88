/**
 * A package loaded the first time it is used, synchronously (`require`), instead of at start: a
 * library only some configurations use (the SMTP client, the pretty log format, RE2) costs its
 * code and objects in every daemon when imported at the top of a module: nodemailer ~3 MB of heap,
 * re2js ~1 MB, pino-pretty ~1.5 MB, counted in the peak RSS once V8's heap may double past what is
 * live (docs/benchmarks.md, "Where the memory goes"). The package's CommonJS build is the one
 * loaded; only the module that names it here may use it.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A getter of the package `id`, loading it at its first call; `T` is its type (`typeof import('id')`). */
export function loadOnUse<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(id) as T);
}
