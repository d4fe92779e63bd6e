/** Work whose start waits for its turn. */
export interface Turns {
  run<T>(work: () => Promise<T>): Promise<T>;
  /** How many works are waiting for a turn now. */
  readonly waiting: number;
}

/**
 * Starts at most `perTurn` of the works given on each turn of the event loop, in arrival order,
 * from its check phase (setImmediate), never inline: a request's 'end' comes on the tick queue,
 * so works started inline would run back to back with no look at the sockets between. A work's
 * synchronous part (parsing and validating, here) runs in its turn; what it then waits for
 * (upstream calls) holds no turn. So between two turns, every request that has arrived meanwhile
 * gets its own. Written here: p-limit holds a slot until a work ends, and starts the next one
 * within the same turn, neither of which may happen here.
 */
export function takingTurns(perTurn: number): Turns {
  let scheduled = false;
  const queue: (() => void)[] = [];
  const schedule = () => {
    if (scheduled || queue.length === 0) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      for (let i = 0; i < perTurn && queue.length > 0; i++) queue.shift()!();
      schedule();
    });
  };
  return {
    run: <T>(work: () => Promise<T>) =>
      new Promise<T>((resolve, reject) => {
        queue.push(() => work().then(resolve, reject));
        schedule();
      }),
    get waiting() {
      return queue.length;
    },
  };
}
