import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { operationLineWriter, type OperationLine } from '../src/operation-line.js';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { lines, sink };
}

const LINES: OperationLine[] = [
  {
    reqId: '79d9dbf6-f252-4033-8ce4-7b7befec0f80',
    operation: 'Contribuyente',
    status: 200,
    durationMs: 1.3,
    queries: 1,
    upstreamCalls: 1,
    cacheHits: 0,
    estimatedCost: 1,
    errors: [],
  },
  {
    reqId: 'req-abc.123',
    operation: null,
    status: 400,
    durationMs: 0,
    queries: 0,
    upstreamCalls: 0,
    cacheHits: 0,
    estimatedCost: undefined,
    errors: ['GRAPHQL_PARSE_FAILED', 'undefined'],
  },
  {
    reqId: 'x',
    operation: 'A_b9',
    status: 502,
    durationMs: NaN,
    queries: 3,
    upstreamCalls: 4,
    cacheHits: 2,
    estimatedCost: 120,
    errors: ['UPSTREAM_UNAVAILABLE'],
  },
];

/** The line with its time taken out: pino and the writer read the clock a moment apart. */
const timeless = (line: string) => line.replace(/,"time":\d+/, ',"time":0');

describe('the operation line', () => {
  it('is byte for byte what pino writes for the same fields, at every field value', () => {
    const fast = capture();
    const slow = capture();
    const config = { logLevel: 'info' as const };
    const write = operationLineWriter(createLogger(config, fast.sink).child({}, { redact: { paths: [] } }));
    const reference = createLogger(config, slow.sink).child({}, { redact: { paths: [] } });
    for (const line of LINES) {
      write(line);
      reference.info(line, 'operation');
    }
    expect(fast.lines.map(timeless)).toEqual(slow.lines.map(timeless));
    expect(fast.lines).toHaveLength(LINES.length);
    // And it really is JSON, with the fields a reader looks for.
    expect(JSON.parse(fast.lines[0]!)).toMatchObject({ level: 30, msg: 'operation', reqId: LINES[0]!.reqId, status: 200 });
  });

  it('keeps the bindings and follows the level as it changes', () => {
    const { lines, sink } = capture();
    const logger = pino({ level: 'info' }, sink).child({ service: 'gateway' });
    const write = operationLineWriter(logger);
    write(LINES[0]!);
    logger.level = 'warn';
    write(LINES[0]!);
    logger.level = 'info';
    logger.setBindings({ region: 'lima' });
    write(LINES[0]!);
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!)).toMatchObject({ service: 'gateway', reqId: LINES[0]!.reqId });
    expect(JSON.parse(lines[1]!)).toMatchObject({ service: 'gateway', region: 'lima' });
  });

  it('leaves the line to pino when pino would change it: a mixin, a log formatter, a redacted key', () => {
    const loggers = [
      (sink: Writable) => pino({ mixin: () => ({ extra: 1 }) }, sink),
      (sink: Writable) => pino({ formatters: { log: (o) => ({ ...o, formatted: true }) } }, sink),
      (sink: Writable) => pino({ redact: ['reqId'] }, sink),
      (sink: Writable) => pino({ redact: ['*.token'] }, sink),
    ];
    for (const make of loggers) {
      const fast = capture();
      const slow = capture();
      operationLineWriter(make(fast.sink))(LINES[0]!);
      make(slow.sink).info(LINES[0]!, 'operation');
      expect(fast.lines.map(timeless)).toEqual(slow.lines.map(timeless));
    }
  });
});
