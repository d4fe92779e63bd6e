import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogOutput } from '../../src/telemetry/logger.js';

/** A FIFO's two ends, as `npm start | reader` has them. */
function pipe(): { reader: number; writer: number } {
  const dir = mkdtempSync(join(tmpdir(), 'fifo-'));
  const fifo = join(dir, 'out');
  execFileSync('mkfifo', [fifo]);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(fifo, constants.O_WRONLY);
  rmSync(dir, { recursive: true, force: true });
  return { reader, writer };
}

/** A FIFO's write end whose reader has left, as `npm start | head` leaves it: every write fails with EPIPE. */
function pipeWithReaderGone(): number {
  const { reader, writer } = pipe();
  closeSync(reader);
  return writer;
}

const line = (i: number) => `{"level":30,"msg":"línea ${i}"}\n`;
const settle = () => new Promise((r) => setTimeout(r, 20));

describe('LogOutput', () => {
  it('counts every line that never reached a reader who left, those waiting in its buffer when the write failed too', async () => {
    const output = new LogOutput(pipeWithReaderGone());
    // A burst handed over before any write is tried: the lines wait in the buffer, then meet the closed pipe.
    for (let i = 0; i < 300; i++) output.write(line(i));
    for (let i = 0; i < 50 && output.dropped < 300; i++) await settle();
    expect(output.dropped).toBe(300);
    output.write('{"level":30,"msg":"después"}\n');
    expect(output.dropped).toBe(301);
    await output.flush(200);
  });

  it('counts none of the lines its reader read, and each of those after it left', async () => {
    const { reader, writer } = pipe();
    const output = new LogOutput(writer);
    for (let i = 0; i < 100; i++) output.write(line(i));
    // Read until all 100 lines are through, as a reader does, then leave.
    let read = '';
    const chunk = Buffer.alloc(65536);
    for (let i = 0; i < 100 && read.split('\n').length <= 100; i++) {
      await settle();
      try {
        read += chunk.toString('utf8', 0, readSync(reader, chunk));
      } catch {
        // Nothing to read yet (EAGAIN).
      }
    }
    expect(read.split('\n').length).toBe(101);
    closeSync(reader);
    for (let i = 0; i < 200; i++) output.write(line(i));
    for (let i = 0; i < 50 && output.dropped < 200; i++) await settle();
    expect(output.dropped).toBe(200);
    await output.flush(200);
  });
});
