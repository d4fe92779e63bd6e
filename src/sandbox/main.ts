/**
 * The sandbox on its own, for a gateway in production mode, a container or compose to talk to:
 *
 *   npm run sandbox                    (SANDBOX_PORT 4010 on 127.0.0.1)
 *   SANDBOX_HOST=0.0.0.0 node dist/src/sandbox/main.js   (in a container)
 *
 * It follows the REST spec with invented data and the README's tokens; its record of calls
 * keeps the last 100 (served at /__sandbox/stats as a count).
 */
import { z } from 'zod';
import { sandboxBanner } from './banner.js';
import { startSandbox } from './server.js';

const env = z
  .object({
    SANDBOX_PORT: z.coerce.number().int().min(0).max(65535).default(4010),
    SANDBOX_HOST: z.string().min(1).default('127.0.0.1'),
    SANDBOX_LATENCY_MS: z.coerce.number().int().min(0).default(0),
  })
  .parse(process.env);

const sandbox = await startSandbox({ host: env.SANDBOX_HOST, port: env.SANDBOX_PORT, latencyMs: env.SANDBOX_LATENCY_MS, maxRecorded: 100 });
process.stdout.on('error', () => {});
process.stdout.write(sandboxBanner(sandbox.url, ' the registry stand-in, on its own.'));
console.log(`sandbox ready: ${sandbox.url}`);
const stop = () => void sandbox.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
