/**
 * Another caller, in a process of its own (its own event loop and clock, as a real one has): asks the gateway for
 * `contribuyente` every 2 ms until told `stop`, then sends back each answer's time. `reset` forgets the times so far.
 *
 *   forked by bench/padron-typed.ts and bench/jobs.ts: lookup-caller.js <gateway url> <ruc> [token]
 */
import { Pool } from 'undici';

const [url, ruc, token = 'bench-other'] = process.argv.slice(2) as [string, string, string?];
const pool = new Pool(new URL(url).origin, { connections: 1 });
const times: number[] = [];
let running = true;
process.on('message', (message) => {
  if (message === 'reset') times.length = 0;
  if (message === 'stop') running = false;
});
while (running) {
  const started = performance.now();
  const res = await pool.request({
    path: '/graphql',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: `{ contribuyente(ruc: "${ruc}") { ruc estado condicion } }` }),
  });
  await res.body.text();
  times.push(performance.now() - started);
  await new Promise((r) => setTimeout(r, 2));
}
await pool.close();
process.send!(times, () => process.exit(0));
