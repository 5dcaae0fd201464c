import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/build.ts'],
    pool: 'forks', // better-sqlite3 is a native addon
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
