import { pino, type Logger } from 'pino';

/** The fields of the line written for each operation, in the order they are written. */
export interface OperationLine {
  reqId: string;
  operation: string | null;
  status: number;
  durationMs: number;
  queries: number;
  upstreamCalls: number;
  cacheHits: number;
  estimatedCost: number | undefined;
  errors: readonly string[];
}

const MESSAGE = 'operation';
const S = pino.symbols as unknown as Record<string, symbol>;
const CHINDINGS = S['chindingsSym']!;
const at = <T>(logger: Logger, name: string): T => (logger as unknown as Record<symbol, T>)[S[name]!] as T;

/**
 * Writes the line of each operation at info level: the same bytes `logger.info(line, 'operation')`
 * writes, through the same logger and destination, but put together from its fixed fields
 * rather than by pino's walk over an object (its serializer and formatter look-ups per key and
 * string escaping, about 9 µs a line under load, the largest single cost of an operation after
 * the sockets). test/operation-line.test.ts holds the two byte for byte alike.
 *
 * Only for a logger whose line is pino's default JSON: with a mixin, a log formatter or hook,
 * or a destination that wants pino's metadata (multistream), it is `logger.info` itself.
 */
export function operationLineWriter(logger: Logger): (line: OperationLine) => void {
  const viaPino = (line: OperationLine) => logger.info(line, MESSAGE);
  const formatters = at<{ log?: unknown }>(logger, 'formattersSym');
  const hooks = at<{ logMethod?: unknown; streamWrite?: unknown }>(logger, 'hooksSym');
  const stream = at<{ write(s: string): void; [k: symbol]: unknown } | undefined>(logger, 'streamSym');
  const levelPrefix = at<Record<number, string> | undefined>(logger, 'lsCacheSym')?.[30];
  const time = at<(() => string) | undefined>(logger, 'timeSym');
  const end = at<string | undefined>(logger, 'endSym');
  const plain =
    !at(logger, 'mixinSym') &&
    !formatters?.log &&
    !hooks?.logMethod &&
    !hooks?.streamWrite &&
    at(logger, 'messageKeySym') === 'msg' &&
    Object.keys(at<object>(logger, 'serializersSym') ?? {}).every((k) => k === 'err') &&
    noStringifiers(at<Record<string | symbol, unknown>>(logger, 'stringifiersSym') ?? {}) &&
    stream !== undefined &&
    stream[S['needsMetadataGsym']!] !== true &&
    typeof levelPrefix === 'string' &&
    typeof time === 'function' &&
    typeof end === 'string';
  if (!plain) return viaPino;
  const timeOf = time.bind(logger);
  return (line) => {
    // Read on every line: the level can be changed while running.
    if (!logger.isLevelEnabled('info')) return;
    // Bindings are read each time too: `setBindings` replaces them.
    const chindings = (logger as unknown as Record<symbol, string>)[CHINDINGS];
    stream.write(
      `${levelPrefix}${timeOf()}${chindings},"reqId":${JSON.stringify(line.reqId)},"operation":${JSON.stringify(line.operation)}` +
        `,"status":${num(line.status)},"durationMs":${num(line.durationMs)},"queries":${num(line.queries)}` +
        `,"upstreamCalls":${num(line.upstreamCalls)},"cacheHits":${num(line.cacheHits)}` +
        (line.estimatedCost === undefined ? '' : `,"estimatedCost":${num(line.estimatedCost)}`) +
        `,"errors":${JSON.stringify(line.errors)},"msg":"${MESSAGE}"${end}`,
    );
  };
}

const KEYS = ['reqId', 'operation', 'status', 'durationMs', 'queries', 'upstreamCalls', 'cacheHits', 'estimatedCost', 'errors', 'msg'];

/** Redaction works through per-key stringifiers and a wildcard one: none may touch these keys. */
function noStringifiers(stringifiers: Record<string | symbol, unknown>): boolean {
  return !stringifiers[S['wildcardFirstSym']!] && KEYS.every((k) => !stringifiers[k]);
}

/** As pino writes a number: a non-finite one as null. */
const num = (n: number) => (Number.isFinite(n) ? `${n}` : 'null');
