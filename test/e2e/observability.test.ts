import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckoutDocument, ContribuyenteDocument, ValidarComprobantesTextoDocument } from '../../operations/generated/graphql.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { Tracing } from '../../src/telemetry/tracing.js';
import { RECEIPT, startRedis, startStack, type Stack } from '../helpers.js';
import { ValidarComprobantesDocument } from '../../operations/generated/graphql.js';

/** The value of one sample in Prometheus text, or 0 when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.lastIndexOf('}')).split(',');
    if (wanted.every((w) => inside.includes(w)) && inside.length === wanted.length) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('metrics at /metrics', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { CACHE: 'on', UPSTREAM_RETRIES: '1', BREAKER_MIN_CALLS: '1000000', TIPO_DE_CAMBIO: 'servicio' } });
  });
  afterAll(() => stack.close());

  it('count operations, upstream calls, plan queries, cache results, retries and error codes after real traffic', async () => {
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }); // from the cache
    await stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.unavailable.ruc }); // 503, retried once
    await stack.gql(ContribuyenteDocument, { ruc: '123' }); // INVALID_INPUT, no call
    await stack.gql(ValidarComprobantesDocument, { comprobantes: [RECEIPT, RECEIPT, RECEIPT] });
    await stack.gql('{ contribuyente(ruc: '); // refused: does not parse
    await stack.gql('query Ruc_20100123453 { __typename }');
    await stack.gql('query Nombre_con_un_token_sandbox_pro_dentro_que_es_demasiado_largo_para_ser_una_etiqueta_razonable { __typename }');

    const res = await fetch(`${stack.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();

    expect(sample(text, 'gateway_operations_total', { operation: 'Contribuyente', outcome: 'ok' })).toBe(2);
    expect(sample(text, 'gateway_operations_total', { operation: 'Contribuyente', outcome: 'error' })).toBe(2);
    expect(sample(text, 'gateway_operations_total', { operation: 'ValidarComprobantes', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'gateway_operations_total', { operation: 'anonymous', outcome: 'rejected' })).toBe(1);
    expect(sample(text, 'gateway_operation_duration_seconds_count', { operation: 'Contribuyente', outcome: 'ok' })).toBe(2);
    expect(sample(text, 'gateway_upstream_calls_total', { path: '/ruc', status: '200', outcome: 'ok', origin: 'primary' })).toBe(1);
    expect(sample(text, 'gateway_upstream_calls_total', { path: '/ruc', status: '503', outcome: 'error', origin: 'primary' })).toBe(2);
    expect(
      sample(text, 'gateway_upstream_calls_total', { path: '/validacion-multiple-cpe', status: '200', outcome: 'ok', origin: 'primary' }),
    ).toBe(1);
    expect(sample(text, 'gateway_upstream_call_duration_seconds_count', { path: '/ruc', outcome: 'error' })).toBe(2);
    expect(sample(text, 'gateway_upstream_retries_total', { path: '/ruc' })).toBe(1);
    expect(sample(text, 'gateway_plan_queries_total', { path: '/ruc' })).toBe(1);
    expect(sample(text, 'gateway_plan_queries_total', { path: '/validacion-multiple-cpe' })).toBe(3);
    expect(sample(text, 'gateway_cache_lookups_total', { op: 'ruc', result: 'miss' })).toBe(2);
    expect(sample(text, 'gateway_cache_lookups_total', { op: 'ruc', result: 'hit' })).toBe(1);
    expect(sample(text, 'gateway_errors_total', { code: 'UPSTREAM_UNAVAILABLE' })).toBe(1);
    expect(sample(text, 'gateway_errors_total', { code: 'INVALID_INPUT' })).toBe(1);
    expect(sample(text, 'gateway_errors_total', { code: 'GRAPHQL_PARSE_FAILED' })).toBe(1);
    expect(sample(text, 'gateway_breaker_state', { origin: 'primary' })).toBe(0);
    expect(text).toContain('gateway_process_cpu_user_seconds_total');

    // No token, RUC or licence number ever becomes a label.
    const labels = text.split('\n').filter((l) => l.startsWith('gateway_') && l.includes('{'));
    for (const secret of ['sandbox-pro', '20100123453', TRIGGERS.unavailable.ruc, 'Q46779354']) {
      expect(labels.join('\n'), secret).not.toContain(secret);
    }
    // A name with a document number in it, and an overlong one, are counted as "other".
    expect(sample(text, 'gateway_operations_total', { operation: 'other', outcome: 'ok' })).toBe(2);
  });

  it('label the lookups beyond the spec by their REST path and operation, never by a DNI, RUC or date', async () => {
    const variables = { dni: '46779354', ruc: '20100123453', fecha: '2026-11-22' };
    for (let i = 0; i < 2; i++) expect((await stack.gql(CheckoutDocument, variables)).body.errors).toBeUndefined();
    const text = await (await fetch(`${stack.url}/metrics`)).text();
    const lookups = {
      '/dni': 'dni',
      '/ruc-representantes': 'representantes',
      '/ruc-establecimientos-anexos': 'establecimientos',
      '/tipo-de-cambio': 'tipoDeCambio',
    };
    for (const [path, op] of Object.entries(lookups)) {
      expect(sample(text, 'gateway_upstream_calls_total', { path, status: '200', outcome: 'ok', origin: 'primary' }), path).toBe(1);
      expect(sample(text, 'gateway_plan_queries_total', { path }), path).toBe(1);
      expect(sample(text, 'gateway_cache_lookups_total', { op, result: 'hit' }), op).toBe(1);
    }
    const labels = text.split('\n').filter((l) => l.startsWith('gateway_') && l.includes('{'));
    for (const secret of Object.values(variables)) expect(labels.join('\n'), secret).not.toContain(secret);
  });

  it('keep their operation names for callers the service accepted: made-up tokens cannot use them up (issue 52)', async () => {
    const fresh = await startStack({ env: { TIPO_DE_CAMBIO: 'servicio' } });
    try {
      for (let i = 0; i < 250; i++)
        await fresh.gql(`query Flood${String.fromCharCode(65 + (i % 26))}${i.toString(36)} { __typename }`, undefined, {
          token: `made-up-${i}`,
        });
      const real = await fresh.gql('query Checkout { contribuyente(ruc: "20100123453") { ruc } }');
      expect(real.body.errors).toBeUndefined();
      // A register-only answer of a token the service has accepted before is that caller's too.
      await fresh.gql('query Otra { __typename }');
      const text = await (await fetch(`${fresh.url}/metrics`)).text();
      expect(text).toMatch(/gateway_operations_total\{operation="Checkout",outcome="ok"\} 1/);
      expect(text).toMatch(/gateway_operations_total\{operation="Otra",outcome="ok"\} 1/);
      expect(text).not.toMatch(/operation="Flood/);
    } finally {
      await fresh.close();
    }
  });

  it('show an open breaker', async () => {
    const fragile = await startStack({ env: { UPSTREAM_RETRIES: '0', BREAKER_MIN_CALLS: '2', BREAKER_COOLDOWN_MS: '60000' } });
    try {
      for (let i = 0; i < 2; i++) await fragile.gql(ContribuyenteDocument, { ruc: TRIGGERS.unavailable.ruc });
      const text = await (await fetch(`${fragile.url}/metrics`)).text();
      expect(sample(text, 'gateway_breaker_state', { origin: 'primary' })).toBe(2);
    } finally {
      await fragile.close();
    }
  });
});

describe('tracing', () => {
  const exporter = new InMemorySpanExporter();
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      env: { CACHE: 'on', UPSTREAM_RETRIES: '1' },
      app: { tracing: new Tracing(new SimpleSpanProcessor(exporter)) },
    });
  });
  afterAll(() => stack.close());

  it("makes a span per operation, per lookup (with its cache outcome) and per upstream call (path, status, attempt), under the caller's trace", async () => {
    exporter.reset();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    await stack.gql(
      `query Traza { a: contribuyente(ruc: "20100123453") { ruc } b: contribuyente(ruc: "${TRIGGERS.unavailable.ruc}") { ruc } }`,
      undefined,
      { headers: { traceparent: `00-${traceId}-${parentId}-01` } },
    );
    await stack.gql(`query Traza { a: contribuyente(ruc: "20100123453") { ruc } }`, undefined, {
      headers: { traceparent: `00-${traceId}-${parentId}-01` },
    });
    const spans = exporter.getFinishedSpans();
    expect(spans.every((s) => s.spanContext().traceId === traceId)).toBe(true);

    const operations = spans.filter((s) => s.name === 'graphql.operation');
    expect(operations).toHaveLength(2);
    expect(operations[0]!.parentSpanContext?.spanId).toBe(parentId);
    expect(operations[0]!.attributes).toMatchObject({
      'graphql.operation.name': 'Traza',
      'graphql.operation.type': 'query',
      'http.response.status_code': 200,
      'gateway.upstream_calls': 3,
      'gateway.plan_queries': 1,
    });

    const calls = spans.filter((s) => s.name === 'POST /ruc');
    expect(calls.map((c) => [c.attributes['http.response.status_code'], c.attributes['gateway.upstream.attempt']]).sort()).toEqual([
      [200, 1],
      [503, 1],
      [503, 2],
    ]);
    expect(calls.every((c) => c.parentSpanContext?.spanId === operations[0]!.spanContext().spanId)).toBe(true);

    const lookups = spans.filter((s) => s.name === 'lookup ruc').map((s) => s.attributes['gateway.cache.outcome']);
    expect(lookups.sort()).toEqual(['hit', 'miss', 'miss']);
  });

  it('never puts a token, a SOL key, a RUC or a licence number in a span', async () => {
    exporter.reset();
    await stack.gql(ValidarComprobantesTextoDocument, {
      comprobantes: ['20100123453|01|F001|1532|2026-10-01|1180.00'],
      credencialesSol: { rucEmpresa: '20100123453', usuario: 'MODDATOS', clave: 'clave-sol-secreta' },
    });
    await stack.gql(`{ licencia(numLicencia: "Q46779354") { nombres } }`);
    const dump = JSON.stringify(exporter.getFinishedSpans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })));
    expect(exporter.getFinishedSpans().length).toBeGreaterThan(2);
    for (const secret of ['sandbox-pro', 'clave-sol-secreta', 'MODDATOS', '20100123453', 'Q46779354'])
      expect(dump, secret).not.toContain(secret);
  });
});

describe('OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let receiver: Server;
  const received: { path: string; body: string }[] = [];
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

  it('exports spans over OTLP/HTTP to <endpoint>/v1/traces', async () => {
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const stack = await startStack({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } });
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    await stack.close(); // flushes the batch
    expect(received.map((r) => r.path)).toContain('/v1/traces');
    expect(received.map((r) => r.body).join('')).toContain('graphql.operation');
  });
});

describe('/health and /ready', () => {
  it('/health answers 200 with JSON while the process is up', async () => {
    const stack = await startStack();
    try {
      const res = await fetch(`${stack.url}/health`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: 'ok', pid: process.pid });
    } finally {
      await stack.close();
    }
  });

  it('/ready is 200 with a reachable upstream, 503 once its breaker is open, 200 again after', async () => {
    const stack = await startStack({ env: { UPSTREAM_RETRIES: '0', BREAKER_MIN_CALLS: '2', BREAKER_COOLDOWN_MS: '300' } });
    try {
      const ready = await fetch(`${stack.url}/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({
        status: 'ready',
        upstream: [{ origin: 'primary', state: 'closed', reachable: true }],
        // CACHE=off keeps no answer, but calls in flight are still shared in this process's memory.
        cache: { kind: 'memory' },
      });
      for (let i = 0; i < 2; i++) await stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.unavailable.ruc });
      const open = await fetch(`${stack.url}/ready`);
      expect(open.status).toBe(503);
      expect(await open.json()).toMatchObject({ status: 'not ready', upstream: [{ state: 'open' }] });
      await new Promise((r) => setTimeout(r, 350));
      await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }); // the probe succeeds
      expect((await fetch(`${stack.url}/ready`)).status).toBe(200);
    } finally {
      await stack.close();
    }
  });

  it('/ready is 503 when the upstream cannot be reached', async () => {
    const stack = await startStack({ env: { UPSTREAM_URL: 'http://127.0.0.1:9' } });
    try {
      const res = await fetch(`${stack.url}/ready`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ upstream: [{ reachable: false }] });
    } finally {
      await stack.close();
    }
  });

  it('/ready is 503 while the configured Redis is down, and 200 when it is back', async () => {
    const redis = await startRedis();
    const stack = await startStack({ env: { CACHE: 'on', REDIS_URL: redis.url } });
    try {
      await new Promise((r) => setTimeout(r, 200));
      expect((await fetch(`${stack.url}/ready`)).status).toBe(200);
      await redis.stop();
      await new Promise((r) => setTimeout(r, 100));
      const down = await fetch(`${stack.url}/ready`);
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({ cache: { kind: 'redis', healthy: false } });
      await redis.start();
      const deadline = Date.now() + 8000;
      let status = 503;
      while (status !== 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        status = (await fetch(`${stack.url}/ready`)).status;
      }
      expect(status).toBe(200);
    } finally {
      await stack.close();
      await redis.stop();
    }
  });
});
