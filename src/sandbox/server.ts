import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { DEFAULT_TOKENS } from './data.js';
import { fail, type Answer } from './records.js';
import { Outbox } from './outbox.js';
import { JWKS_PATH, SANDBOX_SUBJECT, sandboxIdentity, type SandboxIdentity } from './identity.js';
import { LEGACY_PREFIX, RestService } from './service.js';
import { NEXT_DAY, NEXT_DAY_PATH, PublishedRegister } from './padron.js';
import { readBody, RECEIVER_PATH, Receiver } from './receiver.js';
import { SunatDouble } from './sunat.js';
import type { RecordedCall, Sandbox, SandboxOptions } from './types.js';

export type { FaultKind, RecordedCall, Sandbox, SandboxFaults, SandboxOptions } from './types.js';

const MAX_BODY = 1024 * 1024;

/** What the server saw: the calls it keeps for tests, how many came, how many were in flight at once. */
class Traffic {
  readonly calls: RecordedCall[] = [];
  count = 0;
  inFlight = 0;
  peakInFlight = 0;

  constructor(
    readonly record: boolean,
    readonly maxRecorded: number,
  ) {}

  /** Calls counted in flight, until answered or closed. */
  readonly #open = new WeakSet<ServerResponse>();

  /** A call arrives; it counts as in flight until its answer is written (or its response closes first). */
  arrived(res: ServerResponse): void {
    this.count++;
    this.peakInFlight = Math.max(this.peakInFlight, ++this.inFlight);
    this.#open.add(res);
    res.once('close', () => this.answered(res));
  }

