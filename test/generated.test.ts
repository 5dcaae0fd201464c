import { spawnSync } from 'node:child_process';
import { copyFileSync, appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'almanac-generated-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `npm run check`'s check of the generated types, on copies of the spec and the types. */
function checkGenerated(types: string) {
  const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${process.env.PATH}` };
  return spawnSync('sh', [join(root, 'scripts', 'check-generated.sh'), join(dir, 'openapi.yaml'), types], { cwd: root, env, encoding: 'utf8' });
}

describe('the check of the generated types', () => {
  copyFileSync(join(root, 'spec', 'openapi.yaml'), join(dir, 'openapi.yaml'));

  it('passes when generated/api.d.ts is what the spec generates', () => {
    const current = join(dir, 'current.d.ts');
    copyFileSync(join(root, 'generated', 'api.d.ts'), current);
    const run = checkGenerated(current);
    expect(run.status, run.stderr).toBe(0);
  }, 60_000);

  it('fails on stale types, naming the command that brings them up to date', () => {
    const stale = join(dir, 'stale.d.ts');
    copyFileSync(join(root, 'generated', 'api.d.ts'), stale);
    appendFileSync(stale, 'export type Stale = true;\n');
    const run = checkGenerated(stale);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('run `npm run generate`');
  }, 60_000);
});
