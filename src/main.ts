import { ConfigError, loadConfig } from './config.js';
import { MigrationError } from './db/migrate.js';
import { serve } from './server.js';

try {
  await serve(loadConfig());
} catch (err) {
  if (err instanceof ConfigError || err instanceof MigrationError) {
    process.stderr.write(`almanac: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
