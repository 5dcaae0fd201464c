import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

describe('the Node.js versions Almanac supports', () => {
  // `npm ci` only warns when a dependency declares a Node it does not support, so the promise in `engines`
  // would break silently on the oldest Node it names; a dependency that needs a newer one is pinned in `overrides`.
  it('are supported by every package the lockfile installs', () => {
    const oldest = semver.minVersion(manifest.engines.node)!;
    expect(oldest.major).toBeGreaterThanOrEqual(20);
    // old packages may still list engines as an array of strings, which npm ignores
    const refusing = Object.entries(lock.packages).flatMap(([path, pkg]) => {
      const range = Array.isArray(pkg.engines) ? undefined : pkg.engines?.node;
      return range && !semver.satisfies(oldest, range) ? [`${path.replace(/^.*node_modules\//, '')}@${pkg.version} needs node ${range}`] : [];
    });
    expect(refusing).toEqual([]);
  });

  it('include the Node.js running the tests', () => {
    expect(semver.satisfies(process.version, manifest.engines.node)).toBe(true);
  });
});
