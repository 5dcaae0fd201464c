import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig } from './config.js';
import { MigrationError } from './db/migrations.js';
import { ListenError, prepareDatabase, serve, StartupError } from './server.js';
import { createLogger } from './log.js';
import { reportStartFailure, superviseWorkers } from './workers.js';

/**
 * `ALMANAC_WORKERS=N` (`auto`: one per core) runs N worker processes on one port over the same SQLite file: the
 * primary migrates and bootstraps once, then forks and keeps them serving (workers.ts); reads scale with the cores,
 * writes take turns (WAL with a busy timeout). One worker (the default) serves in this process.
 */
try {
  const config = loadConfig();
  const workers = config.workers === 0 ? availableParallelism() : config.workers;
  if (workers <= 1) {
    await serve(config);
  } else if (cluster.isPrimary) {
    const log = createLogger(config.logLevel);
    await prepareDatabase(config, log);
    superviseWorkers(config, workers, log);
  } else {
    await serve(config, { prepared: true }).catch(reportStartFailure);
  }
} catch (err) {
  if (err instanceof ConfigError || err instanceof MigrationError || err instanceof StartupError) {
    process.stderr.write(`almanac: ${err.message}\n`);
    process.exit(2);
  }
  if (err instanceof ListenError) {
    process.stderr.write(`almanac: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