  /** The answer is being written: from here the caller may have it, and call again. */
  answered(res: ServerResponse): void {
    if (this.#open.delete(res)) this.inFlight--;
  }

  keep(call: RecordedCall): void {
    if (!this.record) return;
    // Bounded: a sandbox left running (npm start's) must not keep every call it ever saw.
    if (this.calls.length >= this.maxRecorded) this.calls.splice(0, this.calls.length - this.maxRecorded + 1);
    this.calls.push(call);
  }

  reset(): void {
    this.calls.length = 0;
    this.count = 0;
    this.peakInFlight = this.inFlight;
  }
}

/**
 * The built-in REST double: a real node:http server that follows rest-api.md with
 * sample data, a plan quota per token, trigger values for every failure, and a record
 * of the calls it received for tests to assert on.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const rest = new RestService(options.tokens ?? DEFAULT_TOKENS, options.slowMs ?? 3000);
  const traffic = new Traffic(options.record ?? true, Math.max(1, options.maxRecorded ?? 10_000));
  const outbox = new Outbox();
  const latencyMs = options.latencyMs ?? 0;
  const send = (res: ServerResponse, answer: Answer) =>
    outbox.send(
      res,
      answer,
      (answer.delayMs ?? 0) + latencyMs + (rest.faults.latencyMs ?? 0),
      { until: rest.faults.gatherInFlight, peak: traffic.peakInFlight },
      () => traffic.answered(res),
    );
  let identity: SandboxIdentity | undefined;
  const register = new PublishedRegister();
  const receiver = new Receiver(options.onDelivery);
  const sunat = new SunatDouble();
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    const file = req.method === 'GET' ? /^\/__sandbox\/padron\/([\w.]+\.zip)$/.exec(path) : null;
    if (file) return void register.zips().then((zips) => servePadron(req, res, zips.get(file[1]!), register.at, rest.faults.padron));
    if (path === NEXT_DAY_PATH && req.method === 'POST')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(nextDayAnswer(register.nextDay()));
    if (path === RECEIVER_PATH || path.startsWith(`${RECEIVER_PATH}/`)) return receiver.handle(req, res);
    handle(req, res, { rest, sunat, traffic, identity }, send);
  });
  const sockets = trackSockets(server);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  identity = await sandboxIdentity(url);
  const signedBy = identity;
  return {
    url,
    jwksUrl: url + JWKS_PATH,
    signIn: (subject) => signedBy.signIn(subject),
    calls: traffic.calls,
    get peakInFlight() {
      return traffic.peakInFlight;
    },
    get callCount() {
      return traffic.count;
    },
    callsTo: (path) => traffic.calls.filter((c) => c.path === path || c.path === LEGACY_PREFIX + path),
    quotaOf: (token) => rest.quotaOf(token),
    setQuota: (token, quota) => rest.setQuota(token, quota),
    setFaults: (next) => {
      rest.faults = { ...next, rates: { ...next.rates } };
    },
    reset: () => traffic.reset(),
    deliveries: receiver.received,
    nextDay: () => register.nextDay(),
    close: () =>
      new Promise<void>((done) => {
        outbox.clear();
        server.close(() => done());
        for (const s of sockets) s.destroy();
      }),
  };
}

/** What POST /__sandbox/padron/siguiente-dia answers: the new day, and what a gateway with PADRON=sandbox will find changed. */
function nextDayAnswer(at: Date): string {
  const { noHabido, moved, gone, joined } = NEXT_DAY;
  return JSON.stringify({
    publicadoEn: at.toISOString(),
    cambios: { CONDICION: noHabido, AGENTE_DE_RETENCION: noHabido, DIRECCION: moved.ruc, SALIDA: gone, ALTA: joined.ruc },
    nota: 'Un gateway con PADRON=sandbox lo importa en su próxima revisión (PADRON_REFRESH_MS; con el sandbox, cada 30 s).',
  });
}

/** One request: the stats route, or a call read whole (within MAX_BODY), answered, recorded and sent. */
function handle(
  req: IncomingMessage,
  res: ServerResponse,
  { rest, sunat, traffic, identity }: { rest: RestService; sunat: SunatDouble; traffic: Traffic; identity: SandboxIdentity | undefined },
  send: (res: ServerResponse, a: Answer) => void,
) {
  const json = (value: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  if (req.method === 'GET' && req.url === '/__sandbox/stats') return void json({ calls: traffic.count });
  // A stand-in identity provider: its keys, and a sign-in token for any subject (docs/auth.md).
  if (req.method === 'GET' && req.url === JWKS_PATH && identity) return void json(identity.jwks);
  const signIn = req.method === 'GET' ? /^\/__sandbox\/token(?:\?sub=([\w.@-]{1,64}))?$/.exec(req.url ?? '') : null;
  if (signIn && identity) return void identity.signIn(signIn[1] ?? SANDBOX_SUBJECT).then((token) => json({ token }));
  // The registry's sources taken down and up again, to see the gateway answer the last good records.
  const sources = req.method === 'POST' ? /^\/__sandbox\/sources\/(down|up)$/.exec(req.url ?? '') : null;
  if (sources) {
    rest.faults = { ...rest.faults, sourcesDown: sources[1] === 'down' };
    return void json({ sourcesDown: rest.faults.sourcesDown });
  }
  traffic.arrived(res);
  readBody(req, MAX_BODY, (text, size) => {
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Recorded as raw text; the service answers 400.
    }
    const path = (req.url ?? '/').split('?')[0]!;
    const answer =
      size > MAX_BODY
        ? fail(413, 'payload_too_large', 'Cuerpo demasiado grande')
        : (sunat.answer(req.method, path, req.headers, text) ?? rest.answer(req.method, path, req.headers.authorization, body));
    traffic.keep({ method: req.method ?? '', path, headers: req.headers, body, status: answer.status, remotePort: req.socket.remotePort });
    send(res, answer);
  });
}

/** Keep-alive sockets would hold close() open: tracked, to end them on close. */
function trackSockets(server: Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return sockets;
}

/**
 * One of the sandbox's registers, as SUNAT's server sends it: with its Last-Modified, 304 to an
 * If-Modified-Since not older, and as a test asks: cut short, or with its bytes spoiled.
 */
function servePadron(
  req: IncomingMessage,
  res: ServerResponse,
  zip: Buffer | undefined,
  at: Date,
  fault: 'truncated' | 'corrupt' | undefined,
) {
  if (!zip) return void res.writeHead(404).end();
  const since = Date.parse(req.headers['if-modified-since'] ?? '');
  if (!fault && !Number.isNaN(since) && since >= at.getTime()) return void res.writeHead(304).end();
  let body = zip;
  if (fault === 'truncated') body = zip.subarray(0, Math.floor(zip.length / 2));
  if (fault === 'corrupt') body = Buffer.from(zip.map((b, i) => (i > 40 && i % 7 === 0 ? b ^ 0xff : b)));
  res.writeHead(200, { 'content-type': 'application/zip', 'content-length': body.length, 'last-modified': at.toUTCString() }).end(body);
}
