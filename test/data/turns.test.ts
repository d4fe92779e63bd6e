import { setImmediate as immediate } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { takingTurns } from '../../src/data/turns.js';

describe('takingTurns', () => {
  it('starts one work a turn, in arrival order, each on a later turn of the event loop', async () => {
    const turns = takingTurns(1);
    const events: string[] = [];
    const work = (name: string) => () => {
      events.push(`start ${name}`);
      return Promise.resolve().then(() => void events.push(`end ${name}`));
    };
    const all = Promise.all([turns.run(work('a')), turns.run(work('b')), turns.run(work('c'))]);
    // Nothing runs inline: a request's work waits for the event loop's next look at its sockets.
    expect(events).toEqual([]);
    expect(turns.waiting).toBe(3);
    // Between two works, an I/O callback scheduled meanwhile gets its turn.
    await immediate();
    events.push('other');
    await all;
    expect(events).toEqual(['start a', 'end a', 'other', 'start b', 'end b', 'start c', 'end c']);
    expect(turns.waiting).toBe(0);
  });

  it('holds no turn while a work waits: the next one starts on the next turn', async () => {
    const turns = takingTurns(1);
    const started: string[] = [];
    const slow = turns.run(async () => {
      started.push('slow');
      await new Promise((r) => setTimeout(r, 100));
    });
    const quick = turns.run(async () => void started.push('quick'));
    await quick;
    expect(started).toEqual(['slow', 'quick']);
    await slow;
  });

  it('hands a failed work on to the next one', async () => {
    const turns = takingTurns(1);
    const failed = turns.run(() => Promise.reject(new Error('boom')));
    const next = turns.run(() => Promise.resolve('ok'));
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ok');
  });
});
