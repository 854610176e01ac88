/**
 * The environment variable naming the vitest run's folder, for what the run's test files share
 * (made by test/helpers/global-setup.ts, put in the environment by test/helpers/setup.ts, where
 * the helpers, which import no vitest, and the processes a test spawns find it). A module of its
 * own: the setup, run before every file, loads nothing more.
 */
export const RUN_DIR_VARIABLE = 'DW_TEST_RUN_DIR';
