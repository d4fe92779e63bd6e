/** One part of a list sent upstream in its own call: its place in the list, and how the call went. */
export interface Chunk<R> {
  /** Zero-based positions in the whole list, `to` included. */
  from: number;
  to: number;
  result?: R;
  error?: unknown;
  /** Never sent: an earlier chunk's failure said that no further call could succeed (QUOTA_EXCEEDED). */
  unsent?: boolean;
}

export interface ChunkOptions<T, R> {
  /** Most items per call. */
  size: number;
  /** Most calls in flight at once. */
  concurrency: number;
  call: (items: T[]) => Promise<R>;
  /** After a failure this says is final for every call (quota exhausted), no further chunk is sent. */
  stopsAll: (error: unknown) => boolean;
}

/**
 * Sends `items` in calls of at most `size`, started in input order with at most `concurrency`
 * in flight, and answers every chunk in input order: its result, or its error. Calls in
 * flight when one fails for good run to their end (they are billed either way); the ones not
 * yet sent are not sent, and answer that first failure.
 */
export async function inChunks<T, R>(items: readonly T[], options: ChunkOptions<T, R>): Promise<Chunk<R>[]> {
  const chunks: Chunk<R>[] = [];
  for (let from = 0; from < items.length; from += options.size) {
    chunks.push({ from, to: Math.min(from + options.size, items.length) - 1 });
  }
  let next = 0;
  let stopped: { error: unknown } | undefined;
  const worker = async () => {
    while (next < chunks.length) {
      const chunk = chunks[next++]!;
      if (stopped) {
        chunk.error = stopped.error;
        chunk.unsent = true;
        continue;
      }
      try {
        chunk.result = await options.call(items.slice(chunk.from, chunk.to + 1));
      } catch (error) {
        chunk.error = error;
        if (options.stopsAll(error)) stopped ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, chunks.length) }, worker));
  return chunks;
}
