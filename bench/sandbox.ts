/**
 * The sandbox in a process of its own for the benchmark: no call record (it would grow with
 * every request), tokens whose quota never runs out, optional latency, and a small stats
 * endpoint the bench reads to count upstream calls per operation.
 *
 *   LATENCY_MS=20 node dist/bench/sandbox.js   (after npm run build)
 */
import { startSandbox } from '../src/sandbox/server.js';

const sandbox = await startSandbox({
  host: '127.0.0.1',
  port: 0,
  latencyMs: Number(process.env['LATENCY_MS'] ?? 0),
  record: false,
  // Callers are many: each connection of the load uses one of these (bench/run.ts, TOKENS).
  tokens: Array.from({ length: 16 }, (_, i) => ({ token: `bench-${i}`, plan: 'pro' as const, quota: Number.MAX_SAFE_INTEGER })),
});
console.log(`sandbox ready: ${sandbox.url}`);
process.once('SIGTERM', () => void sandbox.close().then(() => process.exit(0)));
