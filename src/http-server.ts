import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { App } from './app.js';

/**
 * The node:http server around the Yoga app.
 *
 * Yoga may answer before it has read the whole request body (413 for a body over
 * MAX_BODY_BYTES, 400 for a bad one). Node then waits for the rest of that body before it
 * reads the next request on the same connection, so a keep-alive client would hang on its
 * next request. Such an answer says `Connection: close`, and Node closes the socket after it.
 */
export function createHttpServer(app: App): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
      if (!req.complete) this.setHeader('connection', 'close');
      return writeHead.apply(this, args);
    } as ServerResponse['writeHead'];
    void app(req, res);
  });
}
