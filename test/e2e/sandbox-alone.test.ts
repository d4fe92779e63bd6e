import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postOnce, spawnGateway, type SpawnedGateway } from '../helpers.js';
import { groupGone, signalGroup, spawnTracked } from '../processes.js';

/** `npm run sandbox`: the registry stand-in on its own, for a gateway started apart from it (production mode, a container, compose). */
describe('npm run sandbox', () => {
  let sandbox: ChildProcess;
  let url: string;
  let gateway: SpawnedGateway | undefined;
  beforeAll(async () => {
    sandbox = spawnTracked('npm', ['run', 'sandbox', '--silent'], {
      env: { PATH: process.env['PATH'], SANDBOX_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no sandbox within 30 s: ${output}`)), 30_000);
      sandbox.stdout!.on('data', (chunk: Buffer) => {
        output += chunk;
        const match = /sandbox ready: (http:\/\/[\d.:]+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    });
    expect(output).toContain('sandbox-pro');
  });
  afterAll(async () => {
    await gateway?.stop();
    signalGroup(sandbox, 'SIGTERM');
    await groupGone(sandbox, 5000);
  });

  it("serves a gateway started apart from it with the README's tokens, and stops on SIGTERM", async () => {
    gateway = await spawnGateway({ UPSTREAM_URL: url });
    const answer = await postOnce(
      gateway.url,
      'query($r: String!) { contribuyente(ruc: $r) { ruc } licencia(numLicencia: "Q46779354") { nombres } }',
      {
        r: '20100123453',
      },
    );
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data).toMatchObject({ contribuyente: { ruc: '20100123453' }, licencia: { nombres: expect.any(String) } });
    expect(((await (await fetch(`${url}/__sandbox/stats`)).json()) as { calls: number }).calls).toBe(2);
    signalGroup(sandbox, 'SIGTERM');
    expect(await groupGone(sandbox, 5000)).toBe(true);
  });
});
