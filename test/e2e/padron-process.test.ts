import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rucAt, writeRegister } from '../../bench/padron-register.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { postOnce, spawnGateway, type SpawnedGateway } from '../helpers.js';
import { groupGone, signalGroup } from '../processes.js';

/**
 * The register in a gateway started as `npm start` starts it, from a loopback mirror of SUNAT's
 * zips (bench/padron-register.ts, 300,000 lines: an import of about a second): refreshed under
 * load, and killed mid-import, twice.
 */
const LINES = 300_000;
const QUERY = 'query($r: String!) { contribuyente(ruc: $r) { ruc fuente } }';

let sandbox: Sandbox;
let root: string;
let mirror: Server;
let mirrorUrl: string;
/** How the mirror serves the padrón zip: whole (a new date each time, so every refresh imports), or half and then nothing. */
let serving: 'whole' | 'stalled' = 'whole';

beforeAll(async () => {
  sandbox = await startSandbox();
  root = mkdtempSync(join(tmpdir(), 'padron-process-'));
  await writeRegister(join(root, 'files'), LINES);
  mirror = createServer((req, res) => {
    const path = join(root, 'files', (req.url ?? '/').slice(1));
    if (!existsSync(path)) return void res.writeHead(404).end();
    const zip = readFileSync(path);
    res.writeHead(200, { 'content-length': zip.length, 'last-modified': new Date().toUTCString() });
    if (serving === 'stalled' && path.endsWith('padron_reducido_ruc.zip')) res.write(zip.subarray(0, zip.length >> 1));
    else res.end(zip);
  });
  await new Promise<void>((r) => mirror.listen(0, '127.0.0.1', r));
  mirrorUrl = `http://127.0.0.1:${(mirror.address() as { port: number }).port}/`;
}, 60_000);
afterAll(async () => {
  mirror?.closeAllConnections();
  mirror?.close();
  await sandbox?.close();
  rmSync(root, { recursive: true, force: true });
});

const start = (dir: string, refreshMs: number) =>
  spawnGateway({ UPSTREAM_URL: sandbox.url, PADRON: mirrorUrl, PADRON_DIR: dir, PADRON_REFRESH_MS: String(refreshMs), CACHE: 'off' });
type Padron = { state: string; importing: boolean; rows: number; lastImport: { result: string; at: string } | null };
const padronOf = async (g: SpawnedGateway) =>
  ((await (await fetch(g.url.replace(/\/graphql$/, '/health'))).json()) as { padron: Padron }).padron;
