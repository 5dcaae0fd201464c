import { Worker } from 'node:worker_threads';
import { workerScript } from '../paths.js';
import { CLEANED_AHEAD_FROM, keepCleaned } from './html.js';

export interface CleanCall { id: number; html: string }
export type CleanAnswer = { id: number; clean: string } | { id: number; error: string };

/** The fields of a body that can be that large: titles and names are 1,000 characters at most (spec). */
const LARGE_FIELDS = ['description', 'excerpt'];

/**
 * One thread that cleans large HTML, started on first use and left running (it keeps no process alive); null
 * when its script is not there, undefined before the first use or after it stopped.
 */
let thread: Worker | null | undefined;
const waiting = new Map<number, (answer: CleanAnswer) => void>();
let nextId = 0;

function cleaner(): Worker | null {
  if (thread !== undefined) return thread;
  const script = workerScript(new URL('./htmlThread.js', import.meta.url));
  if (script === null) return (thread = null);
  const worker = new Worker(script);
  worker.unref();
  worker.on('message', (answer: CleanAnswer) => {
    waiting.get(answer.id)?.(answer);
    waiting.delete(answer.id);
  });
  // a thread that fails: what it was cleaning is cleaned by the write itself, and the next large text starts another
  const stopped = (reason: unknown) => {
    if (thread === worker) thread = undefined;
    for (const [id, settle] of waiting) settle({ id, error: String(reason) });
    waiting.clear();
  };
  worker.on('error', stopped);
  worker.on('exit', stopped);
  return (thread = worker);
}

function cleanInThread(call: Omit<CleanCall, 'id'>): Promise<void> {
  const worker = cleaner();
  if (worker === null) return Promise.resolve();
  const id = ++nextId;
  return new Promise((resolve) => {
    waiting.set(id, (answer) => {
      if ('clean' in answer) keepCleaned(call.html, answer.clean);
      resolve();
    });
    worker.postMessage({ ...call, id });
  });
}

/**
 * Cleans, before a write and off the event loop, the large HTML its body sends (descriptions and excerpts from
 * CLEANED_AHEAD_FROM characters, its own and those of a venue or organizer created with an event), for a caller whose HTML is
 * cleaned; the write's `cleanHtml` then finds each text cleaned. Whatever could not be cleaned so is cleaned by the
 * write itself, as any smaller text is.
 */
export async function cleanAhead(body: unknown, unfiltered: boolean): Promise<void> {
  if (unfiltered || body === null || typeof body !== 'object') return;
  const calls: Omit<CleanCall, 'id'>[] = [];
  const collect = (fields: Record<string, unknown>) => {
    for (const key of LARGE_FIELDS) {
      const value = fields[key];
      if (typeof value === 'string' && value.length >= CLEANED_AHEAD_FROM) calls.push({ html: value });
    }
  };
  const fields = body as Record<string, unknown>;
  collect(fields);
  for (const linked of [fields.venue, ...(Array.isArray(fields.organizer) ? fields.organizer : [fields.organizer])]) {
    if (linked !== null && typeof linked === 'object' && !Array.isArray(linked)) collect(linked as Record<string, unknown>);
  }
  await Promise.all(calls.map(cleanInThread));
}
