import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The project root: the nearest folder above this module that holds package.json (works from src/ and dist/src/). */
function findProjectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
  return dir;
}

export const projectRoot = findProjectRoot();
export const specPath = join(projectRoot, 'spec', 'openapi.yaml');

/**
 * The script of a worker thread, given as `new URL('./name.js', import.meta.url)` of its caller: beside the caller
 * once built; under a test runner, which runs the TypeScript sources, the built one in dist/. Null when neither exists
 * (the caller then does the work on its own thread).
 */
export function workerScript(beside: URL): URL | null {
  const path = fileURLToPath(beside);
  if (existsSync(path)) return beside;
  const built = join(projectRoot, 'dist', 'src', path.slice(join(projectRoot, 'src').length + 1));
  return existsSync(built) ? pathToFileURL(built) : null;
}
