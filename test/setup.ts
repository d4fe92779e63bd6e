import { afterAll } from 'vitest';
import { stopTracked } from './processes.js';

// Registered first, so it runs after every other afterAll of the file: whatever a file's own
// clean-up did (or threw), the processes it started are stopped before the next file.
afterAll(stopTracked, 30_000);
