import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';

/** `npm run bench` and `npm run fuzz` with a command line of their own (built by the global setup, as npm runs them). */
const script = (name: 'bench' | 'fuzz', ...argv: string[]) =>
  spawnSync(process.execPath, [join(projectRoot, 'dist', 'scripts', `${name}.js`), ...argv], { encoding: 'utf8', timeout: 30_000 });

describe('the command lines of the bench and the fuzz', () => {
  for (const name of ['bench', 'fuzz'] as const) {
    it(`${name}: --help prints the usage and exits 0, without running anything`, () => {
      const run = script(name, '--help');
      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^npm run ${name} -- \\[options\\]\\n`));
      expect(run.stdout).toContain('--help');
      expect(run.stderr).toBe('');
    });

    it(`${name}: an unknown option or a value that is not a number is one line and the usage, exit 2, no stack`, () => {
      const optionWithNumber = name === 'bench' ? 'events' : 'runs';
      for (const [argv, said] of [
        [['--nope'], `${name}: Unknown option '--nope'`],
        [[`--${optionWithNumber}`, 'ten'], `${name}: --${optionWithNumber} must be a whole number of at least 1, not "ten"`],
        [[`--${optionWithNumber}`, '0'], `${name}: --${optionWithNumber} must be a whole number of at least 1, not "0"`],
      ] as const) {
        const run = script(name, ...argv);
        expect(run.status, argv.join(' ')).toBe(2);
        expect(run.stderr.split('\n')[0], argv.join(' ')).toBe(said);
        expect(run.stderr).toContain(`npm run ${name} -- [options]`);
        expect(run.stderr).not.toMatch(/\n\s+at /);
        expect(run.stdout).toBe('');
      }
    });
  }

  it('bench: an engine it does not have is named', () => {
    const run = script('bench', '--engine', 'mysql');
    expect(run.status).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe('bench: --engine is both, sqlite or postgres, not "mysql"');
  });
});
