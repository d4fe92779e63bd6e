import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContribuyenteDocument, LicenciaDocument, ValidarComprobantesTextoDocument } from '../../operations/generated/graphql.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { startStack, type Stack } from '../helpers.js';

const SOL_KEY = 'clave-SOL-muy-secreta-123';
const lines = (stack: Stack) => stack.logs.map((l) => JSON.parse(l) as Record<string, unknown>);

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { LOG_LEVEL: 'trace', UPSTREAM_RETRIES: '1' } });
});
afterAll(() => stack.close());

describe('structured logs', () => {
  it('write one line per operation: request id, operation, status, duration, upstream calls, error codes', async () => {
    stack.logs.length = 0;
    const { headers } = await stack.gql(
      `query Mixta { a: contribuyente(ruc: "20100123453") { ruc detalle { ruc } } b: contribuyente(ruc: "${TRIGGERS.notFound.ruc}") { ruc } }`,
      undefined,
      { headers: { 'x-request-id': 'req-abc.123' } },
    );
    expect(headers.get('x-request-id')).toBe('req-abc.123');
    const ops = lines(stack).filter((l) => l['msg'] === 'operation');
    expect(ops).toHaveLength(1);
    expect(ops[0]).toMatchObject({
      reqId: 'req-abc.123',
      operation: 'Mixta',
      status: 200,
      upstreamCalls: 3,
      queries: 3,
      cacheHits: 0,
      estimatedCost: 3,
      errors: ['DOCUMENT_NOT_FOUND'],
    });
    expect(typeof ops[0]!['durationMs']).toBe('number');
  });

  it('log each upstream call at debug level with the request id', async () => {
    stack.logs.length = 0;
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { headers: { 'x-request-id': 'req-debug' } });
    const calls = lines(stack).filter((l) => l['msg'] === 'upstream call');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      level: 20,
      reqId: 'req-debug',
      upstream: { path: '/ruc', status: 200, attempt: 1, origin: 'primary' },
    });
  });

  it('make up a request id when the caller sends none, or an unsafe one', async () => {
    const { headers } = await stack.gql(
      ContribuyenteDocument,
      { ruc: '20100123453' },
      { headers: { 'x-request-id': 'bad id\twith spaces' } },
    );
    expect(headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('never contain a token or a SOL key, at any level, whatever happens', async () => {
    stack.logs.length = 0;
    const token = 'sandbox-pro';
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token });
    await stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.unavailable.ruc }, { token });
    await stack.gql(LicenciaDocument, { numLicencia: 'Q46779354' }, { token: 'sandbox-free' });
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: 'a-token-the-upstream-refuses' });
    await stack.gql(ValidarComprobantesTextoDocument, {
      comprobantes: ['20100123453|01|F001|1532|2026-10-01|1180.00'],
      credencialesSol: { rucEmpresa: '20100123453', usuario: 'MODDATOS', clave: SOL_KEY },
    });
    await stack.gql(ValidarComprobantesTextoDocument, {
      comprobantes: ['bad line'],
      credencialesSol: { rucEmpresa: '1', usuario: '', clave: SOL_KEY },
    });
    await stack.gql('{ contribuyente(ruc: ', undefined, { token });
    const all = stack.logs.join('');
    expect(lines(stack).some((l) => (l['level'] as number) <= 20)).toBe(true); // debug lines were written
    for (const secret of ['sandbox-pro', 'sandbox-free', 'a-token-the-upstream-refuses', SOL_KEY]) {
      expect(all, secret).not.toContain(secret);
    }
  });

  it('are censored by the logger itself should a header or credencialesSol ever be logged', () => {
    const out: string[] = [];
    const logger = createLogger({ logLevel: 'trace' }, new Writable({ write: (c, _e, done) => (out.push(String(c)), done()) }));
    logger.info({ headers: { authorization: 'Bearer s3cr3t' } }, 'a');
    logger.info({ req: { headers: { authorization: 'Bearer s3cr3t' } } }, 'b');
    logger.info({ variables: { credencialesSol: { clave: 's3cr3t' } } }, 'c');
    logger.info({ input: { credencialesSol: { clave: 's3cr3t' }, clave_usuario: 's3cr3t' } }, 'd');
    logger.info({ authorization: 'Bearer s3cr3t', token: 's3cr3t' }, 'e');
    expect(out).toHaveLength(5);
    expect(out.join('')).not.toContain('s3cr3t');
    expect(out.join('')).toContain('[redacted]');
  });
});

describe('what is logged as a problem', () => {
  let quiet: Stack;
  beforeAll(async () => {
    // LOG_LEVEL's default, as users run it.
    quiet = await startStack({ env: { LOG_LEVEL: 'info' } });
  });
  afterAll(() => quiet.close());

  it('answers the contract gives (not found, a plan refusal, throttling, bad input, a rejected token) are no warning and no stack', async () => {
    quiet.logs.length = 0;
    const refusals = [
      `{ contribuyente(ruc: "${TRIGGERS.notFound.ruc}") { ruc } }`,
      `{ contribuyente(ruc: "${TRIGGERS.notFoundWithoutCode.ruc}") { ruc } }`,
      `{ contribuyente(ruc: "${TRIGGERS.rejected.ruc}") { ruc } }`,
      '{ contribuyente(ruc: "12345678901") { ruc } }',
    ];
    for (const query of refusals) await quiet.gql(query, undefined, { token: 'sandbox-pro' });
    // Throttling holds its token back for 30 s: a token of its own.
    await quiet.gql(`{ contribuyente(ruc: "${TRIGGERS.throttled.ruc}") { ruc } }`, undefined, { token: 'sandbox-low' });
    await quiet.gql('{ licencia(numLicencia: "Q46779354") { nombres } }', undefined, { token: 'sandbox-free' });
    await quiet.gql('{ contribuyente(ruc: "20100123453") { ruc } }', undefined, { token: 'made-up-token' });
    await new Promise((r) => setTimeout(r, 100)); // the log is written asynchronously
    const logged = lines(quiet);
    expect(logged.filter((l) => l['msg'] === 'operation')).toHaveLength(7);
    expect(logged.filter((l) => (l['level'] as number) >= 40).map((l) => l['msg'])).toEqual([]);
    expect(quiet.logs.join('')).not.toContain('"stack"');
  });

  it('a fault of the upstream is a warning without a stack; only a fault of the gateway is an error', async () => {
    quiet.logs.length = 0;
    await quiet.gql(`{ contribuyente(ruc: "${TRIGGERS.badRecord.ruc}") { ruc } }`);
    await new Promise((r) => setTimeout(r, 100)); // the log is written asynchronously
    const logged = lines(quiet);
    expect(logged.filter((l) => l['level'] === 40).map((l) => l['msg'])).toContain('upstream failure');
    expect(logged.filter((l) => (l['level'] as number) >= 50)).toEqual([]);
    expect(quiet.logs.join('')).not.toContain('"stack"');
  });
});
