import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { changedOn, DAY1, DAY2, FLAGS1, FLAGS2, ruc } from '../fixtures/changes.js';
import { startReceiver, until, type Receiver } from '../fixtures/receiver.js';
import { mirrorOf } from '../fixtures/register.js';
import { codes, startStack, TOKEN, type Stack } from '../helpers.js';

/**
 * Subscriptions and their signed deliveries through the gateway's socket, one instance without
 * Redis (its store under PADRON_DIR): a register, then the next from a loopback mirror, the
 * deliveries taken by a receiver on loopback and verified with `standardwebhooks`, the sandbox
 * recording that none of it reaches the service.
 */
const OTHER = 'sandbox-free';
const CREATE = `mutation($url: String!, $rucs: [String!]!, $tipos: [TipoCambio!]) {
  crearSuscripcion(url: $url, rucs: $rucs, tipos: $tipos) { secreto suscripcion { id url tipos rucs creadaEn ultimaEntrega { estado } } }
}`;
const LIST = `{ suscripciones { id url rucs tipos ultimaEntrega { webhookId fecha estado intentos codigoHttp en } } }`;
type Entrega = { webhookId: string; fecha: string; estado: string; intentos: number; codigoHttp: number | null; en: string };
type Listed = { id: string; url: string; rucs: string[]; tipos: string[] | null; ultimaEntrega: Entrega | null };
type Created = { secreto: string; suscripcion: { id: string; url: string; tipos: string[] | null; rucs: string[] } };
type Body<T> = {
  data?: T | null;
  errors?: { message: string; extensions: Record<string, unknown> }[];
  extensions?: Record<string, unknown>;
};

let sandbox: Sandbox;
let dir: string;
let mirror: Awaited<ReturnType<typeof mirrorOf>>;
let stack: Stack;
let receiver: Receiver;
let fecha: string;
const subs: Record<string, Created> = {};
const live: string[] = [];
const liveStop = new AbortController();

const create = async (variables: Record<string, unknown>, token: string | null = TOKEN) =>
  (await stack.gql(CREATE, variables, { token })).body as Body<{ crearSuscripcion: Created }>;
const list = async (token: string | null = TOKEN) => (await stack.gql(LIST, {}, { token })).body as Body<{ suscripciones: Listed[] }>;
const listed = async (name: string) => (await list()).data!.suscripciones.find((s) => s.id === subs[name]!.suscripcion.id);
const verified = (name: string, taken: { headers: Record<string, string>; body: string }) =>
  new Webhook(subs[name]!.secreto).verify(taken.body, taken.headers) as {
    type: string;
    data: { suscripcion: string; fecha: string; cambios: unknown[] };
  };

/** Reads the SSE stream of a GraphQL subscription into `into`, until `signal`. */
async function subscribe(url: string, query: string, into: string[], signal: AbortSignal, token: string | null = TOKEN): Promise<void> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query }),
    signal,
  });
  expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
  const reader = res.body!.getReader();
  void (async () => {
    let text = '';
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      text += Buffer.from(value!).toString('utf8');
      for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
        const data = /^data: (.*)$/m.exec(text.slice(0, end))?.[1];
        if (data) into.push(data);
        text = text.slice(end + 2);
      }
    }
  })();
}

