import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // graphql 16 ships both index.js and index.mjs. Node (and so Yoga, loaded from
    // node_modules) takes index.js; Vite would give our sources index.mjs, and two
    // copies of GraphQLError break every instanceof check. One copy, as in production.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 15_000,
    hookTimeout: 15_000,
    // Each file starts its own servers on port 0; files may run side by side.
    pool: 'forks',
  },
});
