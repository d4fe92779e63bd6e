/** The RUC of change `i` of bench/day.ts's day: distinct, valid in form, spread over the RUC space. */
export const rucAtDay = (i: number) => `20${String(100_000_000 + i * 3)}`.slice(0, 11);
