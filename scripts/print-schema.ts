import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { printedSchema, printedSubgraph } from '../src/schema/print.js';

for (const [file, text] of [
  ['schema.graphql', printedSchema()],
  ['subgraph.graphql', printedSubgraph()],
] as const) {
  const target = fileURLToPath(new URL(`../${file}`, import.meta.url));
  writeFileSync(target, text);
  process.stdout.write(`wrote ${target}\n`);
}
