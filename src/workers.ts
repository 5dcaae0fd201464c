import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config.js';
import { openEngine } from './db/open.js';
import type { Logger } from './log.js';

/** What a worker that could not start tells the primary before it exits. */
interface StartFailed { almanac: 'start-failed'; reason: string }

const isStartFailed = (message: unknown): message is StartFailed =>
  typeof message === 'object' && message !== null && (message as StartFailed).almanac === 'start-failed';

/** In a worker: reports why it could not start, then exits (the primary logs the reason and decides what next). */
export function reportStartFailure(err: unknown): void {
  const reason = err instanceof Error ? err.message : String(err);
  process.stderr.write(`almanac worker ${process.pid}: could not start: ${reason}\n`);
  const exit = () => process.exit(1);
  if (process.send) process.send({ almanac: 'start-failed', reason } satisfies StartFailed, exit);
  else exit();
}

/** A replacement for a worker that died right after another waits this long, doubling each time up to the most. */
const FIRST_DELAY_MS = 200;
const MOST_DELAY_MS = 10_000;
/** A worker that has listened this long served well: a death after that is a new story, replaced at once. */
const SETTLED_MS = 10_000;

/** One of the worker places the primary keeps filled. */
interface Slot {
  index: number;
  worker: Worker | null;
  /** When its current worker started listening (0: not yet). */
  listeningSince: number;
  /** Deaths in a row without a worker that settled (listened SETTLED_MS): sets the delay before the next start. */
  deaths: number;
  /** Starts in a row that ended before the worker listened. */
  failedStarts: number;
  /** Why the last start failed, as the worker reported it or as it ended. */
  reason: string;
  restart: NodeJS.Timeout | null;
}

/**
 * The primary of `ALMANAC_WORKERS` > 1: keeps that many workers serving on one port. A worker that dies is replaced
 * at once if it had served a while, otherwise after a delay that doubles with each death in a row (200 ms up to
 * 10 s), so a worker that keeps dying does not take the machine with it. The service stays up as long as any worker
 * serves, however its siblings fail; the primary gives up (exit 1, the reason logged) only when every worker place
 * has seen `ALMANAC_WORKER_START_ATTEMPTS` starts in a row end before listening: then no start can succeed (the port
 * is taken, the database cannot be opened) and retrying would only hide it.
 */
export function superviseWorkers(config: Config, count: number, log: Logger): void {
  const attempts = config.workerStartAttempts;
  const slots: Slot[] = Array.from({ length: count }, (_, index) => ({ index, worker: null, listeningSince: 0, deaths: 0, failedStarts: 0, reason: '', restart: null }));
  const slotOf = new Map<Worker, Slot>();
  let stopping = false;
  const serving = () => slots.filter((s) => s.listeningSince > 0).length;

  const start = (slot: Slot) => {
    slot.restart = null;
    const worker = cluster.fork();
    slot.worker = worker;
    slot.listeningSince = 0;
    slot.reason = '';
    slotOf.set(worker, slot);
    worker.on('message', (message: unknown) => {
      if (isStartFailed(message)) slot.reason = message.reason;
    });
    log.info('worker starting', { worker: slot.index, pid: worker.process.pid });
  };

  cluster.on('listening', (worker) => {
    const slot = slotOf.get(worker);
    if (!slot || slot.worker !== worker) return;
    slot.listeningSince = Date.now();
    slot.failedStarts = 0;
  });

  cluster.on('exit', (worker, code, signal) => {
    const slot = slotOf.get(worker);
    slotOf.delete(worker);
    if (!slot || slot.worker !== worker) return;
    slot.worker = null;
    if (stopping) return;
    const now = Date.now();
    const listened = slot.listeningSince > 0;
    const ended = signal ? `killed by ${signal}` : `exit code ${code}`;
    if (listened && now - slot.listeningSince >= SETTLED_MS) slot.deaths = 0;
    slot.deaths++;
    if (listened) {
      log.error('worker exited; starting another', { worker: slot.index, pid: worker.process.pid, ended, serving: serving() });
    } else {
      slot.failedStarts++;
      slot.reason ||= ended;
      log.error('a worker could not start', { worker: slot.index, pid: worker.process.pid, reason: slot.reason, attempt: slot.failedStarts, of: attempts, serving: serving() });
      if (slots.every((s) => s.failedStarts >= attempts)) return giveUp(slot.reason);
    }
    const delay = slot.deaths === 1 && listened ? 0 : Math.min(FIRST_DELAY_MS * 2 ** Math.max(slot.deaths - 2, 0), MOST_DELAY_MS);
    slot.restart = setTimeout(() => start(slot), delay);
  });

  const alive = () => slots.some((s) => s.worker !== null);
  /** Stops every worker (and any start to come) with `signal`, then calls `then` once none is left. */
  const stopAll = (signal: NodeJS.Signals, then: () => void) => {
    stopping = true;
    for (const slot of slots) {
      if (slot.restart) clearTimeout(slot.restart);
      slot.worker?.process.kill(signal);
    }
    if (!alive()) return then();
    cluster.on('exit', () => {
      if (!alive()) then();
    });
  };

  const giveUp = (reason: string) => {
    log.error('workers keep failing to start; stopping', { attempts, reason });
    stopAll('SIGTERM', () => process.exit(1));
  };

  const stop = (signal: NodeJS.Signals) => {
    log.info('shutting down workers', { signal });
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    // each worker checkpoints as it closes, but a checkpoint cannot empty the log while another worker still
    // reads; once all are gone, this is the last connection and the log is emptied for certain
    stopAll(signal, () => {
      void openEngine(config).then((engine) => engine.close()).finally(() => process.exit(0));
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));

  for (const slot of slots) start(slot);
}