beforeAll(async () => {
  sandbox = await startSandbox();
  dir = mkdtempSync(join(tmpdir(), 'webhooks-'));
  receiver = await startReceiver((path, nth) => {
    if (path === '/retry') return nth <= 3 ? 500 : 204;
    if (path === '/gone') return 410;
    if (path === '/hang') return 'hang';
    if (path === '/redirect') return 302;
    return 200;
  });
  mirror = await mirrorOf(DAY1, FLAGS1);
  stack = await startStack({
    sharedSandbox: sandbox,
    env: {
      PADRON: mirror.url,
      PADRON_DIR: dir,
      PADRON_REFRESH_MS: '1000',
      WEBHOOK_PRIVATE_NETWORKS: 'allow',
      WEBHOOK_RETRY_FIRST_MS: '200',
      WEBHOOK_TIMEOUT_MS: '1500',
      WEBHOOK_MAX_PER_CALLER: '6',
      WEBHOOK_MAX_RUCS: '5',
    },
  });
  await until(
    async () => ((await (await fetch(`${stack.url}/health`)).json()) as { padron: { state: string } }).padron.state === 'ready',
    'the register ready',
    30_000,
  );
  const made = async (name: string, path: string, rucs: string[], tipos?: string[], token = TOKEN) => {
    const body = await create(
      { url: receiver.url.replace('//', name === 'cred' ? '//ana:pa55w0rd-secreto@' : '//') + path, rucs, tipos },
      token,
    );
    expect(body.errors).toBeUndefined();
    subs[name] = body.data!.crearSuscripcion;
  };
  await made('ok', '/ok', [ruc(9), ruc(5), ruc(8), ruc(1)]);
  await made('retry', '/retry', [ruc(5)], ['CONDICION']);
  await made('gone', '/gone', [ruc(3)]);
  await made('hang', '/hang', [ruc(4)]);
  await made('cred', '/cred', [ruc(7)]);
  await made('other', '/other', [ruc(2), ruc(3)], ['SALIDA'], OTHER);
  await subscribe(
    stack.url,
    `subscription { cambiosPadron(rucs: ["${ruc(5)}", "${ruc(6)}"]) { ruc fecha tipo antes despues } }`,
    live,
    liveStop.signal,
  );
  sandbox.reset();
  await mirror.set(DAY2, FLAGS2);
  await until(() => receiver.to('/ok').length > 0, 'a delivery to /ok', 30_000);
  fecha = (JSON.parse(receiver.to('/ok')[0]!.body) as { data: { fecha: string } }).data.fecha;
}, 90_000);
afterAll(async () => {
  liveStop.abort();
  await stack?.close();
  await receiver?.close();
  mirror?.server.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

const expected = (rucs: string[], tipos?: string[]) =>
  changedOn(fecha)
    .filter((c) => rucs.includes(c.ruc) && (!tipos || tipos.includes(c.tipo)))
    .map(({ ruc, tipo, antes, despues }) => ({ ruc, tipo, antes, despues }));

describe('a subscription’s delivery', () => {
  it('is signed as Standard Webhooks: standardwebhooks verifies it with the secret shown at creation, and no other', () => {
    const [taken] = receiver.to('/ok');
    expect(taken!.headers['content-type']).toBe('application/json');
    expect(taken!.headers['webhook-id']).toMatch(/^msg_[\w-]+$/);
    expect(Math.abs(Number(taken!.headers['webhook-timestamp']) * 1000 - taken!.atMs)).toBeLessThan(5_000);
    expect(taken!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const event = verified('ok', taken!);
    expect(event.type).toBe('padron.cambios');
    expect(() => verified('retry', taken!)).toThrow();
    expect(() => new Webhook(subs.ok!.secreto).verify(taken!.body.replace('NO HABIDO', 'HABIDO!!!'), taken!.headers)).toThrow();
  });

  it('carries exactly the changes of the RUCs it watches, in RUC and type order, for nothing and with no call', async () => {
    await until(() => receiver.to('/other').length > 0, 'a delivery to /other');
    const event = verified('ok', receiver.to('/ok')[0]!);
    expect(event.data.suscripcion).toBe(subs.ok!.suscripcion.id);
    expect(event.data.cambios).toEqual(expected([ruc(5), ruc(8), ruc(9)]));
    expect(receiver.to('/ok')).toHaveLength(1);
    // Of the types asked: only the CONDICION change of ruc(5); only SALIDA for the other caller's.
    expect(verified('other', receiver.to('/other')[0]!).data.cambios).toEqual(expected([ruc(2)], ['SALIDA']));
    expect(sandbox.calls).toHaveLength(0);
  });

  it('is retried with the same webhook-id after waits that double, its state in ultimaEntrega, until a 2xx', async () => {
    await until(() => receiver.to('/retry').length >= 4, 'four attempts at /retry', 20_000);
    const attempts = receiver.to('/retry');
    expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1);
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
    for (const a of attempts) expect(verified('retry', a).data.cambios).toEqual(expected([ruc(5)], ['CONDICION']));
    const waits = attempts.slice(1).map((a, i) => a.atMs - attempts[i]!.atMs);
    expect(waits[0]).toBeGreaterThanOrEqual(190);
    expect(waits[1]).toBeGreaterThanOrEqual(390);
    expect(waits[2]).toBeGreaterThanOrEqual(790);
    await until(async () => (await listed('retry'))?.ultimaEntrega?.estado === 'ENTREGADA', 'ultimaEntrega ENTREGADA');
    expect((await listed('retry'))!.ultimaEntrega).toMatchObject({
      webhookId: attempts[0]!.headers['webhook-id'],
      fecha,
      intentos: 4,
      codigoHttp: 204,
    });
  });

  it('ends the subscription when the receiver answers 410', async () => {
    await until(async () => !(await listed('gone')), 'the 410 subscription gone');
    expect(receiver.to('/gone')).toHaveLength(1);
  });

  it('is not held up by a receiver that never answers: it times out and is retried, REINTENTANDO', async () => {
    const [hung] = receiver.to('/hang');
    expect(hung).toBeDefined();
    // Both went out together: the one answered did not wait for the one that hangs.
    expect(receiver.to('/ok')[0]!.atMs - hung!.atMs).toBeLessThan(1_000);
    await until(async () => (await listed('hang'))?.ultimaEntrega?.estado === 'REINTENTANDO', 'the hanging receiver REINTENTANDO', 10_000);
    expect((await listed('hang'))!.ultimaEntrega).toMatchObject({ codigoHttp: null, estado: 'REINTENTANDO' });
  });

  it('sends a URL’s credentials as Basic auth, shows them masked, and never logs them', async () => {
    await until(() => receiver.to('/cred').length > 0, 'a delivery to /cred');
    expect(receiver.to('/cred')[0]!.headers.authorization).toBe(`Basic ${Buffer.from('ana:pa55w0rd-secreto').toString('base64')}`);
    expect((await listed('cred'))!.url).toBe(`${receiver.url.replace('//', '//***@')}/cred`);
  });
});

describe('ownership', () => {
  it('lists each caller’s own subscriptions only', async () => {
    const mine = (await list()).data!.suscripciones.map((s) => s.id);
    const theirs = (await list(OTHER)).data!.suscripciones.map((s) => s.id);
    expect(theirs).toEqual([subs.other!.suscripcion.id]);
    expect(mine).not.toContain(subs.other!.suscripcion.id);
    expect(mine).toContain(subs.ok!.suscripcion.id);
  });

  it('answers another caller’s id exactly as one that does not exist: NOT_FOUND', async () => {
    const id = subs.other!.suscripcion.id;
    const change = `mutation($id: ID!) { cambiarSuscripcion(id: $id, agregar: ["${ruc(1)}"]) { id } }`;
    const remove = `mutation($id: ID!) { eliminarSuscripcion(id: $id) }`;
    for (const [doc, ids] of [
      [change, [id, 'sus_AAAAAAAAAAAAAAAAAAAAAA', 'x']],
      [remove, [id, 'sus_AAAAAAAAAAAAAAAAAAAAAA']],
    ] as const) {
      for (const which of ids) {
        const body = (await stack.gql(doc, { id: which })).body as Body<unknown>;
        expect(codes(body)).toEqual(['NOT_FOUND']);
        expect(body.errors![0]!.extensions.retryable).toBe(false);
        expect(body.errors![0]!.message).toBe('No existe una suscripción con ese id.');
      }
    }
    expect((await list(OTHER)).data!.suscripciones.map((s) => s.id)).toEqual([id]);
  });

  it('changes and deletes a caller’s own', async () => {
    const id = subs.other!.suscripcion.id;
    const changed = (
      await stack.gql(
        `mutation($id: ID!) { cambiarSuscripcion(id: $id, agregar: ["${ruc(1)}"], quitar: ["${ruc(3)}"]) { rucs } }`,
        { id },
        { token: OTHER },
      )
    ).body as Body<{ cambiarSuscripcion: { rucs: string[] } }>;
    expect(changed.data!.cambiarSuscripcion.rucs.sort()).toEqual([ruc(1), ruc(2)].sort());
    const removed = (await stack.gql(`mutation($id: ID!) { eliminarSuscripcion(id: $id) }`, { id }, { token: OTHER })).body as Body<{
      eliminarSuscripcion: boolean;
    }>;
    expect(removed.data!.eliminarSuscripcion).toBe(true);
    expect((await list(OTHER)).data!.suscripciones).toEqual([]);
  });

  it('takes a made-up token for no caller: its first subscription pays one /ruc, which the service refuses; a plan’s, the next ones nothing', async () => {
    sandbox.reset();
    const fake = await create({ url: `${receiver.url}/x`, rucs: [ruc(1)] }, 'token-inventado');
    expect(codes(fake)).toEqual(['UNAUTHENTICATED']);
    expect(sandbox.callsTo('/ruc')).toHaveLength(1);
    expect((await list('token-inventado')).data!.suscripciones).toEqual([]);
    const first = (await stack.gql(CREATE, { url: `${receiver.url}/x`, rucs: [ruc(1)] }, { token: 'sandbox-low' })).body;
    expect(first.errors).toBeUndefined();
    expect(first.extensions?.['cost']).toMatchObject({ estimated: 1, queries: 1, upstreamCalls: 1 });
    const second = (await stack.gql(CREATE, { url: `${receiver.url}/y`, rucs: [ruc(2)] }, { token: 'sandbox-low' })).body;
    expect(second.extensions?.['cost']).toMatchObject({ queries: 0, upstreamCalls: 0 });
    expect(sandbox.callsTo('/ruc')).toHaveLength(2);
    expect(sandbox.quotaOf('sandbox-low')).toBe(2);
  });

  it('refuses a caller without a token: UNAUTHENTICATED', async () => {
    expect(codes(await list(null))).toEqual(['UNAUTHENTICATED']);
    expect(codes(await create({ url: `${receiver.url}/x`, rucs: [ruc(1)] }, null))).toEqual(['UNAUTHENTICATED']);
  });
});

describe('limits and input', () => {
  it('never lets creations made side by side pass WEBHOOK_MAX_PER_CALLER', async () => {
    expect((await list(OTHER)).data!.suscripciones).toEqual([]);
    const made = await Promise.all(
      Array.from({ length: 12 }, (_, i) => create({ url: `${receiver.url}/race${i}`, rucs: [ruc(1)] }, OTHER)),
    );
    const kept = (await list(OTHER)).data!.suscripciones;
    expect(kept.length).toBeLessThanOrEqual(6);
    expect(made.filter((b) => !b.errors).length).toBe(kept.length);
    for (const refused of made.filter((b) => b.errors)) expect(codes(refused)).toEqual(['INVALID_INPUT']);
    for (const { id } of kept) await stack.gql(`mutation($id: ID!) { eliminarSuscripcion(id: $id) }`, { id }, { token: OTHER });
  });

  it('shows a secret of whsec_ and at least 24 random bytes, once', () => {
    const secret = subs.ok!.secreto;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    expect(new Set(Object.values(subs).map((s) => s.secreto)).size).toBe(Object.keys(subs).length);
  });

  it('refuses past WEBHOOK_MAX_RUCS, a bad RUC, and past WEBHOOK_MAX_PER_CALLER: INVALID_INPUT, nothing kept', async () => {
    const before = (await list()).data!.suscripciones.length;
    const six = [1, 2, 3, 4, 5, 6].map(ruc);
    expect(codes(await create({ url: `${receiver.url}/x`, rucs: six }))).toEqual(['INVALID_INPUT']);
    expect(codes(await create({ url: `${receiver.url}/x`, rucs: ['20100123454'] }))).toEqual(['INVALID_INPUT']);
    expect(codes(await create({ url: `${receiver.url}/x`, rucs: [] }))).toEqual(['INVALID_INPUT']);
    expect(codes(await create({ url: 'no es una url', rucs: [ruc(1)] }))).toEqual(['INVALID_INPUT']);
    const id = subs.ok!.suscripcion.id;
    expect(
      codes(
        (await stack.gql(`mutation($id: ID!) { cambiarSuscripcion(id: $id, agregar: ["${ruc(2)}", "${ruc(3)}"]) { id } }`, { id })).body,
      ),
    ).toEqual(['INVALID_INPUT']);
    expect((await list()).data!.suscripciones.length).toBe(before);
    // Six allowed: the caller holds five (one was deleted by its 410).
    while ((await list()).data!.suscripciones.length < 6)
      expect((await create({ url: `${receiver.url}/x`, rucs: [ruc(1)] })).errors).toBeUndefined();
    const over = await create({ url: `${receiver.url}/x`, rucs: [ruc(1)] });
    expect(codes(over)).toEqual(['INVALID_INPUT']);
    expect(over.errors![0]!.message).toMatch(/WEBHOOK_MAX_PER_CALLER/);
  });
});

describe('proving a token (issue 52)', () => {
  it('goes through the lookups: a made-up token tried five times costs the service one 401', async () => {
    sandbox.reset();
    for (let i = 0; i < 5; i++)
      expect(codes(await create({ url: `${receiver.url}/ok`, rucs: [ruc(1)] }, 'made-up-token'))).toEqual(['UNAUTHENTICATED']);
    expect(sandbox.callsTo('/ruc')).toHaveLength(1);
  });

  it('checks the subscription first: one refused for its URL proves nothing and costs nothing', async () => {
    sandbox.reset();
    const quota = sandbox.quotaOf('sandbox-low')!;
    // A name that resolves to nothing, and an address of the gateway's own network with WEBHOOK_PRIVATE_NETWORKS unset elsewhere.
    expect(codes(await create({ url: 'https://no-such-host.invalid/webhook', rucs: [ruc(1)] }, 'sandbox-low'))).toEqual(['INVALID_INPUT']);
    expect(sandbox.calls).toHaveLength(0);
    expect(sandbox.quotaOf('sandbox-low')).toBe(quota);
  });
});

describe('the live feed (SSE)', () => {
  /** The first event of a feed, or undefined when none comes within `withinMs` (a feed open, waiting for changes). */
  const firstEvent = async (token: string | null, rucs: string[], signal?: AbortSignal, withinMs = 5_000) => {
    const events: string[] = [];
    await subscribe(
      stack.url,
      `subscription { cambiosPadron(rucs: ${JSON.stringify(rucs)}) { ruc } }`,
      events,
      signal ?? AbortSignal.timeout(5_000),
      token,
    );
    await until(() => events.length > 0, 'an event', withinMs).catch(() => undefined);
    return events[0] === undefined ? undefined : (JSON.parse(events[0]) as Body<unknown>);
  };

  it('is the caller’s, within limits: a token, at most 1,000 RUCs, WEBHOOK_MAX_PER_CALLER feeds open', async () => {
    expect(codes((await firstEvent(null, [ruc(1)]))!)).toEqual(['UNAUTHENTICATED']);
    const many = Array.from({ length: 1_001 }, (_, i) => String(20_000_000_000 + i));
    expect(codes((await firstEvent(TOKEN, many))!)).toEqual(['INVALID_INPUT']);
    const held = new AbortController();
    try {
      // Six feeds open (the setting here), the seventh refused.
      for (let i = 0; i < 6; i++) expect(await firstEvent('sandbox-free', [ruc(1)], held.signal, 300)).toBeUndefined();
      const over = (await firstEvent('sandbox-free', [ruc(1)]))!;
      expect(codes(over)).toEqual(['INVALID_INPUT']);
      expect(over.errors![0]!.message).toMatch(/WEBHOOK_MAX_PER_CALLER/);
    } finally {
      held.abort();
    }
  });

  it('is refused to a token the service does not take, proven through the lookups (issue 52)', async () => {
    sandbox.reset();
    const held = new AbortController();
    try {
      // Made-up tokens hold no place: each refused after one 401 at most, a token refused lately with none.
      const madeUp = `made-up-feed-${Date.now()}`;
      for (let i = 0; i < 3; i++) expect(codes((await firstEvent(madeUp, [ruc(1)], held.signal))!)).toEqual(['UNAUTHENTICATED']);
      expect(sandbox.callsTo('/ruc')).toHaveLength(1);
      // A token with a subscription is proven already: its feeds open with no call.
      sandbox.reset();
      for (let i = 0; i < 2; i++) expect(await firstEvent('sandbox-low', [ruc(1)], held.signal, 300)).toBeUndefined();
      expect(sandbox.calls).toHaveLength(0);
    } finally {
      held.abort();
    }
  });

  it('pushes the changes of the RUCs watched as the import finds them', async () => {
    await until(() => live.length >= 2, 'two live changes');
    const pushed = live.map((d) => (JSON.parse(d) as { data: { cambiosPadron: unknown } }).data.cambiosPadron);
    expect(pushed).toEqual(changedOn(fecha).filter((c) => c.ruc === ruc(5) || c.ruc === ruc(6)));
  });
});

describe('secrets', () => {
  it('counts the attempts by outcome in /metrics', async () => {
    const metrics = await (await fetch(`${stack.url}/metrics`)).text();
    const count = (outcome: string) =>
      Number(new RegExp(`^gateway_webhook_attempts_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0);
    expect(count('delivered')).toBeGreaterThanOrEqual(4);
    expect(count('retry')).toBeGreaterThanOrEqual(3);
    expect(count('gone')).toBe(1);
  });

  it('writes no secret, token or URL credential in the log, /metrics or /health', async () => {
    const logs =
      stack.logs.join('') + (await (await fetch(`${stack.url}/metrics`)).text()) + (await (await fetch(`${stack.url}/health`)).text());
    expect(logs).toMatch(/webhook: delivered/);
    for (const { secreto } of Object.values(subs)) {
      expect(logs).not.toContain(secreto);
      expect(logs).not.toContain(secreto.slice(6));
    }
    expect(logs).not.toContain('pa55w0rd-secreto');
    expect(logs).not.toContain(TOKEN);
    expect(logs).not.toContain(receiver.url.slice(7));
  });
});

describe('a second register of the same date', () => {
  it('sends its own changes as that date’s next message, with an id of its own; the feed keeps the day’s', async () => {
    const before = receiver.to('/ok').length;
    // The supplier is HABIDO again the same day: undone in the day's changes, but news to whom was told it was not.
    const again = DAY2.map((l) => (l.startsWith(ruc(5)) ? l.replace('|NO HABIDO|', '|HABIDO|') : l));
    await mirror.set(again, FLAGS2);
    await until(() => receiver.to('/ok').length > before, 'the second register’s message', 30_000);
    const [first, second] = [receiver.to('/ok')[0]!, receiver.to('/ok')[before]!];
    const event = verified('ok', second);
    expect(event.data.fecha).toBe(fecha);
    expect(event.data.cambios).toEqual([{ ruc: ruc(5), tipo: 'CONDICION', antes: 'NO HABIDO', despues: 'HABIDO' }]);
    expect(second.headers['webhook-id']).not.toBe(first.headers['webhook-id']);
    const feed = (await stack.gql(`{ cambiosPadron(desde: "${fecha}", rucs: ["${ruc(5)}"]) { edges { node { tipo } } } }`)).body as Body<{
      cambiosPadron: { edges: unknown[] };
    }>;
    expect(feed.data!.cambiosPadron.edges).toEqual([]);
  });
});
