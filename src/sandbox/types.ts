import type { Received } from './receiver.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { SandboxTokenPlan } from './data.js';

export interface SandboxOptions {
  /** @default 0 (any free port) */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Tokens and their plans. @default DEFAULT_TOKENS */
  tokens?: readonly SandboxTokenPlan[];
  /** Delay of the `slow` trigger. @default 3000 */
  slowMs?: number;
  /** Added to every answer, to hold calls in flight. @default 0 */
  latencyMs?: number;
  /**
   * Keep each call in `calls`. Off for long runs (the benchmark): only `callCount` is kept,
   * and `GET /__sandbox/stats` answers it. @default true
   */
  record?: boolean;
  /** Most calls kept in `calls`, the oldest dropped first; `callCount` counts them all. @default 10000 */
  maxRecorded?: number;
  /** Told of each delivery its webhook receiver takes (./receiver.ts). */
  onDelivery?: (delivery: Received) => void;
}

/** Faults a test can switch on at run time; each rate is the chance (0 to 1) that a call gets it. */
export interface SandboxFaults {
  /** Added to every answer. */
  latencyMs?: number;
  /** Added to every answer of one operation: `{ '/ruc-sunat': 1500 }`, a slow detailed record. */
  pathLatencyMs?: Partial<Record<string, number>>;
  /** The next N calls answer 503, whatever they ask; then normal service. */
  failNext?: number;
  /** `Retry-After` of the throttled trigger's 429, as sent: seconds, an HTTP date, anything; `null` sends none. @default 30 */
  retryAfter?: string | number | null;
  /** The registry's sources are down: every call answers 503 upstream_unavailable until they are up again. */
  sourcesDown?: boolean;
  /**
   * Answers wait until this many calls are in flight at once (10 s at most), then go as usual:
   * shows what a client lets run together, however slowly a busy machine sends it.
   */
  gatherInFlight?: number;
  rates?: Partial<Record<FaultKind, number>>;
  /** Every company (RUC 20) lists this many representatives, each with a DNI, as a bank lists its apoderados. */
  representativesPerCompany?: number;
  /** SUNAT's registers (GET /__sandbox/padron/<zip>) served cut short or with their bytes spoiled. */
  padron?: 'truncated' | 'corrupt';
}

export type FaultKind =
  /** 503 upstream_unavailable */
  | 'unavailable'
  /** 500 with a JSON error envelope */
  | 'serverError'
  /** the connection is reset, no answer */
  | 'reset'
  /** 200 with an HTML body */
  | 'notJson'
  /** 200 with JSON cut in the middle */
  | 'truncated'
  /** 200 with a 5 MB body */
  | 'oversized'
  /** 200 with a record that breaks the schema */
  | 'badRecord';

export interface RecordedCall {
  method: string;
  /** Path as received, prefix included (`/api/ruc` on the legacy address). */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
  status: number;
  /** Client port of the connection, to see keep-alive reuse. */
  remotePort: number | undefined;
}

export interface Sandbox {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  /** Its stand-in identity provider's key set (for AUTH_JWKS_URL); the issuer is `url`. */
  readonly jwksUrl: string;
  /** A sign-in token for `subject`, as GET /__sandbox/token?sub=<subject> gives it. */
  signIn(subject: string): Promise<string>;
  /** The calls received, in order: the last `maxRecorded` of them. */
  readonly calls: RecordedCall[];
  /** Calls to one operation, prefix ignored: callsTo('/ruc'). */
  callsTo(path: string): RecordedCall[];
  /** Calls received since the last reset, recorded or not. */
  readonly callCount: number;
  /** Most calls the sandbox was answering at once since the last reset. */
  readonly peakInFlight: number;
  /** Plan queries left for a token. */
  quotaOf(token: string): number | undefined;
  setQuota(token: string, quota: number): void;
  /** Replaces the active faults; `setFaults({})` restores normal service. */
  setFaults(faults: SandboxFaults): void;
  /** Forgets recorded calls. */
  reset(): void;
  /** The deliveries its webhook receiver took, newest last. */
  readonly deliveries: readonly Received[];
  /** Publishes its register's second day (as POST /__sandbox/padron/siguiente-dia does); the date it is dated. */
  nextDay(): Date;
  close(): Promise<void>;
}
