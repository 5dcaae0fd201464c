#!/usr/bin/env node
import { ConfigError } from './config.js';
import { MigrationError } from './db/migrations.js';
import { run, UsageError } from './commands.js';
import { ImportError } from './import/source.js';
import { ListenError, StartupError } from './server.js';

run(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ImportError) {
    process.stderr.write(`almanac: import failed: ${err.message}\n`);
    process.exit(1);
  }
  if (err instanceof ListenError) {
    process.stderr.write(`almanac: ${err.message}\n`);
    process.exit(1);
  }
  const known = err instanceof UsageError || err instanceof ConfigError || err instanceof MigrationError || err instanceof StartupError;
  if (known || String((err as { code?: unknown }).code ?? '').startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`almanac: ${(err as Error).message}\n`);
    process.exit(2);
  }
  throw err;
});
