import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { spawnTracked } from './processes.js';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError, EnvSchema, loadConfig, withUpstream } from '../src/config.js';

describe('loadConfig', () => {
  it('applies the defaults the README states, and derives the rest from them', () => {
    const config = loadConfig({});
    expect(config.port).toBe(4000);
    expect(config.upstream).toMatchObject({ baseUrl: undefined, timeoutMs: 10_000, connections: 1024 });
    // Derived: a lease outlives a lookup's deadline by a second.
    expect(config.cache.leaseMs).toBe(config.upstream.deadlineMs + 1000);
    expect(config.corsOrigins).toBe('*');
  });

  it("is documented in docs/configuration.md's table: the same variables, each with the schema's default", () => {
    const table = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    const rows = new Map([...table.matchAll(/^\| `([A-Z0-9_]+)` \|.*\| ([^|]+) \|$/gm)].map((m) => [m[1]!, m[2]!.trim()] as const));
    const properties = z.toJSONSchema(EnvSchema, { io: 'input', unrepresentable: 'any' }).properties as Record<
      string,
      { default?: unknown }
    >;
    expect([...rows.keys()].sort()).toEqual(Object.keys(properties).sort());
    for (const [name, { default: value }] of Object.entries(properties)) {
      const documented = rows.get(name)!;
      if (value === undefined) expect(documented, name).not.toMatch(/^`/);
      else expect(documented, name).toMatch(new RegExp(`^\`${String(value).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\``));
    }
    // The README's shorter table says the same of the variables it lists.
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
    for (const m of section.matchAll(/^\| `([A-Z0-9_]+)` \|.*\| ([^|]+) \|$/gm)) expect(m[2]!.trim(), m[1]).toBe(rows.get(m[1]!));
  });

  it('is frozen', () => {
    expect(Object.isFrozen(loadConfig({}))).toBe(true);
  });

  it('treats blank variables as unset', () => {
    expect(loadConfig({ UPSTREAM_URL: '', PORT: ' ' }).port).toBe(4000);
  });

  it('names every bad variable at once', () => {
    expect(() => loadConfig({ PORT: 'x', UPSTREAM_TIMEOUT_MS: '-1', UPSTREAM_URL: 'ftp://x' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'x', UPSTREAM_TIMEOUT_MS: '-1', UPSTREAM_URL: 'ftp://x' });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain('PORT');
      expect(message).toContain('UPSTREAM_TIMEOUT_MS');
      expect(message).toContain('UPSTREAM_URL');
    }
  });

  it('says each bad variable once, in Spanish as its own messages are, with the bound it breaks', () => {
    expect(() => loadConfig({ MAX_DEPTH: '-1' })).toThrow(ConfigError);
    const message = (() => {
      try {
        return loadConfig({ MAX_DEPTH: '-1' }) && '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message.split('\n')).toEqual(['Configuración inválida:', expect.stringMatching(/^ {2}MAX_DEPTH: Demasiado pequeño: .*>=1$/)]);
  });

  it('says what was given where a number was expected, never NaN', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow('PORT: se esperaba un número, se dio "abc"');
    expect(() => loadConfig({ PORT: 'abc' })).not.toThrow(/NaN/);
  });

  it('takes WORKERS=1 only, and says how to scale out for any other value', () => {
    expect(() => loadConfig({ WORKERS: '1' })).not.toThrow();
    for (const workers of ['2', '0', '64', 'auto']) {
      expect(() => loadConfig({ WORKERS: workers }), workers).toThrow(/WORKERS: .*varias instancias con el mismo REDIS_URL/);
    }
  });

  it('refuses production without UPSTREAM_URL and accepts it with one', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/NODE_ENV=production requiere UPSTREAM_URL/);
    expect(loadConfig({ NODE_ENV: 'production', UPSTREAM_URL: 'https://api.apiperu.dev' }).upstream.baseUrl).toBe(
      'https://api.apiperu.dev',
    );
  });
});

describe('PADRON', () => {
  it('is off by default; takes sunat, sandbox (only with the built-in sandbox) or a mirror’s http(s) URL, and names any other value', () => {
    expect(loadConfig({}).padron).toBeUndefined();
    expect(loadConfig({ PADRON: 'sunat' }).padron).toEqual({
      source: 'sunat',
      dir: './data/padron',
      maxAgeMs: 172_800_000,
      refreshMs: 86_400_000,
      searchThreads: availableParallelism(),
      changesDays: 90,
    });
    expect(loadConfig({ PADRON: 'sunat', PADRON_SEARCH_THREADS: '0' }).padron?.searchThreads).toBe(0);
    expect(loadConfig({ PADRON: 'sunat', PADRON_CHANGES_DAYS: '7' }).padron?.changesDays).toBe(7);
    expect(() => loadConfig({ PADRON: 'sunat', PADRON_CHANGES_DAYS: '0' })).toThrow(/PADRON_CHANGES_DAYS/);
    expect(loadConfig({ PADRON: 'https://espejo.example.pe/sunat/' }).padron?.source).toBe('https://espejo.example.pe/sunat/');
    expect(() => loadConfig({ PADRON: 'ftp://espejo.example.pe/' })).toThrow(/PADRON: PADRON debe ser off, sunat, sandbox o una URL/);
    expect(() => loadConfig({ PADRON: 'sandbox', UPSTREAM_URL: 'https://api.apiperu.dev' })).toThrow(
      /PADRON: PADRON=sandbox solo con el sandbox integrado/,
    );
    expect(() => loadConfig({ PADRON: 'sunat', PADRON_MAX_AGE_MS: '0' })).toThrow(/PADRON_MAX_AGE_MS/);
    const sandbox = withUpstream(loadConfig({ PADRON: 'sandbox' }), 'http://127.0.0.1:4010');
    expect(sandbox.padron?.source).toBe('http://127.0.0.1:4010/__sandbox/padron/');
  });
});

