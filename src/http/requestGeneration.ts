import type { IncomingMessage } from 'node:http';
import type { Engine } from '../db/engine.js';

/** A request's reading of the data's generation, and the change tracker's stamp once it was taken. */
export interface RequestReading {
  generation: string;
  at: number;
}

const readings = new WeakMap<IncomingMessage, RequestReading>();

/**
 * The data's generation for a request: read once, after the request arrived, and shared by every stage that needs
 * it (the front answer, authentication, the response cache). A reading the front answer waited for is as good for
 * the pipeline when the front could not answer: it began after the request arrived. `at` is the tracker's stamp as
 * that reading left it (later readings may have moved the tracker since): what was read after it is current as of it.
 */
export async function generationFor(req: IncomingMessage, engine: Engine): Promise<RequestReading> {
  const known = readings.get(req);
  if (known !== undefined) return known;
  const generation = await engine.generation();
  const reading = { generation, at: engine.changes.now };
  readings.set(req, reading);
  return reading;
}
