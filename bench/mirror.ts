/** A mirror of SUNAT's files on loopback: each file of `dir` served by its name, dated by its modification time. */
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

export async function serveFiles(dir: string): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    const path = join(dir, (req.url ?? '/').slice(1));
    try {
      const { size, mtime } = statSync(path);
      res.writeHead(200, { 'content-length': size, 'last-modified': mtime.toUTCString() });
      createReadStream(path).pipe(res);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, close: () => server.close() };
}
