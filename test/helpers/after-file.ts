/**
 * What a test file started and must stop after it (its PostgreSQL server): `test/helpers/setup.ts`
 * closes it all after each file. Apart from the fixtures so the setup, run before every file,
 * loads nothing else.
 */
const closers = new Set<() => void>();

/** Closes `close` after the test file (once). */
export function closeAfterFile(close: () => void): void {
  closers.add(close);
}

/** Closes what the file left open, most recent first. */
export function closeFileLeftovers(): void {
  for (const close of [...closers].reverse()) close();
  closers.clear();
}
