import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';

/** The provider is asked at most this often, failed fetches included (a token naming a key not kept, a refetch, the start's retries). */
export const REFETCH_AFTER_MS = 5000;
/** How long fetched keys are used before they are fetched again (a key the provider dropped then goes too). */
export const KEYS_KEPT_MS = 10 * 60_000;
/** How long the identity provider has to answer. */
const JWKS_TIMEOUT_MS = 5000;

type KeySet = ReturnType<typeof createLocalJWKSet>;

/**
 * The identity provider's signing keys, kept: fetched at start (and every REFETCH_AFTER_MS until
 * they are), fetched again after `keptMs` in the background, and for a token naming a key not
 * kept. Every fetch goes through one gate, so the provider is asked at most once every
 * REFETCH_AFTER_MS whatever the tokens and whatever it answers; jose's own cooldown counts only
 * the fetches that succeeded. Once fetched, the kept keys verify whatever the provider does.
 */
export class SigningKeys {
  /** jose's remote set, used only for its fetch (`reload`) and its copy of the keys (`jwks`): never asked to pick a key. */
  readonly #remote: ReturnType<typeof createRemoteJWKSet>;
  #set: KeySet | undefined;
  #asking: Promise<void> | undefined;
  #lastAsked = -Infinity;
  #lastFailed = false;
  #retry: NodeJS.Timeout | undefined;
  /** Fetches that brought keys: a verification that failed may try again only when this moved. */
  #fetched = 0;

  constructor(
    jwksUrl: string,
    readonly keptMs = KEYS_KEPT_MS,
    readonly refetchAfterMs = REFETCH_AFTER_MS,
    /** Told when a fetch fails after keys were fetched or at start, and when one succeeds again (for the log). */
    private readonly onChange?: (change: { ok: true } | { ok: false; error: Error }) => void,
  ) {
    this.#remote = createRemoteJWKSet(new URL(jwksUrl), { cacheMaxAge: keptMs, timeoutDuration: JWKS_TIMEOUT_MS });
  }

  /** Fetches the keys now, and again every `refetchAfterMs` until a fetch succeeds. */
  start(): void {
    const attempt = () => {
      this.#retry = undefined;
      void this.refresh().then(() => {
        if (!this.#set) this.#retry = setTimeout(attempt, this.refetchAfterMs).unref();
      });
    };
    attempt();
  }

  /** Whether keys are kept (for `/ready`). */
  get ready(): boolean {
    return this.#set !== undefined;
  }

  /** Whether the provider's last answer was a failure: a key it may have published cannot be known. */
  get failing(): boolean {
    return this.#lastFailed;
  }

  /** The fetch under way, if any. */
  get asking(): Promise<void> | undefined {
    return this.#asking;
  }

  /** How many fetches brought keys so far. */
  get fetched(): number {
    return this.#fetched;
  }

  /** The kept keys; in the background, fetched again once they are older than `keptMs`. */
  kept(): KeySet | undefined {
    if (this.#set && !this.#remote.fresh) void this.refresh();
    return this.#set;
  }

  /** Asks the provider unless it was asked within `refetchAfterMs`; resolves when the fetch under way (if any) ends. */
  refresh(): Promise<void> {
    if (this.#asking) return this.#asking;
    if (performance.now() - this.#lastAsked < this.refetchAfterMs) return Promise.resolve();
    this.#lastAsked = performance.now();
    this.#asking = this.#remote.reload().then(
      () => {
        const jwks = this.#remote.jwks();
        if (jwks) this.#set = createLocalJWKSet(jwks);
        this.#fetched++;
        if (this.#lastFailed) this.onChange?.({ ok: true });
        this.#lastFailed = false;
      },
      (error: unknown) => {
        // Said once per run of failures (the first fetch's included), not every 5 s.
        if (!this.#lastFailed) this.onChange?.({ ok: false, error: error instanceof Error ? error : new Error(String(error)) });
        this.#lastFailed = true;
      },
    );
    void this.#asking.finally(() => (this.#asking = undefined));
    return this.#asking;
  }

  close(): void {
    clearTimeout(this.#retry);
  }
}

/**
 * Verifies `token` with `keys`; when its `kid` names several published keys, each is tried, as
 * jose documents for JWKSMultipleMatchingKeys (a provider may publish two keys under one kid).
 */
export async function verifyWith(token: string, keys: KeySet, checks: JWTVerifyOptions): Promise<JWTPayload> {
  try {
    return (await jwtVerify(token, keys, checks)).payload;
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
    for await (const key of error) {
      try {
        return (await jwtVerify(token, key, checks)).payload;
      } catch (inner) {
        if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}