describe('SUNAT_API_*', () => {
  it('points at the built-in sandbox without UPSTREAM_URL and at SUNAT with it, and takes the gateway’s credentials all together', () => {
    const sandbox = withUpstream(loadConfig({}), 'http://127.0.0.1:4010');
    // npm start validates through the sandbox's SUNAT with its sample credentials; other credentials set are kept.
    expect(sandbox.sunat).toMatchObject({
      apiUrl: 'http://127.0.0.1:4010',
      authUrl: 'http://127.0.0.1:4010',
      credentials: { rucEmpresa: '20100123453', clientId: 'sandbox-client-id', clientSecret: 'sandbox-client-secret' },
    });
    expect(loadConfig({}).sunat.credentials).toBeUndefined();
    expect(loadConfig({ UPSTREAM_URL: 'https://api.apiperu.dev' }).sunat).toMatchObject({
      apiUrl: 'https://api.sunat.gob.pe',
      authUrl: 'https://api-seguridad.sunat.gob.pe',
      concurrency: 5,
      timeoutMs: 10_000,
      fallback: 'off',
    });
    const dir = mkdtempSync(join(tmpdir(), 'gw-sunat-'));
    writeFileSync(join(dir, 'secret'), 'from-a-file\n');
    const own = loadConfig({ SUNAT_API_CLIENT_ID: 'app', SUNAT_API_CLIENT_SECRET_FILE: join(dir, 'secret'), SUNAT_API_RUC: '20100123453' });
    expect(own.sunat.credentials).toEqual({ rucEmpresa: '20100123453', clientId: 'app', clientSecret: 'from-a-file' });
    expect(() => loadConfig({ SUNAT_API_CLIENT_ID: 'app' })).toThrow(/SUNAT_API_CLIENT_ID: las credenciales de la API de SUNAT van juntas/);
    expect(() => loadConfig({ SUNAT_API_CLIENT_ID: 'a', SUNAT_API_CLIENT_SECRET: 's', SUNAT_API_RUC: '12345678901' })).toThrow(
      /SUNAT_API_RUC/,
    );
    expect(() => loadConfig({ SUNAT_API_FALLBACK: 'siempre' })).toThrow(/SUNAT_API_FALLBACK/);
  });
});

describe.concurrent('npm start on a HOST it cannot listen on', () => {
  it.each([
    ['does not resolve', 'no.such.host.invalid', 68, 'HOST no.such.host.invalid does not resolve (ENOTFOUND)'],
    ['is not an address of this machine', '192.0.2.1', 69, 'HOST 192.0.2.1 is not an address of this machine (EADDRNOTAVAIL)'],
  ])('that %s: exits with one line that says so, and no stack trace', async (_what, host, exitCode, said) => {
    const child = spawnTracked(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { PATH: process.env['PATH'], PORT: '0', HOST: host },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (c) => (output += c));
    child.stderr!.on('data', (c) => (output += c));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(exitCode);
    expect(output).toContain(`Cannot listen on ${host}:0: ${said}`);
    expect(output).not.toMatch(/\n\s+at /);
  });
});

describe.concurrent('npm start with a configuration it refuses', () => {
  /** Starts src/main.ts with `env`, and resolves with its exit code and everything it wrote. */
  async function refused(env: Record<string, string>) {
    const child = spawnTracked(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { PATH: process.env['PATH'], PORT: '0', HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (c) => (output += c));
    child.stderr!.on('data', (c) => (output += c));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    return { code, output };
  }

  it('exits 1 with a clear message and never listens, in production without UPSTREAM_URL', async () => {
    const { code, output } = await refused({ NODE_ENV: 'production' });
    expect(code).toBe(1);
    expect(output).toContain('NODE_ENV=production requiere UPSTREAM_URL');
    expect(output).not.toContain('gateway ready');
    expect(output).not.toContain('SANDBOX');
  });

  it('exits 1 with WORKERS=4, saying to run several instances over one REDIS_URL, whatever else is set', async () => {
    const { code, output } = await refused({ WORKERS: '4', REDIS_URL: 'redis://127.0.0.1:9', CACHE: 'off' });
    expect(code).toBe(1);
    expect(output).toMatch(/^Configuración inválida:\n {2}WORKERS: .*varias instancias con el mismo REDIS_URL/);
    expect(output).not.toContain('gateway ready');
    expect(output).not.toMatch(/\n\s+at /);
  });
});
