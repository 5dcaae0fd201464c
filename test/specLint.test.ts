import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'almanac-spec-lint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Spectral with the project's ruleset (`npm run lint:spec`'s second half) on a copy of the spec changed by `edit`. */
function lint(edit: (spec: string) => string) {
  const file = join(dir, 'openapi.yaml');
  writeFileSync(file, edit(readFileSync(join(root, 'spec', 'openapi.yaml'), 'utf8')));
  const run = spawnSync(join(root, 'node_modules', '.bin', 'spectral'), ['lint', file, '--ruleset', join(root, '.spectral.mjs'), '--fail-severity=warn', '--format=json'], { cwd: root, encoding: 'utf8' });
  const problems = JSON.parse(run.stdout.slice(run.stdout.indexOf('['), run.stdout.lastIndexOf(']') + 1)) as { code: string; path: string[] }[];
  return { status: run.status, problems: problems.map((p) => `${p.code} ${p.path.join('.')}`) };
}

describe("the spec's own lint rules", () => {
  it('pass on the spec as it is', () => {
    expect(lint((spec) => spec)).toEqual({ status: 0, problems: [] });
  }, 60_000);

  it('refuse a server variable with an empty default and a schema named after a built-in, naming each', () => {
    const broken = lint((spec) => {
      const renamed = spec.replaceAll('#/components/schemas/WpError', '#/components/schemas/Error').replace('\n    WpError:\n', '\n    Error:\n');
      return renamed.replace(/(url: '\{site\}\/de'[\s\S]*?default:) http:\/\/127\.0\.0\.1:8080/, "$1 ''");
    });
    expect(broken.status).toBe(1);
    expect(broken.problems).toEqual(expect.arrayContaining(['schema-name-not-builtin components.schemas.Error', 'server-variable-default servers.2.variables.site.default']));
  }, 60_000);
});
