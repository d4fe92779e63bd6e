import { configDefaults, defineConfig } from 'vitest/config';

/** The files whose promises are timings under load, or memory. */
const TIMED = [
  'test/soak.test.ts',
  // Reads the heap: a worker that other files share holds their allocations too.
  'test/pipeline/document-cache.test.ts',
  'test/webhooks/publish.test.ts',
  ...['stress-documents', 'stress-store', 'fairness', 'admission', 'ops', 'floods', 'connections', 'slow-registry', 'stream-readers'].map(
    (name) => `test/e2e/${name}.test.ts`,
  ),
];

export default defineConfig({
  resolve: {
    // graphql 16 ships both index.js and index.mjs. Node (and so Yoga, loaded from
    // node_modules) takes index.js; Vite would give our sources index.mjs, and two
    // copies of GraphQLError break every instanceof check. One copy, as in production.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    // Generous: the suite must hold on a busy machine (a CI host running other jobs).
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file starts its own servers on port 0; files may run side by side.
    pool: 'forks',
    // Three files at a time, on 2 cores too (vitest's default there is one): most of a file's time
    // is spent waiting on sockets, timers and child processes, and the suite holds on a busy machine.
    maxWorkers: 3,
    // Memory tests read the heap after a full collection.
    execArgv: ['--expose-gc'],
    // Whatever a file starts is stopped after it (test/setup.ts), and a process still running at
    // the end fails the run (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'gateway',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/image/**', ...TIMED],
          // The files share a worker's loaded modules rather than each loading the app anew: a third of the suite's CPU.
          // Nothing a file sets outlives it (test/setup.ts stops what it started).
          isolate: false,
        },
      },
      // Files that time answers under load or read the heap: after the others, one at a time, so
      // that no other file's load is theirs (npm test runs both projects).
      { extends: true, test: { name: 'timed', include: TIMED, fileParallelism: false, sequence: { groupOrder: 1 } } },
      // The container image's build (minutes of disk and CPU) runs apart: npm run test:image.
      { extends: true, test: { name: 'image', include: ['test/image/**/*.test.ts'], sequence: { groupOrder: 2 } } },
    ],
  },
});
