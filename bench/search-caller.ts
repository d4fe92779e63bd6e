/**
 * The searching callers of a load, in a process of their own: the bench's process holds the oracle's index of the
 * register's words, whose collections stop that process for 100 ms at a time (`--trace-gc`: docs/performance.md), and
 * every request in flight would count the pause as the gateway's. Asks the texts `width` at a time, a pass to warm up
 * and `passes` measured, then sends back each measured answer: its time and what its page held.
 *
 *   forked by bench/padron-typed.ts (searchesOf): search-caller.js <gateway url>, then sent { texts, first, width, passes }
 */
import { Pool } from 'undici';

export interface Asked {
  texts: string[];
  first: number;
  width: number;
  passes: number;
}

export interface Answered {
  text: string;
  ms: number;
  rucs: string[] | undefined;
  hasNextPage: boolean;
  error: string | undefined;
}

const SEARCH =
  'query($t: String!, $n: Int!) { buscarContribuyentes(texto: $t, first: $n) { edges { node { ruc } } pageInfo { hasNextPage endCursor } } }';
type Page = {
  errors?: { message: string }[];
  data?: { buscarContribuyentes: { edges: { node: { ruc: string } }[]; pageInfo: { hasNextPage: boolean } } };
};

const url = process.argv[2]!;
const pool = new Pool(new URL(url).origin, { connections: 20 });

async function pass(asked: Asked, measured: Answered[] | undefined): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: asked.width }, async () => {
      while (next < asked.texts.length) {
        const text = asked.texts[next++]!;
        const started = performance.now();
        const res = await pool.request({
          path: '/graphql',
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer bench-token' },
          body: JSON.stringify({ query: SEARCH, variables: { t: text, n: asked.first } }),
        });
        const page = (await res.body.json()) as Page;
        const ms = performance.now() - started;
        const conn = page.data?.buscarContribuyentes;
        measured?.push({
          text,
          ms,
          rucs: conn?.edges.map((e) => e.node.ruc),
          hasNextPage: conn?.pageInfo.hasNextPage ?? false,
          error: conn ? undefined : (page.errors?.[0]?.message ?? 'no page'),
        });
      }
    }),
  );
}

process.once('message', async (asked: Asked) => {
  await pass(asked, undefined);
  const measured: Answered[] = [];
  process.send!('measuring');
  for (let p = 0; p < asked.passes; p++) await pass(asked, measured);
  await pool.close();
  process.send!(measured, () => process.exit(0));
});
