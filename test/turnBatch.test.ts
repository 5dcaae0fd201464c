import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { TurnBatch, type Pending } from '../src/db/turnBatch.js';

/** What every engine's batching of a turn of the event loop stands on: the calls of a turn flushed together, none left waiting. */
describe('the calls of one turn', () => {
  it('are flushed together once the turn is over, in the order they were made; a later turn is a flush of its own', async () => {
    const flushed: number[][] = [];
    const batch = new TurnBatch<number, string>((calls) => {
      flushed.push(calls.map(({ call }) => call));
      for (const { call, resolve } of calls) resolve(`answer ${call}`);
    });
    const first = [batch.add(1), batch.add(2), batch.add(3)];
    expect(flushed).toEqual([]); // nothing is made before the turn is over
    expect(await Promise.all(first)).toEqual(['answer 1', 'answer 2', 'answer 3']);
    await nextTurn();
    expect(await batch.add(4)).toBe('answer 4');
    expect(flushed).toEqual([[1, 2, 3], [4]]);
  });

  it('are rejected, those not yet answered, when the flush throws or its promise rejects; the answered keep their answer', async () => {
    const thrown = new TurnBatch<number, number>(() => {
      throw new Error('no connection');
    });
    await expect(Promise.all([thrown.add(1), thrown.add(2)])).rejects.toThrow('no connection');

    const halfway = new TurnBatch<number, number>(async (calls: Pending<number, number>[]) => {
      calls[0]!.resolve(10);
      await nextTurn();
      throw new Error('connection lost');
    });
    const [answered, lost] = await Promise.allSettled([halfway.add(1), halfway.add(2)]);
    expect(answered).toEqual({ status: 'fulfilled', value: 10 });
    expect(lost).toMatchObject({ status: 'rejected', reason: new Error('connection lost') });
  });
});
