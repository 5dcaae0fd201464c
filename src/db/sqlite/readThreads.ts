import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** A call as it travels to a read thread: `repository.method(...args)`, answered under `id`. */
export interface ThreadCall {
  id: number;
  repository: string;
  method: string;
  args: unknown[];
}

/** A read thread's answer to one call. */
export type ThreadAnswer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: { message: string; code?: string } };

/**
 * The most calls a free thread takes at once. Waking a thread costs a system call on each side, and on a virtual
 * machine that is tens of microseconds: calls that wait together travel together, a few at a time, so the other
 * threads still get their share.
 */
export const CALLS_PER_MESSAGE = 4;

interface Waiting extends ThreadCall {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * Costly reads of the SQLite engine (list and search queries, calendar feeds) run in worker threads, each with a
 * read-only connection of its own, so a long statement no longer stops every other request of the process: the
 * event loop keeps serving cheap reads and cached answers while a thread works. A call names a repository method
 * (`posts.listEvents`, say) and its arguments, which must survive structured cloning; the thread runs the very same
 * repository code on its own connection and returns the result.
 *
 * Threads start lazily and are shared by the whole process. Calls wait for a free thread, first come, first served;
 * a free thread takes up to CALLS_PER_MESSAGE of them in one message and runs them one after another, answering
 * each as it is done. So at most `size` costly statements run at once and cheap work always has the event loop.
 */
export class ReadThreads {
  private readonly idle: Worker[] = [];
  private readonly all: Worker[] = [];
  private readonly queue: Waiting[] = [];
  /** The calls each thread has been given and not yet answered. */
  private readonly given = new Map<Worker, Map<number, Waiting>>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly script: URL, private readonly workerData: unknown, private readonly size = Math.max(1, Math.min(4, availableParallelism()))) {}

  /** Runs `repository.method(...args)` in a thread and resolves with its result. */
  call<T>(repository: string, method: string, args: unknown[]): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the read threads are closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, repository, method, args, resolve: resolve as (v: unknown) => void, reject });
      this.dispatch();
    });
  }

  /** Gives waiting calls to free threads (starting threads up to `size`). */
  private dispatch(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? (this.all.length < this.size ? this.spawn() : undefined);
      if (!worker) return;
      const calls = this.queue.splice(0, CALLS_PER_MESSAGE);
      const given = this.given.get(worker)!;
      for (const call of calls) given.set(call.id, call);
      worker.postMessage(calls.map(({ id, repository, method, args }): ThreadCall => ({ id, repository, method, args })));
    }
  }

  private spawn(): Worker {
    const worker = new Worker(this.script, { workerData: this.workerData });
    this.all.push(worker);
    this.given.set(worker, new Map());
    worker.on('message', (answer: ThreadAnswer) => {
      const given = this.given.get(worker);
      const call = given?.get(answer.id);
      if (!given || !call) return;
      given.delete(answer.id);
      if (given.size === 0) {
        this.idle.push(worker);
        this.dispatch();
      }
      if (answer.ok) call.resolve(answer.value);
      else call.reject(Object.assign(new Error(answer.error.message), { code: answer.error.code }));
    });
    // a thread that dies (out of memory, say) fails its calls and is replaced on demand
    const gone = (err: unknown) => {
      const index = this.all.indexOf(worker);
      if (index < 0) return; // 'error' is followed by 'exit'
      this.all.splice(index, 1);
      const idle = this.idle.indexOf(worker);
      if (idle >= 0) this.idle.splice(idle, 1);
      const given = this.given.get(worker)!;
      this.given.delete(worker);
      for (const call of given.values()) call.reject(err instanceof Error ? err : new Error('a read thread stopped'));
      if (!this.closed) this.dispatch();
    };
    worker.once('error', gone);
    worker.once('exit', (code) => gone(new Error(`a read thread exited (${code})`)));
    worker.unref();
    return worker;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.all.map((w) => w.terminate()));
  }
}
