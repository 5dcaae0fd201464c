import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/connection.js';
import { MigrationError } from './db/migrate.js';
import { ListenError, prepareDatabase, serve } from './server.js';
import { createLogger } from './log.js';

/**
 * `ALMANAC_WORKERS=N` (`auto`: one per core) runs N worker processes on one port over the same SQLite file: the
 * primary migrates and bootstraps once, then forks; reads scale with the cores, writes take turns (WAL with a
 * busy timeout). One worker (the default) serves in this process.
 */
try {
  const config = loadConfig();
  const workers = config.workers === 0 ? availableParallelism() : config.workers;
  if (workers <= 1) {
    await serve(config);
  } else if (cluster.isPrimary) {
    const log = createLogger(config.logLevel);
    await prepareDatabase(config, log);
    let stopping = false;
    const listening = new Set<number>();
    for (let i = 0; i < workers; i++) cluster.fork();
    cluster.on('listening', (worker) => listening.add(worker.id));
    cluster.on('exit', (worker, code) => {
      if (stopping) return;
      if (!listening.has(worker.id)) {
        // a worker that never served (the port is taken, say) would fail again: stop rather than fork forever
        log.error('a worker could not start; stopping', { pid: worker.process.pid, code });
        stopping = true;
        for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
        process.exitCode = 1;
        return;
      }
      log.error('worker exited; starting another', { pid: worker.process.pid, code });
      cluster.fork();
    });
    const stop = (signal: NodeJS.Signals) => {
      stopping = true;
      log.info('shutting down workers', { signal });
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
      const force = setTimeout(() => process.exit(1), 15_000);
      force.unref();
      // each worker checkpoints as it closes, but a checkpoint cannot empty the log while another worker still
      // reads; once all are gone, this is the last connection and the log is emptied for certain
      let alive = Object.keys(cluster.workers ?? {}).length;
      const finish = () => {
        const db = openDatabase(config.dbPath);
        db.pragma('wal_checkpoint(TRUNCATE)');
        db.close();
        process.exit(0);
      };
      if (alive === 0) finish();
      cluster.on('exit', () => {
        if (--alive === 0) finish();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  } else {
    await serve(config, { prepared: true });
  }
} catch (err) {
  if (err instanceof ConfigError || err instanceof MigrationError) {
    process.stderr.write(`almanac: ${err.message}\n`);
    process.exit(2);
  }
  if (err instanceof ListenError) {
    process.stderr.write(`almanac: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
