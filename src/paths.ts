import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
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

/**
 * Creates a folder and the folders missing above it, one at a time: Node 20's `mkdirSync(…, { recursive: true })`
 * never returns where the file system answers ENOENT to a mkdir whose parent exists (under /proc, say).
 */
export function makeFolder(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); !existsSync(d) && dirname(d) !== d; d = dirname(d)) missing.push(d);
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
