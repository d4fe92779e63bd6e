import { z } from 'zod';

const millis = (max: number) => z.coerce.number().int().min(1).max(max);

/** Subscriptions to the register's changes, and their signed deliveries (docs/webhooks.md). */
export const WebhooksEnv = z.object({
  /** Subscriptions one caller may hold. @default 10 */
  WEBHOOK_MAX_PER_CALLER: z.coerce.number().int().min(1).max(10_000).default(10),
  /** RUCs one subscription watches. @default 100000 */
  WEBHOOK_MAX_RUCS: z.coerce.number().int().min(1).max(1_000_000).default(100_000),
  /** One delivery attempt, connection to the end of the answer's headers. @default 10000 */
  WEBHOOK_TIMEOUT_MS: millis(120_000).default(10_000),
  /** The wait before a message's first retry; each later wait doubles. @default 5000 */
  WEBHOOK_RETRY_FIRST_MS: millis(3_600_000).default(5_000),
  /** How long a message is retried, from its first attempt; then FALLIDA. @default 86400000 (24 h) */
  WEBHOOK_RETRY_FOR_MS: millis(30 * 24 * 3600_000).default(24 * 3600_000),
  /** `allow`: deliveries may go to private, loopback and link-local addresses, and over http. @default 'deny' (the built-in sandbox: loopback allowed) */
  WEBHOOK_PRIVATE_NETWORKS: z.enum(['deny', 'allow']).optional(),
});

type Env = z.output<typeof WebhooksEnv> & { UPSTREAM_URL?: string | undefined };

/** Which addresses a delivery may reach: none private, loopback only (the sandbox's receiver), or any. */
export type PrivateNetworks = 'deny' | 'loopback' | 'allow';

export function webhooksOf(e: Env) {
  const privateNetworks: PrivateNetworks = e.WEBHOOK_PRIVATE_NETWORKS ?? (e.UPSTREAM_URL ? 'deny' : 'loopback');
  return {
    maxPerCaller: e.WEBHOOK_MAX_PER_CALLER,
    maxRucs: e.WEBHOOK_MAX_RUCS,
    timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    retryFirstMs: e.WEBHOOK_RETRY_FIRST_MS,
    retryForMs: e.WEBHOOK_RETRY_FOR_MS,
    privateNetworks,
  };
}

export type WebhookSettings = ReturnType<typeof webhooksOf>;
