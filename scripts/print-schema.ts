import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { printedSchema } from '../src/schema/print.js';

const target = fileURLToPath(new URL('../schema.graphql', import.meta.url));
writeFileSync(target, printedSchema());
process.stdout.write(`wrote ${target}\n`);
