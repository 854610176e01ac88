/** Where a benchmark keeps the watchdog's state: a SQLite file (the default's), or PostgreSQL (`state.url`). */
export const BENCH_STATES = ['sqlite', 'postgres'] as const;

/** One of {@link BENCH_STATES}. */
export type BenchState = (typeof BENCH_STATES)[number];
