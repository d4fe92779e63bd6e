import { describe, expect, it } from 'vitest';
import type { Plugin } from 'graphql-yoga';
import { hooksTheFastPathSkips, treatedByFastPath } from '../../src/http/fast-path-plugins.js';

describe("the fast path's plugins", () => {
  it('names the Yoga hooks a plugin has that the fast path would skip, unless the plugin declares it does their work', () => {
    const plugin: Plugin = { onRequest: () => undefined, onParams: () => undefined, onResponse: () => undefined };
    expect(hooksTheFastPathSkips(plugin)).toEqual(['onRequest', 'onResponse']);
    const declared = treatedByFastPath({ ...plugin }, { doesItself: ['onResponse'], because: 'a test' });
    expect(hooksTheFastPathSkips(declared)).toEqual(['onRequest']);
    expect(hooksTheFastPathSkips({ instrumentation: { execute: () => undefined, request: () => undefined } })).toEqual([
      'instrumentation.request',
    ]);
  });
});
