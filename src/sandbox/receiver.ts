import type { IncomingMessage, ServerResponse } from 'node:http';

/** Reads a request's body, keeping at most `max` bytes of it; `size` says how many came. */
export function readBody(req: IncomingMessage, max: number, done: (text: string, size: number) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= max) chunks.push(c);
  });
  req.on('end', () => done(Buffer.concat(chunks).toString('utf8'), size));
}

/** Where the sandbox takes deliveries: subscribe `<sandbox>/__sandbox/webhooks/recibir` (optionally `?estado=503` to see retries). */
export const RECEIVER_PATH = '/__sandbox/webhooks';
/** Deliveries kept for GET: the newest. */
const KEPT = 100;
/** A delivery's body read at most: the gateway's are far smaller. */
const MAX_BODY = 4 * 1024 * 1024;

/** A delivery as received, headers and body as sent, for the newcomer (GET) and the tests to verify. */
export interface Received {
  at: string;
  path: string;
  headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string; authorization?: string };
  body: string;
  status: number;
}

/**
 * The sandbox's own webhook receiver: it logs and keeps what it gets, and answers 200, or the
 * status `?estado=` asks for. It holds no secret: whoever made the subscription verifies with
 * the one shown at creation (docs/webhooks.md).
 */
export class Receiver {
  readonly received: Received[] = [];

  constructor(private readonly onDelivery?: (delivery: Received) => void) {}

  /** Handles a request under RECEIVER_PATH: POST takes a delivery, GET lists those kept. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.received));
      return;
    }
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const asked = Number(url.searchParams.get('estado'));
    const status = Number.isInteger(asked) && asked >= 200 && asked <= 599 ? asked : 200;
    readBody(req, MAX_BODY, (text) => {
      const header = (name: string) => String(req.headers[name] ?? '');
      const delivery: Received = {
        at: new Date().toISOString(),
        path: url.pathname + url.search,
        headers: {
          'webhook-id': header('webhook-id'),
          'webhook-timestamp': header('webhook-timestamp'),
          'webhook-signature': header('webhook-signature'),
          // Credentials a URL carried are said to have come, never kept.
          ...(req.headers.authorization ? { authorization: '***' } : {}),
        },
        body: text,
        status,
      };
      this.received.push(delivery);
      if (this.received.length > KEPT) this.received.shift();
      this.onDelivery?.(delivery);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'no');
    });
  }
}
