import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * vitest globalSetup: compiles the server once before any test runs, so tests that start Almanac as a child process
 * (`dist/src/main.js`) run the current sources, not a stale build.
 */
export default function setup(): void {
  // each project of the run (one per engine) lists this setup: compile once
  if (process.env.ALMANAC_TEST_BUILT === '1') return;
  process.env.ALMANAC_TEST_BUILT = '1';
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  try {
    // the package's own build: the compiler, then the CLI made executable (`npx almanac` runs it as a program)
    execFileSync('npm', ['run', '-s', 'build'], { cwd: root, stdio: 'pipe', encoding: 'utf8' });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    const output = `${e.stdout ?? ''}${e.stderr ?? ''}`.trim() || e.message;
    throw new Error(`npm run build failed, so dist/ may be stale:\n${output}`);
  }
}
