import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { print } from 'graphql';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { ValidarComprobantesDocument } from '../../operations/generated/graphql.js';
import { postBodyOnce, postOnce, readmeExample, receipts, spawnGateway, type OnceAnswer, type SpawnedGateway } from '../helpers.js';

/** README's worked query 1, word for word, and the answer it shows. */
const QUERY_1 = readmeExample('1. A taxpayer');
const EJEMPLO = QUERY_1.sent.query;

type Answer = OnceAnswer['body'];
const once = async (url: string, query: string, variables: Record<string, unknown> = {}) => (await postOnce(url, query, variables)).body;

/** Stops a gateway that started (a beforeAll that failed leaves none; test/setup.ts sweeps up anyway). */
const stop = async (gateway: SpawnedGateway | undefined) => void (await gateway?.stop());

const cost = (answer: Answer) => answer.extensions?.cost;
const total = (answers: Answer[], field: string) => answers.reduce((sum, a) => sum + (cost(a)?.[field] ?? 0), 0);
const VALIDAR = print(ValidarComprobantesDocument);

describe('`npm start` with default settings (one process, the built-in sandbox)', () => {
  let gateway: SpawnedGateway;
  /** Calls the built-in sandbox has received, from its own stats route. */
  let sandboxCalls: () => Promise<number>;

  beforeAll(async () => {
    gateway = await spawnGateway({});
    const sandboxUrl = /from (http:\/\/127\.0\.0\.1:\d+)/.exec(gateway.output())![1]!;
    sandboxCalls = async () => ((await (await fetch(`${sandboxUrl}/__sandbox/stats`)).json()) as { calls: number }).calls;
  });
  afterAll(() => stop(gateway));

  it('answers README query 1 as the README shows it, and spends its 5 queries once: asked again, on new connections, all four lookups come from the cache', async () => {
    const variables = QUERY_1.sent.variables;
    const first = await once(gateway.url, EJEMPLO, variables);
    expect(first.errors).toBeUndefined();
    const at = (first.data?.['contribuyente'] as { consultadoEn: string }).consultadoEn;
    expect(first).toEqual(JSON.parse(JSON.stringify(QUERY_1.shown).replace(/"consultadoEn":"[^"]*"/, `"consultadoEn":"${at}"`)));
    expect(cost(first)).toEqual({ estimated: 5, limit: 100, queries: 5, upstreamCalls: 4, cacheHits: 0, staleHits: 0 });
    const again = await Promise.all(Array.from({ length: 6 }, () => once(gateway.url, EJEMPLO, variables)));
    for (const a of again) {
      expect(a.data).toEqual(first.data);
      expect(cost(a)).toEqual({ estimated: 5, limit: 100, queries: 0, upstreamCalls: 0, cacheHits: 4, staleHits: 0 });
    }
    expect(await sandboxCalls()).toBe(4);
  });

  it("answers README's query 3 exactly as the README shows it, locations and all", async () => {
    const { sent, shown, token } = readmeExample('3. Errors with their codes.');
    expect((await postBodyOnce(gateway.url, sent, { token })).body).toEqual(shown);
  });

  it('makes one call for two identical lookups in a row and for 40 at once, on separate connections', async () => {
    const before = await sandboxCalls();
    const query = 'query($r: String!) { contribuyente(ruc: $r) { ruc } }';
    await once(gateway.url, query, { r: '20501234568' });
    await once(gateway.url, query, { r: '20501234568' });
    expect((await sandboxCalls()) - before).toBe(1);
    const atOnce = await Promise.all(Array.from({ length: 40 }, () => once(gateway.url, query, { r: '20602345671' })));
    expect(atOnce.every((a) => (a.data?.['contribuyente'] as { ruc: string }).ruc === '20602345671')).toBe(true);
    expect((await sandboxCalls()) - before).toBe(2);
    expect(total(atOnce, 'upstreamCalls')).toBe(1);
    expect(total(atOnce, 'cacheHits')).toBe(39);
  });

  it("answers README's query 2 as the README shows it: validated through the sandbox's SUNAT, for no plan query", async () => {
    const { sent, shown, token } = readmeExample('2. A batch validation');
    expect((await postBodyOnce(gateway.url, sent, { token })).body).toEqual(shown);
  });

  it('validates 250 receipts, past the default cost limit were they paid, through the sandbox’s SUNAT for free', async () => {
    const before = await sandboxCalls();
    const answer = await once(gateway.url, VALIDAR, { comprobantes: receipts(250) });
    expect(answer.errors).toBeUndefined();
    expect((answer.data?.['validarComprobantes'] as { cantidadDeComprobantes: number }).cantidadDeComprobantes).toBe(250);
    expect(cost(answer)).toMatchObject({ estimated: 0, queries: 0, upstreamCalls: 0 });
    // One call of SUNAT's a receipt (and its token, when not yet asked).
    expect((await sandboxCalls()) - before).toBeGreaterThanOrEqual(250);
  });

  it('knows a registered hash: the hash alone works on every new connection', async () => {
    const query = 'query Registrada($r: String!) { contribuyente(ruc: $r) { ruc } }';
    const extensions = { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') } };
    const variables = { r: '20100123453' };
    expect((await postBodyOnce(gateway.url, { query, extensions, variables })).body.data).toEqual({
      contribuyente: { ruc: '20100123453' },
    });
    const alone = await Promise.all(Array.from({ length: 8 }, () => postBodyOnce(gateway.url, { extensions, variables })));
    for (const a of alone) expect(a.body.data).toEqual({ contribuyente: { ruc: '20100123453' } });
  });

  it('sends a deferred detail in a later part of a multipart answer', async () => {
    const res = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', authorization: 'Bearer sandbox-pro' },
      body: JSON.stringify({ query: '{ contribuyente(ruc: "20501234568") { ruc ... @defer { detalle { ruc } } } }' }),
    });
    const parts = [...(await res.text()).matchAll(/^(\{.*\})\r?$/gm)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);
    expect(parts[0]).toMatchObject({ data: { contribuyente: { ruc: '20501234568' } }, hasNext: true });
    expect(parts.at(-1)).toMatchObject({ hasNext: false, incremental: [{ data: { detalle: { ruc: '20501234568' } } }] });
  });
});

describe('`npm start` with MAX_OPERATION_COST=1000: a batch past 100 receipts', () => {
  let sandbox: Sandbox;
  let gateway: SpawnedGateway;
  beforeAll(async () => {
    sandbox = await startSandbox();
    gateway = await spawnGateway({ UPSTREAM_URL: sandbox.url, MAX_OPERATION_COST: '1000' });
  });
  afterAll(async () => {
    await stop(gateway);
    await sandbox?.close();
  });

  it('goes upstream in calls of at most 100 and answers every receipt in input order', async () => {
    const answer = await once(gateway.url, VALIDAR, { comprobantes: receipts(250) });
    expect(answer.errors).toBeUndefined();
    const validated = answer.data?.['validarComprobantes'] as {
      cantidadDeComprobantes: number;
      comprobantes: { numeroDocumento: string }[];
    };
    expect(validated.comprobantes.map((c) => c.numeroDocumento)).toEqual(receipts(250).map((r) => r.numeroDocumento));
    expect(validated.cantidadDeComprobantes).toBe(250);
    const calls = sandbox.callsTo('/validacion-multiple-cpe').map((c) => (c.body as { comprobantes: unknown[] }).comprobantes.length);
    expect(calls.sort()).toEqual([100, 100, 50]);
    expect(cost(answer)).toMatchObject({ estimated: 250, queries: 250, upstreamCalls: 3 });
  });
});

describe('`npm start` with default settings and TRUSTED_DOCUMENTS', () => {
  let gateway: SpawnedGateway;
  beforeAll(async () => {
    gateway = await spawnGateway({ TRUSTED_DOCUMENTS: 'operations/generated/persisted-documents.json' });
  });
  afterAll(() => stop(gateway));

  it('runs a manifest document by documentId, and refuses any other', async () => {
    const manifest = JSON.parse(readFileSync('operations/generated/persisted-documents.json', 'utf8')) as Record<string, string>;
    const [documentId] = Object.entries(manifest).find(([, doc]) => doc.includes('query Contribuyente('))!;
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => postBodyOnce(gateway.url, { documentId, variables: { ruc: '20100123453' } })),
    );
    for (const a of answers) expect(a.body.data).toMatchObject({ contribuyente: { ruc: '20100123453' } });
    const refused = await postOnce(gateway.url, '{ contribuyente(ruc: "20100123453") { ruc } }');
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'DOCUMENT_NOT_TRUSTED' });
  });
});

