/** Work that waits for its turn, at most `limit` at a time. */
export interface Turns {
  run(work: () => Promise<unknown>): Promise<unknown>;
  /** How many works are waiting for a turn now. */
  readonly waiting: number;
}

/**
 * Runs at most `limit` of the works given at once, in arrival order, each started from the
 * event loop's check phase (setImmediate), never inline: a request's 'end' comes on the tick
 * queue, so works started inline would run back to back with no look at the sockets between.
 * This way, between two turns, every request that has arrived meanwhile gets its own. Written
 * here: p-limit starts the next work within the same turn, which is what must not happen.
 */
export function takingTurns(limit: number): Turns {
  let running = 0;
  let scheduled = false;
  const queue: (() => void)[] = [];
  const schedule = () => {
    if (scheduled || queue.length === 0 || running >= limit) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      while (running < limit && queue.length > 0) queue.shift()!();
    });
  };
  return {
    run: (work) =>
      new Promise((resolve) => {
        queue.push(() => {
          running++;
          const done = work();
          const finish = () => {
            running--;
            schedule();
          };
          done.then(finish, finish);
          resolve(done);
        });
        schedule();
      }),
    get waiting() {
      return queue.length;
    },
  };
}
