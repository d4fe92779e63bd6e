import type { SubscriptionStore, Suscripcion } from '../../src/webhooks/types.js';

/** The RUC of change `i` of the test's day: distinct, valid in form, spread over the RUC space. */
export const rucOf = (i: number) => `20${String(100_000_000 + i * 7)}`.slice(0, 11);

/** Subscriptions held in memory: one of a few RUCs, one of 50,000 (every seventh change's), one of a RUC that did not change. */
export function subscriptions(): SubscriptionStore {
  const sub = (id: string) => ({ id, owner: 'o', url: `https://x.example/${id}` }) as unknown as Suscripcion;
  const subs: [Suscripcion, string[]][] = [
    [sub('few'), [rucOf(3), rucOf(399_999), rucOf(5)].sort()],
    [sub('many'), Array.from({ length: 50_000 }, (_, i) => rucOf(i * 7)).sort()],
    [sub('none'), ['20999999991']],
  ];
  const byId = new Map(subs.map(([s, r]) => [s.id, { s, r }]));
  return {
    ids: async () => [...byId.keys()],
    get: async (id: string) => byId.get(id)?.s,
    rucsOf: async (id: string) => byId.get(id)?.r ?? [],
  } as unknown as SubscriptionStore;
}
