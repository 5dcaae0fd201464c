import { defineConfig } from 'vitest/config';
import { findBinDir } from './scripts/postgresCluster.js';

/**
 * The suite runs once per engine: the `sqlite` project on temporary SQLite files, the `postgres` project on a
 * throwaway PostgreSQL cluster it starts itself (test/setup/postgres.ts). Tests of what no engine changes (text and
 * date parsing, the browser page, generated SDKs, the lockfile) and of one engine's own internals run in one
 * project only. `npx vitest run --project sqlite` (or `postgres`) runs one engine while developing. Without
 * PostgreSQL's server installed the postgres project is left out, with a warning, except under CI, where it must run.
 */
const ENGINE_FREE = ['test/text.test.ts', 'test/turnBatch.test.ts', 'test/requestParse.test.ts', 'test/viewText.test.ts', 'test/boundedLists.test.ts', 'test/dates.test.ts', 'test/engines.test.ts', 'test/docs.test.ts', 'test/readme.test.ts', 'test/memory.test.ts', 'test/json.test.ts', 'test/specLint.test.ts'];
const SQLITE_ONLY = ['test/migrations.test.ts', 'test/queryPlans.test.ts', 'test/storage.test.ts'];
const POSTGRES_ONLY = ['test/postgres*.test.ts', 'test/nodes.test.ts'];

const postgres = findBinDir() !== null || process.env.CI === 'true';
if (!postgres) process.stderr.write("vitest: PostgreSQL's server is not installed (Debian: apt-get install postgresql): the postgres project is skipped\n");

export default defineConfig({
  test: {
    globalSetup: ['test/setup/build.ts'],
    pool: 'forks', // better-sqlite3 is a native addon
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: POSTGRES_ONLY, env: { ALMANAC_TEST_ENGINE: 'sqlite' } },
      },
      ...(postgres ? [{
        extends: true as const,
        test: {
          name: 'postgres',
          include: ['test/**/*.test.ts'],
          exclude: [...ENGINE_FREE, ...SQLITE_ONLY],
          globalSetup: ['test/setup/postgres.ts'],
          env: { ALMANAC_TEST_ENGINE: 'postgres' },
        },
      }] : []),
    ],
  },
});
