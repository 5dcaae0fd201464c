/** The thread that cleans large HTML for cleanAhead.ts: `cleanHtml` of each message, answered under its id. */
import { parentPort } from 'node:worker_threads';
import { cleanHtml } from './html.js';
import type { CleanCall, CleanAnswer } from './cleanAhead.js';

parentPort!.on('message', (call: CleanCall) => {
  let answer: CleanAnswer;
  try {
    answer = { id: call.id, clean: cleanHtml(call.html, 'content', false) };
  } catch (err) {
    answer = { id: call.id, error: String(err) };
  }
  parentPort!.postMessage(answer);
});
