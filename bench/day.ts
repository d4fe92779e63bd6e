/**
 * `npm run bench:day`: a day of the register's changes of SUNAT's worst size (1.5 million, every
 * row's condición changed; the cap is 2 million) made into webhook messages under the heap the
 * Dockerfile and the Kubernetes manifest give (`--max-old-space-size=256`), in a process of its
 * own. Figures: the time to make the messages and that process's peak RSS, beside the 512 MiB the
 * manifest allows. The messages expected are worked out here, apart from the code.
 *
 *   BENCH_DAY_CHANGES=300000 npm run bench:day   (a smaller day)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChangeStore, StagedChanges } from '../src/padron/change-store.js';
import { rucAtDay } from './day-rucs.js';

const CHANGES = Number(process.env['BENCH_DAY_CHANGES'] ?? 1_500_000);
/** RUCs the big subscription watches: WEBHOOK_MAX_RUCS' default. */
const WATCHED = Math.min(100_000, Math.floor(CHANGES / 11));
const HEAP_MB = 256;
const DAY = '2026-11-20';

const dir = mkdtempSync(join(tmpdir(), 'bench-day-'));
try {
  let t = performance.now();
  const store = await ChangeStore.open(join(dir, 'store'));
  const staged = new StagedChanges(join(dir, 'staged'));
  for (let i = 0; i < CHANGES; i++) staged.add(rucAtDay(i), 'CONDICION', 'HABIDO', 'NO HABIDO');
  staged.end();
  await store.commit(DAY, staged);
  staged.discard();
  await store.close();
  console.log(`${CHANGES.toLocaleString('en')} changes recorded in ${Math.round((performance.now() - t) / 1000)} s`);
  const markers = join(dir, 'markers');
  execFileSync('mkdir', ['-p', markers]);
  writeFileSync(join(markers, 'webhooks-published'), '2026-11-19');
  t = performance.now();
  const out = execFileSync(
    process.execPath,
    [`--max-old-space-size=${HEAP_MB}`, 'dist/bench/day-child.js', join(dir, 'store'), markers, String(WATCHED)],
    { maxBuffer: 1 << 20 },
  );
  const child = JSON.parse(out.toString()) as { durationMs: number; made: Record<string, number>; peakRssMb: number };
  // Worked out apart: the big subscription's RUCs each changed once, a thousand changes a message; the few, one message.
  const expected = { few: 1, many: Math.ceil(WATCHED / 1000) };
  if (JSON.stringify(child.made) !== JSON.stringify(expected))
    throw new Error(`made ${JSON.stringify(child.made)}, not ${JSON.stringify(expected)}`);
  const result = { at: new Date().toISOString(), node: process.version, changes: CHANGES, watched: WATCHED, heapMb: HEAP_MB, ...child };
  console.log(JSON.stringify(result, null, 2));
  writeFileSync(`bench/results/day-${result.at.replace(/[:.]/g, '-')}.json`, `${JSON.stringify(result, null, 2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