async function until(g: SpawnedGateway, check: (p: Padron) => boolean, withinMs = 30_000): Promise<Padron> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const padron = await padronOf(g);
    if (check(padron)) return padron;
    if (Date.now() > deadline) throw new Error(`never: ${JSON.stringify(padron)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const ask = async (g: SpawnedGateway, i: number) => (await postOnce(g.url, QUERY, { r: rucAt(i, LINES - 1) })).body.data;

describe('the register in a gateway process', () => {
  it('answers every lookup from the register while it is refreshed under load: none goes to the service meanwhile', async () => {
    const dir = join(root, 'under-load');
    const g = await start(dir, 1000);
    try {
      const first = await until(g, (p) => p.state === 'ready' && p.lastImport?.result === 'imported');
      sandbox.reset();
      // Lookups from 10 callers at once until two more imports have been switched to.
      let answered = 0;
      let done = false;
      const callers = Array.from({ length: 10 }, async (_, c) => {
        for (let i = c; !done; i += 10) {
          expect(await ask(g, (i * 7919) % (LINES - 1))).toMatchObject({ contribuyente: { fuente: 'PADRON' } });
          answered++;
        }
      });
      try {
        let last = first.lastImport!.at;
        for (let imports = 0; imports < 2; imports++) {
          // An import of 300,000 lines took 14 s alone on a busy CI machine: under 10 callers, longer.
          const p = await until(g, (x) => x.lastImport?.at !== last && x.lastImport?.result === 'imported', 90_000);
          last = p.lastImport!.at;
        }
      } finally {
        // The callers stop before the gateway does, whatever happened.
        done = true;
        await Promise.allSettled(callers);
      }
      await Promise.all(callers);
      expect(answered).toBeGreaterThan(100);
      expect(sandbox.callsTo('/ruc')).toHaveLength(0);
    } finally {
      await g.stop();
    }
  }, 240_000);

  it('survives being killed mid-import, downloading or writing the new index: the register in use answers after a restart', async () => {
    const dir = join(root, 'killed');
    let g = await start(dir, 1000);
    const inUse = () => readFileSync(join(dir, 'current'), 'utf8');
    try {
      const ready = await until(g, (p) => p.state === 'ready');
      const named = inUse();
      // Killed while writing a new index: as soon as a directory `current` does not name appears.
      const deadline = Date.now() + 30_000;
      while (!readdirSync(dir).some((d) => d.startsWith('v-') && d !== named && statSync(join(dir, d)).isDirectory())) {
        if (Date.now() > deadline) throw new Error('no import began');
        await new Promise((r) => setTimeout(r, 5));
      }
      signalGroup(g.child, 'SIGKILL');
      expect(await groupGone(g.child, 5_000)).toBe(true);
      // Restarted while the mirror sends half a zip and stalls: killed again mid-download.
      serving = 'stalled';
      g = await start(dir, 1000);
      expect(await until(g, (p) => p.state === 'ready', 5_000)).toMatchObject({ rows: ready.rows });
      expect(inUse()).toBe(named);
      expect(readdirSync(dir).filter((d) => d.startsWith('v-'))).toEqual([named]);
      sandbox.reset();
      expect(await ask(g, 12_345)).toMatchObject({ contribuyente: { fuente: 'PADRON' } });
      await until(g, (p) => p.importing);
      signalGroup(g.child, 'SIGKILL');
      expect(await groupGone(g.child, 5_000)).toBe(true);
      serving = 'whole';
      g = await start(dir, 600_000);
      expect(await until(g, (p) => p.state === 'ready', 5_000)).toMatchObject({ rows: ready.rows });
      // What the killed downloads left is gone too.
      expect(readdirSync(dir).sort()).toEqual(['changes', 'current', 'lock', named, 'webhooks', 'webhooks-published']);
      expect(await ask(g, 54_321)).toMatchObject({ contribuyente: { fuente: 'PADRON' } });
      expect(sandbox.callsTo('/ruc')).toHaveLength(0);
    } finally {
      serving = 'whole';
      await g.stop();
    }
  }, 120_000);

  it('a second gateway on the same PADRON_DIR keeps no register and says which gateway holds it; the first is untouched', async () => {
    const dir = join(root, 'shared');
    const a = await start(dir, 600_000);
    let b: SpawnedGateway | undefined;
    try {
      await until(a, (p) => p.state === 'ready');
      const named = readFileSync(join(dir, 'current'), 'utf8');
      b = await start(dir, 600_000);
      expect(await until(b, (p) => p.state === 'locked', 5_000)).toMatchObject({ lockedBy: `pid ${a.child.pid} on ${hostname()}` });
      sandbox.reset();
      // The second asks the service (which does not know the bench's RUCs); the first answers from its register.
      await ask(b, 7);
      expect(sandbox.callsTo('/ruc')).toHaveLength(1);
      expect(await ask(a, 7)).toMatchObject({ contribuyente: { fuente: 'PADRON' } });
      expect(sandbox.callsTo('/ruc')).toHaveLength(1);
      expect(readFileSync(join(dir, 'current'), 'utf8')).toBe(named);
      expect(readdirSync(dir).sort()).toEqual(['changes', 'current', 'lock', named, 'webhooks', 'webhooks-published']);
    } finally {
      await b?.stop();
      await a.stop();
    }
  }, 60_000);
});
