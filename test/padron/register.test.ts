import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { Register } from '../../src/padron/register.js';
import { PADRON_ZIP } from '../../src/padron/sources.js';
import { sandboxRegisters } from '../../src/sandbox/padron.js';

/** A mirror of the sandbox's five zips, the padrón sent in `parts` over `overMs`; `broken` serves bytes no zip reader takes. */
async function mirror(
  overMs: number,
  parts = 10,
  broken = false,
  lastModified?: string,
): Promise<{ url: URL; server: Server; since: (string | undefined)[] }> {
  const zips = await sandboxRegisters(new Date(Date.now() - 3_600_000));
  const since: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    const zip = zips.get((req.url ?? '').slice(1));
    if (!zip) return void res.writeHead(404).end();
    if (req.url!.endsWith(PADRON_ZIP)) since.push(req.headers['if-modified-since']);
    res.writeHead(200, { 'content-length': zip.length, ...(lastModified ? { 'last-modified': lastModified } : {}) });
    const body = broken ? Buffer.alloc(zip.length, 7) : zip;
    if (!req.url!.endsWith(PADRON_ZIP)) return void res.end(body);
    const size = Math.ceil(body.length / parts);
    let at = 0;
    const next = () => {
      res.write(body.subarray(at, (at += size)));
      if (at >= body.length) res.end();
      else setTimeout(next, overMs / parts);
    };
    next();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`), server, since };
}

function logged(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink) as Logger, lines };
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'register-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('what the register says while it imports', () => {
  it('logs a start line and progress every few seconds (bytes fetched, lines read), shows it on /health, and ends with importing false', async () => {
    const { url, server } = await mirror(1200);
    const { logger, lines } = logged();
    const register = new Register({
      source: url,
      dir: join(dir, 'a'),
      maxAgeMs: 86_400_000,
      refreshMs: 3_600_000,
      logger,
      progressEveryMs: 200,
    });
    try {
      const importing = register.refresh();
      await new Promise((r) => setTimeout(r, 500));
      expect(register.state()).toMatchObject({ importing: true, progress: { phase: 'fetching', bytesFetched: expect.any(Number) } });
      await importing;
    } finally {
      await register.close();
      server.close();
    }
    const messages = lines.map((l) => l['msg']);
    expect(messages[0]).toBe('padron: import started');
    const progress = lines.filter((l) => l['msg'] === 'padron: importing');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect((progress.at(-1)!['padron'] as { progress: { bytesFetched: number } }).progress.bytesFetched).toBeGreaterThan(0);
    const done = lines.find((l) => l['msg'] === 'padron: imported')!;
    expect(done['padron']).toMatchObject({ state: 'ready', importing: false });
    expect(done['padron']).not.toHaveProperty('progress');
  });

  it('says the service answers when an import fails with no register in use, not that one stays', async () => {
    const { url, server } = await mirror(0, 1, true);
    const { logger, lines } = logged();
    const register = new Register({ source: url, dir: join(dir, 'b'), maxAgeMs: 86_400_000, refreshMs: 3_600_000, logger });
    try {
      await register.refresh();
    } finally {
      await register.close();
      server.close();
    }
    const failed = lines.find((l) => String(l['msg']).startsWith('padron: import failed'))!;
    expect(failed['msg']).toBe('padron: import failed; there is no register yet, so the service answers');
    expect(failed['padron']).toMatchObject({ state: 'empty', importing: false, lastImport: { result: 'failed' } });
  });
});

describe('a register from the future', () => {
  it("is not believed: a mirror's Last-Modified of year 9999 dates it no later than now, and it is asked again as of then", async () => {
    const { url, server, since } = await mirror(0, 1, false, 'Fri, 31 Dec 9999 23:59:59 GMT');
    const { logger } = logged();
    const register = new Register({ source: url, dir: join(dir, 'future'), maxAgeMs: 86_400_000, refreshMs: 3_600_000, logger });
    try {
      await register.refresh();
      const { state, date, ageMs } = register.state();
      expect(state).toBe('ready');
      expect(Date.parse(date!)).toBeLessThanOrEqual(Date.now());
      expect(ageMs).toBeGreaterThanOrEqual(0);
      await register.refresh();
      // The next refresh asks as of a date that has been, so a fixed mirror is heard.
      expect(Date.parse(since.at(-1)!)).toBeLessThanOrEqual(Date.now());
    } finally {
      await register.close();
      server.close();
    }
  });
});

/** A zip of one entry, `text` in ISO-8859-1, dated `at`. */
async function zipOf(entry: string, text: string, at: Date): Promise<Buffer> {
  const file = new yazl.ZipFile();
  file.addBuffer(Buffer.from(text, 'latin1'), entry, { mtime: at });
  file.end();
  const chunks: Buffer[] = [];
  for await (const chunk of file.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('a stale register', () => {
  it('does not block a fresh one, however much smaller: it answers nothing anyway', async () => {
    let zips = await sandboxRegisters(new Date(Date.now() - 3_600_000));
    const server = createServer((req, res) => {
      const zip = zips.get((req.url ?? '').slice(1));
      res.writeHead(zip ? 200 : 404).end(zip);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const { logger } = logged();
    // An hour old and kept 30 minutes: stale once imported.
    const register = new Register({ source: url, dir: join(dir, 'stale'), maxAgeMs: 1_800_000, refreshMs: 3_600_000, logger });
    try {
      await register.refresh();
      expect(register.state()).toMatchObject({ state: 'stale' });
      const header =
        'RUC|NOMBRE O RAZÓN SOCIAL|ESTADO DEL CONTRIBUYENTE|CONDICIÓN DE DOMICILIO|UBIGEO|TIPO DE VÍA|NOMBRE DE VÍA|CÓDIGO DE ZONA|TIPO DE ZONA|NÚMERO|INTERIOR|LOTE|DEPARTAMENTO|MANZANA|KILÓMETRO|';
      const row = '20100123453|COMERCIAL ANDINA S.A.C.|ACTIVO|HABIDO|150131|AV.|JAVIER PRADO ESTE|-|-|1234|-|-|-|-|-|';
      zips = new Map(zips);
      zips.set(PADRON_ZIP, await zipOf('padron_reducido_ruc.txt', `${header}\n${row}\n`, new Date()));
      await register.refresh();
      expect(register.state()).toMatchObject({ state: 'ready', rows: 1 });
      expect(register.ruc('20100123453')?.nombre_o_razon_social).toBe('COMERCIAL ANDINA S.A.C.');
    } finally {
      await register.close();
      server.close();
    }
  });
});

describe('an older register (issue 52)', () => {
  it('is never imported over a newer one, whatever the mirror answers, with or without Last-Modified: the register never goes back', async () => {
    const header =
      'RUC|NOMBRE O RAZÓN SOCIAL|ESTADO DEL CONTRIBUYENTE|CONDICIÓN DE DOMICILIO|UBIGEO|TIPO DE VÍA|NOMBRE DE VÍA|CÓDIGO DE ZONA|TIPO DE ZONA|NÚMERO|INTERIOR|LOTE|DEPARTAMENTO|MANZANA|KILÓMETRO|';
    const row = (condicion: string) =>
      `20100123453|COMERCIAL ANDINA S.A.C.|ACTIVO|${condicion}|150131|AV.|JAVIER PRADO ESTE|-|-|1234|-|-|-|-|-|`;
    const newer = new Date(Date.now() - 3_600_000);
    const older = new Date(Date.now() - 2 * 86_400_000);
    let zips = await sandboxRegisters(newer);
    zips.set(PADRON_ZIP, await zipOf('padron_reducido_ruc.txt', `${header}\n${row('HABIDO')}\n`, newer));
    let modified: Date | undefined = newer;
    // A mirror that ignores If-Modified-Since: it sends what it holds, dated as it says.
    const server = createServer((req, res) => {
      const zip = zips.get((req.url ?? '').slice(1));
      res.writeHead(zip ? 200 : 404, modified ? { 'last-modified': modified.toUTCString() } : {}).end(zip);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const { logger, lines } = logged();
    const register = new Register({ source: url, dir: join(dir, 'older'), maxAgeMs: 7 * 86_400_000, refreshMs: 3_600_000, logger });
    try {
      await register.refresh();
      expect(register.ruc('20100123453')?.condicion).toBe('HABIDO');
      const inUse = register.state().date;
      // An older register, dated older by its header; then the same without the header, dated by its zip.
      zips = new Map(await sandboxRegisters(older));
      zips.set(PADRON_ZIP, await zipOf('padron_reducido_ruc.txt', `${header}\n${row('NO HABIDO')}\n`, older));
      for (const header of [older, undefined]) {
        modified = header;
        await register.refresh();
        expect(register.ruc('20100123453')?.condicion).toBe('HABIDO');
        expect(register.state().date).toBe(inUse);
      }
      expect(lines.filter((l) => /older than the one in use/.test(String(l['msg'])))).toHaveLength(2);
    } finally {
      await register.close();
      server.close();
    }
  });
});

/** Runs `fn` with `path` a tmpfs that `readOnly()` remounts read-only (root ignores a directory's mode, not a read-only mount). */
async function onTmpfs(path: string, fn: (readOnly: () => void) => Promise<void>): Promise<void> {
  mkdirSync(path, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', path]);
  try {
    await fn(() => execFileSync('mount', ['-o', 'remount,ro', path]));
  } finally {
    execFileSync('umount', ['-l', path]);
  }
}

describe('a read-only PADRON_DIR', () => {
  it('is read: the index on it answers, and /health says ready; an import says why it cannot write', async () => {
    const { url, server } = await mirror(0);
    const path = join(dir, 'ro');
    try {
      await onTmpfs(path, async (readOnly) => {
        const first = new Register({ source: url, dir: path, maxAgeMs: 86_400_000, refreshMs: 3_600_000, logger: logged().logger });
        await first.refresh();
        await first.close();
        readOnly();
        const { logger, lines } = logged();
        const register = new Register({ source: url, dir: path, maxAgeMs: 86_400_000, refreshMs: 3_600_000, logger });
        try {
          await register.start();
          expect(register.state()).toMatchObject({ state: 'ready' });
          expect(register.ruc('20100123453')?.fuente).toBe('PADRON');
          await register.refresh();
          expect(register.state()).toMatchObject({
            state: 'ready',
            lastImport: { result: 'failed', error: expect.stringMatching(/read-only/) },
          });
          expect(JSON.stringify(lines)).not.toMatch(/ENOENT/);
        } finally {
          await register.close();
        }
      });
    } finally {
      server.close();
    }
  });
});

describe('an index whose reads fail', () => {
  it('is not reported ready: /health says failing, the service answers, and a fresh import replaces it', async () => {
    const { url, server, since } = await mirror(0);
    const { logger } = logged();
    const path = join(dir, 'failing');
    const register = new Register({ source: url, dir: path, maxAgeMs: 86_400_000, refreshMs: 3_600_000, logger });
    try {
      await register.refresh();
      expect(register.ruc('20100123453')?.fuente).toBe('PADRON');
      // The disk goes bad under the index: every page but LMDB's two meta pages is zeroed, in place.
      const data = join(path, readFileSync(join(path, 'current'), 'utf8'), 'data.mdb');
      const size = statSync(data).size;
      const fd = openSync(data, 'r+');
      writeSync(fd, Buffer.alloc(size - 2 * 4096), 0, size - 2 * 4096, 2 * 4096);
      closeSync(fd);
      expect(register.ruc('20100123453')).toBeUndefined();
      expect(register.state()).toMatchObject({ state: 'failing' });
      await register.refresh();
      // Asked whole: a 304 would keep the failing index.
      expect(since).toEqual([undefined, undefined]);
      expect(register.state()).toMatchObject({ state: 'ready', lastImport: { result: 'imported' } });
      expect(register.ruc('20100123453')?.fuente).toBe('PADRON');
    } finally {
      await register.close();
      server.close();
    }
  });
});

describe('one PADRON_DIR, one gateway', () => {
  it('a second gateway on a directory in use says which holds it, keeps no register and touches nothing; it takes the directory once the first stops', async () => {
    const { url, server } = await mirror(0);
    const path = join(dir, 'shared');
    const first = new Register({ source: url, dir: path, maxAgeMs: 86_400_000, refreshMs: 3_600_000, logger: logged().logger });
    const { logger, lines } = logged();
    const second = new Register({ source: url, dir: path, maxAgeMs: 86_400_000, refreshMs: 3_600_000, logger, lockRetryMs: 200 });
    try {
      await first.start();
      await first.refresh();
      const named = readFileSync(join(path, 'current'), 'utf8');
      await second.start();
      expect(second.state()).toMatchObject({ state: 'locked', lockedBy: `pid ${process.pid} on ${hostname()}` });
      expect(lines.find((l) => l['level'] === 50)?.['msg']).toMatch(
        /is used by the gateway with pid \d+ on .*Give each instance a PADRON_DIR of its own/,
      );
      await second.refresh();
      expect(second.state()).toMatchObject({ state: 'locked', lastImport: { result: 'failed' } });
      expect(second.ruc('20100123453')).toBeUndefined();
      // The first's index is whole and answers.
      expect(readFileSync(join(path, 'current'), 'utf8')).toBe(named);
      expect(first.ruc('20100123453')?.fuente).toBe('PADRON');
      await first.close();
      const until = Date.now() + 5_000;
      while (second.state().state !== 'ready' && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(second.state()).toMatchObject({ state: 'ready' });
      expect(second.ruc('20100123453')?.fuente).toBe('PADRON');
    } finally {
      await first.close();
      await second.close();
      server.close();
    }
  });

  it("takes over at once a lock left by a gateway that was killed: this host's, its process gone", async () => {
    const { url, server } = await mirror(0);
    const path = join(dir, 'killed');
    mkdirSync(path, { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(join(path, 'lock'), JSON.stringify({ host: hostname(), pid: dead, id: 'gone' }));
    const register = new Register({ source: url, dir: path, maxAgeMs: 86_400_000, refreshMs: 3_600_000, logger: logged().logger });
    try {
      await register.start();
      await register.refresh();
      expect(register.state()).toMatchObject({ state: 'ready' });
      expect(JSON.parse(readFileSync(join(path, 'lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    } finally {
      await register.close();
      server.close();
    }
    expect(existsSync(join(path, 'lock'))).toBe(false);
  });
});