describe('`npm start` with PADRON=sandbox: the sandbox’s own registers, in SUNAT’s format', () => {
  let gateway: SpawnedGateway | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'padron-start-'));
  afterAll(async () => {
    await stop(gateway);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a taxpayer with fuente PADRON within seconds of the start, for no query and no call', async () => {
    gateway = await spawnGateway({ PADRON: 'sandbox', PADRON_DIR: dir });
    const sandboxUrl = /from (http:\/\/127\.0\.0\.1:\d+)/.exec(gateway.output())![1]!;
    const calls = async () => ((await (await fetch(`${sandboxUrl}/__sandbox/stats`)).json()) as { calls: number }).calls;
    const deadline = Date.now() + 10_000;
    let answer: Answer;
    do {
      answer = await once(gateway.url, '{ contribuyente(ruc: "20100123453") { nombreORazonSocial fuente } }');
    } while ((answer.data?.['contribuyente'] as { fuente?: string } | undefined)?.fuente !== 'PADRON' && Date.now() < deadline);
    expect(answer.data).toEqual({ contribuyente: { nombreORazonSocial: 'COMERCIAL ANDINA S.A.C.', fuente: 'PADRON' } });
    const before = await calls();
    const again = await once(gateway.url, '{ contribuyente(ruc: "20501234568") { fuente } }');
    expect(again.data).toEqual({ contribuyente: { fuente: 'PADRON' } });
    expect(cost(again)).toMatchObject({ queries: 0, upstreamCalls: 0, localHits: 1 });
    expect(await calls()).toBe(before);
  });

  it("runs README's query 6 as written: the sandbox's receiver subscribed, its next day asked, a signed delivery within a minute", async () => {
    const sandboxUrl = /from (http:\/\/127\.0\.0\.1:\d+)/.exec(gateway!.output())![1]!;
    expect(gateway!.output()).toContain(`${sandboxUrl}/__sandbox/padron/siguiente-dia`);
    // The README's commands, its sandbox port 4010 as this sandbox listens (another test's gateway may hold 4010).
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('**6. Told when a supplier'));
    const asWritten = (text: string) => text.replaceAll('http://127.0.0.1:4010', sandboxUrl);
    const sent = JSON.parse(asWritten(/-d '(\{.*\})'/.exec(section)![1]!)) as { query: string };
    const nextDayUrl = asWritten(/curl -s -X POST (\S+)/.exec(section)![1]!);
    const shown = JSON.parse(asWritten(/```json\n([\s\S]*?)\n```/.exec(section)![1]!)) as {
      data: { crearSuscripcion: { secreto: string } };
    };
    const created = await once(gateway!.url, sent.query);
    const { secreto } = (created.data as { crearSuscripcion: { secreto: string } }).crearSuscripcion;
    expect(secreto).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    shown.data.crearSuscripcion.secreto = secreto;
    expect(created).toEqual(shown);
    const subs = await once(gateway!.url, '{ suscripciones { id } }');
    const suscripcion = (subs.data as { suscripciones: { id: string }[] }).suscripciones[0]!;
    const asked = Date.now();
    const nextDay = await fetch(nextDayUrl, { method: 'POST' });
    expect(((await nextDay.json()) as { cambios: Record<string, string> }).cambios).toMatchObject({ CONDICION: '20100123453' });
    while (!gateway!.output().includes('sandbox receiver: a signed delivery')) {
      if (Date.now() - asked > 60_000) throw new Error(`no delivery within a minute: ${gateway!.output().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const [received] = (await (await fetch(`${sandboxUrl}/__sandbox/webhooks`)).json()) as {
      headers: Record<string, string>;
      body: string;
    }[];
    const event = new Webhook(secreto).verify(received!.body, received!.headers) as { data: { suscripcion: string; cambios: unknown[] } };
    expect(event.data.suscripcion).toBe(suscripcion.id);
    // The types the README asks for: the day's AGENTE_DE_RETENCION change is not among them.
    expect(event.data.cambios).toEqual([{ ruc: '20100123453', tipo: 'CONDICION', antes: 'HABIDO', despues: 'NO HABIDO' }]);
    expect(gateway!.output()).not.toContain(secreto.slice(6));
  }, 90_000);
});
